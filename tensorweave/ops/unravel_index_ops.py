"""UnravelIndex (tf.unravel_index): flat indices into coordinates of an array of shape `dims`.

The inverse of row-major flattening, as NumPy's `unravel_index` but with TensorFlow's layout:
coordinates run along the first axis ([len(dims)] for a scalar index, [len(dims), n] for n
indices). The kernel (kernels/unravel_index.py) follows TensorFlow's CPU kernel, including its
checks and its C arithmetic on negative indices. Not differentiable: integer in, integer out.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank

__all__ = ["unravel_index"]


def _unravel_index_shape(ctx):
    """[len(dims)] for a scalar index, [len(dims), number of indices] otherwise. Like
    TensorFlow, only `dims` is checked here: a matrix of indices fails in the kernel."""
    (rank,) = dims_with_rank(ctx.input_shape(1)._dims, 1)
    indices = ctx.input_shape(0)
    if indices.ndims is None:
        return _ts.unknown_shape()
    if indices.ndims == 0:
        return _ts.TensorShape([rank])
    return _ts.TensorShape([rank, indices.num_elements()])


UnravelIndex = define_op(
    "UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"], outputs=["output: Tidx"],
    attrs=[TypeAttr("Tidx", _dtypes.INDEX, default=_dtypes.int32)],
    shape_fn=_unravel_index_shape, not_differentiable=True,
    doc="The coordinates, in an array of shape `dims`, of each flat index.")


def unravel_index(indices, dims, name=None):
    """Converts flat indices into coordinate arrays of an array of shape `dims`.

    For example, `tf.unravel_index([1, 5, 7], [3, 3])` is `[[0, 1, 2], [1, 2, 1]]`: column j
    holds the coordinates of `indices[j]` (row-major order).

    Args:
      indices: An int32 or int64 Tensor, a scalar or a vector of flat indices.
      dims: A 1-D Tensor of the same dtype: the shape of the array the indices refer to.
      name: A name for the operation (default "UnravelIndex").

    Returns:
      A Tensor of the indices' dtype: shape [len(dims)] for a scalar index, else
      [len(dims), len(indices)].

    Raises:
      ValueError: if `dims` is statically not a vector.
      TypeError: if the dtypes differ or are not int32/int64.
      InvalidArgumentError: at run time, if `indices` is empty or not a scalar or vector, a
        dimension is not positive, the product of `dims` overflows the dtype, or an index is
        at least that product. As in TensorFlow, negative indices are not rejected: they give
        C's truncated quotients and remainders.
    """
    return apply_op(UnravelIndex, [indices, dims], name=name)
