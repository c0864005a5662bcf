"""Queues: FIFOQueueV2, RandomShuffleQueueV2, PaddingFIFOQueueV2, PriorityQueueV2 and the
QueueEnqueueV2 / QueueEnqueueManyV2 / QueueDequeueV2 / QueueDequeueManyV2 / QueueDequeueUpToV2 /
QueueCloseV2 / QueueSizeV2 / QueueIsClosedV2 ops: graph structure, semantics, asynchronous
blocking, cancellation, deadlines and multi-threaded stress. Every blocking case is bounded.
"""
import logging
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import queue_state

JOIN_SECONDS = 10


class Background:
    """Runs `fn` in a thread; `result()` joins with a timeout and returns or re-raises."""

    def __init__(self, fn):
        self.value, self.error = None, None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.value = fn()
        except Exception as e:  # noqa: BLE001 - handed to the test thread
            self.error = e

    def result(self):
        self.thread.join(JOIN_SECONDS)
        assert not self.thread.is_alive(), "background step did not finish"
        if self.error is not None:
            raise self.error
        return self.value


def _blocked(background, seconds=0.2):
    time.sleep(seconds)
    return background.thread.is_alive()


def test_queue_graph_matches_tensorflow():
    with tf.Graph().as_default() as g:
        q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]])
        q.enqueue([1, [1.0, 2.0]])
        q.enqueue_many([[1, 2], [[1.0, 2.0], [3.0, 4.0]]])
        one, many, up_to = q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(2)
        q.close(), q.close(True), q.size(), q.is_closed()
    types = {op.name: op.type for op in g.get_operations()}
    assert types == {
        "fifo_queue": "FIFOQueueV2", "fifo_queue_enqueue/component_0": "Const",
        "fifo_queue_enqueue/component_1": "Const", "fifo_queue_enqueue": "QueueEnqueueV2",
        "fifo_queue_EnqueueMany/component_0": "Const",
        "fifo_queue_EnqueueMany/component_1": "Const",
        "fifo_queue_EnqueueMany": "QueueEnqueueManyV2", "fifo_queue_Dequeue": "QueueDequeueV2",
        "fifo_queue_DequeueMany/n": "Const", "fifo_queue_DequeueMany": "QueueDequeueManyV2",
        "fifo_queue_DequeueUpTo/n": "Const", "fifo_queue_DequeueUpTo": "QueueDequeueUpToV2",
        "fifo_queue_Close": "QueueCloseV2", "fifo_queue_Close_1": "QueueCloseV2",
        "fifo_queue_Size": "QueueSizeV2", "fifo_queue_Is_Closed": "QueueIsClosedV2"}
    assert q.queue_ref.dtype == tf.resource and q.name == "fifo_queue"
    assert [t.shape.as_list() for t in one] == [[], [2]]
    assert [t.shape.as_list() for t in many] == [[2], [2, 2]]
    assert [t.shape.as_list() for t in up_to] == [[None], [None, 2]]
    attrs = g.get_operation_by_name("fifo_queue").node_def.attr
    assert attrs["capacity"].i == 3 and attrs["shared_name"].s == b""
    assert [d for d in attrs["component_types"].list.type] == [3, 1]


def test_queue_static_shapes_names_and_priority_components():
    with tf.Graph().as_default():
        unknown = tf.FIFOQueue(3, tf.int32)
        assert unknown.dequeue().shape.ndims is None
        padding = tf.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]])
        assert padding.dequeue_many(2).shape.as_list() == [2, None]
        named = tf.FIFOQueue(3, [tf.int32, tf.string], names=["a", "b"])
        assert sorted(named.dequeue()) == ["a", "b"]
        prio = tf.PriorityQueue(4, [tf.string], shapes=[[]])
        assert prio.dtypes == [tf.int64, tf.string]
        assert [t.dtype for t in prio.dequeue()] == [tf.int64, tf.string]
        with pytest.raises(ValueError, match="fully defined"):
            tf.FIFOQueue(3, [tf.int32], shapes=[[None]])
        with pytest.raises(ValueError, match="dictionary"):
            named.enqueue([1, "x"])
        with pytest.raises(ValueError, match="do not match"):
            named.enqueue({"a": 1, "c": "x"})
        with pytest.raises(ValueError):
            tf.FIFOQueue(3, [tf.int32], shapes=[[2]]).enqueue([[1, 2, 3]])


