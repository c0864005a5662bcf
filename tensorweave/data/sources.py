"""Source datasets: tensors, slices, ranges, Python generators, text lines and TFRecords."""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    Dataset,
    SparseTensorSpec,
    TensorSpec,
    flat_tensors,
    int64_arg,
    sparse_starts,
    spec_of,
)
from tensorweave.data.readers import FileRecordDataset
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import to_numpy
from tensorweave.kernels import dataset_runtime, script
from tensorweave.platform import tf_logging

__all__ = ["TextLineDataset", "TFRecordDataset"]


def _tensors(structure, name: str):
    """The leaves of `structure` as Tensors, or SparseTensors (from SparseTensorValues too)."""
    def convert(value):
        if isinstance(value, SparseTensorValue):
            return SparseTensor.from_value(value)
        if isinstance(value, SparseTensor):
            return value
        return convert_to_tensor(value, name=name)
    return nest.map_structure(convert, structure)


class TensorDataset(Dataset):
    def __init__(self, tensors):
        self._tensors = _tensors(tensors, "component")
        self._structure = nest.map_structure(spec_of, self._tensors)

    def _dataset_spec(self, builder):
        return {"kind": "tensors", "args": builder.args(flat_tensors(self._tensors))}


class TensorSliceDataset(Dataset):
    """The slices of tensors along their first dimension; a SparseTensor's slice i holds its
    entries whose first index is i."""

    def __init__(self, tensors):
        self._tensors = _tensors(tensors, "component")
        flat = nest.flatten(self._tensors)
        sizes = set()
        for t in flat:
            shape = t.shape
            if shape.ndims == 0:
                name = t.name if isinstance(t, Tensor) else "a SparseTensor"
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1: "
                                 f"{name} is a scalar")
            if shape.ndims is not None and shape[0].value is not None:
                sizes.add(shape[0].value)
        if len(sizes) > 1:
            raise ValueError(f"Dimensions {sorted(sizes)} of the components of "
                             "from_tensor_slices must be equal in dimension 0.")
        self._structure = nest.map_structure(
            lambda t: type(spec_of(t))(t.shape[1:] if t.shape.ndims is not None else None,
                                       t.dtype),
            self._tensors)

    def _dataset_spec(self, builder):
        args = builder.args(flat_tensors(self._tensors))
        sparse = sparse_starts(self._structure)
        if sparse:
            return {"kind": "sparse_slices", "args": args, "sparse": sparse}
        return {"kind": "slices", "args": args}


class RangeDataset(Dataset):
    """start, start + step, ... before stop, as scalars of `output_type` (int64 unless set)."""

    def __init__(self, *args, output_type=_dtypes.int64, name=None, **ignored):
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid `args`. The length of `args` should be between 1 and 3 "
                             f"but was {len(args)}.")
        if ignored:
            # TensorFlow drops them silently; `dtype=` meaning output_type is the usual slip.
            tf_logging.warning("Dataset.range() ignores the keyword arguments %s, as TensorFlow "
                            "does; the element type is set by `output_type`.", sorted(ignored))
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        self._args = [int64_arg(v, n) for v, n in zip((start, stop, step),
                                                       ("start", "stop", "step"))]
        self._structure = TensorSpec([], _dtypes.as_dtype(output_type))

    def _dataset_spec(self, builder):
        return {"kind": "range", "args": builder.args(self._args),
                "dtype": self._structure.dtype.name}


def signature_types_and_shapes(output_signature, output_types, output_shapes):
    """from_generator's (output_types, output_shapes) from a structure of TensorSpecs and
    SparseTensorSpecs, which may not come with either of them (TensorFlow's TypeErrors)."""
    if output_types is not None:
        raise TypeError("The `output_types` argument can not be used together with the "
                        "`output_signature` argument.")
    if output_shapes is not None:
        raise TypeError("The `output_shapes` argument can not be used together with the "
                        "`output_signature` argument.")
    for spec in nest.flatten(output_signature):
        if not isinstance(spec, (TensorSpec, SparseTensorSpec)):
            raise TypeError("`output_signature` must contain objects that are subclass of "
                            f"`tf.TypeSpec` but found {type(spec)} which is not.")
    return (nest.map_structure(lambda s: s.dtype, output_signature),
            nest.map_structure(lambda s: s.shape, output_signature))


class GeneratorDataset(Dataset):
    """Elements from a Python generator, converted and checked against the declared types
    (SparseTensors where `output_signature` has SparseTensorSpecs)."""

    def __init__(self, generator, output_types, output_shapes=None, args=None,
                 output_signature=None):
        types = nest.map_structure(_dtypes.as_dtype, output_types)
        if output_shapes is None:
            shapes = nest.map_structure(lambda _: _ts.unknown_shape(), types)
        else:
            nest.assert_shallow_structure(types, output_shapes)
            shapes = nest.pack(types, [_ts.as_shape(s) for s in _flat_shapes(types,
                                                                             output_shapes)])
        classes = [type(s) for s in nest.flatten(output_signature)] if output_signature \
            is not None else [TensorSpec] * len(nest.flatten(types))
        self._structure = nest.pack(types, [c(s, t) for c, t, s in zip(
            classes, nest.flatten(types), nest.flatten(shapes))])
        self._args = [convert_to_tensor(a, name="args") for a in (args or ())]
        self._token = dataset_runtime.register_generator(
            _flat_generator(generator, self._structure))

    def _dataset_spec(self, builder):
        return {"kind": "generator", "token": self._token, "args": builder.args(self._args)}


