"""Moving blocks between space, depth and batch: SpaceToDepth, DepthToSpace, SpaceToBatchND,
BatchToSpaceND, and TF1's tf.space_to_batch / tf.batch_to_space built on the ND ops.

Each pair are inverse permutations of the entries, so each op's gradient is its partner with
the same attrs (block size, data format) or the same block shape and paddings/crops, as in
TensorFlow. Shape functions follow TensorFlow's (array_ops.cc), messages included. Kernels live
in `kernels/array_space.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.ops.nn_conv_ops import check_string_attr

__all__ = ["batch_to_space", "batch_to_space_nd", "depth_to_space", "space_to_batch",
           "space_to_batch_nd", "space_to_depth"]

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX
DATA_FORMATS = ("NHWC", "NCHW", "NCHW_VECT_C")


def _dims(shape: TensorShape):
    return shape._dims


def _divide(size, divisor: int):
    """TF's InferenceContext::Divide with evenly_divisible: None stays unknown."""
    if size is None:
        return None
    if size % divisor:
        raise ValueError(f"Dimension size must be evenly divisible by {divisor} but is {size}")
    return size // divisor


def _subtract(size, amount: int):
    """TF's InferenceContext::Subtract: None stays unknown; ValueError below zero."""
    if size is None:
        return None
    if size < amount:
        raise ValueError(f"Negative dimension size caused by subtracting {amount} from {size}")
    return size - amount


# --- SpaceToDepth, DepthToSpace ----------------------------------------------------------------
def _block_size(ctx) -> int:
    """The block_size attr, checked against the OpDef's minimum of 2 (TF's message)."""
    size = ctx.attr("block_size")
    if size < 2:
        raise ValueError(f"Attr 'block_size' of '{ctx.op_type}' Op passed {size} less than "
                         f"minimum 2.")
    return size


def _depth_shape(ctx):
    """[N, H, W, C] -> [N, H/b, W/b, C*b*b] (SpaceToDepth) or [N, H*b, W*b, C/(b*b)]
    (DepthToSpace); channel axis 1 for NCHW."""
    fmt = check_string_attr(ctx.op_type, "data_format", ctx.attr("data_format"), DATA_FORMATS)
    if fmt == "NCHW_VECT_C":
        raise ValueError(f"{ctx.op_type} with data_format NCHW_VECT_C needs the qint8 dtype, "
                         f"which tensorweave does not support")
    b = _block_size(ctx)
    dims = dims_with_rank(_dims(ctx.input_shape(0)), 4)
    n, h, w, c = (dims[0], dims[2], dims[3], dims[1]) if fmt == "NCHW" else dims
    if ctx.op_type == "SpaceToDepth":
        h, w, c = _divide(h, b), _divide(w, b), None if c is None else c * b * b
    else:
        h, w, c = None if h is None else h * b, None if w is None else w * b, _divide(c, b * b)
    return TensorShape([n, c, h, w] if fmt == "NCHW" else [n, h, w, c])


def _depth_op(name: str):
    return define_op(name, inputs=["input: T"], outputs=["output: T"],
                     attrs=[TypeAttr("T"), Attr("block_size", "int"),
                            Attr("data_format", "string", "NHWC")],
                     shape_fn=_depth_shape)


SpaceToDepth = _depth_op("SpaceToDepth")
DepthToSpace = _depth_op("DepthToSpace")


@SpaceToDepth.gradient
@DepthToSpace.gradient
def _depth_grad(op, grad):
    """The partner op with the same block size and data format undoes the permutation."""
    partner = DepthToSpace if op.type == "SpaceToDepth" else SpaceToDepth
    attrs = {"block_size": op.get_attr("block_size"), "data_format": op.get_attr("data_format")}
    return [apply_op(partner, [grad], attrs)]


