"""tf.nn.dynamic_rnn / bidirectional_dynamic_rnn against the unrolled static_rnn with the same
variables, plus names, shapes, errors, gradients and a short training run."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor_kind")
RNG = np.random.RandomState(4)
X = RNG.uniform(-1, 1, (3, 5, 2)).astype(np.float32)
LENGTHS = np.array([5, 0, 3], np.int32)


def _cells():
    return {
        "lstm": lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
        "gru": lambda: tf.nn.rnn_cell.GRUCell(3),
        "multi": lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(3),
                                                      tf.nn.rnn_cell.BasicLSTMCell(2)]),
    }


@pytest.mark.parametrize("kind", sorted(_cells()))
@pytest.mark.parametrize("with_lengths", [False, True])
def test_matches_static_rnn_with_shared_variables(kind, with_lengths):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 2])
        lengths = tf.placeholder(tf.int32, [None]) if with_lengths else None
        cell = _cells()[kind]()
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
        with tf.variable_scope("rnn", reuse=True):
            s_out, s_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32,
                                              sequence_length=lengths, scope="rnn")
        assert out.shape.as_list()[:2] == [None, 5]
        feed = {x: X} if lengths is None else {x: X, lengths: LENGTHS}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, st, ref, ref_st = sess.run([out, state, s_out, s_state], feed)
        np.testing.assert_allclose(got, np.stack(ref, 1), atol=1e-6)
        for a, b in zip(_flat(st), _flat(ref_st)):
            np.testing.assert_allclose(a, b, atol=1e-6)


def _flat(x):
    from tensorweave.framework import nest
    return nest.flatten(x)


def test_names_time_major_errors_and_bidirectional():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 2])
        with pytest.raises(ValueError, match="dtype"):
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x)
        with pytest.raises(TypeError):
            tf.nn.dynamic_rnn(object(), x, dtype=tf.float32)
        cell = tf.nn.rnn_cell.LSTMCell(4)
        out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        assert sorted(v.name for v in tf.global_variables()) == \
            ["rnn/lstm_cell/bias:0", "rnn/lstm_cell/kernel:0"]
        with tf.variable_scope("rnn", reuse=True):
            major, _ = tf.nn.dynamic_rnn(cell, tf.transpose(x, [1, 0, 2]), dtype=tf.float32,
                                         time_major=True, scope="rnn")
        (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(3), x, dtype=tf.float32,
            sequence_length=tf.constant(LENGTHS))
        names = {v.op.name for v in tf.global_variables()}
        assert "bidirectional_rnn/fw/gru_cell/gates/kernel" in names
        assert "bidirectional_rnn/bw/gru_cell/candidate/bias" in names
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([out, major], {x: X})
            np.testing.assert_allclose(np.transpose(a, [1, 0, 2]), b, atol=1e-6)
            f, r = sess.run([fw, bw], {x: X})
            assert f.shape == r.shape == (3, 5, 3)
            assert np.all(r[1] == 0) and np.all(r[2, 3:] == 0)


def test_gradient_of_dynamic_rnn_against_numerical_differentiation():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float64, [2, 4, 2])
        cell = tf.nn.rnn_cell.GRUCell(3)
        out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64,
                                   sequence_length=tf.constant([4, 2]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            err = tf.test.compute_gradient_error(x, [2, 4, 2], out, [2, 4, 3],
                                                 x_init_value=RNG.uniform(-1, 1, (2, 4, 2)))
        assert err < 1e-6


def test_training_an_lstm_through_dynamic_rnn_lowers_the_loss():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 8, 1])
        y = tf.placeholder(tf.float32, [None, 8, 1])
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(8), x, dtype=tf.float32)
        pred = tf.layers.dense(out, 1)
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.train.AdamOptimizer(0.02).minimize(loss)
        rng = np.random.RandomState(0)
        xs = rng.uniform(-1, 1, (64, 8, 1)).astype(np.float32)
        ys = np.concatenate([np.zeros((64, 1, 1), np.float32), xs[:, :-1]], 1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = sess.run(loss, {x: xs, y: ys})
            for _ in range(150):
                sess.run(train, {x: xs, y: ys})
            end = sess.run(loss, {x: xs, y: ys})
    assert end < start / 5, (start, end)