def test_fifo_order_close_and_tensorflow_errors():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        fill = q.enqueue_many([[1, 2, 3, 4, 5]])
        one, three, up_to = q.dequeue(), q.dequeue_many(3), q.dequeue_up_to(4)
        push, close, closed, size = q.enqueue([9]), q.close(), q.is_closed(), q.size()
        with tf.Session() as sess:
            sess.run(fill)
            assert sess.run(size) == 5 and sess.run(one) == 1
            assert sess.run(three).tolist() == [2, 3, 4]
            sess.run(push)
            assert not sess.run(closed)
            sess.run(close)
            assert sess.run(closed)
            with pytest.raises(tf.errors.CancelledError, match="is closed"):
                sess.run(push)
            assert sess.run(up_to).tolist() == [5, 9]
            with pytest.raises(tf.errors.OutOfRangeError,
                               match=r"FIFOQueue '_\d+_fifo_queue' is closed and has "
                                     r"insufficient elements \(requested 1, current size 0\)"):
                sess.run(one)


def test_closing_twice_and_an_empty_enqueue_many_on_a_closed_queue():
    # TensorFlow 2.21: a second plain close fails, one cancelling pending enqueues does not;
    # an empty enqueue_many succeeds even on a closed queue, a non-empty one fails.
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
        close, cancel = q.close(), q.close(cancel_pending_enqueues=True)
        empty, full = q.enqueue_many([[]]), q.enqueue_many([[1]])
        with tf.Session() as sess:
            sess.run(close)
            with pytest.raises(tf.errors.CancelledError,
                               match=r"Queue '_\d+_fifo_queue' is already closed\."):
                sess.run(close)
            sess.run(cancel)
            sess.run(empty)
            with pytest.raises(tf.errors.CancelledError, match="is closed"):
                sess.run(full)
            assert sess.run(q.size()) == 0
        with tf.Session() as sess:   # cancel first, then a plain close: also already closed
            sess.run(cancel)
            with pytest.raises(tf.errors.CancelledError, match="is already closed"):
                sess.run(close)


def test_dequeue_many_of_closed_queue_keeps_the_elements():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        fill, many, one = q.enqueue_many([[1, 2]]), q.dequeue_many(3), q.dequeue()
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(q.close())
            with pytest.raises(tf.errors.OutOfRangeError, match="requested 3, current size 2"):
                sess.run(many)
            assert [sess.run(one), sess.run(one)] == [1, 2]


def test_named_multi_component_and_string_elements():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, [tf.float32, tf.string], shapes=[[2], []], names=["vec", "tag"])
        push = q.enqueue({"vec": [1.0, 2.0], "tag": "a"})
        pop = q.dequeue()
        with tf.Session() as sess:
            sess.run(push)
            got = sess.run(pop)
            assert got["tag"] == b"a" and got["vec"].tolist() == [1.0, 2.0]
            assert got["vec"].dtype == np.float32


