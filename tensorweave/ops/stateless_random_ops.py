"""Stateless random ops: tf.random.stateless_uniform / _normal / _truncated_normal /
_categorical (and compat.v1's tf.random.stateless_multinomial).

Their output is a pure function of the `shape` and the [2] int32/int64 `seed` input, bit for
bit TensorFlow's (see `kernels/stateless_random.py`): the same seed gives the same numbers in
every session, every run and every process. Unlike the ops of `random_ops`, they are not
stateful, so the graph optimizer may fold them into constants or merge equal ones, as
TensorFlow's grappler does. They have no gradient.

As in TensorFlow, scaling is composed from math ops: `uniform * (maxval - minval) + minval`
and `normal * stddev + mean`, computed in the output dtype.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.shape_text import shape_text
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.random_ops import _multinomial_shape, checked_dtype, shape_tensor
from tensorweave.ops.reduction_ops import tf_op

__all__ = ["stateless_categorical", "stateless_multinomial", "stateless_random_normal",
           "stateless_random_uniform", "stateless_truncated_normal"]

_FLOATS = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
_INTS = (_dtypes.int32, _dtypes.int64)
_SHAPE_SEED_ATTRS = (TypeAttr("T", _dtypes.INDEX, default=_dtypes.int32),
                     TypeAttr("Tseed", _dtypes.INDEX, default=_dtypes.int64))


# --- shape functions ----------------------------------------------------------------------
def check_seed_shape(ctx, i: int) -> None:
    """TF's check that input i, the seed, has shape [2]."""
    seed = dims_with_rank(ctx.input_shape(i)._dims, 1)
    if seed[0] is not None and seed[0] != 2:
        raise ValueError(f"Dimension must be 2 but is {seed[0]}")


def stateless_shape(ctx):
    """TF's StatelessShape: a 1-D `shape`, a seed of shape [2]; the output is `shape`'s value."""
    dims_with_rank(ctx.input_shape(0)._dims, 1)
    check_seed_shape(ctx, 1)
    return ctx.static_shape(0)


def _stateless_multinomial_shape(ctx):
    """A seed of shape [2]; then Multinomial's [batch_size, num_samples] (TF's
    MakeDimForScalarInput message for a negative constant num_samples)."""
    check_seed_shape(ctx, 2)
    samples = ctx.static_value(1)
    if samples is not None and np.ndim(samples) == 0 and int(samples) < 0:
        raise ValueError("Dimension size, given by scalar input 1, must be non-negative but is "
                         f"{int(samples)}")
    return _multinomial_shape(ctx)


def _stateless_int_shape(ctx):
    for i, what in ((2, "minval"), (3, "maxval")):
        shape = ctx.input_shape(i)
        if shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar; got a tensor of shape "
                             f"{shape_text(shape)}")
    return stateless_shape(ctx)


# --- op definitions -------------------------------------------------------------------------
def _define_float(name: str, doc: str):
    """One row of the table of stateless ops drawing floats of a given shape."""
    return define_op(name, inputs=["shape: T", "seed: Tseed"], outputs=["output: dtype"],
                     attrs=[TypeAttr("dtype", _dtypes.FLOATING, default=_dtypes.float32),
                            *_SHAPE_SEED_ATTRS],
                     shape_fn=stateless_shape, not_differentiable=True, doc=doc)


StatelessRandomUniform = _define_float("StatelessRandomUniform",
                                       "Uniform values in [0, 1), a function of `seed`.")
StatelessRandomNormal = _define_float("StatelessRandomNormal",
                                      "Standard normal values, a function of `seed`.")
StatelessTruncatedNormal = _define_float(
    "StatelessTruncatedNormal", "Standard normal values within 2 stddevs, a function of `seed`.")

StatelessRandomUniformInt = define_op(
    "StatelessRandomUniformInt", inputs=["shape: T", "seed: Tseed", "minval: dtype",
                                         "maxval: dtype"],
    outputs=["output: dtype"],
    attrs=[TypeAttr("dtype", _dtypes.INDEX), *_SHAPE_SEED_ATTRS],
    shape_fn=_stateless_int_shape, not_differentiable=True,
    doc="Integers uniform in [minval, maxval), a function of `seed`.")