def _flat_shapes(types, shapes) -> list:
    """The shapes of `output_shapes`, one per leaf of `types` (a shape is a list leaf)."""
    if isinstance(types, (tuple, dict)):
        keys = sorted(types) if isinstance(types, dict) else range(len(types))
        return [s for k in keys for s in _flat_shapes(types[k], shapes[k])]
    return [shapes]


def _flat_generator(generator, structure):
    """`make(*args)`: the flat, checked elements of `generator(*args)`. As in TensorFlow, which
    runs the generator in a py_func, the generator gets its arguments as a py_func does (a
    string scalar as bytes, a number as a NumPy scalar), and an exception it raises is that
    py_func's error (an OpError or StopIteration too: UnknownError, never an end of input)."""
    specs = nest.flatten(structure)

    def make(*args):
        values = _python_calls(generator, [script.python_argument(a) for a in args])
        for value in values:
            if nest.is_nested(structure) and not nest.same_structure(structure, value):
                raise errors.InvalidArgumentError(
                    None, None, "TypeError: `generator` yielded an element that did not match "
                    f"the expected structure. The expected structure was {structure}, but the "
                    f"yielded element was {value}.")
            if any(isinstance(s, SparseTensorSpec) for s in specs):
                yield _with_sparse(value, structure)
            else:
                yield tuple(_checked(v, s) for v, s in zip(nest.flatten(value), specs))
    return make


def _with_sparse(value, structure) -> tuple:
    """The flat arrays of a yielded element whose structure has SparseTensorSpecs, checked as
    TensorFlow checks an element against `output_signature`: each SparseTensor must come as a
    well-formed SparseTensorValue (its values of the dtype they convert to, not converted),
    and the element's spec must be compatible with the signature."""
    flat, got = [], []
    for v, spec in zip(nest.flatten(value), nest.flatten(structure)):
        if not isinstance(spec, SparseTensorSpec):
            flat.append(_checked(v, spec))
            got.append(TensorSpec(flat[-1].shape, spec.dtype))
            continue
        try:
            indices, values, dense_shape = _sparse_arrays(v)
        except (TypeError, ValueError):
            raise errors.InvalidArgumentError(
                None, None, "TypeError: `generator` yielded an element that did not match the "
                f"expected structure. The expected structure was {structure}, but the yielded "
                f"element was {value}.") from None
        flat.extend((indices, values, dense_shape))
        got.append(SparseTensorSpec(dense_shape.tolist(), _dtypes.string if values.dtype == object
                                    else _dtypes.as_dtype(values.dtype)))
    if any(g.dtype != s.dtype or not s.shape.is_compatible_with(g.shape)
           for g, s in zip(got, nest.flatten(structure))):
        raise errors.InvalidArgumentError(
            None, None, f"TypeError: `generator` yielded an element of {nest.pack(structure, got)}"
                        f" where an element of {structure} was expected.")
    return tuple(flat)


def _sparse_arrays(value):
    """A SparseTensorValue's int64 indices, values and int64 dense_shape; TypeError or
    ValueError unless it is one whose parts agree in shape."""
    if not isinstance(value, SparseTensorValue):
        raise TypeError(f"Not a SparseTensorValue: {value!r}")
    indices, dense_shape = (to_numpy(value.indices, _dtypes.int64),
                            to_numpy(value.dense_shape, _dtypes.int64))
    values = to_numpy(value.values)
    if indices.ndim != 2 or values.ndim != 1 or dense_shape.ndim != 1 or \
            indices.shape != (len(values), len(dense_shape)):
        raise ValueError("The shapes of a SparseTensorValue's parts do not agree.")
    return indices, values, dense_shape


def _python_calls(generator, args):
    """The items of `generator(*args)`, whose calls' exceptions become py_func errors."""
    try:
        items = iter(generator(*args))
    except Exception as exc:  # noqa: BLE001 - every error of user code is reported
        raise script.python_error(exc) from exc
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - every error of user code is reported
            raise script.python_error(exc) from exc
        yield item


def _checked(value, spec: TensorSpec):
    try:
        arr = to_numpy(value, spec.dtype)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(
            None, None, f"TypeError: `generator` yielded an element that could not be "
                        f"converted to the expected type. The expected type was "
                        f"{spec.dtype.name}, but the yielded element was {value!r}: {e}") from None
    if not spec.shape.is_compatible_with(arr.shape):
        raise errors.InvalidArgumentError(
            None, None, f"`generator` yielded an element of shape {arr.shape} where an element "
                        f"of shape {spec.shape} was expected.")
    return arr


class TextLineDataset(FileRecordDataset):
    """The lines of text files, without line terminators (TF1's tf.data.TextLineDataset).

    Lines end at "\\n"; every "\\r" is dropped, as TensorFlow reads lines. The files (a
    string tensor or a dataset of scalar strings) are read one after another, or
    `num_parallel_reads` at a time, a line from each in turn. An unsupported compression_type
    (TF's are "", "GZIP" and "ZLIB") fails each file when it is read (InvalidArgumentError).
    """

    _kind = "text_line"


class TFRecordDataset(FileRecordDataset):
    """The records of TFRecord files (compression_type "", "GZIP" or "ZLIB"; any other is
    logged and the files read uncompressed, as TensorFlow does), read one file after another
    or `num_parallel_reads` files at a time, a record from each in turn."""

    _kind = "tfrecord"

