"""Random ops: uniform, normal, truncated normal, shuffle and multinomial, with TF1 seeding.

Every op here is stateful: its kernel holds a generator seeded once per (session, node) from
the `seed`/`seed2` attrs that `framework.random_seed.get_seed` derives (see that module for
TF1's rules). A new Session therefore restarts each sequence, a session's second run draws new
numbers, and two ops with equal seeds draw equal streams. The generator is TensorFlow's
GuardedPhiloxRandom and the values its distributions' (kernels/random_philox.py,
kernels/multinomial.py), so a seeded program draws TensorFlow's numbers bit for bit.

As in TensorFlow, `random_uniform` over [minval, maxval) and `random_normal` / `truncated_normal`
with a mean and stddev are composites: the op draws the standard distribution and Mul/Sub/AddV2
ops (from the math family, looked up by op type) scale and shift it.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.random_seed import get_seed, seed_attrs, set_random_seed
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_text import shape_text
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.reduction_ops import tf_op

__all__ = ["get_seed", "multinomial", "random_normal", "random_shuffle", "random_uniform",
           "set_random_seed", "truncated_normal"]

_SEED_ATTRS = (Attr("seed", "int", 0), Attr("seed2", "int", 0))
_UNIFORM_DTYPES = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
                   _dtypes.int32, _dtypes.int64)


# --- shape functions ----------------------------------------------------------------------
def _require_rank(ctx, i: int, rank: int) -> None:
    """TF's WithRank check on input i, with TF's message."""
    shape = ctx.input_shape(i)
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")


def _random_shape(ctx):
    """The output shape is the value of the 1-D `shape` input, as precisely as it is known."""
    _require_rank(ctx, 0, 1)
    return ctx.static_shape(0)


def _random_int_shape(ctx):
    for i, what in ((1, "minval"), (2, "maxval")):
        shape = ctx.input_shape(i)
        if shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar; got a tensor of shape {shape_text(shape)}")
    return _random_shape(ctx)


def _multinomial_shape(ctx):
    _require_rank(ctx, 0, 2)
    _require_rank(ctx, 1, 0)
    logits = ctx.input_shape(0)
    batch = _ts.dimension_value(logits[0]) if logits.ndims is not None else None
    samples = ctx.static_value(1)
    if samples is not None and int(samples) < 0:   # InferenceContext::MakeDimForScalarInput
        raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative but "
                         f"is {int(samples)}")
    return _ts.TensorShape([batch, None if samples is None else int(samples)])


def _unchanged(ctx):
    return ctx.input_shape(0)


# --- op definitions -------------------------------------------------------------------------
def _define_standard(name: str, doc: str):
    """One row of the table of ops drawing a float tensor of a given shape."""
    return define_op(name, inputs=["shape: T"], outputs=["output: dtype"],
                     attrs=[*_SEED_ATTRS, TypeAttr("dtype", _dtypes.FLOATING),
                            TypeAttr("T", _dtypes.INDEX)],
                     shape_fn=_random_shape, is_stateful=True, not_differentiable=True, doc=doc)


RandomUniform = _define_standard("RandomUniform", "Uniform values in [0, 1).")
RandomStandardNormal = _define_standard("RandomStandardNormal", "Normal values, mean 0, std 1.")
TruncatedNormal = _define_standard(
    "TruncatedNormal", "Standard normal values, those beyond 2 stddevs re-drawn.")

RandomUniformInt = define_op(
    "RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
    outputs=["output: Tout"],
    attrs=[*_SEED_ATTRS, TypeAttr("Tout", _dtypes.INDEX), TypeAttr("T", _dtypes.INDEX)],
    shape_fn=_random_int_shape, is_stateful=True, not_differentiable=True,
    doc="Integers uniform in [minval, maxval).")

RandomShuffle = define_op(
    "RandomShuffle", inputs=["value: T"], outputs=["output: T"],
    attrs=[*_SEED_ATTRS, TypeAttr("T")], shape_fn=_unchanged, is_stateful=True,
    not_differentiable=True, doc="`value` with its first dimension randomly permuted.")

Multinomial = define_op(
    "Multinomial", inputs=["logits: T", "num_samples: int32"], outputs=["output: output_dtype"],
    attrs=[*_SEED_ATTRS, TypeAttr("T", _dtypes.REAL_NUMERIC),
           TypeAttr("output_dtype", _dtypes.INDEX, default=_dtypes.int64)],
    shape_fn=_multinomial_shape, is_stateful=True, not_differentiable=True,
    doc="Class indices sampled from softmax(logits), `num_samples` per row.")


# --- helpers --------------------------------------------------------------------------------
def shape_tensor(shape):
    """`shape` (list, tuple, TensorShape or Tensor) as a 1-D integer Tensor named 'shape'."""
    if isinstance(shape, _ts.TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not shape:
        return convert_to_tensor(shape, dtype=_dtypes.int32, name="shape")
    return convert_to_tensor(shape, name="shape")


def checked_dtype(dtype, allowed) -> _dtypes.DType:
    """`dtype` as a DType, or TF's ValueError when it is not one of `allowed`."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in allowed:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         f"({', '.join(repr(d) for d in allowed)}).")
    return dtype


