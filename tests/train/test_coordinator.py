"""tf.train.Coordinator and LooperThread."""
import threading
import time

import pytest

import tensorweave as tf


def _thread(target):
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def test_request_stop_wakes_waiters_and_join_returns():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    threads = [_thread(lambda: coord.wait_for_stop(10)) for _ in range(3)]
    assert not coord.wait_for_stop(0.01)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    assert coord.should_stop() and coord.joined
    assert not any(t.is_alive() for t in threads)


def test_join_raises_the_first_exception_and_out_of_range_is_clean():
    coord = tf.train.Coordinator()

    def fail(message):
        with coord.stop_on_exception():
            raise ValueError(message)
    t1 = _thread(lambda: fail("first"))
    t1.join(5)
    coord.request_stop(RuntimeError("second"))
    with pytest.raises(ValueError, match="first"):
        coord.join([t1])
    with pytest.raises(ValueError, match="first"):
        coord.raise_requested_exception()
    coord.clear_stop()
    assert not coord.should_stop()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    coord.join([])   # a clean stop raises nothing
    with pytest.raises(ValueError):
        tf.train.Coordinator().request_stop("not an exception")


def test_join_reports_threads_that_ignore_the_stop():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stubborn = _thread(lambda: release.wait(10))
    coord.register_thread(stubborn)
    coord.request_stop()
    with pytest.raises(RuntimeError, match="threads still running"):
        coord.join(stop_grace_period_secs=0.05)
    coord.clear_stop()
    coord.register_thread(stubborn)
    coord.request_stop()
    coord.join(stop_grace_period_secs=0.05, ignore_live_threads=True)
    release.set()
    stubborn.join(5)


def test_looper_thread_runs_until_stop():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.01, calls.append, args=(1,))
    time.sleep(0.1)
    coord.request_stop()
    coord.join([looper], stop_grace_period_secs=5)
    assert len(calls) >= 2 and not looper.is_alive()
