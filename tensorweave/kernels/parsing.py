"""ParseExampleV2: serialized tf.train.Example protos to dense arrays and sparse components.

Each record is decoded once with the generated example_pb2 class (C-backed protobuf); per
feature the kernel collects every record's value list, checks it like TensorFlow (kind, size,
stride) and assembles the batch with one NumPy call per output: dense [batch, *shape], padded
sequences [batch, max_items, *shape], and sparse indices [N, 2] / values [N] / shape [batch,
max_len]. A scalar input gives the same outputs without the batch dimension.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.protos import example_pb2

# dtype -> (the Feature oneof field that holds it, the name TF's messages use)
LIST_KINDS = {_dtypes.float32: ("float_list", "float"), _dtypes.int64: ("int64_list", "int64"),
              _dtypes.string: ("bytes_list", "string")}
_KIND_NAMES = {kind: name for kind, name in LIST_KINDS.values()}


def key_strings(value) -> list[str]:
    """The feature keys of a string tensor as Python str, in order."""
    return [k.decode() if isinstance(k, bytes) else str(k) for k in np.ravel(value)]


class ExampleBatch:
    """The decoded records of one step and how errors name them."""

    def __init__(self, serialized, names):
        self.scalar = np.ndim(serialized) == 0
        records = [serialized.item()] if self.scalar else list(serialized)
        self.names = [n.decode(errors="backslashreplace") if isinstance(n, bytes) else str(n)
                      for n in np.ravel(names)]
        self.features = []
        for record in records:
            example = example_pb2.Example()
            try:
                example.ParseFromString(record)
            except Exception:   # protobuf's DecodeError, or a non-bytes value
                text = record.decode("utf-8", "backslashreplace") \
                    if isinstance(record, bytes) else repr(record)
                raise invalid_argument(f"Could not parse example input, value: '{text}'") from None
            self.features.append(example.features.feature)

    def where(self, key: str, i: int) -> str:
        """TF's message prefix locating feature `key` of record i."""
        if self.scalar:
            return f"Key: {key}.  "
        name = self.names[i] if i < len(self.names) else "<unknown>"
        return f"Name: {name}, Key: {key}, Index: {i}.  "

    def values(self, key: str, dtype, sparse: bool) -> list:
        """Per record, the feature's value list, or None where it is absent."""
        want, want_name = LIST_KINDS[dtype]
        out = []
        for i, feature_map in enumerate(self.features):
            feature = feature_map.get(key)
            kind = feature.WhichOneof("kind") if feature is not None else None
            if kind is None:
                out.append(None)
                continue
            if kind != want:
                if sparse:
                    raise invalid_argument(f"{self.where(key, i)}Data types don't match. Expected "
                                           f"type: {want_name}, Actual type: {_KIND_NAMES[kind]}")
                raise invalid_argument(f"{self.where(key, i)}Data types don't match. Data type: "
                                       f"{_KIND_NAMES[kind]} but expected type: {want_name}")
            out.append(getattr(feature, kind).value)
        return out

    def missing(self, key: str, dtype, i: int) -> errors.InvalidArgumentError:
        prefix = "" if self.scalar else \
            f"Name: {self.names[i] if i < len(self.names) else '<unknown>'}, "
        return invalid_argument(f"{prefix}Feature: {key} (data type: {LIST_KINDS[dtype][1]}) is "
                                "required but could not be found.")


def concat_values(parts, np_dtype) -> np.ndarray:
    """The value lists (protobuf repeated fields or lists) as one flat array: one conversion
    per list, in C for numbers, instead of one Python step per value."""
    if np_dtype is object:
        flat = [x for part in parts for x in part]
        array = np.empty(len(flat), dtype=object)
        array[:] = flat
        return array
    if not parts:
        return np.zeros(0, dtype=np_dtype)
    return np.concatenate([np.asarray(part, dtype=np_dtype) for part in parts])