def test_runtime_shape_and_type_errors():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, [tf.int32], shapes=[[2]])
        fed = tf.placeholder(tf.int32)
        push = q.enqueue(fed)
        push_many = q.enqueue_many(fed)
        free = tf.FIFOQueue(5, [tf.int32])
        many_unshaped = free.dequeue_many(2)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Shape mismatch in tuple component 0. Expected \[2\], "
                                     r"got \[3\]"):
                sess.run(push, {fed: [1, 2, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="0th dimension|Shape"):
                sess.run(push_many, {fed: 5})
            with pytest.raises(tf.errors.InvalidArgumentError, match="specified shapes"):
                sess.run(many_unshaped)


def test_enqueued_values_are_private_copies():
    with tf.Graph().as_default():
        v = tf.Variable([1, 2], name="v")
        q = tf.FIFOQueue(5, [tf.int32], shapes=[[2]])
        push, pop = q.enqueue(v), q.dequeue()
        bump = v.assign_add([10, 10])
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(push)
            sess.run(bump)
            assert sess.run(pop).tolist() == [1, 2]


def test_random_shuffle_queue_is_seeded_and_waits_for_min_after_dequeue():
    def order():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            q = tf.RandomShuffleQueue(50, 0, [tf.int32], shapes=[[]], seed=7)
            fill, out = q.enqueue_many([np.arange(30, dtype=np.int32)]), q.dequeue_many(30)
            with tf.Session() as sess:
                sess.run(fill)
                return sess.run(out).tolist()
    first = order()
    assert sorted(first) == list(range(30)) and first != list(range(30))
    assert order() == first
    with tf.Graph().as_default():
        q = tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=1)
        fill, one, close = q.enqueue_many([[1, 2, 3]]), q.dequeue(), q.close()
        with tf.Session() as sess:
            sess.run(fill)
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(one, options=tf.RunOptions(timeout_in_ms=50))
            sess.run(close)
            assert sorted(sess.run(one) for _ in range(3)) == [1, 2, 3]
            with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
                sess.run(one)


def test_padding_queue_pads_numbers_and_strings():
    with tf.Graph().as_default():
        q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], [None]])
        a = q.enqueue([[1, 2, 3], ["x"]])
        b = q.enqueue([[4], ["y", "z"]])
        batch = q.dequeue_many(2)
        with tf.Session() as sess:
            sess.run(a)
            sess.run(b)
            nums, strs = sess.run(batch)
            assert nums.tolist() == [[1, 2, 3], [4, 0, 0]]
            assert strs.tolist() == [[b"x", b""], [b"y", b"z"]]


def test_priority_queue_dequeues_lowest_priority_first():
    with tf.Graph().as_default():
        q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
        fill = q.enqueue_many([np.array([5, 1, 3], np.int64), ["five", "one", "three"]])
        prio, value = q.dequeue_many(3)
        with tf.Session() as sess:
            sess.run(fill)
            p, v = sess.run([prio, value])
            assert p.tolist() == [1, 3, 5] and v.tolist() == [b"one", b"three", b"five"]


def test_batches_cut_across_enqueue_many_chunks_in_order():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(100, [tf.int32, tf.float32], shapes=[[], [2]])
        values = tf.placeholder(tf.int32, [None])
        push_many = q.enqueue_many([values, tf.stack([tf.cast(values, tf.float32)] * 2, 1)])
        push_one = q.enqueue([values[0], tf.cast(tf.stack([values[0]] * 2), tf.float32)])
        many, up_to, one = q.dequeue_many(4), q.dequeue_up_to(4), q.dequeue()
        with tf.Session() as sess:
            for chunk in ([0, 1, 2], [3, 4, 5, 6, 7], [8], [9, 10, 11, 12], []):
                sess.run(push_many, {values: chunk})
            sess.run(push_one, {values: [13]})
            sess.run(push_many, {values: [14, 15, 16]})
            got = [sess.run(many) for _ in range(3)] + [sess.run(up_to)]
            for (ints, floats), want in zip(got, ([0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11],
                                                  [12, 13, 14, 15])):
                assert ints.tolist() == want and floats.tolist() == [[w, w] for w in want]
            assert floats.dtype == np.float32 and ints.dtype == np.int32
            sess.run(push_many, {values: [17, 18]})
            sess.run(q.close())
            with pytest.raises(tf.errors.OutOfRangeError, match="requested 4, current size 3"):
                sess.run(many)
            assert sess.run(one)[0] == 16   # the failed dequeue_many put its elements back
            assert sess.run(up_to)[0].tolist() == [17, 18]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(up_to)


