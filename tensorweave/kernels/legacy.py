"""Kernels of the TF 1.x ops kept for imported graphs (ops/legacy_ops.py): the parsers run
ParseExampleV2's or ParseSequenceExampleV2's kernel with the keys where V2 takes them; the
others are NumPy (AccumulateNV2 adds left to right, as AddN does)."""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.legacy_reuse import newer_kernel
from tensorweave.kernels.parsing import ParseExampleKernel
from tensorweave.kernels.registry import kernel, register_pure
from tensorweave.kernels.sequence_parsing import ParseSequenceExampleKernel

_NO_KEYS = np.zeros(0, dtype=object)


class _V1Parser(ParseExampleKernel):
    def __init__(self, ctx, num_sparse: int):
        self.num_sparse = num_sparse
        self.sparse_types = ctx.attrs["sparse_types"]
        self.dense_types = ctx.attrs["Tdense"]
        self.dense_shapes = [s.as_list() for s in ctx.attrs["dense_shapes"]]


@kernel("ParseExample", expensive=True)
class ParseExampleV1Kernel(_V1Parser):
    """Keys arrive as Nsparse + Ndense scalar string inputs."""

    def __init__(self, ctx):
        super().__init__(ctx, ctx.attrs["Nsparse"])
        self.num_dense = ctx.attrs["Ndense"]

    def compute(self, ctx, serialized, names, *rest):
        n, d = self.num_sparse, self.num_dense
        keys = [_key_array(rest[:n]), _key_array(rest[n:n + d])]
        return super().compute(ctx, serialized, names, *keys, _NO_KEYS, *rest[n + d:])


def _key_array(scalars) -> np.ndarray:
    """Scalar string tensors as one 1-D object array of their bytes."""
    out = np.empty(len(scalars), dtype=object)
    out[:] = [k.item() if isinstance(k, np.ndarray) else k for k in scalars]
    return out


@kernel("ParseSingleExample", expensive=True)
class ParseSingleExampleKernel(_V1Parser):
    """One scalar record; keys are attrs."""

    def __init__(self, ctx):
        super().__init__(ctx, ctx.attrs["num_sparse"])
        self.keys = [np.array([k.encode() if isinstance(k, str) else k
                               for k in ctx.attrs[name]], dtype=object)
                     for name in ("sparse_keys", "dense_keys")]

    def compute(self, ctx, serialized, *dense_defaults):
        if np.ndim(serialized) != 0:
            raise invalid_argument(f"Expected serialized to be a scalar, got shape: "
                                   f"{dims_text(np.shape(serialized))}")
        return super().compute(ctx, serialized, _NO_KEYS, *self.keys, _NO_KEYS,
                               *dense_defaults)


def _matrix_diag(diagonal):
    diagonal = np.asarray(diagonal)
    n = diagonal.shape[-1]
    out = np.zeros(diagonal.shape + (n,), diagonal.dtype)
    index = np.arange(n)
    out[..., index, index] = diagonal
    return out


def _matrix_diag_part(matrix):
    return np.diagonal(np.asarray(matrix), axis1=-2, axis2=-1).copy()


def _matrix_set_diag(matrix, diagonal):
    matrix = np.asarray(matrix)
    size = min(matrix.shape[-2:])
    if np.shape(diagonal) != matrix.shape[:-2] + (size,):
        raise invalid_argument(f"diagonal must be of shape {dims_text(matrix.shape[:-2] + (size,))}"
                               f", but received diagonal of shape "
                               f"{dims_text(np.shape(diagonal))}")
    out = matrix.copy()
    index = np.arange(size)
    out[..., index, index] = diagonal
    return out


register_pure("MatrixDiag", _matrix_diag)
register_pure("MatrixDiagPart", _matrix_diag_part)
register_pure("MatrixSetDiag", _matrix_set_diag)


def _accumulate(*inputs):
    total = np.array(inputs[0], copy=True)
    for x in inputs[1:]:
        total += x
    return total


register_pure("AccumulateNV2", _accumulate)
register_pure("PreventGradient", lambda x: x, returns_view=True)


@kernel("ParseSingleSequenceExample", expensive=True)
class ParseSingleSequenceExampleKernel:
    """ParseSequenceExampleV2's kernel on one record: keys as Nx scalar inputs become V2's key
    vectors, the missing-allowed key list a flag per dense feature list, and V2's lengths
    (which V1 does not output) are dropped."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.counts = [attrs[n] for n in ("Ncontext_sparse", "Ncontext_dense",
                                          "Nfeature_list_sparse", "Nfeature_list_dense")]
        self.parse = newer_kernel(ParseSequenceExampleKernel, ctx, "ParseSequenceExampleV2")

    def compute(self, ctx, serialized, missing_assumed_empty, *rest):
        if np.ndim(serialized) != 0:
            raise invalid_argument(f"Expected serialized to be a scalar, got shape: "
                                   f"{dims_text(np.shape(serialized))}")
        keys, start = [], 0
        for n in self.counts:
            keys.append(_key_array(rest[start:start + n]))
            start += n
        c_sparse, c_dense, l_sparse, l_dense = keys
        defaults, debug_name = rest[start:-1], rest[-1]
        allowed = set(np.ravel(missing_assumed_empty).tolist())
        missing_ok = np.array([k in allowed for k in l_dense], dtype=bool)
        outputs = self.parse.compute(ctx, serialized, np.ravel(debug_name), c_sparse, c_dense,
                                     _NO_KEYS, l_sparse, l_dense, _NO_KEYS, missing_ok,
                                     *defaults)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        outputs = outputs[:len(outputs) - self.counts[3]]   # V2's lengths come last
        return outputs[0] if len(outputs) == 1 else outputs
