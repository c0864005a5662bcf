"""Building tf.data pipelines and iterators takes op seeds from the graph as TensorFlow does.

With a graph seed and no op seed, an op's seed is the number of such seeds the graph handed out
before (TensorFlow 2.21's compat.v1 `get_seed` counts them per graph; ops made inside dataset
functions count in their function's graph). So every call that takes one shifts the seeds, and
with them the orders and values, of all the unseeded random ops and shuffles built after it.
The expected counts and values are TensorFlow 2.21's for the same programs.
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def _one_shot(dataset):
    return tf.data.make_one_shot_iterator(dataset)


def _reinitializable():
    it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    it.make_initializer(D.range(3))
    it.make_initializer(D.range(5))
    it.get_next()


def _string_handles():
    it = _one_shot(D.range(3))
    it.string_handle()
    it.string_handle(name="h")
    it.get_next()


def _from_string_handle():
    handle = tf.placeholder(tf.string, [])
    tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([])).get_next()


def _refused_one_shot():
    v = tf.Variable(1, dtype=tf.int64)
    with pytest.raises(ValueError, match="Cannot capture a stateful node"):
        _one_shot(D.range(3).map(lambda x: x + v))


# name: (what to build, the op seeds it takes in TensorFlow)
SEEDS_TAKEN = {
    "range": (lambda: D.range(3), 0),
    "from_tensor_slices": (lambda: D.from_tensor_slices(([1, 2], [3.0, 4.0])), 0),
    "map_random_inside": (
        lambda: D.range(3).map(lambda x: tf.random_uniform([]) + tf.cast(x, tf.float32)), 0),
    "interleave_shuffle_inside": (
        lambda: D.range(3).interleave(lambda x: D.range(x).shuffle(2), cycle_length=2), 0),
    "batch_padded_batch": (lambda: D.range(3).map(tf.range).padded_batch(2, [None]).batch(1), 0),
    "repeat_prefetch_zip_cache": (
        lambda: D.zip((D.range(3).repeat(2), D.range(3).cache())).prefetch(1), 0),
    "shuffle": (lambda: D.range(3).shuffle(3), 1),
    "shuffle_with_op_seed": (lambda: D.range(3).shuffle(3, seed=9), 0),
    "list_files": (lambda: D.list_files("/nonexistent/*"), 1),
    "one_shot": (lambda: _one_shot(D.range(3)).get_next(), 1),
    "one_shot_method": (lambda: D.range(3).make_one_shot_iterator(), 1),
    "one_shot_of_shuffle": (lambda: _one_shot(D.range(3).shuffle(3)), 2),
    "two_one_shots": (lambda: (_one_shot(D.range(3)), _one_shot(D.range(4))), 2),
    "initializable": (lambda: tf.data.make_initializable_iterator(D.range(3)).get_next(), 0),
    "reinitializable": (_reinitializable, 0),
    "string_handles": (_string_handles, 1),
    "from_string_handle": (_from_string_handle, 0),
    "one_shot_refused": (_refused_one_shot, 1),   # taken before the capture is checked
}


@pytest.mark.parametrize("name", sorted(SEEDS_TAKEN))
def test_building_takes_tensorflows_number_of_op_seeds(name):
    build, taken = SEEDS_TAKEN[name]
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        build()
        assert tf.get_seed(None) == (5, taken)


def test_one_shot_iterator_takes_no_seed_without_a_graph_seed():
    with tf.Graph().as_default():
        _one_shot(D.range(3))
        tf.set_random_seed(5)
        assert tf.get_seed(None) == (5, 0)


def _drain(nxt, sess, n):
    return [np.asarray(sess.run(nxt)).tolist() for _ in range(n)]


def test_shuffle_after_one_shot_iterator_gives_tensorflows_order():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        _one_shot(D.range(8))                      # e.g. a train pipeline
        nxt = _one_shot(D.range(8).shuffle(8)).get_next()
        with tf.Session() as sess:
            assert _drain(nxt, sess, 8) == [2, 4, 1, 0, 5, 7, 6, 3]


def test_train_and_eval_pipelines_then_initializers_give_tensorflows_values():
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        x = np.arange(20, dtype=np.float32)
        train = D.from_tensor_slices(x).shuffle(20).map(lambda v: v * 2).batch(4).repeat()
        train_next = _one_shot(train).get_next()
        evaluation = tf.data.make_initializable_iterator(D.from_tensor_slices(x).shuffle(10)
                                                         .batch(5))
        eval_next = evaluation.get_next()
        w = tf.Variable(tf.random_normal([3]))
        b = tf.get_variable("b", [2], initializer=tf.random_normal_initializer())
        u = tf.random_uniform([2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert _drain(train_next, sess, 2) == [[4.0, 12.0, 30.0, 10.0],
                                                   [8.0, 18.0, 38.0, 2.0]]
            sess.run(evaluation.initializer)
            assert _drain(eval_next, sess, 2) == [[0.0, 7.0, 4.0, 12.0, 3.0],
                                                  [14.0, 11.0, 1.0, 16.0, 2.0]]
            np.testing.assert_allclose(sess.run(w), [0.80215, 0.50568, 1.81201], atol=1e-5)
            np.testing.assert_allclose(sess.run(b), [-0.56449, 3.03292], atol=1e-5)
            np.testing.assert_allclose(sess.run(u), [0.02621, 0.43447], atol=1e-5)


def test_feedable_iterator_then_shuffle_and_random_normal_give_tensorflows_values():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        train, val = D.range(12).shuffle(12).repeat(), D.range(100, 108).shuffle(8)
        train, val = _one_shot(train), _one_shot(val)
        handle = tf.placeholder(tf.string, [])
        nxt = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([])).get_next()
        train_handle, val_handle = train.string_handle(), val.string_handle()
        later = _one_shot(D.range(6).shuffle(6)).get_next()
        r = tf.random_normal([3])
        with tf.Session() as sess:
            th, vh = sess.run([train_handle, val_handle])
            assert [int(sess.run(nxt, {handle: th})) for _ in range(6)] == [5, 4, 0, 2, 1, 7]
            assert [int(sess.run(nxt, {handle: vh})) for _ in range(4)] == [107, 102, 100, 106]
            assert _drain(later, sess, 6) == [5, 2, 3, 4, 0, 1]
            np.testing.assert_allclose(sess.run(r), [0.20755, 0.5389, -1.50061], atol=1e-5)
