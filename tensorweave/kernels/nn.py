"""Kernels of the activations and their gradient helpers, BiasAdd/BiasAddGrad and InTopKV2.

Activations avoid masked selection (`np.where` on a random mask is several times slower than
arithmetic here): piecewise functions are written with `maximum`/`minimum` (ELU is
max(x, 0) + expm1(min(x, 0))) and gradient masks are cast to the value dtype and multiplied in
place, as TensorFlow's Eigen kernels do. Every kernel returns its input's dtype: NumPy keeps it
for arrays combined with Python scalars.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import bias_rows
from tensorweave.kernels.jit import LOOP_DTYPES, compiled
from tensorweave.kernels.registry import kernel, register_pure

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _mask(condition, like):
    """The bool `condition` as 0/1 of `like`'s dtype (a fresh buffer the caller may reuse)."""
    return condition.astype(like.dtype)


def _into(buffer):
    """`buffer` as a ufunc's `out=`: a 0-d result is a NumPy scalar, which cannot be written
    into (NumPy returns scalars for 0-d operands), so it gets a fresh result instead."""
    return buffer if isinstance(buffer, np.ndarray) else None


# --- activations ----------------------------------------------------------------------------
def _relu(x):
    return np.maximum(x, x.dtype.type(0))


def _relu_grad_loop(g, x, out):
    for i in range(g.size):
        out[i] = g[i] if x[i] > 0 else g[i] * 0   # g * [x > 0]: NaN and -0.0 as NumPy's


def _relu_grad_in_place_loop(g, x):
    for i in range(g.size):
        if not x[i] > 0:
            g[i] *= 0


def relu_grad_into(g, x, out=None):
    """g * [x > 0], into `out` (may be g) or a new array. Contiguous float arrays of one shape
    and dtype take one compiled pass (kernels/jit.py; measured 2.6 -> 1.6 ms on 1.6M
    elements), others NumPy's mask and multiply, with the same values. Into g itself, the
    pass has its own loop: given `out` over `g`, LLVM's run-time overlap check picks the
    scalar loop (1.6M elements: 1.28 ms, slower than NumPy's 1.09)."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape == x.shape and \
            g.dtype == x.dtype and g.dtype in LOOP_DTYPES and g.flags.c_contiguous and \
            x.flags.c_contiguous and (out is None or out.flags.writeable):
        if out is g:
            compiled(_relu_grad_in_place_loop)(g.reshape(-1), x.reshape(-1))
            return g
        if out is None:
            out = np.empty_like(g)
        compiled(_relu_grad_loop)(g.reshape(-1), x.reshape(-1), out.reshape(-1))
        return out
    if out is None:
        out = _mask(x > 0, g)
        out *= g
        return out
    return np.multiply(g, x > 0, out=out)


def _relu_grad_sums_loop(g, x, out, sums, width):
    for r in range(g.size // width):
        base = r * width
        for c in range(width):   # flat indices and one loop per job: both vectorize
            out[base + c] = g[base + c] if x[base + c] > 0 else g[base + c] * 0
        if r == 0:
            for c in range(width):
                sums[c] = out[c]
        else:
            for c in range(width):
                sums[c] += out[base + c]


def _relu_grad_sums_in_place_loop(g, x, sums, width):
    # The row sum is written out in both loops: as a shared helper it stopped vectorizing
    # (128x512: 15 -> 36 us).
    for r in range(g.size // width):
        base = r * width
        for c in range(width):
            if not x[base + c] > 0:
                g[base + c] *= 0
        if r == 0:
            for c in range(width):
                sums[c] = g[c]
        else:
            for c in range(width):
                sums[c] += g[base + c]


def relu_grad_and_sums(g, x, out=None):
    """(g * [x > 0], its sum over every axis but the last): a bias gradient taken in the same
    pass as ReluGrad, into `out` (may be g) or a new array. Contiguous float arrays of one
    shape run one compiled loop adding row after row, the order of the Sum kernel's row loop
    (kernels/reduction.py), so both values are bit-identical to ReluGrad then Sum; others take
    those two kernels' NumPy paths. Into g itself the loop is another one, for the reason
    `relu_grad_into` gives."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape == x.shape and \
            g.ndim >= 1 and g.size and g.dtype == x.dtype and g.dtype in LOOP_DTYPES and \
            g.flags.c_contiguous and x.flags.c_contiguous:
        width = g.shape[-1]
        sums = np.empty(width, g.dtype)
        if out is g:
            compiled(_relu_grad_sums_in_place_loop)(g.reshape(-1), x.reshape(-1), sums, width)
            return g, sums
        out = np.empty_like(g)
        compiled(_relu_grad_sums_loop)(g.reshape(-1), x.reshape(-1), out.reshape(-1), sums,
                                        width)
        return out, sums
    out = relu_grad_into(np.asarray(g), np.asarray(x), out=out)
    return out, np.add.reduce(out.reshape(-1, out.shape[-1]), axis=0)


