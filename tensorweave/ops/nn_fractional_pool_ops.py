"""Fractional pooling (Graham, 2014): FractionalMaxPool, FractionalAvgPool, their gradient ops
and TF1's `fractional_max_pool` / `fractional_avg_pool`.

Each spatial axis of length L is cut into floor(L / ratio) windows whose lengths are
floor(L / n) or that plus one, in an order drawn at random per run (or, with `deterministic`,
once per kernel); the op returns the pooled tensor and the window boundaries (the row and column
pooling sequences, n + 1 cumulative offsets from 0 to L) that the gradient ops take back.
With `overlapping`, a window also covers the first element of the next one.

TF's shape function gives the sequences the static length n, while its kernels return n + 1
offsets; this module infers n + 1, what the kernels (TF's and ours) produce.
TF registers no gradient for the two gradient ops; neither does this module (differentiating
them raises LookupError, as in TF).
Kernels: `kernels/fractional_pool.py`.
"""
from __future__ import annotations

import collections
import math

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import shape_with_rank

__all__ = ["fractional_max_pool", "fractional_avg_pool"]

_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64)


def check_pooling_ratio(ratio) -> None:
    """TF's checks of the pooling_ratio attr (shared by the shape function and the kernels).

    Raises:
      ValueError: fewer than 4 entries, or an entry below 1.
    """
    if len(ratio) != 4:
        raise ValueError("pooling_ratio field must specify 4 dimensions")
    for r in ratio:
        if r < 1:
            raise ValueError(f"pooling_ratio cannot be smaller than 1, got: {r:g}")


def _pool_shape(ctx):
    """[floor(dim / ratio) per dim], and the two sequences of length rows + 1, cols + 1."""
    ratio = ctx.attrs["pooling_ratio"]
    if len(ratio) < 4:
        raise ValueError(f"Attr 'pooling_ratio' of '{ctx.op_type}' Op passed list of length "
                         f"{len(ratio)} less than minimum 4.")
    dims = shape_with_rank(ctx.input_shape(0), 4).as_list()
    out = [None if d is None else math.floor(d / r) for d, r in zip(dims, ratio)]
    check_pooling_ratio(ratio)
    seq = [None if d is None else d + 1 for d in out[1:3]]
    return [_ts.TensorShape(out), _ts.TensorShape([seq[0]]), _ts.TensorShape([seq[1]])]


def _max_grad_shape(ctx):
    """FractionalMaxPoolGrad: shaped like orig_input."""
    return shape_with_rank(ctx.input_shape(0), 4)


def _avg_grad_shape(ctx):
    """FractionalAvgPoolGrad: the value of orig_input_tensor_shape when it is a constant."""
    value = ctx.static_value(0)
    if value is not None:
        return _ts.TensorShape([int(d) for d in value])
    return _ts.TensorShape([None] * 4)


_POOL_ATTRS = [Attr("pooling_ratio", "list(float)"), Attr("pseudo_random", "bool", False),
               Attr("overlapping", "bool", False), Attr("deterministic", "bool", False),
               Attr("seed", "int", 0), Attr("seed2", "int", 0), TypeAttr("T", _TYPES)]
_OUTPUTS = ["output: T", "row_pooling_sequence: int64", "col_pooling_sequence: int64"]
_GRAD_ATTRS = [Attr("overlapping", "bool", False), TypeAttr("T", _TYPES)]

FractionalMaxPool = define_op("FractionalMaxPool", ["value: T"], _OUTPUTS, _POOL_ATTRS,
                              _pool_shape, is_stateful=True)
FractionalAvgPool = define_op("FractionalAvgPool", ["value: T"], _OUTPUTS, _POOL_ATTRS,
                              _pool_shape, is_stateful=True)
FractionalMaxPoolGrad = define_op(
    "FractionalMaxPoolGrad",
    ["orig_input: T", "orig_output: T", "out_backprop: T", "row_pooling_sequence: int64",
     "col_pooling_sequence: int64"], ["output: T"], _GRAD_ATTRS, _max_grad_shape)
