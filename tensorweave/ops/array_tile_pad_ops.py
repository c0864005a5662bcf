"""Tiling, padding, reversing: Tile, Pad, PadV2, MirrorPad(+Grad), ReverseV2, ReverseSequence.

Split from `array_ops.py`, which re-exports the wrappers (`tf.tile`, `tf.pad`, `tf.reverse`).
Each op carries its gradient: Tile sums the copies, Pad slices the input back out, MirrorPad
folds the mirrored border back in (MirrorPadGrad), ReverseV2 and ReverseSequence reverse the
gradient the same way. Kernels
live in `kernels/array.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.static_value import register_static_value, static_value, static_values

__all__ = ["pad", "reverse", "reverse_sequence", "reverse_v2", "tile"]

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX


def _dims(shape: TensorShape):
    return shape._dims


# --- Tile --------------------------------------------------------------------------------------
def _tile_shape(ctx):
    in_dims = _dims(ctx.input_shape(0))
    n = dims_with_rank(_dims(ctx.input_shape(1)), 1)[0]
    if in_dims is not None and n is not None and n != len(in_dims):
        raise ValueError(f"Shape must be rank {len(in_dims)} but is rank {n}")
    r = len(in_dims) if in_dims is not None else n
    if r is None:
        return _ts.unknown_shape()
    multiples = ctx.static_shape(1)
    mult = multiples.as_list() if multiples.ndims == r else [None] * r
    dims = in_dims if in_dims is not None else (None,) * r
    return TensorShape([0 if m == 0 else None if d is None or m is None else d * m
                        for d, m in zip(dims, mult)])


Tile = define_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
                 attrs=[TypeAttr("T"), TypeAttr("Tmultiples", _INDEX, _dtypes.int32)],
                 shape_fn=_tile_shape)


@Tile.gradient
def _tile_grad(op, grad):
    """Sums the copies: grad reshaped to [m0, d0, m1, d1, ...] and reduced over the m axes."""
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.array_ops import reshape, shape, size, transpose
    from tensorweave.ops.reduction_ops import reduce_sum
    x, multiples = op.inputs
    mult = static_value(multiples)
    dims = x.shape.as_list() if x.shape.is_fully_defined() else None
    if mult is not None and dims is not None:
        if all(int(m) == 1 for m in mult):
            return [grad, None]
        split = [v for m, d in zip(mult.tolist(), dims) for v in (m, d)]
        return [reduce_sum(reshape(grad, split), list(range(0, len(split), 2))), None]
    split = reshape(transpose(stack([multiples, shape(x, out_type=multiples.dtype)])), [-1])
    return [reduce_sum(reshape(grad, split), _range(0, size(split), 2)), None]


def tile(input, multiples, name=None):  # noqa: A002 - TF1's argument name
    """Repeats `input` `multiples[i]` times along dimension i (TF1's tf.tile).

    Args:
      input: a Tensor.
      multiples: a 1-D int32/int64 Tensor with one non-negative entry per dimension.
      name: the op name (default "Tile").

    Returns:
      A Tensor whose dimension i has size `input.shape[i] * multiples[i]`.
    """
    return apply_op(Tile, [input, multiples], name=name)


# --- Pad, PadV2, MirrorPad ---------------------------------------------------------------------
def _pad_shape(ctx, sign: int = 1):
    """Each dimension grows by its paddings (shrinks, with sign -1, for MirrorPadGrad)."""
    in_dims = _dims(ctx.input_shape(0))
    n, two = dims_with_rank(_dims(ctx.input_shape(1)), 2)
    if two is not None and two != 2:
        raise ValueError(f"Dimension must be 2 but is {two}")
    if in_dims is not None and n is not None and n != len(in_dims):
        raise ValueError(f"Shape must be rank {n} but is rank {len(in_dims)}")
    if len(ctx.inputs) == 3:
        dims_with_rank(_dims(ctx.input_shape(2)), 0)
    r = len(in_dims) if in_dims is not None else n
    if r is None:
        return _ts.unknown_shape()
    pads = ctx.static_value(1)
    if pads is None:
        return _ts.unknown_shape(r)
    if (pads < 0).any():
        raise ValueError("Paddings must be non-negative")
    dims = in_dims if in_dims is not None else (None,) * r
    out = [None if d is None else d + sign * (int(lo) + int(hi))
           for d, (lo, hi) in zip(dims, pads.reshape(r, 2).tolist())]
    for d, o in zip(dims, out):
        if o is not None and o < 0:
            raise ValueError(f"Negative dimension size caused by subtracting {d - o} from {d}")
    return TensorShape(out)


def _pad_op(name, extra_inputs=(), extra_attrs=(), shape_fn=_pad_shape):
    return define_op(name, inputs=["input: T", "paddings: Tpaddings", *extra_inputs],
                     outputs=["output: T"],
                     attrs=[TypeAttr("T"), TypeAttr("Tpaddings", _INDEX, _dtypes.int32),
                            *extra_attrs], shape_fn=shape_fn)


Pad = _pad_op("Pad")
PadV2 = _pad_op("PadV2", ["constant_values: T"])
MirrorPad = _pad_op("MirrorPad", extra_attrs=[Attr("mode", "string")])
# The adjoint of MirrorPad: each mirrored border entry is added back onto the entry it copies.
MirrorPadGrad = _pad_op("MirrorPadGrad", extra_attrs=[Attr("mode", "string")],
                        shape_fn=lambda ctx: _pad_shape(ctx, -1))


@Pad.gradient
@PadV2.gradient
def _pad_grad(op, grad):
    """The input's part of the gradient: a Slice at the leading paddings. No gradient flows to
    `constant_values` (as in TensorFlow)."""
    from tensorweave.ops.array_ops import reshape, shape
    from tensorweave.ops.array_slicing_ops import slice as _slice
    x, paddings = op.inputs[:2]
    value = static_value(paddings)
    if value is not None:
        begin = np.ascontiguousarray(np.reshape(value, (-1, 2))[:, 0])
    else:
        begin = reshape(_slice(paddings, [0, 0], [-1, 1]), [-1])
    x_grad = _slice(grad, begin, shape(x, out_type=paddings.dtype))
    return [x_grad] + [None] * (len(op.inputs) - 1)


@MirrorPad.gradient
def _mirror_pad_grad(op, grad):
    return [apply_op(MirrorPadGrad, [grad, op.inputs[1]], {"mode": op.attrs["mode"]}), None]


@MirrorPadGrad.gradient
def _mirror_pad_grad_grad(op, grad):
    """MirrorPadGrad is linear, and its adjoint is MirrorPad."""
    return [apply_op(MirrorPad, [grad, op.inputs[1]], {"mode": op.attrs["mode"]}), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads a tensor (TF1's tf.pad).

    `paddings[i] = [before, after]` adds that many entries before and after dimension i.
    CONSTANT fills them with `constant_values`; REFLECT mirrors without repeating the edge
    (padding must be < the dimension); SYMMETRIC mirrors including the edge (padding must be
    <= the dimension).

    Args:
      tensor: a Tensor.
      paddings: an int32/int64 Tensor of shape [rank(tensor), 2].
      mode: "CONSTANT", "REFLECT" or "SYMMETRIC" (case-insensitive).
      name: the op name (default "Pad", "PadV2" or "MirrorPad").
      constant_values: the fill value for CONSTANT mode, of `tensor`'s dtype.

    Returns:
      The padded Tensor.

    Raises:
      ValueError: for an unknown mode or statically negative paddings.
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0 \
                and not _is_nonzero(constant_values):
            return apply_op(Pad, [tensor, paddings], name=name)
        return apply_op(PadV2, [tensor, paddings, constant_values], name=name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op(MirrorPad, [tensor, paddings], {"mode": mode}, name=name)
    raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
                     f'"SYMMETRIC". Received `mode` = {mode}')


def _is_nonzero(value) -> bool:
    return bool(value) if not isinstance(value, (str, bytes)) else len(value) > 0


# --- ReverseV2 ---------------------------------------------------------------------------------
def _reverse_shape(ctx):
    in_shape = ctx.input_shape(0)
    dims_with_rank(_dims(ctx.input_shape(1)), 1)
    axis = ctx.static_value(1)
    if axis is not None and in_shape.ndims is not None:
        r, seen = in_shape.ndims, set()
        for i, a in enumerate(np.ravel(axis).tolist()):
            if not -r <= a < r:
                raise ValueError(f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
            if a % r in seen:
                raise ValueError(f"axis {a % r} specified more than once.")
            seen.add(a % r)
    return in_shape


ReverseV2 = define_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                      attrs=[TypeAttr("T"), TypeAttr("Tidx", _INDEX, _dtypes.int32)],
                      shape_fn=_reverse_shape)


@register_static_value("ReverseV2")
def _reverse_value(op, index):
    args = static_values(op.inputs)
    return None if args is None else np.flip(args[0], tuple(np.ravel(args[1]).tolist()))


@ReverseV2.gradient
def _reverse_grad(op, grad):
    return [apply_op(ReverseV2, [grad, op.inputs[1]]), None]


def reverse(tensor, axis, name=None):
    """Reverses the order of elements along the given dimensions (TF1's tf.reverse).

    Args:
      tensor: a Tensor.
      axis: a 1-D int32/int64 list or Tensor of distinct dimensions (negative count from the
        end).
      name: the op name (default "ReverseV2").

    Returns:
      A Tensor of the same shape.

    Raises:
      ValueError: if an axis is statically out of range or repeated.
    """
    return apply_op(ReverseV2, [tensor, axis], name=name)


reverse_v2 = reverse


# --- ReverseSequence ---------------------------------------------------------------------------
def _reverse_sequence_shape(ctx):
    in_shape = ctx.input_shape(0)
    (batch,) = dims_with_rank(_dims(ctx.input_shape(1)), 1)
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")
    dims = _dims(in_shape)
    if dims is None:
        return in_shape
    if seq_dim >= len(dims):
        raise ValueError(f"seq_dim must be < input rank: {seq_dim} vs. {len(dims)}")
    if batch_dim >= len(dims):
        raise ValueError(f"batch_dim must be < input rank: {batch_dim} vs. {len(dims)}")
    if dims[batch_dim] is not None and batch is not None and dims[batch_dim] != batch:
        raise ValueError(f"Dimensions must be equal, but are {dims[batch_dim]} and {batch}")
    out = list(dims)
    out[batch_dim] = merge_dims((dims[batch_dim],), (batch,))[0]
    return TensorShape(out)


ReverseSequence = define_op(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=[Attr("seq_dim", "int"), Attr("batch_dim", "int", 0), TypeAttr("T"),
           TypeAttr("Tlen", _INDEX, _dtypes.int64)],
    shape_fn=_reverse_sequence_shape)


@ReverseSequence.gradient
def _reverse_sequence_grad(op, grad):
    """The reversal is its own inverse: reverse the gradient with the same lengths."""
    attrs = {"seq_dim": op.get_attr("seq_dim"), "batch_dim": op.get_attr("batch_dim")}
    return [apply_op(ReverseSequence, [grad, op.inputs[1]], attrs), None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each batch entry `b`.

    Args:
      input: a Tensor.
      seq_lengths: a 1-D int32/int64 Tensor of length `input.shape[batch_axis]`, each entry
        at most `input.shape[seq_axis]`.
      seq_axis: the dimension that is partially reversed (TF1 also accepts `seq_dim`).
      batch_axis: the dimension along which lengths apply (default 0; also `batch_dim`).
      name: the op name (default "ReverseSequence").

    Returns:
      A Tensor like `input`; entries past each length stay in place.

    Raises:
      ValueError: if an axis is past the rank or the batch sizes disagree.
    """
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("seq_axis must be given")
    attrs = {"seq_dim": int(seq_axis), "batch_dim": 0 if batch_axis is None else int(batch_axis)}
    return apply_op(ReverseSequence, [input, seq_lengths], attrs, name=name)
