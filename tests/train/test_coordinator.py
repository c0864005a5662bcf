"""tf.train.Coordinator and LooperThread: stop flag, first-exception reporting, join, grace."""
import sys
import threading
import time

import pytest

import tensorweave as tf

BOUND = 5.0  # seconds: every wait in these tests is bounded so a bug fails, not hangs


def _start(target, *args):
    t = threading.Thread(target=target, args=args, daemon=True)
    t.start()
    return t


def _worker_until_stopped(coord, ticks):
    while not coord.should_stop():
        ticks.append(1)
        time.sleep(0.005)


def test_request_stop_stops_threads_and_join_returns():
    coord = tf.train.Coordinator()
    ticks = []
    threads = [_start(_worker_until_stopped, coord, ticks) for _ in range(3)]
    assert not coord.should_stop()
    time.sleep(0.05)
    coord.request_stop()
    assert coord.should_stop() and coord.wait_for_stop(0)
    coord.join(threads, stop_grace_period_secs=BOUND)
    assert coord.joined and ticks and not any(t.is_alive() for t in threads)


def test_join_raises_the_first_reported_exception():
    coord = tf.train.Coordinator()

    def fail(message, after_a_stop):
        if after_a_stop:   # an event, not a delay: "second" cannot overtake on a busy machine
            assert coord.wait_for_stop(BOUND)
        with coord.stop_on_exception():
            raise ValueError(message)

    threads = [_start(fail, "second", True), _start(fail, "first", False)]
    with pytest.raises(ValueError, match="^first$"):
        coord.join(threads, stop_grace_period_secs=BOUND)


def test_exception_instance_and_exc_info_are_both_recorded():
    coord = tf.train.Coordinator()
    coord.request_stop(KeyError("an instance, outside an except block"))
    with pytest.raises(KeyError, match="an instance"):
        coord.raise_requested_exception()
    coord.clear_stop()
    try:
        raise TypeError("from exc_info")
    except TypeError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(TypeError, match="from exc_info"):
        coord.join()


def test_out_of_range_is_a_clean_stop_by_default():
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    assert coord.should_stop()
    coord.raise_requested_exception()  # nothing recorded
    coord.join()
    strict = tf.train.Coordinator(clean_stop_exception_types=[])
    strict.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    with pytest.raises(tf.errors.OutOfRangeError):
        strict.join()


def test_clear_stop_allows_running_again():
    coord = tf.train.Coordinator()
    coord.request_stop(RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        coord.join()
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    coord.raise_requested_exception()
    ticks = []
    t = _start(_worker_until_stopped, coord, ticks)
    time.sleep(0.02)
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=BOUND)
    assert ticks


def test_request_stop_after_join_raises_the_exception():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.join()
    with pytest.raises(ValueError, match="late"):
        coord.request_stop(ValueError("late"))


def test_stragglers_after_the_grace_period():
    coord = tf.train.Coordinator()
    release = threading.Event()
    t = _start(release.wait, BOUND)  # ignores the coordinator
    coord.request_stop()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running"):
        coord.join([t], stop_grace_period_secs=0.1)
    assert time.monotonic() - start < 2.0
    coord.clear_stop()
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
    release.set()
    t.join(BOUND)


def test_join_waits_for_threads_that_finish_without_a_stop_request():
    coord = tf.train.Coordinator()
    threads = [_start(time.sleep, 0.05) for _ in range(2)]
    coord.join(threads, stop_grace_period_secs=BOUND)
    assert not coord.should_stop() and not any(t.is_alive() for t in threads)


def test_registered_threads_are_joined():
    coord = tf.train.Coordinator()
    ticks = []
    t = threading.Thread(target=_worker_until_stopped, args=(coord, ticks), daemon=True)
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    coord.join(stop_grace_period_secs=BOUND)
    assert not t.is_alive()


def test_stop_on_exception_reports_instead_of_raising():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise IndexError("reported")
    assert coord.should_stop()
    with pytest.raises(IndexError, match="reported"):
        coord.raise_requested_exception()


def test_looper_thread_calls_target_periodically_until_stopped():
    """The k-th call comes k periods after the start at the earliest (a stalled looper may
    catch up, but never runs ahead), and none starts after the stop."""
    coord = tf.train.Coordinator()
    calls, four_calls = [], threading.Event()

    def tick(label):
        calls.append((label, time.monotonic()))
        if len(calls) == 4:
            four_calls.set()
    start = time.monotonic()
    looper = tf.train.LooperThread.loop(coord, 0.02, target=tick, args=("tick",))
    assert four_calls.wait(BOUND)
    coord.request_stop()
    stopped = len(calls)
    coord.join(stop_grace_period_secs=BOUND)
    assert not looper.is_alive() and looper.daemon
    assert len(calls) - stopped <= 1   # at most the call that was running at the stop
    assert all(label == "tick" and at - start >= k * 0.02 - 1e-3
               for k, (label, at) in enumerate(calls))


def test_looper_subclass_hooks_and_error_reporting():
    coord = tf.train.Coordinator()
    events = []

    class Looper(tf.train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            if events.count("run") == 3:
                raise ValueError("third iteration failed")

        def stop_loop(self):
            events.append("stop")

    Looper(coord, None).start()
    with pytest.raises(ValueError, match="third iteration failed"):
        coord.join(stop_grace_period_secs=BOUND)
    assert events == ["start", "run", "run", "run"]  # stop_loop skipped: the loop raised


def test_looper_argument_checks():
    with pytest.raises(ValueError, match="must be a Coordinator"):
        tf.train.LooperThread(object(), 1.0)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), 1.0, args=(1,))
