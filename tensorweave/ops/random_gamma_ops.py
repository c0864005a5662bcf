"""Gamma and Poisson sampling: RandomGamma (with its reparameterization gradient through
RandomGammaGrad) and RandomPoissonV2, and the TF1 wrappers tf.random_gamma / tf.random_poisson.

Both ops draw `shape + parameter.shape` values: one independent sample per entry of the
parameter tensor for each index of `shape`. They are stateful and seeded like every random op
(`framework.random_seed`: one generator per session and node, see `kernels/random.py`).

The gradient of a Gamma sample x with respect to its concentration alpha is the implicit
reparameterization derivative dx/dalpha = -(dP(alpha, x)/dalpha) / pdf(x; alpha) (Figurnov et
al., 2018), which RandomGammaGrad computes from alpha and the sample; the gradient is summed
over the sample dimensions. Poisson samples are discrete: RandomPoissonV2 has no gradient.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.random_seed import seed_attrs
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math_unary_ops import define_elementwise

__all__ = ["random_gamma", "random_poisson"]

_SEED_ATTRS = (Attr("seed", "int", 0), Attr("seed2", "int", 0))
_GAMMA_TYPES = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64})
_POISSON_TYPES = _GAMMA_TYPES | _dtypes.INDEX


def _sampled_shape(ctx):
    """The value of the 1-D `shape` input followed by the parameter's shape."""
    dims_with_rank(ctx.input_shape(0)._dims, 1)
    value = ctx.static_value(0)
    if value is not None and (np.asarray(value) < -1).any():
        bad = int(np.asarray(value)[np.asarray(value) < -1][0])
        raise ValueError(f"Invalid value in tensor used for shape: {bad}")
    return ctx.static_shape(0).concatenate(ctx.input_shape(1))


RandomGamma = define_op(
    "RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
    attrs=[*_SEED_ATTRS, TypeAttr("S", _dtypes.INDEX), TypeAttr("T", _GAMMA_TYPES)],
    shape_fn=_sampled_shape, is_stateful=True,
    doc="Gamma(alpha, 1) samples, `shape` of them for each entry of alpha.")

# dx/dalpha of a Gamma(alpha, 1) sample x, broadcasting alpha against the samples.
RandomGammaGrad = define_elementwise("RandomGammaGrad", ["alpha: T", "sample: T"],
                                     {_dtypes.float32, _dtypes.float64}, out_name="output",
                                     shape_fn=shape_fns.broadcast)

RandomPoissonV2 = define_op(
    "RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
    attrs=[*_SEED_ATTRS, TypeAttr("S", _dtypes.INDEX),
           TypeAttr("R", _POISSON_TYPES, default=_dtypes.float64),
           TypeAttr("dtype", _POISSON_TYPES, default=_dtypes.int64)],
    shape_fn=_sampled_shape, is_stateful=True, not_differentiable=True,
    doc="Poisson(rate) samples, `shape` of them for each entry of rate.")


@RandomGamma.gradient
def _random_gamma_grad(op, grad):
    """dL/dalpha = sum over the sample dimensions of dL/dx * dx/dalpha (none for `shape`)."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    alpha, sample = op.inputs[1], op.outputs[0]
    partial_alpha = apply_op(RandomGammaGrad, [alpha, sample])
    return [None, reduce_to_shape_of(grad * partial_alpha, alpha)]


def _broadcast_like(alpha, beta):
    """alpha broadcast to the common shape of alpha and beta (TF uses BroadcastTo): alpha
    itself when beta adds no dimension, as for the default beta = 1."""
    try:
        common = shape_fns.broadcast_shapes(alpha.shape, beta.shape)
    except ValueError:
        common = None  # the division by beta reports the mismatch
    if common is not None and common.is_fully_defined() and common == alpha.shape:
        return alpha
    from tensorweave.ops.array_creation_ops import zeros_like
    return alpha + zeros_like(beta)


def random_gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    """Draws `shape` samples from each of the Gamma distributions given by alpha and beta
    (TF1's tf.random_gamma).

    The density is beta^alpha x^(alpha-1) e^(-beta x) / Gamma(alpha). Samples are at least
    the smallest normal number of `dtype` (a Gamma sample with tiny alpha underflows), and the
    result is differentiable with respect to alpha and beta.

    Args:
      shape: A 1-D int32 Tensor or list: the number of samples drawn per distribution.
      alpha: A Tensor (or value) of concentrations, converted to `dtype`.
      beta: A Tensor of inverse scales broadcastable with alpha; default 1.
      dtype: float16, float32 or float64.
      seed: The op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: A name scope (default "random_gamma").

    Returns:
      A Tensor of `dtype` and shape `shape + broadcast_shape(alpha, beta)`.

    Raises:
      ValueError: for a non-floating `dtype`, or a static `shape` that is not 1-D.
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = convert_to_tensor(shape, name="shape", dtype=_dtypes.int32)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        alpha = _broadcast_like(alpha, beta)
        tiny = np.finfo(dtype.as_numpy_dtype).tiny  # ValueError for integer dtypes, as TF
        sample = apply_op(RandomGamma, [shape, alpha], seed_attrs(seed))
        from tensorweave.ops.math_ops import maximum
        return maximum(tiny, sample / beta)


def random_poisson(lam, shape, dtype=_dtypes.float32, seed=None, name=None):
    """Draws `shape` samples from each of the Poisson distributions given by `lam`
    (TF1's tf.random_poisson).

    Args:
      lam: A Tensor of rates (float16, float32, float64, int32 or int64). Negative rates draw
        0; non-finite ones fail at run time.
      shape: A 1-D int32 Tensor or list: the number of samples drawn per distribution.
      dtype: The dtype of the samples: float16, float32, float64, int32 or int64.
      seed: The op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: A name scope (default "random_poisson"; the op is "RandomPoissonV2" inside).

    Returns:
      A Tensor of `dtype` and shape `shape + lam.shape`.

    Raises:
      TypeError: for an unsupported `dtype` or rate dtype.
      ValueError: for a static `shape` that is not 1-D.
      InvalidArgumentError: at run time, for a NaN or infinite rate.
    """
    with name_scope(name, "random_poisson", [lam, shape]):
        shape = convert_to_tensor(shape, name="shape", dtype=_dtypes.int32)
        attrs = {**seed_attrs(seed), "dtype": _dtypes.as_dtype(dtype).base_dtype}
        with name_scope(None, "RandomPoissonV2") as op_name:
            lam = convert_to_tensor(lam, name="rate")
            return apply_op(RandomPoissonV2, [shape, lam], attrs, name=op_name)
