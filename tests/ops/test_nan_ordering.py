"""NaN in top_k, argmax/argmin and unique: TensorFlow 2.21's results (checked with run_with_tf)."""
import numpy as np

import tensorweave as tf

NAN = np.nan


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_top_k_ranks_nan_above_every_number():
    with tf.Graph().as_default():
        values, indices = _run(list(tf.nn.top_k(tf.constant([1.0, NAN, 3.0]), 2)))
        inf_values, inf_indices = _run(list(tf.nn.top_k(tf.constant([np.inf, NAN, 1.0]), 3)))
    assert np.isnan(values[0]) and values[1] == 3.0 and indices.tolist() == [1, 2]
    assert inf_values[0] == np.inf and np.isnan(inf_values[1]) and inf_indices.tolist() == [0, 1, 2]


def test_argmax_and_argmin_never_pick_a_nan():
    with tf.Graph().as_default():
        got = _run([tf.argmax(tf.constant([1.0, NAN, 3.0])),
                    tf.argmin(tf.constant([1.0, NAN, 0.0])),
                    tf.argmax(tf.constant([NAN, 1.0])),
                    tf.argmax(tf.constant([NAN, NAN])),
                    tf.argmin(tf.constant([[NAN, 2.0], [3.0, NAN]]), 1)])
    assert [int(g) for g in got[:4]] == [2, 2, 1, 0] and got[4].tolist() == [1, 0]


def test_unique_keeps_each_nan():
    with tf.Graph().as_default():
        values, idx = _run(list(tf.unique(tf.constant([NAN, NAN, 0.0, 0.0]))))
    assert np.isnan(values[:2]).all() and values[2] == 0.0 and idx.tolist() == [0, 1, 2, 2]
