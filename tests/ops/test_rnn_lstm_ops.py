"""LSTMBlockCell and LSTMBlockCellGrad against NumPy references of TensorFlow's formulas;
LSTMBlockCell's gradient (through cs and h, the outputs it differentiates) against central
differences, with and without peepholes; shape checks and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.rnn_lstm_ops import LSTMBlockCellGrad, lstm_block_cell
from tensorweave.testing.op_case import OpCase, case_tests

BATCH, DEPTH, CELL = 3, 4, 5
F32_64 = (tf.float32, tf.float64)


def _u(*shape, scale=1.0):
    return lambda rng, dt: (rng.uniform(-1, 1, shape) * scale).astype(dt)


_CELL_INPUTS = [_u(BATCH, DEPTH), _u(BATCH, CELL, scale=2), _u(BATCH, CELL),
                _u(DEPTH + CELL, 4 * CELL, scale=0.7), _u(CELL), _u(CELL), _u(CELL),
                _u(4 * CELL)]


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def ref_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1.0, cell_clip=3.0,
                   use_peephole=False):
    """TensorFlow's LSTMBlockCell in float64: gate columns i, ci, f, o."""
    dt = x.dtype
    x, cs_prev, h_prev, w, wci, wcf, wco, b = (a.astype(np.float64) for a in (
        x, cs_prev, h_prev, w, wci, wcf, wco, b))
    if not use_peephole:
        wci = wcf = wco = np.zeros_like(wci)
    gi, gci, gf, go = np.split(np.concatenate([x, h_prev], 1) @ w + b, 4, 1)
    i = _sigmoid(gi + cs_prev * wci)
    f = _sigmoid(gf + forget_bias + cs_prev * wcf)
    ci = np.tanh(gci)
    cs = ci * i + cs_prev * f
    if cell_clip > 0:
        cs = np.clip(cs, -cell_clip, cell_clip)
    o = _sigmoid(go + cs * wco)
    co = np.tanh(cs)
    return [a.astype(dt) for a in (i, cs, f, o, ci, co, co * o)]


def ref_block_cell_grad(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, cs_grad,
                        h_grad, use_peephole=False):
    """TensorFlow's LSTMBlockCellBprop in float64: (cs_prev_grad, dicfo, wci/wcf/wco grads)."""
    dt = x.dtype
    cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad = (a.astype(np.float64) for a in (
        cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad))
    do = o * (1 - o) * h_grad * co
    dcs = (1 - co * co) * h_grad * o + cs_grad
    if use_peephole:
        dcs = dcs + do * wco
    dci = (1 - ci * ci) * dcs * i
    df = f * (1 - f) * dcs * cs_prev
    di = i * (1 - i) * dcs * ci
    cs_prev_grad = dcs * f
    if use_peephole:
        cs_prev_grad = cs_prev_grad + di * wci + df * wcf
        peep = [(di * cs_prev).sum(0), (df * cs_prev).sum(0), (do * cs).sum(0)]
    else:
        peep = [np.zeros(cs.shape[1])] * 3
    return [a.astype(dt) for a in (cs_prev_grad, np.concatenate([di, dci, df, do], 1), *peep)]


def _cell(outputs=None, **attrs):
    """Builder of LSTMBlockCell: every output, or the ones at `outputs`."""
    def build(*args):
        outs = lstm_block_cell(*args, **attrs)
        return outs if outputs is None else [outs[k] for k in outputs]
    return build


def _cell_ref(outputs=None, **attrs):
    def ref(*args):
        outs = ref_block_cell(*args, **attrs)
        return outs if outputs is None else [outs[k] for k in outputs]
    return ref


def _grad_inputs():
    """Forward inputs, then gate values from the forward reference, then cs/h gradients."""
    def gate(k):
        def make(rng, dt):
            args = [spec(np.random.RandomState(0), np.float64) for spec in _CELL_INPUTS]
            return ref_block_cell(*args)[k].astype(dt)
        return make
    return [*_CELL_INPUTS, *(gate(k) for k in range(6)), _u(BATCH, CELL), _u(BATCH, CELL)]


def _grad_op(use_peephole):
    return lambda *args: apply_op(LSTMBlockCellGrad, list(args), {"use_peephole": use_peephole})