def test_cancelled_dequeue_many_puts_back_a_partial_take_in_order():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        values = tf.placeholder(tf.int32, [None])
        push, many, size = q.enqueue_many([values]), q.dequeue_many(5), q.size()
        with tf.Session() as sess:
            sess.run(push, {values: [1, 2]})
            sess.run(push, {values: [3]})
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(many, options=tf.RunOptions(timeout_in_ms=50))
            assert sess.run(size) == 3
            sess.run(push, {values: [4, 5, 6]})
            assert sess.run(many).tolist() == [1, 2, 3, 4, 5]


def test_enqueue_many_into_a_small_queue_arrives_whole_and_in_order():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, [tf.int32], shapes=[[]])
        push, many = q.enqueue_many([np.arange(10, dtype=np.int32)]), q.dequeue_many(4)
        with tf.Session() as sess:
            filler = Background(lambda: sess.run(push))
            got = [sess.run(many).tolist() for _ in range(2)]
            filler.result()
            assert got == [[0, 1, 2, 3], [4, 5, 6, 7]]
            assert sess.run(q.dequeue_many(2)).tolist() == [8, 9]


def test_element_queues_take_single_rows_of_chunks():
    with tf.Graph().as_default():
        shuffled = tf.RandomShuffleQueue(20, 0, [tf.int32], shapes=[[]], seed=5)
        values = tf.placeholder(tf.int32, [None])
        fill = shuffled.enqueue_many([values])
        prio = tf.PriorityQueue(20, [tf.int32], shapes=[[]])
        prio_fill = prio.enqueue_many([tf.cast(values, tf.int64) % 4, values])
        padded = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
        rows = tf.placeholder(tf.int32, [None, None])
        pad_fill = padded.enqueue_many([rows])
        with tf.Session() as sess:
            for chunk in ([0, 1, 2, 3, 4], [5, 6], [7, 8, 9]):
                sess.run([fill, prio_fill], {values: chunk})
            out = sess.run(shuffled.dequeue_many(10)).tolist()
            assert sorted(out) == list(range(10)) and out != list(range(10))
            keys, got = sess.run(prio.dequeue_many(10))
            assert keys.tolist() == sorted(v % 4 for v in range(10))
            assert sorted(got.tolist()) == list(range(10))
            assert all(k == v % 4 for k, v in zip(keys, got))
            sess.run(pad_fill, {rows: [[1, 2], [3, 4]]})
            sess.run(pad_fill, {rows: [[5, 6, 7]]})
            assert sess.run(padded.dequeue_many(3)).tolist() == [[1, 2, 0], [3, 4, 0],
                                                                  [5, 6, 7]]


def test_blocked_dequeue_holds_no_thread_other_steps_proceed():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
        pop, push, size = q.dequeue(), q.enqueue([7]), q.size()
        other = tf.constant(2) * 21
        with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as sess:
            waiting = [Background(lambda: sess.run(pop)) for _ in range(3)]
            assert _blocked(waiting[0])
            assert sess.run(other) == 42 and sess.run(size) == 0
            for _ in range(3):
                sess.run(push)
            assert [w.result() for w in waiting] == [7, 7, 7]


def test_full_queue_blocks_enqueue_until_a_dequeue():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
        push_many, pop = q.enqueue_many([[1, 2, 3, 4]]), q.dequeue()
        with tf.Session() as sess:
            filler = Background(lambda: sess.run(push_many))
            assert _blocked(filler)
            assert [sess.run(pop) for _ in range(2)] == [1, 2]
            filler.result()
            assert [sess.run(pop) for _ in range(2)] == [3, 4]


def test_close_cancels_pending_enqueues_only_when_asked():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        push, pop = q.enqueue([1]), q.dequeue()
        close, cancel = q.close(), q.close(cancel_pending_enqueues=True)
        with tf.Session() as sess:
            sess.run(push)
            pending = Background(lambda: sess.run(push))
            assert _blocked(pending)
            sess.run(close)
            assert _blocked(pending, 0.05)   # a plain close lets it finish later
            assert sess.run(pop) == 1
            pending.result()
            assert sess.run(pop) == 1
        with tf.Session() as sess:
            sess.run(push)
            pending = Background(lambda: sess.run(push))
            assert _blocked(pending)
            sess.run(cancel)
            with pytest.raises(tf.errors.CancelledError, match="Enqueue operation was cancelled"):
                pending.result()