def _depth_wrapper(op_def, input, block_size, name, data_format):  # noqa: A002
    return apply_op(op_def, [input], {"block_size": block_size, "data_format": data_format},
                    name=name)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002 - TF1
    """Moves non-overlapping `block_size` x `block_size` spatial blocks into the depth
    (TF1's tf.space_to_depth / tf.nn.space_to_depth).

    Output entry [n, i, j, (bi * block_size + bj) * C + c] is input entry
    [n, i * block_size + bi, j * block_size + bj, c].

    Args:
      input: a 4-D Tensor [batch, height, width, depth] (NHWC) or [batch, depth, height,
        width] (NCHW); height and width divisible by `block_size`.
      block_size: an int >= 2.
      name: the op name (default "SpaceToDepth").
      data_format: "NHWC" (default) or "NCHW".

    Returns:
      A Tensor with height and width divided by `block_size`, depth multiplied by its square.

    Raises:
      ValueError: for a block size below 2, an unknown data format, a rank other than 4 or
        spatial sizes not divisible by `block_size`, statically.
    """
    return _depth_wrapper(SpaceToDepth, input, block_size, name, data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002 - TF1
    """Moves depth into non-overlapping `block_size` x `block_size` spatial blocks: the
    inverse of `space_to_depth` (TF1's tf.depth_to_space / tf.nn.depth_to_space).

    Args:
      input: a 4-D Tensor (NHWC, or NCHW) whose depth is divisible by `block_size ** 2`.
      block_size: an int >= 2.
      name: the op name (default "DepthToSpace").
      data_format: "NHWC" (default) or "NCHW".

    Returns:
      A Tensor with height and width multiplied by `block_size`, depth divided by its square.

    Raises:
      ValueError: for a block size below 2, an unknown data format, a rank other than 4 or a
        depth not divisible by `block_size ** 2`, statically.
    """
    return _depth_wrapper(DepthToSpace, input, block_size, name, data_format)


# --- SpaceToBatchND, BatchToSpaceND ------------------------------------------------------------
def _space_batch_shape(ctx):
    """TF's SpaceToBatchShapeHelper / BatchToSpaceShapeHelper: [batch, spatial (M), rest]
    with block_shape [M] and paddings or crops [M, 2]."""
    to_batch = ctx.op_type == "SpaceToBatchND"
    block_dims = _dims(ctx.input_shape(1))
    if block_dims is None or len(block_dims) != 1:
        raise ValueError("block_shape must have rank 1.")
    m = block_dims[0]
    if m is None:
        raise ValueError("block_shape must have known size.")
    in_dims = _dims(ctx.input_shape(0))
    if in_dims is not None and len(in_dims) < m + 1:
        raise ValueError(f"Shape must be at least rank {m + 1} but is rank {len(in_dims)}")
    merge_dims(_dims(ctx.input_shape(2)), (m, 2))
    dims = in_dims if in_dims is not None else (None,) * (m + 1)
    block, amounts = ctx.static_value(1), ctx.static_value(2)
    batch = dims[0]
    if block is not None:
        block = np.ravel(block).tolist()
        for b in block:
            if b < 1:
                raise ValueError("block_shape must be positive")
            if batch is not None:
                batch = batch * b if to_batch else _divide(batch, b)
    elif m > 0:
        batch = None
    out = [batch] + [None] * m
    if amounts is not None:
        what = "paddings" if to_batch else "crops"
        for i, (lo, hi) in enumerate(np.reshape(amounts, (-1, 2)).tolist()):
            if lo < 0 or hi < 0:
                raise ValueError(f"{what} cannot be negative")
            if block is not None and dims[i + 1] is not None:
                if to_batch:
                    out[i + 1] = _divide(dims[i + 1] + lo + hi, block[i])
                else:
                    out[i + 1] = _subtract(_subtract(dims[i + 1] * block[i], lo), hi)
    if in_dims is None:
        return _ts.unknown_shape()
    return TensorShape(out + list(in_dims[m + 1:]))


def _space_batch_op(name: str, amounts: str, amounts_type: str):
    return define_op(name, inputs=["input: T", "block_shape: Tblock_shape",
                                   f"{amounts}: {amounts_type}"],
                     outputs=["output: T"],
                     attrs=[TypeAttr("T"), TypeAttr("Tblock_shape", _INDEX, _dtypes.int32),
                            TypeAttr(amounts_type, _INDEX, _dtypes.int32)],
                     shape_fn=_space_batch_shape)


SpaceToBatchND = _space_batch_op("SpaceToBatchND", "paddings", "Tpaddings")
BatchToSpaceND = _space_batch_op("BatchToSpaceND", "crops", "Tcrops")


@SpaceToBatchND.gradient
@BatchToSpaceND.gradient
def _space_batch_grad(op, grad):
    """The partner op with the same block shape, the paddings becoming crops and back."""
    partner = BatchToSpaceND if op.type == "SpaceToBatchND" else SpaceToBatchND
    return [apply_op(partner, [grad, op.inputs[1], op.inputs[2]]), None, None]


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002 - TF1's name
    """Zero-pads the M spatial dimensions, then moves blocks of them into the batch
    (TF1's tf.space_to_batch_nd / tf.manip.space_to_batch_nd).

    The padded input [batch, s1, ..., sM, rest...] is split into blocks of `block_shape`;
    the position within the block, outermost first, selects a batch group of the output
    [batch * prod(block_shape), s1 / b1, ..., sM / bM, rest...].

    Args:
      input: a Tensor of rank >= 1 + M.
      block_shape: a 1-D int32/int64 Tensor of M entries >= 1.
      paddings: an int32/int64 Tensor [M, 2] of non-negative (before, after) zero padding;
        each padded size must be divisible by its block size.
      name: the op name (default "SpaceToBatchND").

    Returns:
      A Tensor of `input`'s dtype.

    Raises:
      ValueError: for a block_shape of unknown size or non-positive entries, negative
        paddings, or sizes that do not divide, statically.
    """
    return apply_op(SpaceToBatchND, [input, block_shape, paddings], name=name)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002 - TF1's name
    """Moves batch groups back into blocks of the M spatial dimensions, then crops: the
    inverse of `space_to_batch_nd` (TF1's tf.batch_to_space_nd / tf.manip.batch_to_space_nd).

    Args:
      input: a Tensor [batch * prod(block_shape), d1, ..., dM, rest...].
      block_shape: a 1-D int32/int64 Tensor of M entries >= 1.
      crops: an int32/int64 Tensor [M, 2] of non-negative amounts cropped (before, after)
        from each spatial dimension of size `d_i * b_i`.
      name: the op name (default "BatchToSpaceND").

    Returns:
      A Tensor [batch, d1 * b1 - crops..., ..., rest...] of `input`'s dtype.

    Raises:
      ValueError: for a block_shape of unknown size or non-positive entries, negative crops,
        a batch not divisible by the block sizes, or crops larger than a dimension,
        statically.
    """
    return apply_op(BatchToSpaceND, [input, block_shape, crops], name=name)


def _square_block(block_size, block_shape) -> np.ndarray:
    """TF1's deprecated `block_size` (or its new name `block_shape`) as a 2-D block shape."""
    if block_shape is not None and block_size is not None:
        raise ValueError("Cannot specify both 'block_size' and 'block_shape'.")
    size = block_shape if block_shape is not None else block_size
    return np.array([size, size], dtype=np.int64)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's tf.space_to_batch / tf.nn.space_to_batch: `space_to_batch_nd` of a 4-D
    [batch, height, width, depth] tensor with the square block [block_size, block_size].

    Args:
      input: a 4-D Tensor.
      paddings: an int32/int64 Tensor [2, 2] of (before, after) zero padding of height and
        width; each padded size must be divisible by `block_size`.
      block_size: an int >= 1 (`block_shape` is its newer name).
      name: the op name (default "SpaceToBatchND").
      block_shape: the same as `block_size`.

    Returns:
      A 4-D Tensor [batch * block_size ** 2, padded height / block_size, padded width /
      block_size, depth].

    Raises:
      ValueError: as `space_to_batch_nd`, or if the result is not 4-D.
    """
    result = space_to_batch_nd(input, _square_block(block_size, block_shape), paddings, name)
    result.set_shape(result.shape.with_rank(4))
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """TF1's tf.batch_to_space: `batch_to_space_nd` of a 4-D tensor with the square block
    [block_size, block_size]; the inverse of `space_to_batch`.

    Args:
      input: a 4-D Tensor [batch * block_size ** 2, height, width, depth].
      crops: an int32/int64 Tensor [2, 2] of amounts cropped (before, after) from the height
        and width of size `height * block_size`, `width * block_size`.
      block_size: an int >= 1 (`block_shape` is its newer name).
      name: the op name (default "BatchToSpaceND").
      block_shape: the same as `block_size`.

    Returns:
      A 4-D Tensor [batch, cropped height, cropped width, depth].

    Raises:
      ValueError: as `batch_to_space_nd`, or if the result is not 4-D.
    """
    result = batch_to_space_nd(input, _square_block(block_size, block_shape), crops, name)
    result.set_shape(result.shape.with_rank(4))
    return result
