"""tf.train input producers, limit_epochs (CountUpTo) and the batching functions."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.bounded import drain

BOUNDED = tf.RunOptions(timeout_in_ms=5000)


class Running:
    """A session with local variables initialized and queue runners started and stopped."""

    def __init__(self, graph):
        self.sess = tf.Session(graph=graph)
        self.coord = tf.train.Coordinator()

    def __enter__(self):
        with self.sess.graph.as_default():
            init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        self.sess.run(init)
        self.threads = tf.train.start_queue_runners(self.sess, self.coord)
        return self.sess

    def __exit__(self, *exc):
        self.coord.request_stop()
        self.coord.join(self.threads, stop_grace_period_secs=5)
        self.sess.close()


def _drain(sess, tensor):
    return drain(sess, tensor, options=BOUNDED)


def test_count_up_to_and_limit_epochs():
    with tf.Graph().as_default() as g:
        v = tf.Variable(np.int64(0), name="v")
        count = tf.count_up_to(v, 2)
        assert count.op.type == "CountUpTo" and count.dtype == tf.int64
        limited = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
        assert limited.op.name == "limit_epochs"
        assert [x.op.name for x in tf.local_variables()] == ["limit_epochs/epochs"]
        assert tf.train.limit_epochs(limited) is limited
        with pytest.raises(ValueError, match="num_epochs must be > 0"):
            tf.train.limit_epochs(limited, 0)
    with tf.Session(graph=g) as sess:
        sess.run([v.initializer, tf.local_variables()[0].initializer])
        assert [sess.run(count), sess.run(count)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(count)
        assert len(_drain(sess, limited)) == 2


def test_slice_input_producer_and_batch_with_smaller_final_batch():
    with tf.Graph().as_default() as g:
        data = np.arange(10, dtype=np.int32)
        (element,) = tf.train.slice_input_producer([tf.constant(data)], num_epochs=1,
                                                   shuffle=False)
        batch = tf.train.batch([element], batch_size=4, allow_smaller_final_batch=True)
        assert batch.op.name == "batch" and batch.shape.as_list() == [None]
    with Running(g) as sess:
        batches = [b.tolist() for b in _drain(sess, batch)]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_string_and_range_producers_shuffle_each_epoch():
    with tf.Graph().as_default() as g:
        tf.set_random_seed(1)
        names = tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, seed=3)
        numbers = tf.train.range_input_producer(5, num_epochs=1, shuffle=False)
        assert names.queue_ref.op.name == "input_producer" and names.dtypes == [tf.string]
        with pytest.raises(ValueError, match="non-null"):
            tf.train.string_input_producer([])
        name, number = names.dequeue(), numbers.dequeue()
    with Running(g) as sess:
        got = _drain(sess, name)
        assert sorted(got) == [b"a", b"a", b"b", b"b", b"c", b"c"]
        assert _drain(sess, number) == [0, 1, 2, 3, 4]


def test_batch_structures_enqueue_many_and_dynamic_pad():
    with tf.Graph().as_default() as g:
        x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([4, 5])
        as_dict = tf.train.batch({"b": x, "a": y}, 2)
        assert sorted(as_dict) == ["a", "b"] and as_dict["b"].shape.as_list() == [2, 3]
        as_list = tf.train.batch((x, y), 2)
        assert isinstance(as_list, list) and as_list[1].shape.as_list() == [2, 2]
        many = tf.train.batch([tf.reshape(tf.range(8), [4, 2])], 3, enqueue_many=True)
        assert many.shape.as_list() == [3, 2]
        ragged = tf.placeholder_with_default(tf.constant([1, 2, 3]), [None])
        padded = tf.train.batch([ragged], 2, dynamic_pad=True)
        assert padded.shape.as_list() == [2, None]
        with pytest.raises(ValueError, match="fully defined"):
            tf.train.batch([ragged], 2)
    with Running(g) as sess:
        got = sess.run(as_dict, options=BOUNDED)
        assert got["a"].tolist() == [[4, 5], [4, 5]]
        assert sess.run(many, options=BOUNDED).tolist() == [[0, 1], [2, 3], [4, 5]]
        assert sess.run(padded, options=BOUNDED).tolist() == [[1, 2, 3], [1, 2, 3]]


def test_shuffle_batch_and_join_variants():
    with tf.Graph().as_default() as g:
        (element,) = tf.train.slice_input_producer(
            [tf.constant(np.arange(20, dtype=np.int32))], num_epochs=1, shuffle=False)
        shuffled = tf.train.shuffle_batch([element], 5, capacity=20, min_after_dequeue=5,
                                          seed=2, allow_smaller_final_batch=True)
        assert shuffled.op.name == "shuffle_batch"
        assert shuffled.op.inputs[0].op.type == "RandomShuffleQueueV2"
        joined = tf.train.batch_join([[tf.constant(1)], [tf.constant(2)]], 4)
        shuffled_join = tf.train.shuffle_batch_join([[tf.constant(7)]] * 2, 3, capacity=10,
                                                    min_after_dequeue=2)
        runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert [len(r.enqueue_ops) for r in runners][-2:] == [2, 2]
    with Running(g) as sess:
        seen = np.concatenate(_drain(sess, shuffled)).tolist()
        assert sorted(seen) == list(range(20)) and seen != list(range(20))
        assert set(sess.run(joined, options=BOUNDED).tolist()) <= {1, 2}
        assert sess.run(shuffled_join, options=BOUNDED).tolist() == [7, 7, 7]


def test_input_producer_queue_and_dequeue_are_named_as_in_tensorflow():
    # TensorFlow 2.21 passes name=None to the FIFOQueue, which takes its op type as its name.
    with tf.Graph().as_default():
        queue = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), shuffle=False)
        assert queue.name == "input_producer/FIFOQueueV2"
        assert queue.dequeue().name == "FIFOQueueV2_Dequeue:0"
        assert tf.train.string_input_producer(["a"], shuffle=False).name == "input_producer_1"
        assert tf.train.range_input_producer(5, shuffle=False).name == "input_producer_2"
        (row,) = tf.train.slice_input_producer([tf.constant([1, 2])], shuffle=False)
        assert row.name == "input_producer_3/GatherV2:0"


def test_shuffle_batch_checks_capacity_before_making_any_op():
    with tf.Graph().as_default() as g:
        x = tf.constant(1)
        before = len(g.get_operations())
        for capacity, min_after_dequeue in ((5, 5), (5, 10)):
            with pytest.raises(ValueError, match=f"capacity {capacity} must be bigger than "
                                                 f"min_after_dequeue {min_after_dequeue}\\."):
                tf.train.shuffle_batch([x], 2, capacity=capacity,
                                       min_after_dequeue=min_after_dequeue)
        assert len(g.get_operations()) == before
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == []
        # TensorFlow's shuffle_batch_join does not check; the scopes used above stay used.
        joined = tf.train.shuffle_batch_join([[x]], 2, capacity=5, min_after_dequeue=10)
        assert joined.shape.as_list() == [2]
        assert tf.train.shuffle_batch([x], 2, capacity=5, min_after_dequeue=4).op.name == \
            "shuffle_batch_2"


def test_batching_validates_tensors_then_dtypes_then_shapes():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2], [3, 4], [5, 6]])
        for join in (tf.train.batch_join,
                     lambda lists, n: tf.train.shuffle_batch_join(lists, n, 10, 2)):
            with pytest.raises(TypeError,
                               match=r"Expected types to be consistent: int32 vs\. float32\."):
                join([[x], [tf.constant([1.0])]], 2)
        with pytest.raises(TypeError, match="Expected types to be consistent"):
            tf.train.batch_join([{"a": x}, {"a": tf.constant([1.0])}], 2)
        with pytest.raises(ValueError, match=r"Shapes \(3, 2\) and \(1,\) are not compatible"):
            tf.train.batch_join([[x], [tf.constant([1])]], 2)
        with pytest.raises(ValueError, match=r"Expected at least one tensor in batch\(\)\."):
            tf.train.batch([], batch_size=2)
        with pytest.raises(ValueError, match="Expected at least one set of tensors"):
            tf.train.batch_join([], batch_size=2)