@kernel("ParseExampleV2", expensive=True)
class ParseExampleKernel:
    """Parses serialized Examples; keys, dtypes and shapes come from inputs and attrs."""

    def __init__(self, ctx):
        self.num_sparse = ctx.attrs["num_sparse"]
        self.sparse_types = ctx.attrs["sparse_types"]
        self.dense_types = ctx.attrs["Tdense"]
        self.dense_shapes = [s.as_list() for s in ctx.attrs["dense_shapes"]]
        if ctx.attrs["ragged_value_types"]:
            raise errors.UnimplementedError(None, None, "ParseExampleV2: ragged features are "
                                            "not supported")

    def compute(self, ctx, serialized, names, sparse_keys, dense_keys, ragged_keys,
                *dense_defaults):
        sparse_keys, dense_keys = key_strings(sparse_keys), key_strings(dense_keys)
        if len(sparse_keys) != self.num_sparse or len(dense_keys) != len(self.dense_types):
            raise invalid_argument(f"Expected {self.num_sparse} sparse_keys and "
                                   f"{len(self.dense_types)} dense_keys, got {len(sparse_keys)} "
                                   f"and {len(dense_keys)}")
        if np.size(ragged_keys):
            raise errors.UnimplementedError(None, None, "ParseExampleV2: ragged features are "
                                            "not supported")
        batch = ExampleBatch(serialized, names)
        sparse = [self._sparse(batch, k, t) for k, t in zip(sparse_keys, self.sparse_types)]
        dense = [self._dense(batch, k, t, s, d) for k, t, s, d in
                 zip(dense_keys, self.dense_types, self.dense_shapes, dense_defaults)]
        outputs = [s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse] \
            + dense
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @staticmethod
    def _sparse(batch: ExampleBatch, key: str, dtype):
        lists = [v if v is not None else () for v in batch.values(key, dtype, sparse=True)]
        lengths = np.array([len(v) for v in lists], dtype=np.int64)
        values = concat_values(lists, object if dtype == _dtypes.string else dtype.as_numpy_dtype)
        max_len = int(lengths.max()) if len(lengths) else 0
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        positions = np.arange(len(values), dtype=np.int64) - starts
        if batch.scalar:
            return positions.reshape(-1, 1), values, np.array([max_len], dtype=np.int64)
        rows = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
        indices = np.stack([rows, positions], axis=1)
        return indices, values, np.array([len(lists), max_len], dtype=np.int64)

    @staticmethod
    def _dense(batch: ExampleBatch, key: str, dtype, shape, default):
        np_dtype = object if dtype == _dtypes.string else dtype.as_numpy_dtype
        lists = batch.values(key, dtype, sparse=False)
        is_sequence = bool(shape) and shape[0] is None
        item = shape[1:] if is_sequence else shape
        stride = int(np.prod(item, dtype=np.int64))
        name = LIST_KINDS[dtype][1]
        if is_sequence:   # pad every record to the longest with the scalar default
            for i, v in enumerate(lists):
                if v is not None and stride and len(v) % stride:
                    raise invalid_argument(f"{batch.where(key, i)}Number of {name} values is not a "
                                           f"multiple of stride length. Saw {len(v)} values but "
                                           f"output shape is: {dims_text(shape)}")
            sizes = [0 if v is None or not stride else len(v) for v in lists]
            width = max(sizes, default=0)
            pad = np.ravel(default)[0] if np.size(default) else \
                (b"" if np_dtype is object else np_dtype(0))
            parts = [p for v, n in zip(lists, sizes)
                     for p in ((v, [pad] * (width - n)) if n else ([pad] * width,))]
            out_shape = [len(lists), width // stride if stride else 0, *item]
        else:
            fill = list(np.ravel(default))
            for i, v in enumerate(lists):
                if v is None and not fill and stride:
                    raise batch.missing(key, dtype, i)
                if v is not None and len(v) != stride:
                    raise invalid_argument(f"{batch.where(key, i)}Number of {name} values != "
                                           f"expected.  Values size: {len(v)} but output shape: "
                                           f"{dims_text(item)}")
            parts = [fill if v is None else v for v in lists]
            out_shape = [len(lists), *item]
        out = concat_values(parts, np_dtype).reshape(out_shape)
        return out.reshape(out_shape[1:]) if batch.scalar else out
