"""SerializeSparse, SerializeManySparse, DeserializeManySparse: TensorProto strings.

Each string is one component's TensorProto (as tensor_util.make_tensor_proto writes it), so a
serialized SparseTensor costs three proto encodings; a minibatch one per row and component.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.decode import data_type_string
from tensorweave.kernels.registry import kernel


def _proto_bytes(array: np.ndarray, dtype) -> bytes:
    from tensorweave.framework.tensor_util import make_tensor_proto
    return make_tensor_proto(array, dtype=dtype).SerializeToString()


def _triple(indices, values, shape, dtype) -> list[bytes]:
    return [_proto_bytes(indices, _dtypes.int64), _proto_bytes(values, dtype),
            _proto_bytes(shape, _dtypes.int64)]


def _strings(rows: list) -> np.ndarray:
    out = np.empty((len(rows), 3), dtype=object)
    out[:] = rows if rows else np.empty((0, 3), dtype=object)
    return out


@kernel("SerializeSparse")
def _serialize_sparse(ctx, sparse_indices, sparse_values, sparse_shape):
    return _strings([_triple(sparse_indices, sparse_values, sparse_shape,
                             ctx.input_dtypes[1].base_dtype)])[0]


@kernel("SerializeManySparse")
def _serialize_many_sparse(ctx, sparse_indices, sparse_values, sparse_shape):
    """Row r gets the entries whose first index is r, without that index."""
    if len(sparse_shape) < 2:
        raise invalid_argument(f"Rank of input SparseTensor should be > 1, but saw rank: "
                               f"{len(sparse_shape)}")
    rows = int(sparse_shape[0])
    first = sparse_indices[:, 0]
    if np.any(np.diff(first) < 0):
        raise invalid_argument("SparseTensor is not sorted by the minibatch dimension (dimension "
                               "0)")
    bad = (first < 0) | (first >= rows)
    if bad.any():
        raise invalid_argument(f"Index {first[np.argmax(bad)]} out of range [0, {rows}) in the "
                               "minibatch dimension")
    bounds = np.searchsorted(first, np.arange(rows + 1))
    dtype = ctx.input_dtypes[1].base_dtype
    rest = sparse_indices[:, 1:]
    # One proto triple per minibatch row: the strings are the work, not Python overhead.
    return _strings([_triple(rest[lo:hi], sparse_values[lo:hi], sparse_shape[1:], dtype)
                     for lo, hi in zip(bounds[:-1], bounds[1:])])


@kernel("DeserializeManySparse")
class DeserializeManySparseKernel:
    """Parses each row's triple, prepends the row number, maximizes the dense shapes."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["dtype"]

    def compute(self, ctx, serialized_sparse):
        from tensorweave.framework.tensor_util import make_ndarray
        from tensorweave.protos.tensor_pb2 import TensorProto
        serialized = np.asarray(serialized_sparse, dtype=object)
        if serialized.ndim != 2 or serialized.shape[1] != 3:
            raise invalid_argument("Serialized sparse should be a matrix with 3 columns, got shape "
                                   f"{list(serialized.shape)}")
        if len(serialized) == 0:
            raise invalid_argument("Serialized sparse should have non-empty first dimension.")
        parts = []
        for i, row in enumerate(serialized):   # one proto triple per minibatch row
            protos = [TensorProto.FromString(s) for s in row]
            got = _dtypes.as_dtype(protos[1].dtype)
            if got != self.dtype:
                raise invalid_argument("Requested SparseTensor of type "
                                       f"{data_type_string(self.dtype)} but "
                                       f"SparseTensor[{i}].values.dtype() == "
                                       f"{data_type_string(got)}")
            parts.append([make_ndarray(p) for p in protos])
        rank = len(parts[0][2])
        for i, (_, _, shape) in enumerate(parts):
            if len(shape) != rank:
                raise invalid_argument("Inconsistent shape across SparseTensors: rank prior to "
                                       f"SparseTensor[{i}] was: {rank} but rank of "
                                       f"SparseTensor[{i}] is: {len(shape)}")
        counts = [len(p[0]) for p in parts]
        batch = np.repeat(np.arange(len(parts), dtype=np.int64), counts)[:, None]
        stored = np.concatenate([p[0].reshape(-1, rank) for p in parts]).astype(np.int64)
        values = np.concatenate([p[1] for p in parts])
        shape = np.concatenate([[len(parts)], np.max([p[2] for p in parts], axis=0)])
        return np.hstack([batch, stored]), values, shape.astype(np.int64)