StatelessRandomUniformFullInt = define_op(
    "StatelessRandomUniformFullInt", inputs=["shape: T", "seed: Tseed"],
    outputs=["output: dtype"],
    attrs=[TypeAttr("dtype", _dtypes.INDEX), *_SHAPE_SEED_ATTRS],   # TF also has uint32/64
    shape_fn=stateless_shape, not_differentiable=True,
    doc="Integers over the whole range of `dtype`, a function of `seed`.")

StatelessMultinomial = define_op(
    "StatelessMultinomial", inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
    outputs=["output: output_dtype"],
    attrs=[TypeAttr("T", _dtypes.REAL_NUMERIC),   # TF's CPU kernels: the float types only
           TypeAttr("Tseed", _dtypes.INDEX, default=_dtypes.int64),
           TypeAttr("output_dtype", _dtypes.INDEX, default=_dtypes.int64)],
    shape_fn=_stateless_multinomial_shape, not_differentiable=True,
    doc="Class indices sampled from softmax(logits), `num_samples` per row, a function of "
        "`seed`.")


# --- public wrappers ------------------------------------------------------------------------
def _seed_tensor(seed):
    return convert_to_tensor(seed, name="seed")


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32,
                             name=None):
    """Outputs deterministic pseudorandom values from a uniform distribution
    (tf.random.stateless_uniform).

    The same `seed` (and shape, dtype, range) gives the same values every time, in every
    session: TensorFlow's values, bit for bit. For floats the range is [minval, maxval),
    default [0, 1); integer dtypes with `minval` and `maxval` use TensorFlow's modular
    method (slightly biased when `maxval - minval` is not a power of 2).

    Args:
      shape: the output shape: a list or tuple of ints, a 1-D int32/int64 Tensor, or a fully
        defined TensorShape.
      seed: a shape [2] int32 or int64 Tensor (or list).
      minval: the lower bound (inclusive), a scalar of `dtype`. Default 0.
      maxval: the upper bound (exclusive). Default 1 for floats. For integers give both
        bounds, or `minval=None, maxval=None` for integers over the dtype's full range.
      dtype: float16, bfloat16, float32, float64, int32 or int64.
      name: a name for the operation (default "stateless_random_uniform").

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: for an unsupported `dtype`, an integer `dtype` with only one bound, or a
        `seed` whose shape is not [2].
    """
    dtype = checked_dtype(dtype, _FLOATS + _INTS)
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} "
                             f"and `maxval`={maxval}.")
    elif maxval is None:
        maxval = 1
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as name:
        shape = shape_tensor(shape)
        seed = _seed_tensor(seed)
        if dtype.is_integer and minval is None:
            return apply_op(StatelessRandomUniformFullInt, [shape, seed], {"dtype": dtype},
                            name=name)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply_op(StatelessRandomUniformInt, [shape, seed, minval, maxval], name=name)
        rnd = apply_op(StatelessRandomUniform, [shape, seed], {"dtype": dtype})
        # rnd * (maxval - minval) + minval
        return tf_op("AddV2", [tf_op("Mul", [rnd, tf_op("Sub", [maxval, minval])]), minval],
                     name=name)


