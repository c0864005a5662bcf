"""IndexedSlices: a sparse gradient — rows `values` at `indices` of a dense `dense_shape`.

Gradients of gather and embedding lookups stay in this form until an op needs them dense; the
conversion to a Tensor (a segment sum) warns, like TensorFlow, when the dense result is large
or of unknown size. Like a SparseTensor it is a client-side group of Tensors: `Session.run`
fetches it as an `IndexedSlicesValue` (runtime/fetches.py) and feeds it component-wise
(runtime/session.py).
"""
from __future__ import annotations

import collections
import logging

from tensorweave.framework import tensor_conversion
from tensorweave.framework.dtypes import as_dtype
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor

_log = logging.getLogger("tensorweave")
_LARGE_DENSE_ELEMENTS = 100_000_000

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = ("An IndexedSlices' fetched value: NumPy values, indices and "
                              "dense_shape (None when the slices have none).")


class IndexedSlices:
    """A sparse representation of a slice-wise tensor (TF's tf.IndexedSlices)."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    device = property(lambda self: self._values.device)

    @property
    def shape(self):
        from tensorweave.framework.static_value import static_shape_value
        if self._dense_shape is None:
            from tensorweave.framework import tensor_shape
            return tensor_shape.unknown_shape()
        return static_shape_value(self._dense_shape)

    def get_shape(self):
        return self.shape

    def __repr__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"


def to_dense(slices: IndexedSlices, name=None, warn: bool = True):
    """The dense Tensor: rows summed into their indices. `warn=False` where the conversion is
    expected (a gather's gradient reshaping its incoming gradient, as TF's does silently)."""
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    if slices.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{slices.name}")
    if warn:
        shape = slices.shape
        n = shape.num_elements() if shape.ndims is not None else None
        if n is None:
            _log.warning("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                         "This may consume a large amount of memory.")
        elif n >= _LARGE_DENSE_ELEMENTS:
            _log.warning("Converting sparse IndexedSlices to a dense Tensor with %d elements. "
                         "This may consume a large amount of memory.", n)
    return unsorted_segment_sum(slices.values, slices.indices, slices.dense_shape[0],
                                name=name)


def _convert(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices "
                         f"with dtype {value.dtype.name}")
    return to_dense(value, name=name)


tensor_conversion.register_tensor_conversion_function_internal(IndexedSlices, _convert)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """Converts `value` to a Tensor, passing Tensors, IndexedSlices and SparseTensors through.

    Args:
      value: An IndexedSlices, a SparseTensor, or anything `convert_to_tensor` takes.
      dtype: The required dtype of the result (optional).
      name: A name for a Tensor this creates.

    Returns:
      `value` itself if it is a Tensor, IndexedSlices or SparseTensor, else a Tensor.

    Raises:
      ValueError: if `dtype` does not match `value`'s dtype.
    """
    if isinstance(value, (Tensor, IndexedSlices, SparseTensor)):
        if dtype is not None and not as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Incompatible tensor conversion requested to `dtype` "
                             f"{as_dtype(dtype).name} for `value` ({value}) with dtype "
                             f"{value.dtype.name}.")
        return value
    return tensor_conversion.convert_to_tensor(value, dtype=dtype, name=name)
