"""Kernels of MatMul, BatchMatMulV2 and Einsum, on NumPy's BLAS-backed matmul.

Transposes are views (`a.T`, `swapaxes`), never copies; only complex adjoints conjugate. All
three are registered `expensive`, so large products run on the inter-op pool. Large real
MatMuls run on BLAS's own threads while no other intra-op work is about
(`intra_op.gemm_on_blas_threads`), else split into blocks of output columns (or rows) on
`intra_op`'s threads, each with single-threaded BLAS; mid-size ones run on one BLAS thread.
Float32 products on one thread go to oneDNN's sgemm where it is installed (kernels/onednn_gemm.py).
Every output element is still one dot product over the whole inner dimension, so splitting
changes no result (oneDNN's and OpenBLAS's kernels may differ from each other in the last bits).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import intra_op, onednn_gemm
from tensorweave.kernels.registry import kernel

# Products of at least this many multiply-adds are split into one block of output columns (or
# rows, when there are more rows than columns) per thread, of at least BLOCK; smaller ones from
# SINGLE_MACS up (where OpenBLAS would start its threads: 4 * 65536) run with single-threaded
# BLAS. More, smaller blocks measured slower: VGG19's 1x25088 @ 25088x4096 took 48 ms in 16
# blocks (short strided rows of b) against 19 ms in 2 and 18 ms with 2-thread BLAS.
PARALLEL_MACS = 1 << 22
BLOCK = 256
SINGLE_MACS = 1 << 18


@kernel("MatMul", expensive=True)
class MatMulKernel:
    """a @ b on matrices, with the transposes as views."""

    def __init__(self, ctx):
        self.transpose_a = ctx.attrs["transpose_a"]
        self.transpose_b = ctx.attrs["transpose_b"]

    def compute(self, ctx, a, b):
        for i, m in enumerate((a, b)):
            if m.ndim != 2:
                raise invalid_argument(f"In[{i}] is not a matrix. Instead it has shape "
                                       f"{dims_text(m.shape)}")
        if self.transpose_a:
            a = a.T
        if self.transpose_b:
            b = b.T
        if a.shape[1] != b.shape[0]:
            raise invalid_argument(f"Matrix size-incompatible: In[0]: {dims_text(a.shape)}, In[1]: "
                                   f"{dims_text(b.shape)}")
        if self.transpose_b and not self.transpose_a and _few_rows_long_sums(a, b):
            return np.ascontiguousarray(matmul(b.T, a.T).T)
        return matmul(a, b)


def _few_rows_long_sums(a, b) -> bool:
    """a @ B^T with a few rows of a and long inner sums (the input gradient of an RNN step,
    [32, 512] x [512, 192]^T) runs faster as (B @ a^T)^T: OpenBLAS's kernel for a transposed
    right operand took 102-107 us here against 68-72 us (930 against 540 us for [16, 2048] x
    [2048, 512]^T), with the same values, since every output is the same sum in the same
    order; with short sums (k = 10) the transposed form was 5x slower, hence the bounds.
    oneDNN gains up to 48 rows (16 / 32 / 48 x 512 x 512: 78 -> 48, 107 -> 89, 150 -> 130
    us; 425 -> 192 us on the second shape) and not at 64 (184 -> 187 us, plus the copy back
    to C order: 23 us a towers step spent on it), its values equal up to float32 rounding
    (not always bit for bit)."""
    m, k = a.shape
    return m < 64 and k >= 256 and m <= b.shape[1] and a.flags.c_contiguous and \
        b.T.flags.c_contiguous


def matmul(a, b):
    """a @ b of matrices; a large real product runs as blocks of the output in parallel."""
    m, n = a.shape[0], b.shape[1]
    macs = m * n * a.shape[1]
    if macs < SINGLE_MACS:
        return a @ b
    if macs < PARALLEL_MACS or a.dtype != b.dtype or a.dtype.kind != "f" or \
            max(m, n) < 2 * BLOCK or intra_op.threads() == 1:
        return one_thread_product(a, b)
    if intra_op.gemm_on_blas_threads():
        return a @ b
    out = np.empty((m, n), a.dtype)
    size = max(BLOCK, -(-max(m, n) // (16 * intra_op.threads())) * 16)
    if n >= m:
        def block(i):
            one_thread_product(a, b[:, i * size:(i + 1) * size], out[:, i * size:(i + 1) * size])
    else:
        def block(i):
            one_thread_product(a[i * size:(i + 1) * size], b, out[i * size:(i + 1) * size])
    intra_op.parallel_for(-(-max(m, n) // size), block, gemm=True)
    return out


def one_thread_product(a, b, out=None):
    """a @ b on the calling thread: oneDNN's sgemm where it suits the operands
    (kernels/onednn_gemm.py), else NumPy's matmul with BLAS held to one thread."""
    if onednn_gemm.suits(a.dtype, a, b):
        return onednn_gemm.product(a, b, out)
    if out is None:
        return intra_op.single_blas(np.matmul, a, b)
    return intra_op.single_blas(np.matmul, a, b, out)


@kernel("BatchMatMulV2", expensive=True)
class BatchMatMulKernel:
    """x @ y over broadcast batch dimensions; adj_x/adj_y conjugate-transpose the last two."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        self.adj_x = ctx.attrs["adj_x"]
        self.adj_y = ctx.attrs["adj_y"]
        self.complex = ctx.attrs["T"].is_complex

    def _adjoint(self, m):
        m = self.xp.swapaxes(m, -1, -2)
        return self.xp.conj(m) if self.complex else m

    def compute(self, ctx, x, y):
        for i, m in enumerate((x, y)):
            if m.ndim < 2:
                raise invalid_argument(f"In[{i}] ndims must be >= 2: {m.ndim}")
        if self.adj_x:
            x = self._adjoint(x)
        if self.adj_y:
            y = self._adjoint(y)
        if x.shape[-1] != y.shape[-2]:
            raise invalid_argument(f"Matrix size-incompatible: In[0]: {dims_text(x.shape)}, In[1]: "
                                   f"{dims_text(y.shape)}")
        try:
            return self.xp.matmul(x, y)
        except ValueError:
            raise invalid_argument(f"In[0] and In[1] must have compatible batch dimensions: "
                                   f"{dims_text(x.shape)} vs. {dims_text(y.shape)}") from None


@kernel("Einsum", expensive=True)
class EinsumKernel:
    """np.einsum with the contraction order planned once per distinct set of input shapes."""

    _MAX_PLANS = 32

    def __init__(self, ctx):
        self.xp = ctx.xp
        self.equation = ctx.attrs["equation"]
        self.plans: dict = {}

    def compute(self, ctx, *inputs):
        key = tuple(x.shape for x in inputs)
        try:
            plan = self.plans.get(key)
            if plan is None:
                plan = self.xp.einsum_path(self.equation, *inputs, optimize="greedy")[0]
                if len(self.plans) < self._MAX_PLANS:
                    self.plans[key] = plan
            out = self.xp.einsum(self.equation, *inputs, optimize=plan)
        except ValueError as e:
            shapes = ", ".join(dims_text(s) for s in key)
            raise invalid_argument(f"Einsum {self.equation!r} cannot combine inputs of shapes "
                                   f"{shapes}: {e}") from None
        dtype = inputs[0].dtype
        return out if out.dtype == dtype else out.astype(dtype)