_CS_H = (1, 6)   # the outputs LSTMBlockCell's gradient differentiates (as TensorFlow's)

CASES = [
    OpCase("lstm_block_cell", _cell(), _cell_ref(), _CELL_INPUTS, F32_64, grad=False),
    OpCase("lstm_block_cell_peephole_clip",
           _cell(forget_bias=0.5, cell_clip=0.4, use_peephole=True),
           _cell_ref(forget_bias=0.5, cell_clip=0.4, use_peephole=True), _CELL_INPUTS, F32_64,
           grad=False),
    OpCase("lstm_block_cell_cs_h", _cell(_CS_H, cell_clip=-1.0),
           _cell_ref(_CS_H, cell_clip=-1.0), _CELL_INPUTS, F32_64),
    OpCase("lstm_block_cell_peephole_cs_h",
           _cell(_CS_H, forget_bias=0.0, cell_clip=-1.0, use_peephole=True),
           _cell_ref(_CS_H, forget_bias=0.0, cell_clip=-1.0, use_peephole=True), _CELL_INPUTS,
           F32_64),
    OpCase("lstm_block_cell_grad", _grad_op(False), ref_block_cell_grad, _grad_inputs(),
           F32_64, grad=False),
    OpCase("lstm_block_cell_grad_peephole", _grad_op(True),
           lambda *a: ref_block_cell_grad(*a, use_peephole=True), _grad_inputs(), F32_64,
           grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_half_precision_follows_float32():
    """float16 runs the same formulas (the gradient loop computes in float32)."""
    rng = np.random.RandomState(0)
    args = [spec(rng, np.float16) for spec in _grad_inputs()]
    with tf.Graph().as_default():
        outs = _grad_op(True)(*[tf.constant(a) for a in args])
        fwd = lstm_block_cell(*[tf.constant(a) for a in args[:8]])
        with tf.Session() as sess:
            got, got_fwd = sess.run([outs, fwd])
    for g, want in zip(got, ref_block_cell_grad(*args, use_peephole=True)):
        assert g.dtype == np.float16
        np.testing.assert_allclose(g, want, rtol=1e-2, atol=1e-2)
    for g, want in zip(got_fwd, ref_block_cell(*args[:8])):
        assert g.dtype == np.float16
        np.testing.assert_allclose(g, want, rtol=1e-2, atol=1e-2)


def test_static_shapes_merge_all_inputs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        cs = tf.placeholder(tf.float32, [7, None])
        h = tf.placeholder(tf.float32, None)
        w = tf.placeholder(tf.float32, [9, 20])
        vec = tf.placeholder(tf.float32, [None])
        outs = lstm_block_cell(x, cs, h, w, vec, vec, vec, tf.placeholder(tf.float32, [20]))
        assert [o.shape.as_list() for o in outs] == [[7, 5]] * 7
        with pytest.raises(ValueError, match="multiple of 4"):
            lstm_block_cell(x, cs, h, tf.placeholder(tf.float32, [9, 18]), vec, vec, vec,
                            tf.placeholder(tf.float32, [None]))
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            lstm_block_cell(x, cs, h, w, vec, vec, vec, tf.placeholder(tf.float32, [24]))


def test_kernel_rejects_a_mismatched_weight_matrix():
    rng = np.random.RandomState(0)
    args = [spec(rng, np.float32) for spec in _CELL_INPUTS]
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32) for _ in args]
        outs = lstm_block_cell(*holders)
        args[3] = args[3][1:]
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match="w must be"):
            sess.run(outs, dict(zip(holders, args)))


def test_gradient_ignores_the_cell_clip_like_tensorflow():
    """TensorFlow's backward pass treats the clip as the identity: the gradient with a clip
    equals the one without it at the same (clipped) gate values."""
    rng = np.random.RandomState(3)
    args = [spec(rng, np.float64) for spec in _CELL_INPUTS]
    grads = []
    with tf.Graph().as_default():
        consts = [tf.constant(a) for a in args]
        for clip in (0.1, -1.0):
            _, cs, *_ = lstm_block_cell(*consts, cell_clip=clip)
            grads.append(tf.gradients(tf.reduce_sum(cs), consts[1])[0])
        with tf.Session() as sess:
            clipped, free = sess.run(grads)
    np.testing.assert_array_equal(clipped, free)
