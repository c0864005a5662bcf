"""padded_batch and unbatch: batching transformations whose shapes need more than a prefix."""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    TensorSpec,
    UnaryDataset,
    dense_structure,
    int64_arg,
    sparse_starts,
    tensor_structure,
)
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value


def _leaves(structure, values) -> list:
    """The items of `values`, one per leaf of `structure` (a list in `values` is a leaf)."""
    if isinstance(structure, (tuple, dict)):
        keys = sorted(structure) if isinstance(structure, dict) else range(len(structure))
        return [v for k in keys for v in _leaves(structure[k], values[k])]
    return [values]


def shape_leaves(structure, shapes) -> list:
    """One TensorShape per leaf of `structure` (a shape given as a list is a leaf)."""
    return [_ts.as_shape(s) for s in _leaves(structure, shapes)]


def _padded_shape(value, spec) -> tuple:
    """The static shape and int64 vector tensor (-1: the batch's largest) of one padded shape:
    a shape-like value, or else a tensor (TensorFlow's `_padded_shape_to_tensor`)."""
    try:
        shape = _ts.as_shape(value)
        tensor = convert_to_tensor([-1 if d is None else d for d in shape.as_list()],
                                   dtype=_dtypes.int64)
    except (TypeError, ValueError):
        tensor = convert_to_tensor(value, preferred_dtype=_dtypes.int64)
        if tensor.shape.ndims is not None and tensor.shape.ndims != 1:
            raise ValueError(f"Padded shape {value} must be a `tf.int64` vector tensor, but "
                             f"its shape was {tensor.shape}.") from None
        if tensor.dtype.base_dtype != _dtypes.int64:
            raise TypeError(f"Padded shape {value} must be a `tf.int64` vector tensor, but its "
                            f"element type was {tensor.dtype.base_dtype.name}.") from None
        shape = _static_shape(tensor)
    if not _fits(shape, spec.shape):
        raise ValueError(f"The padded shape {shape} is not compatible with the shape "
                         f"{spec.shape} of the corresponding input component.")
    return shape, tensor


def _static_shape(tensor: Tensor) -> _ts.TensorShape:
    """The static shape an int64 vector tensor of dims (-1: any size) describes."""
    dims = constant_value(tensor)
    if dims is not None:
        return _ts.TensorShape([None if d < 0 else int(d) for d in dims])
    if tensor.shape.ndims == 1 and tensor.shape[0].value is not None:
        return _ts.TensorShape([None] * tensor.shape[0].value)
    return _ts.unknown_shape()


def _fits(padded: _ts.TensorShape, shape: _ts.TensorShape) -> bool:
    """Whether elements of `shape` can be padded to `padded` (same rank, no smaller dim)."""
    if padded.ndims is None or shape.ndims is None:
        return True
    return padded.ndims == shape.ndims and all(
        p.value is None or d.value is None or p.value >= d.value for p, d in zip(padded, shape))


def _padding_value(value, spec) -> Tensor:
    """A user's padding value: a scalar of exactly the component's dtype (a Python number gets
    its own default dtype first, so -1 does not pad an int64 component), as in TensorFlow."""
    tensor = convert_to_tensor(value, name="padding_value")
    if not tensor.shape.is_compatible_with([]):
        raise ValueError("Invalid `padding_values`. `padding_values` values should be "
                         f"scalars, but got {tensor.shape}.")
    if tensor.dtype.base_dtype != spec.dtype:
        raise TypeError(f"Invalid `padding_values`. `padding_values` values type "
                        f"{tensor.dtype.base_dtype} does not match type {spec.dtype} of the "
                        "corresponding input component.")
    return tensor


def _default_padding(dtype: _dtypes.DType):
    """TensorFlow's default padding value: b"" for strings, else the dtype's zero (False)."""
    if dtype == _dtypes.string:
        return b""
    return False if dtype == _dtypes.bool else 0


class PaddedBatch(UnaryDataset):
    """Batches elements, padding each component to `padded_shapes` (None or -1: the batch's
    largest). The padded shapes are int64 vectors read when the iterator starts."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        structure = dense_structure(input_dataset, "padded_batch")
        specs = nest.flatten(structure)
        if padded_shapes is None:
            if any(s.shape.ndims is None for s in specs):
                raise ValueError("padded_batch needs padded_shapes for components of unknown "
                                 "rank.")
            padded_shapes = nest.pack(structure, [[None] * s.shape.ndims for s in specs])
        shapes, self._shapes = zip(*(_padded_shape(v, s) for v, s in
                                     zip(_leaves(structure, padded_shapes), specs)))
        if padding_values is None:
            self._pads = [convert_to_tensor(_default_padding(s.dtype), dtype=s.dtype,
                                            name="padding_value") for s in specs]
        else:
            self._pads = [_padding_value(v, s) for v, s in
                          zip(_leaves(structure, padding_values), specs)]
        self._size = int64_arg(batch_size, "batch_size")
        self._drop = bool(drop_remainder)
        size = constant_value(self._size) if self._drop else None
        lead = _ts.TensorShape([int(size) if size is not None else None])
        super().__init__(input_dataset, nest.pack(structure, [
            TensorSpec(lead.concatenate(shape), spec.dtype)
            for spec, shape in zip(specs, shapes)]))

    def _dataset_spec(self, builder):
        return self._spec(builder, "padded_batch",
                          args=builder.args([self._size, *self._shapes, *self._pads]),
                          drop_remainder=self._drop)


class Unbatch(UnaryDataset):
    """Splits each element's components (SparseTensors too) along their first dimension."""

    def __init__(self, input_dataset):
        specs = nest.flatten(tensor_structure(input_dataset, "Dataset.unbatch()"))
        if any(s.shape.ndims == 0 for s in specs):
            raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(input_dataset, nest.map_structure(
            lambda s: type(s)(s.shape[1:] if s.shape.ndims is not None else None, s.dtype),
            input_dataset._structure))

    def _dataset_spec(self, builder):
        sparse = sparse_starts(self._input._structure)
        return self._spec(builder, "unbatch", **({"sparse": sparse} if sparse else {}))
