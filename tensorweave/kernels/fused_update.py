"""Kernel of `_FusedMatMulApplyGradientDescent`: an SGD update whose gradient is a MatMul.

The weight gradient of a dense layer is `x^T @ dy`; ApplyGradientDescent then reads it and the
weights and writes the weights. Here one BLAS GEMM adds `-alpha * x^T @ dy` straight into the
weights (kernels/blas.py): no gradient array, no second pass over the weights. The product is
the same GEMM NumPy's matmul runs; only the final `var - alpha * g` is rounded once (BLAS's
multiply-add) instead of twice, so results agree with the unfused pair to within one rounding
of the weights. Whatever BLAS cannot take (other dtypes or layouts, bad shapes) runs the
MatMul and ApplyGradientDescent kernels themselves, with their checks and errors.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import intra_op, linalg
from tensorweave.kernels.blas import gemm_accumulate
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.fused import InnerNode
from tensorweave.kernels.registry import find_kernel, kernel
from tensorweave.runtime.executor.values import deref


@kernel("_FusedMatMulApplyGradientDescent", expensive=True)
class FusedMatMulApplyGradientDescentKernel:
    """var -= alpha * op(a) @ op(b) by one accumulating GEMM, else MatMul then the update."""

    def __init__(self, ctx):
        apply_def = find_kernel("ApplyGradientDescent", ctx.device.device_type, ctx.attrs)
        if apply_def is None:
            raise errors.InvalidArgumentError(
                None, None, "_FusedMatMulApplyGradientDescent: no ApplyGradientDescent kernel")
        self.apply_ctx = KernelContext(InnerNode(ctx, "ApplyGradientDescent"), ctx.device,
                                       ctx.session)
        self.apply = apply_def.impl(self.apply_ctx)
        self.matmul = linalg.MatMulKernel(ctx)
        self.transpose_a = bool(ctx.attrs["transpose_a"])
        self.transpose_b = bool(ctx.attrs["transpose_b"])
        self.locking = bool(ctx.attrs["use_locking"])

    def compute(self, ctx, var_ref, alpha, a, b):
        var = deref(var_ref)
        if gemm_accumulate is not None and np.ndim(alpha) == 0 and var.__class__ is np.ndarray:
            if self.locking:
                with var_ref.lock:
                    done = self._accumulate(var, alpha, a, b)
            else:
                done = self._accumulate(var, alpha, a, b)
            if done:
                return var_ref
        return self.apply.compute(self.apply_ctx, var_ref, alpha,
                                  self.matmul.compute(ctx, a, b))

    def _accumulate(self, var, alpha, a, b) -> bool:
        return gemm_accumulate(var, a, b, -float(alpha), self.transpose_a, self.transpose_b,
                               _run_rows)


def _run_rows(m: int, n: int, k: int, rows) -> None:
    """The GEMM's row blocks as linalg.matmul runs a product of its size: when large, on
    BLAS's threads or one block per intra-op thread (`intra_op.gemm_on_blas_threads`), else
    on one BLAS thread."""
    threads = intra_op.threads()
    if m * n * k < linalg.PARALLEL_MACS or threads == 1 or m < 2 * linalg.BLOCK:
        intra_op.single_blas(rows, 0, m)
        return
    if intra_op.gemm_on_blas_threads():
        rows(0, m)
        return
    size = -(-m // threads)
    intra_op.parallel_for(threads, lambda i: rows(i * size, min(m, (i + 1) * size)), gemm=True)
