"""SparseTensor and SparseTensorValue: TF's COO form of a tensor (indices, values, dense_shape).

`indices` is [N, rank] int64, `values` [N], `dense_shape` [rank] int64; parse_example's
VarLenFeature outputs and sparse placeholders are SparseTensors.

It is a client-side triple of Tensors, not a graph element: `Session.run` fetches it as a
`SparseTensorValue` (runtime/fetches.py) and feeds it component-wise (runtime/session.py).
"""
from __future__ import annotations

import collections

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor"]

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "A SparseTensor's fetched value: NumPy indices, values, dense_shape."


class SparseTensor:
    """A sparse tensor: `values[i]` sits at `indices[i]` of a tensor of shape `dense_shape`.

    Args:
      indices: int64 [N, rank], the coordinates of the non-default entries, row-major sorted.
      values: [N], their values (any dtype).
      dense_shape: int64 [rank], the shape of the dense tensor.
    """

    def __init__(self, indices, values, dense_shape):
        with name_scope(None, "SparseTensor"):
            self._indices = _component(indices, "indices", _dtypes.int64)
            self._values = _component(values, "values", None)
            self._dense_shape = _component(dense_shape, "dense_shape", _dtypes.int64)
        indices_shape = self._indices.shape.with_rank(2)
        indices_shape[0].assert_is_compatible_with(self._values.shape.with_rank(1)[0])
        indices_shape[1].assert_is_compatible_with(self._dense_shape.shape.with_rank(1)[0])
        self._shape_hint = _ts.unknown_shape()   # what set_shape added to the static shape

    @classmethod
    def from_value(cls, value):
        """A SparseTensor from a SparseTensor (returned as is) or a SparseTensorValue."""
        if isinstance(value, SparseTensor):
            return value
        if not isinstance(value, SparseTensorValue):
            raise TypeError(f"Neither a SparseTensor nor SparseTensorValue: {value}.")
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices, doc="int64 [N, rank] coordinates.")
    values = property(lambda self: self._values, doc="[N] values.")
    dense_shape = property(lambda self: self._dense_shape, doc="int64 [rank] dense shape.")
    dtype = property(lambda self: self._values.dtype, doc="The dtype of the values.")
    op = property(lambda self: self._values.op, doc="The op producing the values.")
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self) -> _ts.TensorShape:
        """The static dense shape: `dense_shape`'s value where known, else its rank."""
        from tensorweave.framework.static_value import static_shape_value
        shape = static_shape_value(self._dense_shape)
        rank = _ts.dimension_value(self._indices.shape[1]) \
            if self._indices.shape.ndims == 2 else None
        if rank is None and self._dense_shape.shape.ndims == 1:
            rank = _ts.dimension_value(self._dense_shape.shape[0])
        if rank is not None:
            shape = shape.merge_with(_ts.unknown_shape(rank=rank))
        return shape.merge_with(self._shape_hint)

    def get_shape(self) -> _ts.TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """Refines the static dense shape (TF 2.x's SparseTensor.set_shape); ValueError if
        `shape` is incompatible with what is known."""
        self._shape_hint = self.shape.merge_with(_ts.as_shape(shape))

    # sparse * dense and sparse / dense: the values combined with the dense tensor broadcast to
    # the dense shape (SparseDenseCwiseMul / Div), as TF overloads them.
    def __mul__(self, other):
        return _cwise("SparseDenseCwiseMul", self, other)

    def __truediv__(self, other):
        return _cwise("SparseDenseCwiseDiv", self, other)

    __div__ = __truediv__

    def eval(self, feed_dict=None, session=None):
        """The value in `session` (or the default session) as a SparseTensorValue."""
        from tensorweave.runtime.session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered.")
        return session.run(self, feed_dict)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")


def _component(value, name: str, dtype):
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype.base_dtype != dtype:
            raise TypeError(f"SparseTensor {name} must be {dtype.name}, got "
                            f"{value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def _cwise(op_name: str, sp_t: SparseTensor, dense) -> SparseTensor:
    """TF's operator helper: the op is named by its scope ("mul", "truediv")."""
    from tensorweave.framework.apply_op import apply_op
    from tensorweave.ops import sparse_reduce_ops
    scope_name = "mul" if op_name.endswith("Mul") else "truediv"
    with name_scope(None, scope_name, [sp_t.values, dense]) as scope:
        dense = convert_to_tensor(dense, dtype=sp_t.dtype)
        values = apply_op(getattr(sparse_reduce_ops, op_name),
                          [sp_t.indices, sp_t.values, sp_t.dense_shape, dense], name=scope)
    return SparseTensor(sp_t.indices, values, sp_t.dense_shape)


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """`value` as a SparseTensor (from a SparseTensorValue, or itself) or else a Tensor.

    Raises:
      RuntimeError: a SparseTensor whose dtype is not `dtype` (TensorFlow's error class).
    """
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise RuntimeError(f"Sparse dtype mismatch. Requested: {_dtypes.as_dtype(dtype).name},"
                               f"  Actual: {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