def _scaled_standard(op_def, default_name, shape, seed, mean, stddev, dtype, name):
    """rnd * stddev + mean for a standard draw `rnd` of `op_def`, as TensorFlow builds it."""
    dtype = _dtypes.as_dtype(dtype)   # a non-float dtype fails converting mean, as in TF
    with name_scope(name, default_name, [shape, seed, mean, stddev]) as name:
        shape = shape_tensor(shape)
        seed = _seed_tensor(seed)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_def, [shape, seed], {"dtype": dtype})
        return tf_op("AddV2", [tf_op("Mul", [rnd, stddev]), mean], name=name)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                            name=None):
    """Outputs deterministic pseudorandom values from a normal distribution
    (tf.random.stateless_normal).

    The same `seed` gives the same values every time: TensorFlow's, bit for bit (Box-Muller
    on Philox words, using the C library's log, sin and cos as TensorFlow does).

    Args:
      shape: the output shape (list, 1-D integer Tensor or fully defined TensorShape).
      seed: a shape [2] int32 or int64 Tensor (or list).
      mean: the mean, a scalar or a Tensor broadcastable with `shape`.
      stddev: the standard deviation, a scalar or broadcastable Tensor.
      dtype: float16, bfloat16, float32 or float64.
      name: a name for the operation (default "stateless_random_normal").

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: for a non-floating `dtype` or a `seed` whose shape is not [2].
    """
    return _scaled_standard(StatelessRandomNormal, "stateless_random_normal", shape, seed,
                            mean, stddev, dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                               name=None):
    """Outputs deterministic pseudorandom values from a truncated normal distribution
    (tf.random.stateless_truncated_normal).

    Standard normal draws with magnitude 2 or more are dropped, so every value lies strictly
    within two stddevs of the mean. The same `seed` gives TensorFlow's values, bit for bit.

    Args:
      shape: the output shape (list, 1-D integer Tensor or fully defined TensorShape).
      seed: a shape [2] int32 or int64 Tensor (or list).
      mean: the mean of the (untruncated) normal distribution.
      stddev: its standard deviation.
      dtype: float16, bfloat16, float32 or float64.
      name: a name for the operation (default "stateless_truncated_normal").

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: for a non-floating `dtype` or a `seed` whose shape is not [2].
    """
    return _scaled_standard(StatelessTruncatedNormal, "stateless_truncated_normal", shape,
                            seed, mean, stddev, dtype, name)


def _stateless_multinomial(logits, num_samples, seed, dtype):
    """TF's stateless_multinomial_categorical_impl, inside the caller's name scope."""
    logits = convert_to_tensor(logits, name="logits")
    dtype = checked_dtype(dtype or _dtypes.int64, _INTS)
    num_samples = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
    return apply_op(StatelessMultinomial, [logits, num_samples, _seed_tensor(seed)],
                    {"output_dtype": dtype})


def stateless_categorical(logits, num_samples, seed, dtype=_dtypes.int64, name=None):
    """Draws deterministic pseudorandom samples from a categorical distribution
    (tf.random.stateless_categorical).

    Row i of the result holds `num_samples` class indices drawn from softmax(logits[i]); the
    same `seed` gives TensorFlow's indices, bit for bit, its rows sharded over the intra-op
    threads as TensorFlow's CPU kernel shards them (kernels/multinomial.py). Non-finite logits
    (-inf, +inf, NaN) get probability 0; a row with no finite logit yields `num_classes`.

    Args:
      logits: a 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities,
        float16, bfloat16, float32 or float64.
      num_samples: a scalar int32 (0 or more): how many samples to draw per row.
      seed: a shape [2] int32 or int64 Tensor (or list).
      dtype: int32 or int64, the type of the result (default int64).
      name: a name for the operation (default "stateless_categorical").

    Returns:
      A `[batch_size, num_samples]` Tensor of `dtype`.

    Raises:
      ValueError: for a `dtype` other than int32 and int64, logits that are not 2-D, a
        non-scalar `num_samples` or a `seed` whose shape is not [2].
    """
    with name_scope(name, "stateless_categorical", [logits, seed]):
        return _stateless_multinomial(logits, num_samples, seed, dtype)


def stateless_multinomial(logits, num_samples, seed, output_dtype=_dtypes.int64, name=None):
    """Draws deterministic pseudorandom samples from a multinomial distribution
    (compat.v1's tf.random.stateless_multinomial; deprecated there for
    `tf.random.stateless_categorical`, which it equals but for its name scope).

    Args:
      logits: a 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: a scalar int32 (0 or more): how many samples to draw per row.
      seed: a shape [2] int32 or int64 Tensor (or list).
      output_dtype: int32 or int64, the type of the result (default int64).
      name: a name for the operation (default "stateless_multinomial").

    Returns:
      A `[batch_size, num_samples]` Tensor of `output_dtype`.

    Raises:
      ValueError: as `stateless_categorical`.
    """
    with name_scope(name, "stateless_multinomial", [logits, seed]):
        return _stateless_multinomial(logits, num_samples, seed, output_dtype)