def test_dequeue_up_to_returns_fewer_at_close_while_blocked():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        fill, up_to, close = q.enqueue_many([[1, 2]]), q.dequeue_up_to(5), q.close()
        with tf.Session() as sess:
            sess.run(fill)
            waiting = Background(lambda: sess.run(up_to))
            assert _blocked(waiting)
            sess.run(close)
            assert waiting.result().tolist() == [1, 2]


def test_session_close_cancels_blocked_steps():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        pop = q.dequeue()
        sess = tf.Session()
        waiting = Background(lambda: sess.run(pop))
        assert _blocked(waiting)
        sess.close()
        with pytest.raises(tf.errors.CancelledError):
            waiting.result()


def _seconds_to_deadline(run):
    """How long `run()` takes to raise DeadlineExceededError."""
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError):
        run()
    return time.monotonic() - start


@pytest.mark.parametrize("use_config", [False, True])
def test_deadlines_from_run_options_and_operation_timeout(use_config):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        pop = q.dequeue()
        config = tf.ConfigProto(operation_timeout_in_ms=50) if use_config else None
        options = None if use_config else tf.RunOptions(timeout_in_ms=50)
        with tf.Session(config=config) as sess:
            # At the deadline, not the next 0.5 s poll. Up to three tries: one stall of a
            # loaded machine cannot fail the test, a deadline that waits for the poll fails all.
            assert any(_seconds_to_deadline(lambda: sess.run(pop, options=options)) < 0.45
                       for _ in range(3))
            assert sess.run(q.size()) == 0   # the cancelled attempts left the queue


def test_shared_name_shares_within_a_session_not_across_sessions():
    with tf.Graph().as_default():
        a = tf.FIFOQueue(5, [tf.int32], shapes=[[]], shared_name="shared", name="a")
        b = tf.FIFOQueue(5, [tf.int32], shapes=[[]], shared_name="shared", name="b")
        push, pop, size = a.enqueue([4]), b.dequeue(), a.size()
        with tf.Session() as sess:
            sess.run(push)
            assert sess.run(pop) == 4
            sess.run(push)
        with tf.Session() as sess:
            assert sess.run(size) == 0


def test_from_list_selects_a_queue():
    with tf.Graph().as_default():
        qs = [tf.FIFOQueue(5, [tf.int32], shapes=[[]]) for _ in range(2)]
        index = tf.placeholder(tf.int32, [])
        chosen = tf.QueueBase.from_list(index, qs)
        push = chosen.enqueue([3])
        sizes = [q.size() for q in qs]
        assert chosen.dtypes == [tf.int32] and chosen.shapes[0].as_list() == []
        with tf.Session() as sess:
            sess.run(push, {index: 1})
            assert sess.run(sizes) == [0, 1]
        with pytest.raises(TypeError, match="different types"):
            tf.QueueBase.from_list(0, [qs[0], tf.FIFOQueue(5, [tf.float32])])


def test_starved_queue_logs_a_warning(monkeypatch, caplog):
    monkeypatch.setattr(queue_state, "STARVED_WARNING_SECONDS", 0.1)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]], name="starved")
        pop = q.dequeue()
        with tf.Session() as sess, caplog.at_level(logging.WARNING, "tensorweave"):
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(pop, options=tf.RunOptions(timeout_in_ms=600))
    assert any("starved" in r.getMessage() and "QueueRunner" in r.getMessage()
               for r in caplog.records)


