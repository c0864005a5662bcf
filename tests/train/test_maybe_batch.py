"""tf.train.maybe_batch, maybe_batch_join, maybe_shuffle_batch and maybe_shuffle_batch_join:
what `keep_input` lets through, the ops TensorFlow builds for it (checked against TF 2.21's
graphs) and its build-time checks."""
import numpy as np
import pytest

import tensorweave as tf

BOUNDED = tf.RunOptions(timeout_in_ms=5000)
X = np.arange(6)


def _batches(build, steps):
    """Runs the queue runners and fetches `steps` batches (OutOfRange ends early)."""
    with tf.Graph().as_default() as g:
        out = build()
        types = {op.type for op in g.get_operations()}
        got = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                for _ in range(steps):
                    got.append(sess.run(out, options=BOUNDED))
            except tf.errors.OutOfRangeError:
                got.append("end")
            coord.request_stop()
            sess.close()
            coord.join(threads, stop_grace_period_secs=5)
    return types, got


def _producer_index():
    return tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()


def test_vector_keep_input_selects_examples_with_dynamic_partition():
    types, got = _batches(lambda: tf.train.maybe_batch(
        [tf.constant(X)], tf.constant(X % 2 == 0), 3, enqueue_many=True), 2)
    assert "DynamicPartition" in types and "Switch" not in types
    assert [g.tolist() for g in got] == [[0, 2, 4], [0, 2, 4]]


def test_scalar_tensor_keep_input_guards_the_enqueue_with_a_cond():
    def build():
        i = _producer_index()
        return tf.train.maybe_batch([i], tf.equal(i % 3, 0), 2, allow_smaller_final_batch=True)
    types, got = _batches(build, 3)
    assert {"Switch", "Merge", "NoOp"} <= types
    assert got[0].tolist() == [0, 3] and got[1] == "end"


def test_known_keep_input_needs_no_cond():
    types, got = _batches(lambda: tf.train.maybe_batch(
        [tf.constant(X)], True, 3, enqueue_many=True), 2)
    assert not types & {"Switch", "DynamicPartition"}
    assert [g.tolist() for g in got] == [[0, 1, 2], [3, 4, 5]]
    with tf.Graph().as_default() as g:
        tf.train.maybe_batch([tf.constant(X)], False, 3, enqueue_many=True)
        types = {op.type for op in g.get_operations()}
    assert "NoOp" in types and "QueueEnqueueManyV2" not in types


def test_join_keeps_only_selected_examples_of_every_list():
    def build():
        i = _producer_index()
        return tf.train.maybe_batch_join([[i], [i + 100]], tf.less(i, 2), 4,
                                         allow_smaller_final_batch=True)
    _, got = _batches(build, 2)
    # Each list's enqueue dequeues its own index: the kept ones are 0 and 1, from either list.
    assert got[1] == "end" and sorted(v % 100 for v in got[0]) == [0, 1]


@pytest.mark.parametrize("fn", ["maybe_shuffle_batch", "maybe_shuffle_batch_join"])
def test_shuffle_forms_draw_only_kept_examples(fn):
    def build():
        tensors = [tf.constant(X)]
        return getattr(tf.train, fn)(tensors if fn == "maybe_shuffle_batch" else [tensors], 6,
                                     10, 0, tf.constant(X < 3), enqueue_many=True, seed=1)
    types, got = _batches(build, 2)
    assert "RandomShuffleQueueV2" in types and "DynamicPartition" in types
    assert all(set(g.tolist()) <= {0, 1, 2} and len(g) == 6 for g in got)


def test_dict_input_keeps_its_structure():
    _, got = _batches(lambda: tf.train.maybe_batch(
        {"x": tf.constant(X), "y": tf.constant(X * 10)}, tf.constant(X >= 3), 3,
        enqueue_many=True), 1)
    assert got[0]["x"].tolist() == [3, 4, 5] and got[0]["y"].tolist() == [30, 40, 50]


@pytest.mark.parametrize("build,message", [
    (lambda: tf.train.maybe_batch([tf.constant(X)], tf.constant(X < 3), 3),
     "`keep_input` cannot be a vector when `enqueue_many=False`."),
    (lambda: tf.train.maybe_batch([tf.constant(X)], tf.placeholder(tf.bool), 3),
     "`keep_input` dimensions must be known at graph construction."),
    (lambda: tf.train.maybe_batch([tf.constant(X)], [[True]], 3, enqueue_many=True),
     "`keep_input` must be 0 or 1 dimensions."),
    (lambda: tf.train.maybe_shuffle_batch([tf.constant(X)], 3, 5, 5, True),
     "capacity 5 must be bigger than min_after_dequeue 5."),
])
def test_build_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            build()
