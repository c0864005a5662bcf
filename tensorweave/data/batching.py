"""padded_batch and unbatch: batching transformations whose shapes need more than a prefix."""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import TensorSpec, _Unary, int64_arg, tensor_structure
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value


def _shape_leaves(structure, shapes) -> list:
    """One TensorShape per leaf of `structure` (a shape given as a list is a leaf)."""
    if isinstance(structure, (tuple, dict)):
        keys = sorted(structure) if isinstance(structure, dict) else range(len(structure))
        return [s for k in keys for s in _shape_leaves(structure[k], shapes[k])]
    return [_ts.as_shape(shapes)]


class PaddedBatch(_Unary):
    """Batches elements, padding each component to `padded_shapes` (None: the batch's max)."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        structure = tensor_structure(input_dataset, "Dataset.padded_batch()")
        specs = nest.flatten(structure)
        if padded_shapes is None:
            shapes = [s.shape if s.shape.ndims is not None else None for s in specs]
            if None in shapes:
                raise ValueError("padded_batch needs padded_shapes for components of unknown "
                                 "rank.")
            shapes = [_ts.TensorShape([None] * s.ndims) for s in shapes]
        else:
            shapes = _shape_leaves(structure, padded_shapes)
        for spec, shape in zip(specs, shapes):
            if not shape.is_compatible_with(_ts.TensorShape([None] * shape.ndims)) or \
                    (spec.shape.ndims is not None and spec.shape.ndims != shape.ndims):
                raise ValueError(f"The padded shape {shape} is not compatible with the "
                                 f"corresponding input component shape {spec.shape}.")
        values = nest.flatten(padding_values) if padding_values is not None else \
            [b"" if s.dtype == _dtypes.string else 0 for s in specs]
        self._pads = [convert_to_tensor(v, dtype=s.dtype, name="padding_value")
                      for v, s in zip(values, specs)]
        self._size = int64_arg(batch_size, "batch_size")
        self._drop = bool(drop_remainder)
        self._shapes = [[-1 if d is None else d for d in s.as_list()] for s in shapes]
        size = constant_value(self._size) if self._drop else None
        lead = _ts.TensorShape([int(size) if size is not None else None])
        super().__init__(input_dataset, nest.pack(structure, [
            TensorSpec(lead.concatenate(shape), spec.dtype)
            for spec, shape in zip(specs, shapes)]))

    def _dataset_spec(self, builder):
        return self._spec(builder, "padded_batch", args=builder.args([self._size] + self._pads),
                          padded_shapes=self._shapes, drop_remainder=self._drop)


class Unbatch(_Unary):
    """Splits each element's components along their first dimension."""

    def __init__(self, input_dataset):
        specs = nest.flatten(tensor_structure(input_dataset, "Dataset.unbatch()"))
        if any(s.shape.ndims == 0 for s in specs):
            raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(input_dataset, nest.map_structure(
            lambda s: TensorSpec(s.shape[1:] if s.shape.ndims is not None else None, s.dtype),
            input_dataset._structure))

    def _dataset_spec(self, builder):
        return self._spec(builder, "unbatch")