# --- public wrappers ------------------------------------------------------------------------
def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Outputs random values from a uniform distribution (TF1's tf.random_uniform).

    Values lie in [minval, maxval). For floats the default range is [0, 1); for integers
    `maxval` is required and every value in the range is equally likely.

    Args:
      shape: the output shape: a list or tuple of ints (or scalar Tensors), a 1-D int32/int64
        Tensor, or a fully defined TensorShape.
      minval: the lower bound (inclusive), a scalar or Tensor of `dtype`. Default 0.
      maxval: the upper bound (exclusive). Default 1 for floats; required for integers.
      dtype: float16, bfloat16, float32, float64, int32 or int64.
      seed: the op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: a name for the operation.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: for an unsupported `dtype`, or an integer `dtype` without `maxval`.
    """
    dtype = checked_dtype(dtype, _UNIFORM_DTYPES)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as name:
        shape = shape_tensor(shape)
        # The [0, 1) default needs no scaling ops (a Python 0 and 1, exactly as TF checks).
        minval_is_zero = type(minval) is int and minval == 0
        maxval_is_one = type(maxval) is int and maxval == 1
        if not (minval_is_zero and maxval_is_one) or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        attrs = seed_attrs(seed)
        if dtype.is_integer:
            return apply_op(RandomUniformInt, [shape, minval, maxval], attrs, name=name)
        rnd = apply_op(RandomUniform, [shape], {**attrs, "dtype": dtype})
        if minval_is_zero:
            return rnd if maxval_is_one else tf_op("Mul", [rnd, maxval])
        # minval + u * (maxval - minval)
        scaled = tf_op("Mul", [rnd, tf_op("Sub", [maxval, minval], name="sub")], name="mul")
        return tf_op("AddV2", [scaled, minval], name=name)


def _scaled_standard(op_def, default_name, shape, mean, stddev, dtype, seed, name):
    """mean + stddev * (a standard draw of `op_def`), built like TF1 from Mul and AddV2."""
    with name_scope(name, default_name, [shape, mean, stddev]) as name:
        shape = shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_def, [shape], {**seed_attrs(seed), "dtype": dtype})
        return tf_op("AddV2", [tf_op("Mul", [rnd, stddev], name="mul"), mean], name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Outputs random values from a normal distribution (TF1's tf.random_normal).

    Args:
      shape: the output shape (list, 1-D integer Tensor or fully defined TensorShape).
      mean: the mean, a scalar or a Tensor broadcastable with `shape`.
      stddev: the standard deviation, a scalar or broadcastable Tensor.
      dtype: float16, bfloat16, float32 or float64.
      seed: the op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: a name for the operation.

    Returns:
      A Tensor of `shape` (broadcast with `mean` and `stddev`) and `dtype`.

    Raises:
      TypeError: for a non-floating `dtype`.
    """
    return _scaled_standard(RandomStandardNormal, "random_normal", shape, mean, stddev, dtype,
                            seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Outputs values from a truncated normal distribution (TF1's tf.truncated_normal).

    Values more than two standard deviations from the mean are dropped and re-drawn, so every
    value lies in [mean - 2 stddev, mean + 2 stddev].

    Args:
      shape: the output shape (list, 1-D integer Tensor or fully defined TensorShape).
      mean: the mean of the (untruncated) normal distribution.
      stddev: its standard deviation.
      dtype: float16, bfloat16, float32 or float64.
      seed: the op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: a name for the operation.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      TypeError: for a non-floating `dtype`.
    """
    return _scaled_standard(TruncatedNormal, "truncated_normal", shape, mean, stddev, dtype,
                            seed, name)


def random_shuffle(value, seed=None, name=None):
    """Randomly shuffles a tensor along its first dimension (TF1's tf.random_shuffle).

    Each slice `value[i]` is mapped to exactly one `output[j]`; scalars pass through.

    Args:
      value: a Tensor of any dtype.
      seed: the op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: a name for the operation (default "RandomShuffle").

    Returns:
      A Tensor of the same shape and dtype as `value`.
    """
    attrs = seed_attrs(seed)  # before converting `value`, as TF does (it fixes `seed2`)
    return apply_op(RandomShuffle, [value], attrs, name=name)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """Draws samples from categorical distributions (TF1's tf.multinomial).

    Args:
      logits: a 2-D Tensor `[batch_size, num_classes]`; row i holds the unnormalized log
        probabilities of batch i. Non-finite logits get probability 0.
      num_samples: a scalar int32: how many samples to draw per row.
      seed: the op-level seed, combined with the graph seed (see `tf.set_random_seed`).
      name: a name for the operation.
      output_dtype: int32 or int64 (default int64).

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.

    Raises:
      ValueError: for a bad `output_dtype` or logits that are not 2-D.
    """
    with name_scope(name, "multinomial", [logits]):
        return multinomial_op(logits, num_samples, seed, output_dtype)


def multinomial_op(logits, num_samples, seed=None, output_dtype=None):
    """The Multinomial op (named `Multinomial` in the current name scope) behind
    tf.multinomial and tf.random.categorical, each of which opens its own scope."""
    output_dtype = checked_dtype(output_dtype or _dtypes.int64, (_dtypes.int32, _dtypes.int64))
    logits = convert_to_tensor(logits, name="logits")
    attrs = {**seed_attrs(seed), "output_dtype": output_dtype}
    with name_scope(None, "Multinomial") as op_name:
        num_samples = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
        return apply_op(Multinomial, [logits, num_samples], attrs, name=op_name)