def _relu6(x):
    y = np.maximum(x, x.dtype.type(0))
    return np.minimum(y, x.dtype.type(6), out=_into(y))


def _relu6_grad(g, x):
    inside = x > 0
    inside &= x < 6
    out = _mask(inside, g)
    out *= g
    return out


def _elu(x):
    """max(x, 0) + expm1(min(x, 0)): x for x >= 0, e^x - 1 below."""
    neg = np.expm1(np.minimum(x, x.dtype.type(0)))
    neg += np.maximum(x, x.dtype.type(0))
    return neg


def _elu_grad(g, y):
    """g * (y + 1) where y < 0, else g: the factor is min(y, 0) + 1."""
    factor = np.minimum(y, y.dtype.type(0))
    factor += 1
    factor *= g
    return factor


def _selu(x):
    neg = np.expm1(np.minimum(x, x.dtype.type(0)))
    neg *= SELU_ALPHA
    neg += np.maximum(x, x.dtype.type(0))
    neg *= SELU_SCALE
    return neg


def _selu_grad(g, y):
    """g * (y + scale * alpha) where y < 0, else g * scale."""
    factor = _mask(y < 0, g)
    factor *= y + (SELU_SCALE * SELU_ALPHA - SELU_SCALE)
    factor += SELU_SCALE
    factor *= g
    return factor


def _softplus(x):
    """log(1 + e^x) without overflow: logaddexp(0, x) is x for large x, e^x for very small."""
    return np.logaddexp(x.dtype.type(0), x)


def _softplus_grad(g, x):
    """g * sigmoid(x) = g / (1 + e^-x); e^-x overflowing to inf gives an exact 0."""
    d = np.exp(np.negative(x))
    d += 1
    return np.divide(g, d, out=_into(d))


def _softsign(x):
    d = np.abs(x)
    d += 1
    return np.divide(x, d, out=_into(d))


def _softsign_grad(g, x):
    d = np.abs(x)
    d += 1
    d *= d
    return np.divide(g, d, out=_into(d))


for _op_type, _fn in (
        ("Relu", _relu), ("ReluGrad", relu_grad_into), ("Relu6", _relu6),
        ("Relu6Grad", _relu6_grad), ("Elu", _elu), ("EluGrad", _elu_grad), ("Selu", _selu),
        ("SeluGrad", _selu_grad), ("Softplus", _softplus), ("SoftplusGrad", _softplus_grad),
        ("Softsign", _softsign), ("SoftsignGrad", _softsign_grad)):
    register_pure(_op_type, _fn)


def leaky_relu_alpha(alpha) -> float:
    """LeakyRelu's `alpha` as TensorFlow's kernels see it: the attr is a float32 and the
    kernels multiply by static_cast<T>(alpha), so a float64 input is scaled by float32(0.3),
    0.30000001192092896, not by 0.3 (and a float16 input by float16(float32(alpha)))."""
    return float(np.float32(alpha))


@kernel("LeakyRelu")
class LeakyReluKernel:
    """x for x > 0, alpha * x otherwise: max(x, alpha x) for alpha <= 1, min(...) above."""

    def __init__(self, ctx):
        self.alpha = leaky_relu_alpha(ctx.attrs["alpha"])
        self.pick = np.maximum if self.alpha <= 1 else np.minimum

    def compute(self, ctx, x):
        scaled = np.multiply(x, self.alpha)
        return self.pick(x, scaled, out=_into(scaled))


