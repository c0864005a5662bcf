"""Seeded stateful random ops (and shuffle queues) draw TensorFlow's own numbers, run after run.

The expected values are TensorFlow 2.21's (compat.v1, graph seed 3) for the same graph, ops
created in the same order so that graph-seed-derived op seeds agree too; float32 values are
written as float64 literals of the exact float32 numbers.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.random_philox import PhiloxStream


def _graph():
    tf.set_random_seed(3)
    return {
        "uniform_f32": tf.random_uniform([5], seed=7),
        "uniform_int64": tf.random_uniform([3], -5, 1 << 40, dtype=tf.int64, seed=12),
        "uniform_int32": tf.random_uniform([6], 3, 17, dtype=tf.int32, seed=11),
        "uniform_f16": tf.random_uniform([5], seed=9, dtype=tf.float16),
        "normal_f64": tf.random_normal([3], seed=14, dtype=tf.float64),
        "truncated_f32": tf.truncated_normal([9], seed=16),
        "graph_seed_only": tf.random_uniform([3]),
        "glorot": tf.glorot_uniform_initializer(seed=4)([3, 2]),
        "variance_scaling": tf.variance_scaling_initializer(seed=5)([4, 2]),
        "dropout": tf.nn.dropout(tf.ones([10]), keep_prob=0.5, seed=6),
    }


TF_FIRST_RUN = {
    "uniform_f32": [0.7300214767456055, 0.5961577892303467, 0.37875235080718994,
                    0.03880572319030762, 0.7283852100372314],
    "uniform_int64": [349849249459, 171844958157, 381100935301],
    "uniform_f16": [0.798828125, 0.24609375, 0.3408203125, 0.4970703125, 0.2333984375],
    "normal_f64": [-0.9637983516881887, 0.7228442438550733, 1.302343624338179],
    "truncated_f32": [0.4905015528202057, 1.419224500656128, -0.5844587683677673,
                      0.44267016649246216, 0.6344355344772339, -1.5713945627212524,
                      -1.4912441968917847, 0.625645637512207, -1.6938730478286743],
    "graph_seed_only": [0.12736403942108154, 0.8146913051605225, 0.8978378772735596],
    "glorot": [0.9283607006072998, -0.2838726043701172, 0.9819536209106445,
               0.6919478178024292, 0.08668041229248047, 1.0058174133300781],
    "variance_scaling": [-0.6450126767158508, 0.42408981919288635, -1.1187317371368408,
                         -0.36447232961654663, 0.09199411422014236, 0.20422017574310303,
                         -0.41842153668403625, 0.06645797938108444],
    "dropout": [2.0, 0.0, 0.0, 2.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0],
}
TF_SECOND_RUN = {
    "uniform_f32": [0.018206238746643066, 0.14788377285003662, 0.06179690361022949,
                    0.5092071294784546, 0.594291090965271],
    "uniform_int32": [3, 4, 16, 13, 9, 8],
    "truncated_f32": [1.413366436958313, -0.6459969878196716, 1.980708360671997,
                      -0.5878288745880127, -1.350796103477478, 0.23923391103744507,
                      0.5621534585952759, 1.4416160583496094, -0.6825242042541504],
    "dropout": [2.0, 2.0, 0.0, 2.0, 0.0, 2.0, 2.0, 2.0, 0.0, 2.0],
}


def _check(got, expected):
    for name, values in expected.items():
        value = np.asarray(got[name])
        np.testing.assert_array_equal(value.ravel().astype(np.float64 if value.dtype.kind == "f"
                                                           else value.dtype), values, name)


def test_seeded_ops_draw_tensorflows_values_run_after_run():
    with tf.Graph().as_default():
        ops = _graph()
        with tf.Session() as sess:
            _check(sess.run(ops), TF_FIRST_RUN)
            _check(sess.run(ops), TF_SECOND_RUN)
        with tf.Session() as sess:   # a new session starts every stream over
            _check(sess.run(ops), TF_FIRST_RUN)


def test_dtypes_of_the_outputs():
    with tf.Graph().as_default():
        ops = _graph()
        with tf.Session() as sess:
            got = sess.run(ops)
    assert got["uniform_f16"].dtype == np.float16 and got["normal_f64"].dtype == np.float64
    assert got["uniform_int64"].dtype == np.int64 and got["uniform_int32"].dtype == np.int32


def test_the_stream_moves_256_blocks_per_value_and_carries_into_the_high_words():
    stream = PhiloxStream(seed=(1 << 40) + 5, seed2=-1)
    assert stream.key == (5, 1 << 8)
    assert stream.reserve(3) == (stream.key, (0, 0, 0xFFFFFFFF, 0xFFFFFFFF))
    assert stream.reserve(0)[1] == (768, 0, 0xFFFFFFFF, 0xFFFFFFFF)
    stream.counter = (1 << 128) - 256          # the 128-bit counter wraps around
    stream.reserve(2)
    assert stream.reserve(1)[1] == (256, 0, 0, 0)


def test_unseeded_ops_differ_between_sessions():
    with tf.Graph().as_default():
        x = tf.random_uniform([8])
        with tf.Session() as a, tf.Session() as b:
            assert not np.array_equal(a.run(x), b.run(x))


def test_empty_outputs_and_the_integer_range_check():
    with tf.Graph().as_default():
        empty = tf.random_uniform([0, 3], seed=1)
        empty_bad_range = tf.random_uniform([0], 5, 5, dtype=tf.int32, seed=1)
        bad_range = tf.random_uniform([2], 5, 5, dtype=tf.int32, seed=1)
        with tf.Session() as sess:
            assert sess.run(empty).shape == (0, 3)
            assert sess.run(empty_bad_range).shape == (0,)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
                sess.run(bad_range)


def test_random_shuffle_and_the_shuffle_queue_give_tensorflows_orders():
    """TF 2.21's orders (graph seed 3): tf.random_shuffle in three runs, and a
    RandomShuffleQueue's dequeues around enqueues and a close, seeded and graph-seeded."""
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        q = tf.RandomShuffleQueue(20, 2, [tf.int64], shapes=[[]], seed=5)
        enqueue = q.enqueue_many([tf.range(10, dtype=tf.int64)])
        enqueue_more = q.enqueue_many([tf.range(100, 105, dtype=tf.int64)])
        take4, take1, close, rest = q.dequeue_many(4), q.dequeue(), q.close(), \
            q.dequeue_up_to(20)
        graph_seeded = tf.RandomShuffleQueue(20, 0, [tf.int64], shapes=[[]])
        fill = graph_seeded.enqueue_many([tf.range(8, dtype=tf.int64)])
        drain = graph_seeded.dequeue_many(8)
        shuffled = tf.random_shuffle(tf.constant(np.arange(6)), seed=9)
        with tf.Session() as sess:
            sess.run(enqueue)
            got = [sess.run(take4).tolist(), int(sess.run(take1))]
            sess.run(enqueue_more)
            got += [sess.run(take4).tolist(), int(sess.run(take1))]
            sess.run(close)
            got.append(sess.run(rest).tolist())
            sess.run(fill)
            got.append(sess.run(drain).tolist())
            got.append([sess.run(shuffled).tolist() for _ in range(3)])
    assert got == [[1, 9, 4, 2], 6, [100, 0, 3, 102], 8, [103, 7, 5, 101, 104],
                   [7, 3, 0, 6, 1, 4, 2, 5],
                   [[2, 0, 3, 5, 1, 4], [3, 4, 1, 5, 0, 2], [2, 4, 0, 1, 3, 5]]]


def test_random_shuffle_of_rows_keeps_rows_whole_and_short_inputs_as_they_are():
    with tf.Graph().as_default():
        rows = tf.random_shuffle(tf.reshape(tf.range(12), [4, 3]), seed=1)
        one_row = tf.random_shuffle(tf.constant([[1, 2, 3]]), seed=1)
        scalar = tf.random_shuffle(tf.constant(7), seed=1)
        with tf.Session() as sess:
            got = sess.run(rows)
            assert sorted(got.tolist()) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
            assert sess.run(one_row).tolist() == [[1, 2, 3]] and sess.run(scalar) == 7


def test_shuffling_one_row_returns_a_copy_not_the_variables_buffer():
    with tf.Graph().as_default():
        v = tf.Variable([[1, 2, 3]])
        shuffled, bump = tf.random_shuffle(v, seed=1), v.assign_add([[10, 10, 10]])
        with tf.Session() as sess:
            sess.run(v.initializer)
            fetched = sess.run(shuffled)
            sess.run(bump)
            assert fetched.tolist() == [[1, 2, 3]]
