"""tf.nn.raw_rnn: a loop_fn that reads a TensorArray of inputs until each row's length
reproduces dynamic_rnn; custom emits, loop states and errors (names checked against TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf

T, B, D, UNITS = 5, 3, 2, 4
X = np.random.RandomState(0).rand(T, B, D).astype(np.float32)
LENGTHS = np.array([5, 2, 3], np.int32)


def _reading_loop_fn(cell, inputs_ta, lengths, emit=None):
    """TF's documented loop_fn: read step `time` until each row's length, count the steps."""
    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            state, loop_state = cell.zero_state(B, tf.float32), tf.constant(0.0)
            out = emit
        else:
            state, loop_state, out = cell_state, loop_state + 1.0, cell_output
            if emit is not None:
                out = (cell_output, tf.cast(tf.fill([B], time), tf.int64))
        finished = time >= lengths
        next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([B, D]),
                             lambda: inputs_ta.read(time))
        return finished, next_input, state, out, loop_state
    return loop_fn


def test_raw_rnn_matches_dynamic_rnn():
    with tf.Graph().as_default():
        inputs, lengths = tf.constant(X), tf.constant(LENGTHS)
        inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(inputs)
        cell = tf.nn.rnn_cell.BasicRNNCell(UNITS)
        emit_ta, state, steps = tf.nn.raw_rnn(cell, _reading_loop_fn(cell, inputs_ta, lengths))
        outputs = emit_ta.stack()
        assert outputs.shape.as_list() == [None, B, UNITS] and state.shape.as_list() == [B, 4]
        assert steps.op.name == "rnn/while/Exit_5"
        ref_out, ref_state = tf.nn.dynamic_rnn(cell, inputs, sequence_length=lengths,
                                               time_major=True, dtype=tf.float32)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "rnn/basic_rnn_cell/bias", "rnn/basic_rnn_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, got_state, n, ref, ref_s = sess.run([outputs, state, steps, ref_out,
                                                      ref_state])
    assert n == 5.0
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got_state, ref_s, rtol=1e-6)
    assert np.all(got[2:, 1] == 0) and np.all(got[3:, 2] == 0) and np.any(got[4, 0] != 0)


def test_raw_rnn_custom_emit_structure():
    with tf.Graph().as_default():
        inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(tf.constant(X))
        cell = tf.nn.rnn_cell.GRUCell(UNITS)
        emit = (tf.zeros([UNITS]), tf.zeros([], tf.int64))
        emit_ta, _, _ = tf.nn.raw_rnn(cell, _reading_loop_fn(
            cell, inputs_ta, tf.constant(LENGTHS), emit), scope="custom")
        outputs, times = emit_ta[0].stack(), emit_ta[1].stack()
        assert times.dtype == tf.int64
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, t = sess.run([outputs, times])
    assert out.shape == (5, B, UNITS)
    # a finished row emits zeros; the others the step number (time + 1)
    expected = np.where(np.arange(5)[:, None] < LENGTHS[None, :], np.arange(1, 6)[:, None], 0)
    np.testing.assert_array_equal(t, expected)


def test_raw_rnn_without_loop_state():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(UNITS)

        def loop_fn(time, cell_output, cell_state, loop_state):
            state = cell.zero_state(B, tf.float32) if cell_output is None else cell_state
            return time >= 2, tf.ones([B, D]), state, cell_output, None
        emit_ta, state, loop_state = tf.nn.raw_rnn(cell, loop_fn)
        assert loop_state is None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(emit_ta.size()) == 2


def test_raw_rnn_errors():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(UNITS)
        with pytest.raises(TypeError, match="Argument `loop_fn` must be a callable"):
            tf.nn.raw_rnn(cell, 3)
        with pytest.raises(TypeError):
            tf.nn.raw_rnn("not a cell", lambda *a: None)

        def bad_state(time, cell_output, cell_state, loop_state):
            return tf.constant([True] * B), tf.ones([B, D]), (tf.zeros([B, UNITS]),) * 2, \
                None, None
        with pytest.raises((ValueError, TypeError)):
            tf.nn.raw_rnn(cell, bad_state)