@kernel("LeakyReluGrad")
class LeakyReluGradKernel:
    """g where x > 0, alpha * g elsewhere (TF's select(x > 0, g, g * alpha)).

    g is copied, not scaled by alpha + (1 - alpha) = 1: in float16 that sum rounds to
    0.99951171875 for alphas such as 1.27, where TensorFlow passes g through exactly."""

    def __init__(self, ctx):
        self.alpha = leaky_relu_alpha(ctx.attrs["alpha"])

    def compute(self, ctx, g, x):
        scaled = np.multiply(g, self.alpha)
        if not isinstance(scaled, np.ndarray):  # 0-d operands give a NumPy scalar
            return np.where(x > 0, g, scaled)
        np.copyto(scaled, g, where=x > 0)
        return scaled


# --- BiasAdd, BiasAddGrad -------------------------------------------------------------------
@kernel("BiasAdd")
class BiasAddKernel:
    """value + bias along the channel axis (last for NHWC, 1 for NCHW)."""

    def __init__(self, ctx):
        self.nchw = ctx.attrs["data_format"] == "NCHW"

    def compute(self, ctx, value, bias):
        axis = 1 if self.nchw else value.ndim - 1
        if bias.ndim != 1:
            raise invalid_argument(f"Biases must be 1D: {dims_text(bias.shape)}")
        if value.ndim < 2 or value.shape[axis] != bias.shape[0]:
            raise invalid_argument("Must provide as many biases as the channel dimension of the "
                                   f"input tensor: {dims_text(bias.shape)} vs. "
                                   f"{dims_text(value.shape)}")
        if self.nchw:
            return value + bias.reshape(bias.shape + (1,) * (value.ndim - 2))
        out = bias_rows.add_bias(value, bias)
        return value + bias if out is None else out


@kernel("BiasAddGrad")
class BiasAddGradKernel:
    """The sum of the gradient over every axis but the channel axis, in the input dtype."""

    def __init__(self, ctx):
        self.nchw = ctx.attrs["data_format"] == "NCHW"

    def compute(self, ctx, g):
        if g.ndim < 2:
            raise invalid_argument(f"Input tensor must be at least 2D: {dims_text(g.shape)}")
        if self.nchw:
            axes = (0,) + tuple(range(2, g.ndim))
            return np.add.reduce(g, axis=axes, dtype=g.dtype)
        rows = g.reshape(-1, g.shape[-1])
        if rows.dtype.kind == "f" and rows.shape[0] > 1:
            # A ones-vector product runs on BLAS, about twice as fast as a column sum.
            return np.ones(rows.shape[0], rows.dtype) @ rows
        return np.add.reduce(rows, axis=0, dtype=g.dtype)


# --- InTopKV2 ---------------------------------------------------------------------------------
def in_top_k_rows(predictions, targets, k):
    """TensorFlow's rule: in the top k iff fewer than k predictions of the row are strictly
    larger than the target's; out-of-range targets and rows with a non-finite prediction give
    False."""
    if predictions.ndim != 2:
        raise invalid_argument("predictions must be 2-dimensional, got "
                               f"{dims_text(predictions.shape)}")
    if targets.ndim != 1:
        raise invalid_argument(f"targets must be 1-dimensional, got {dims_text(targets.shape)}")
    batch, classes = predictions.shape
    if targets.shape[0] != batch:
        raise invalid_argument(f"First dimension of predictions {batch} must match length of "
                               f"targets {targets.shape[0]}")
    valid = (targets >= 0) & (targets < classes)
    safe = np.where(valid, targets, 0)
    rows = np.arange(batch)
    target_pred = predictions[rows, safe] if classes else np.zeros(batch, predictions.dtype)
    larger = np.count_nonzero(predictions > target_pred[:, None], axis=1)
    valid &= np.isfinite(predictions).all(axis=1)
    valid &= larger < int(k)
    return valid


register_pure("InTopKV2", in_top_k_rows)
