"""ParseSequenceExampleV2: serialized tf.train.SequenceExample protos to arrays.

Each record is decoded once with example_pb2.SequenceExample. Context features are an
Example's features, so they go through ParseExampleV2's per-feature code (kernels/parsing.py).
Feature lists have one value list per step: a dense list becomes [steps, *shape] per record,
zero-padded to the batch's longest, with the step counts as lengths; a sparse one becomes
indices [N, 2 or 3] (record, step, position), values and the dense shape. A scalar input gives
the outputs without the batch dimension.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.parsing import (
    LIST_KINDS,
    ExampleBatch,
    ParseExampleKernel,
    concat_values,
    key_strings,
)
from tensorweave.kernels.registry import kernel
from tensorweave.protos import example_pb2


class _SequenceBatch(ExampleBatch):
    """The decoded records: their context feature maps (what ExampleBatch's users read) and their
    feature lists."""

    def __init__(self, serialized, names):
        self.scalar = np.ndim(serialized) == 0
        records = [serialized.item()] if self.scalar else list(serialized)
        self.names = [n.decode(errors="backslashreplace") if isinstance(n, bytes) else str(n)
                      for n in np.ravel(names)]
        self.features, self.lists = [], []
        for i, record in enumerate(records):
            example = example_pb2.SequenceExample()
            try:
                example.ParseFromString(record)
            except Exception:   # protobuf's DecodeError, or a non-bytes value
                raise invalid_argument("Invalid protocol message input, example id: "
                                       f"{self.name(i)}") \
                    from None
            self.features.append(example.context.feature)
            self.lists.append(example.feature_lists.feature_list)

    def values(self, key: str, dtype, sparse: bool) -> list:
        """Context value lists per record (see ExampleBatch), with TF's context type check."""
        want, want_name = LIST_KINDS[dtype]
        for i, feature_map in enumerate(self.features):
            feature = feature_map.get(key)
            kind = feature.WhichOneof("kind") if feature is not None else None
            if kind not in (None, want):
                raise invalid_argument(f"Name: {self.name(i)}, Context feature: {key}.  Data types "
                                       f"don't match. Expected type: {want_name}")
        return super().values(key, dtype, sparse)

    def name(self, i: int) -> str:
        return self.names[i] if i < len(self.names) else "<unknown>"

    def steps(self, key: str, dtype, i: int):
        """Record i's value lists of feature list `key` (None if absent), kinds checked."""
        feature_list = self.lists[i].get(key)
        if feature_list is None:
            return None
        want, want_name = LIST_KINDS[dtype]
        out = []
        for t, feature in enumerate(feature_list.feature):
            kind = feature.WhichOneof("kind")
            if kind != want:
                raise invalid_argument(f"Name: {self.name(i)}, Feature list: {key}, Index: {t}.  "
                                       f"Data types don't match. Expected type: {want_name}")
            out.append(getattr(feature, kind).value)
        return out


def _check_context_dense(batch: _SequenceBatch, key: str, dtype, shape, default) -> None:
    """TF's own check (and message) for a context value list of the wrong size, made before
    the Example code assembles the feature."""
    stride = int(np.prod(shape, dtype=np.int64))
    for values in batch.values(key, dtype, sparse=False):
        found = np.size(default) if values is None else len(values)
        if found != stride:
            raise invalid_argument(f"Inconsistent max number of elements for feature {key}: "
                                   f"expected {stride}, but found {found}")


def _np_dtype(dtype):
    return object if dtype == _dtypes.string else dtype.as_numpy_dtype


def _list_dense(batch: _SequenceBatch, key: str, dtype, shape, missing_ok: bool):
    """Values [batch, max_steps, *shape] (zero-padded) and lengths [batch]."""
    stride = int(np.prod(shape, dtype=np.int64))
    per_record = []
    for i in range(len(batch.lists)):
        steps = batch.steps(key, dtype, i)
        if steps is None and not missing_ok:
            raise invalid_argument(f"Name: {batch.name(i)}, Feature list '{key}' is required but "
                                   "could not be found.  Did you mean to include it in "
                                   "feature_list_dense_missing_assumed_empty or "
                                   "feature_list_dense_defaults?")
        for t, values in enumerate(steps or ()):
            if len(values) != stride:
                raise invalid_argument(f"Name: {batch.name(i)}, Key: {key}, Index: {t}.  Number of "
                                       f"values != expected.  values size: {len(values)} but "
                                       f"output shape: {dims_text(shape)}")
        per_record.append(steps or [])
    lengths = np.array([len(s) for s in per_record], dtype=np.int64)
    width = int(lengths.max()) if len(lengths) else 0
    np_dtype = _np_dtype(dtype)
    out = np.full([len(per_record), width, *shape], b"" if np_dtype is object else 0,
                  dtype=np_dtype)
    filled = np.arange(width) < lengths[:, None]   # [batch, width]: real steps
    out[filled] = concat_values([v for s in per_record for v in s], np_dtype).reshape(-1, *shape)
    if batch.scalar:
        return out[0], lengths[0]
    return out, lengths


def _list_sparse(batch: _SequenceBatch, key: str, dtype):
    """indices [N, (record,) step, position], values [N], dense_shape."""
    per_step = [(i, t, values) for i in range(len(batch.lists))
                for t, values in enumerate(batch.steps(key, dtype, i) or ())]
    sizes = np.array([len(v) for _, _, v in per_step], dtype=np.int64)
    values = concat_values([v for _, _, v in per_step], _np_dtype(dtype))
    records = np.array([i for i, _, _ in per_step], dtype=np.int64)
    steps = np.array([t for _, t, _ in per_step], dtype=np.int64)
    positions = np.arange(len(values), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes,
                                                                   sizes)
    max_steps = max((len(batch.lists[i].get(key).feature) for i in range(len(batch.lists))
                     if key in batch.lists[i]), default=0)
    max_len = int(sizes.max()) if len(sizes) else 0
    columns = [np.repeat(steps, sizes), positions]
    shape = [max_steps, max_len]
    if not batch.scalar:
        columns.insert(0, np.repeat(records, sizes))
        shape.insert(0, len(batch.lists))
    return np.stack(columns, axis=1), values, np.array(shape, dtype=np.int64)


@kernel("ParseSequenceExampleV2", expensive=True)
class ParseSequenceExampleKernel:
    """Parses serialized SequenceExamples; keys come from inputs, dtypes and shapes from
    attrs."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.context_sparse_types = attrs["context_sparse_types"]
        self.context_dense_types = attrs["Tcontext_dense"]
        self.context_dense_shapes = [s.as_list() for s in attrs["context_dense_shapes"]]
        self.list_sparse_types = attrs["feature_list_sparse_types"]
        self.list_dense_types = attrs["feature_list_dense_types"]
        self.list_dense_shapes = [s.as_list() for s in attrs["feature_list_dense_shapes"]]

    def compute(self, ctx, serialized, names, c_sparse, c_dense, c_ragged, l_sparse, l_dense,
                l_ragged, missing_ok, *c_defaults):
        if np.size(c_ragged) or np.size(l_ragged):
            raise invalid_argument("ParseSequenceExampleV2: ragged features are not supported")
        batch = _SequenceBatch(serialized, names)
        context_sparse = [ParseExampleKernel._sparse(batch, k, t)
                          for k, t in zip(key_strings(c_sparse), self.context_sparse_types)]
        context_dense = []
        for k, t, s, d in zip(key_strings(c_dense), self.context_dense_types,
                              self.context_dense_shapes, c_defaults):
            _check_context_dense(batch, k, t, s, d)
            context_dense.append(ParseExampleKernel._dense(batch, k, t, s, d))
        list_sparse = [_list_sparse(batch, k, t)
                       for k, t in zip(key_strings(l_sparse), self.list_sparse_types)]
        list_dense = [_list_dense(batch, k, t, s, bool(m)) for k, t, s, m in
                      zip(key_strings(l_dense), self.list_dense_types, self.list_dense_shapes,
                          np.ravel(missing_ok))]
        outputs = ([s[j] for j in range(3) for s in context_sparse] + context_dense +
                   [s[j] for j in range(3) for s in list_sparse] +
                   [d[0] for d in list_dense] + [d[1] for d in list_dense])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
