"""Kernels of LSTMBlockCell and LSTMBlockCellGrad (ops/rnn_lstm_ops.py).

The forward step is one GEMM ([x, h_prev] @ w + b) and the gate math in NumPy, each
activation one ufunc pass over a [batch, cell] slice written into its output: the same ufuncs
in the same order as the unfused cells (sigmoid as 1 / (1 + exp(-x)), as the Sigmoid kernel),
so outputs are bit for bit those of LSTMCell and BasicLSTMCell. (A compiled loop was measured
6x slower here: numba calls scalar expf/tanhf where NumPy's ufuncs are vectorized.) The
backward step has no transcendental function, so float32/float64 run it as one compiled pass
(kernels/jit.py) writing dicfo and cs_prev_grad; float16 computes in float32.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import linalg
from tensorweave.kernels.jit import LOOP_DTYPES, compiled
from tensorweave.kernels.registry import kernel


def _check_shapes(x, cs_prev, h_prev, w, wci, wcf, wco, b) -> int:
    """The cell size, after TensorFlow's shape checks of LSTMBlockCell's inputs."""
    if x.ndim != 2 or cs_prev.ndim != 2 or h_prev.ndim != 2:
        raise invalid_argument("x, cs_prev and h_prev must be matrices")
    batch, cell = cs_prev.shape
    if x.shape[0] != batch or h_prev.shape != (batch, cell):
        raise invalid_argument("x, cs_prev and h_prev must have the same batch size and cs_prev, "
                               f"h_prev the same cell size: {list(x.shape)}, "
                               f"{list(cs_prev.shape)}, {list(h_prev.shape)}")
    if w.shape != (x.shape[1] + cell, 4 * cell):
        raise invalid_argument(f"w must be [input_size + cell_size, 4 * cell_size] = "
                               f"[{x.shape[1] + cell}, {4 * cell}], got {list(w.shape)}")
    if b.shape != (4 * cell,):
        raise invalid_argument(f"b must be [{4 * cell}], got {list(b.shape)}")
    for name, p in (("wci", wci), ("wcf", wcf), ("wco", wco)):
        if p.shape != (cell,):
            raise invalid_argument(f"{name} must be [{cell}], got {list(p.shape)}")
    return cell


def _sigmoid_into(x, out):
    """1 / (1 + exp(-x)) into `out`: the Sigmoid kernel's ufuncs, in its order."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.reciprocal(out, out=out)


@kernel("LSTMBlockCell")
class LSTMBlockCellKernel:
    """i, cs, f, o, ci, co, h of one LSTM step (the formula in ops/rnn_lstm_ops.py)."""

    def __init__(self, ctx):
        self.forget_bias = float(ctx.attrs["forget_bias"])
        self.cell_clip = float(ctx.attrs["cell_clip"])
        self.peephole = bool(ctx.attrs["use_peephole"])

    def compute(self, ctx, x, cs_prev, h_prev, w, wci, wcf, wco, b):
        n = _check_shapes(x, cs_prev, h_prev, w, wci, wcf, wco, b)
        gates = linalg.matmul(np.concatenate((x, h_prev), axis=1), w)
        gates += b
        gi, gci, gf, go = (gates[:, k * n:(k + 1) * n] for k in range(4))
        if self.peephole:
            gi = gi + wci * cs_prev
        i = _sigmoid_into(gi, np.empty_like(cs_prev))
        f = np.add(gf, cs_prev.dtype.type(self.forget_bias))
        if self.peephole:
            f += wcf * cs_prev
        _sigmoid_into(f, f)
        ci = np.tanh(gci)
        cs = np.multiply(f, cs_prev)
        cs += np.multiply(i, ci)
        if self.cell_clip > 0:
            np.clip(cs, -self.cell_clip, self.cell_clip, out=cs)
        if self.peephole:
            go = go + wco * cs
        o = _sigmoid_into(go, np.empty_like(cs_prev))
        co = np.tanh(cs)
        return i, cs, f, o, ci, co, np.multiply(co, o)


def _block_cell_grad_loop(cs_prev, i, cs, f, o, ci, co, cs_grad, h_grad, wci, wcf, wco,
                          peephole, cs_prev_grad, dicfo):
    """TensorFlow's LSTMBlockCellBprop, element by element: writes cs_prev_grad and dicfo."""
    batch, n = cs_prev.shape
    one = cs_prev.dtype.type(1)
    for r in range(batch):
        for c in range(n):
            o_, co_, h_g, i_, ci_, f_ = o[r, c], co[r, c], h_grad[r, c], i[r, c], ci[r, c], \
                f[r, c]
            do = o_ * (one - o_) * h_g * co_
            dcs = (one - co_ * co_) * h_g * o_ + cs_grad[r, c]
            if peephole:
                dcs = dcs + do * wco[c]
            dci = (one - ci_ * ci_) * dcs * i_
            df = f_ * (one - f_) * dcs * cs_prev[r, c]
            di = i_ * (one - i_) * dcs * ci_
            dicfo[r, c] = di
            dicfo[r, n + c] = dci
            dicfo[r, 2 * n + c] = df
            dicfo[r, 3 * n + c] = do
            prev = dcs * f_
            if peephole:
                prev = prev + di * wci[c] + df * wcf[c]
            cs_prev_grad[r, c] = prev




@kernel("LSTMBlockCellGrad")
class LSTMBlockCellGradKernel:
    """cs_prev_grad, dicfo and the peephole gradients (zeros without peepholes)."""

    def __init__(self, ctx):
        self.peephole = bool(ctx.attrs["use_peephole"])
        self.loop = compiled(_block_cell_grad_loop)

    def compute(self, ctx, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                cs_grad, h_grad):
        n = _check_shapes(x, cs_prev, h_prev, w, wci, wcf, wco, b)
        for name, a in (("i", i), ("cs", cs), ("f", f), ("o", o), ("ci", ci), ("co", co),
                        ("cs_grad", cs_grad), ("h_grad", h_grad)):
            if a.shape != cs_prev.shape:
                raise invalid_argument(f"{name} must be {list(cs_prev.shape)}, got {list(a.shape)}")
        dtype = cs_prev.dtype
        work = dtype if dtype in LOOP_DTYPES else np.dtype(np.float32)
        args = [np.ascontiguousarray(a, dtype=work) for a in
                (cs_prev, i, cs, f, o, ci, co, cs_grad, h_grad, wci, wcf, wco)]
        cs_prev_grad = np.empty(cs_prev.shape, work)
        dicfo = np.empty((cs_prev.shape[0], 4 * n), work)
        self.loop(*args, self.peephole, cs_prev_grad, dicfo)
        if self.peephole:
            p_cs_prev, p_cs = args[0], args[2]
            wci_grad = np.einsum("rc,rc->c", dicfo[:, :n], p_cs_prev)
            wcf_grad = np.einsum("rc,rc->c", dicfo[:, 2 * n:3 * n], p_cs_prev)
            wco_grad = np.einsum("rc,rc->c", dicfo[:, 3 * n:], p_cs)
        else:
            wci_grad, wcf_grad, wco_grad = (np.zeros(n, work) for _ in range(3))
        outs = (cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad)
        if work != dtype:
            outs = tuple(a.astype(dtype) for a in outs)
        return outs