FractionalAvgPoolGrad = define_op(
    "FractionalAvgPoolGrad",
    ["orig_input_tensor_shape: int64", "out_backprop: T", "row_pooling_sequence: int64",
     "col_pooling_sequence: int64"], ["output: T"], _GRAD_ATTRS, _avg_grad_shape)


@FractionalMaxPool.gradient
def _fractional_max_pool_grad(op, grad, unused_row_grad, unused_col_grad):
    """Each output's gradient goes to its window's first maximum (recomputed by the grad op)."""
    return [apply_op(FractionalMaxPoolGrad,
                     [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
                     {"overlapping": op.get_attr("overlapping")})]


@FractionalAvgPool.gradient
def _fractional_avg_pool_grad(op, grad, unused_row_grad, unused_col_grad):
    """Each output's gradient is shared equally by its window's elements."""
    from tensorweave.ops.array_ops import shape
    static = op.inputs[0].shape
    orig_shape = (static.as_list() if static.is_fully_defined()
                  else shape(op.inputs[0], out_type=_dtypes.int64))
    return [apply_op(FractionalAvgPoolGrad, [orig_shape, grad, op.outputs[1], op.outputs[2]],
                     {"overlapping": op.get_attr("overlapping")})]


_Output = collections.namedtuple("FractionalPool",
                                 ["output", "row_pooling_sequence", "col_pooling_sequence"])


def _pool(op_def, value, pooling_ratio, pseudo_random, overlapping, deterministic, seed,
          seed2, name):
    attrs = {"pooling_ratio": [float(r) for r in pooling_ratio],
             "pseudo_random": bool(pseudo_random), "overlapping": bool(overlapping),
             "deterministic": bool(deterministic), "seed": int(seed), "seed2": int(seed2)}
    return _Output(*apply_op(op_def, [value], attrs, name=name or op_def.name))


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Performs fractional max pooling on the input (tf.nn.fractional_max_pool, TF1).

    Args:
      value: A 4-D Tensor `[batch, height, width, channels]` of float32, float64, int32 or
        int64.
      pooling_ratio: 4 floats >= 1, the ratio of each input dimension to the output's; the
        batch and channel entries must be 1 (else UnimplementedError when run).
      pseudo_random: cut the windows with the pseudo-random sequence of the paper (window
        starts ceil(alpha * (i + u)) for one random u) instead of a random shuffle of lengths.
      overlapping: each window also covers the first element of the next window.
      deterministic: draw the sequences once per kernel (from `seed`, `seed2`, or a random
        pair when both are 0) instead of on every run.
      seed: with `deterministic`, the first seed (must be 0 otherwise).
      seed2: with `deterministic`, the second seed (must be 0 otherwise).
      name: the op name (default "FractionalMaxPool").

    Returns:
      A namedtuple (output, row_pooling_sequence, col_pooling_sequence): the pooled Tensor of
      shape floor(value.shape / pooling_ratio), and the int64 window boundaries along the
      height and width (rows + 1 and cols + 1 offsets from 0 to the input's size).

    Raises:
      ValueError: `value` is not 4-D, or `pooling_ratio` does not have 4 entries all >= 1.
      TypeError: an unsupported dtype.
    """
    return _pool(FractionalMaxPool, value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Performs fractional average pooling on the input (tf.nn.fractional_avg_pool, TF1).

    As `fractional_max_pool`, with the mean of each window (truncated toward zero for integer
    dtypes) instead of its maximum; the default op name is "FractionalAvgPool".

    Args:
      value: A 4-D Tensor `[batch, height, width, channels]`.
      pooling_ratio: 4 floats >= 1; see `fractional_max_pool`.
      pseudo_random: the pseudo-random instead of the random window sequence.
      overlapping: each window also covers the first element of the next window.
      deterministic: draw the sequences once per kernel instead of on every run.
      seed: with `deterministic`, the first seed.
      seed2: with `deterministic`, the second seed.
      name: the op name.

    Returns:
      A namedtuple (output, row_pooling_sequence, col_pooling_sequence).

    Raises:
      ValueError: `value` is not 4-D, or `pooling_ratio` does not have 4 entries all >= 1.
      TypeError: an unsupported dtype.
    """
    return _pool(FractionalAvgPool, value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name)