def test_no_starved_warning_for_a_queue_a_runner_feeds(monkeypatch, caplog):
    monkeypatch.setattr(queue_state, "STARVED_WARNING_SECONDS", 0.1)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]], name="fed")
        tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([1])]))  # not started
        pop = q.dequeue()
        with tf.Session() as sess, caplog.at_level(logging.WARNING, "tensorweave"):
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(pop, options=tf.RunOptions(timeout_in_ms=600))
    assert not any("blocked" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("capacity", [3, 50])
def test_producers_and_consumers_under_stress(capacity):
    n_producers, per_producer = 4, 60
    with tf.Graph().as_default():
        q = tf.FIFOQueue(capacity, [tf.int32, tf.int32], shapes=[[], [2]])
        values = tf.placeholder(tf.int32, [None])
        push_many = q.enqueue_many([values, tf.stack([values, values * 2], axis=1)])
        push_one = q.enqueue([values[0], tf.stack([values[0], values[0] * 2])])
        take = q.dequeue_up_to(7)
        close = q.close()
        with tf.Session() as sess:
            def produce(k):
                base = k * per_producer
                for i in range(0, per_producer, 6):
                    if k % 2:
                        sess.run(push_many, {values: np.arange(base + i, base + i + 6)})
                    else:
                        for j in range(6):
                            sess.run(push_one, {values: [base + i + j]})

            def consume():
                seen = []
                while True:
                    try:
                        first, second = sess.run(take)
                    except tf.errors.OutOfRangeError:
                        return seen
                    assert (second[:, 1] == 2 * first).all() and (second[:, 0] == first).all()
                    seen.extend(first.tolist())
            consumers = [Background(consume) for _ in range(3)]
            producers = [Background(lambda k=k: produce(k)) for k in range(n_producers)]
            for p in producers:
                p.result()
            sess.run(close)
            seen = sum((c.result() for c in consumers), [])
    assert sorted(seen) == list(range(n_producers * per_producer))


def test_fifo_queue_is_pinned_to_a_cpu_of_its_scope():
    """TensorFlow 2.21 creates a FIFOQueue under device "CPU" (its storage is host memory):
    alone it asks for any CPU, under a GPU scope for the CPU of that job and index."""
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, tf.float32)
        with tf.device("/job:w/gpu:1"):
            pinned = tf.FIFOQueue(3, tf.float32)
        padding = tf.PaddingFIFOQueue(3, tf.float32, shapes=[[None]])
    assert q.queue_ref.op.device == "/device:CPU:*"
    assert pinned.queue_ref.op.device == "/job:w/device:CPU:1"
    assert padding.queue_ref.op.device == ""


def test_an_empty_shape_list_is_one_scalar_component():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(4, tf.int32, shapes=[])
        enqueue = q.enqueue_many([[1, 2, 3]])
        many = q.dequeue_many(3)
        with tf.Session() as sess:
            sess.run(enqueue)
            assert sess.run(many).tolist() == [1, 2, 3]
        with pytest.raises(ValueError):
            tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[])


def test_slices_of_constants_are_enqueued_without_a_copy_fed_values_with_one():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
        start = tf.placeholder(tf.int32, [])             # (a run-time slice: nothing to fold)
        push_const = q.enqueue_many([tf.slice(tf.constant(data), tf.stack([start, 0]), [3, -1])])
        fed = tf.placeholder(tf.float32, [None, 2])
        push_fed = q.enqueue_many([fed])
        batch = q.dequeue_many(3)
        with tf.Session() as sess:
            sess.run(push_const, {start: 1})
            (chunk,), _, _ = q_runs(sess, q)[0]            # a view of the constant's array
            assert not chunk.flags.writeable and chunk.base is not None and \
                chunk.base.tolist() == data.tolist()
            out = sess.run(batch)
            assert out.tolist() == data[1:4].tolist() and out.flags.writeable   # the user's
            out[0] = -1.0                                  # writing it changes nothing else
            user = np.ones((3, 2), np.float32)
            sess.run(push_fed, {fed: user})
            user[:] = 7.0                                  # the queue kept its own copy
            assert sess.run(batch).tolist() == [[1.0, 1.0]] * 3
            sess.run(push_const, {start: 1})
            assert sess.run(batch).tolist() == data[1:4].tolist()


def q_runs(sess, q):
    """The runs (chunk arrays, start, stop) the FIFO queue `q` holds in `sess`."""
    resources = sess._core.device_mgr.devices[0].resource_mgr
    return list(resources.lookup("", q.queue_ref.op.name)._runs)
