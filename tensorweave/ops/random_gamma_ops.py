"""Gamma and Poisson sampling: RandomGamma (with its reparameterization gradient through
RandomGammaGrad) and RandomPoissonV2, the TF1 wrappers tf.random_gamma / tf.random_poisson, and
their stateless twins tf.random.stateless_gamma (StatelessRandomGetKeyCounter, then
StatelessRandomGammaV3) and tf.random.stateless_poisson (StatelessRandomPoisson).

The stateful ops draw `shape + parameter.shape` values: one independent sample per entry of the
parameter tensor for each index of `shape`. They are seeded like every random op
(`framework.random_seed`: one generator per session and node). The stateless ops draw `shape`
values, whose trailing dimensions are the parameter's, as a function of the seed. All of them
give TensorFlow's numbers bit for bit (`kernels/random_gamma.py`).

The gradient of a Gamma sample x with respect to its concentration alpha is the implicit
reparameterization derivative dx/dalpha = -(dP(alpha, x)/dalpha) / pdf(x; alpha) (Figurnov et
al., 2018), which RandomGammaGrad computes from alpha and the sample; the gradient is summed
over the sample dimensions. Poisson samples are discrete: the Poisson ops have no gradient.
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
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.math_unary_ops import define_elementwise
from tensorweave.ops.random_ops import shape_tensor
from tensorweave.ops.stateless_random_ops import check_seed_shape, stateless_shape

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


def _key_counter_shape(ctx):
    """A seed of shape [2]; a Philox key of one uint64 and a counter of two."""
    check_seed_shape(ctx, 0)
    return [TensorShape([1]), TensorShape([2])]


def _stateless_v2_shape(ctx):
    """TF's StatelessShapeV2: key [1], counter a vector, alg a scalar; the output is `shape`'s
    value."""
    key = dims_with_rank(ctx.input_shape(1)._dims, 1)
    dims_with_rank(ctx.input_shape(2)._dims, 1)
    dims_with_rank(ctx.input_shape(3)._dims, 0)
    if key[0] is not None and key[0] != 1:
        raise ValueError(f"Dimension must be 1 but is {key[0]}")
    dims_with_rank(ctx.input_shape(0)._dims, 1)
    return ctx.static_shape(0)


StatelessRandomGetKeyCounter = define_op(
    "StatelessRandomGetKeyCounter", inputs=["seed: Tseed"],
    outputs=["key: uint64", "counter: uint64"],
    attrs=[TypeAttr("Tseed", _dtypes.INDEX, default=_dtypes.int64)],
    shape_fn=_key_counter_shape, not_differentiable=True,
    doc="The Philox key and counter a [2] seed stands for (TF's GenerateKey scrambling).")

StatelessRandomGammaV3 = define_op(
    "StatelessRandomGammaV3",
    inputs=["shape: shape_dtype", "key: uint64", "counter: uint64", "alg: int32", "alpha: dtype"],
    outputs=["output: dtype"],
    attrs=[TypeAttr("dtype", _GAMMA_TYPES),
           TypeAttr("shape_dtype", _dtypes.INDEX, default=_dtypes.int32)],
    shape_fn=_stateless_v2_shape,
    doc="Gamma(alpha, 1) samples of shape `shape` (ending with alpha's), a function of the "
        "Philox key and counter.")

StatelessRandomPoisson = define_op(
    "StatelessRandomPoisson", inputs=["shape: T", "seed: Tseed", "lam: Rtype"],
    outputs=["output: dtype"],
    attrs=[TypeAttr("Rtype", _POISSON_TYPES), TypeAttr("dtype", _POISSON_TYPES),
           TypeAttr("T", _dtypes.INDEX), TypeAttr("Tseed", _dtypes.INDEX, default=_dtypes.int64)],
    shape_fn=stateless_shape, not_differentiable=True,
    doc="Poisson(lam) samples of shape `shape` (ending with lam's), a function of `seed`.")


def _gamma_alpha_grad(alpha, sample, grad):
    """dL/dalpha = sum over the sample dimensions (those before alpha's) of dL/dx * dx/dalpha."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    partial_alpha = apply_op(RandomGammaGrad, [alpha, sample])
    return reduce_to_shape_of(grad * partial_alpha, alpha)


@RandomGamma.gradient
def _random_gamma_grad(op, grad):
    """The alpha gradient; none for `shape`."""
    return [None, _gamma_alpha_grad(op.inputs[1], op.outputs[0], grad)]


@StatelessRandomGammaV3.gradient
def _stateless_random_gamma_v3_grad(op, grad):
    """The alpha gradient, as TF's _StatelessGammaGradAlpha; none for shape, key, counter, alg."""
    return [None, None, None, None, _gamma_alpha_grad(op.inputs[4], op.outputs[0], grad)]


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
      lam: A Tensor of rates (float16, float32, float64, int32 or int64). Rates of 0 or less
        draw 0, an infinite one the dtype's infinity (0 for integers).
      shape: A 1-D int32 Tensor or list: the number of samples drawn per distribution.
      dtype: The dtype of the samples: float16, float32, float64, int32 or int64.
      seed: The op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: A name scope (default "random_poisson"; the op is "RandomPoissonV2" inside).

    Returns:
      A Tensor of `dtype` and shape `shape + lam.shape`.

    Raises:
      TypeError: for an unsupported `dtype` or rate dtype.
      ValueError: for a static `shape` that is not 1-D.
      InvalidArgumentError: at run time, for a rate TensorFlow's sampler never returns on
        (NaN, or past the largest `dtype` value).
    """
    with name_scope(name, "random_poisson", [lam, shape]):
        shape = convert_to_tensor(shape, name="shape", dtype=_dtypes.int32)
        attrs = {**seed_attrs(seed), "dtype": _dtypes.as_dtype(dtype).base_dtype}
        with name_scope(None, "RandomPoissonV2") as op_name:
            lam = convert_to_tensor(lam, name="rate")
            return apply_op(RandomPoissonV2, [shape, lam], attrs, name=op_name)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None):
    """Outputs deterministic pseudorandom values from gamma distributions
    (tf.random.stateless_gamma).

    The same `seed` gives TensorFlow's values, bit for bit. Unlike `random_gamma`, `shape` is
    the whole output shape: its trailing dimensions must be the broadcast shape of alpha and
    beta, and `samples[..., i]` are draws from Gamma(alpha[i], beta[i]). Results are at least
    the smallest normal number of `dtype`, and differentiable with respect to alpha (implicit
    reparameterization) and beta.

    Args:
      shape: A 1-D integer Tensor or list: the output shape.
      seed: A shape [2] int32 or int64 Tensor (or list).
      alpha: The concentrations, converted to `dtype`.
      beta: The inverse scales, broadcastable with alpha; default 1.
      dtype: float16, float32 or float64.
      name: A name scope (default "stateless_random_gamma").

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      TypeError: for a `dtype` that is not a float type, or a seed that is not an integer.
      ValueError: for a `seed` whose shape is not [2].
      InvalidArgumentError: at run time, if `shape` does not end with alpha's broadcast shape.
    """
    from tensorweave.ops.array_ops import shape as shape_of
    from tensorweave.ops.array_rearrange_ops import broadcast_dynamic_shape, broadcast_to
    from tensorweave.ops.math_ops import maximum
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        shape = shape_tensor(shape)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        alpha = broadcast_to(alpha, broadcast_dynamic_shape(shape_of(alpha), shape_of(beta)))
        with name_scope(None, "StatelessRandomGetKeyCounter") as op_name:
            key, counter = apply_op(StatelessRandomGetKeyCounter,
                                    [convert_to_tensor(seed, name="seed")], name=op_name)
        with name_scope(None, "StatelessRandomGammaV3") as op_name:
            alg = convert_to_tensor(3, dtype=_dtypes.int32, name="alg")   # auto-select: Philox
            sample = apply_op(StatelessRandomGammaV3, [shape, key, counter, alg, alpha],
                              name=op_name)
        tiny = np.finfo(dtype.as_numpy_dtype).tiny
        return maximum(tiny, sample / beta)


def stateless_random_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None):
    """Outputs deterministic pseudorandom values from Poisson distributions
    (tf.random.stateless_poisson).

    The same `seed` gives TensorFlow's values, bit for bit. `shape` is the whole output shape:
    its trailing dimensions must be lam's, and `samples[..., i]` are draws from
    Poisson(lam[i]). A rate of 0 or less draws 0, an infinite one the dtype's infinity (0 for
    integers).

    Args:
      shape: A 1-D integer Tensor or list: the output shape.
      seed: A shape [2] int32 or int64 Tensor (or list).
      lam: The rates: float16, float32, float64, int32 or int64.
      dtype: The dtype of the samples: float16, float32, float64, int32 or int64 (default).
      name: A name scope (default "stateless_random_poisson").

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      TypeError: for an unsupported `dtype`, rate dtype or seed dtype.
      ValueError: for a `seed` whose shape is not [2].
      InvalidArgumentError: at run time, if `shape` does not end with lam's shape, or for a
        rate TensorFlow's sampler never returns on (NaN, or past the largest `dtype` value).
    """
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        shape = shape_tensor(shape)
        with name_scope(None, "StatelessRandomPoisson") as op_name:
            seed = convert_to_tensor(seed, name="seed")
            lam = convert_to_tensor(lam, name="lam")
            return apply_op(StatelessRandomPoisson, [shape, seed, lam],
                            {"dtype": _dtypes.as_dtype(dtype).base_dtype}, name=op_name)
