"""Kernels of the fused updates: SGD by a MatMul or an AddN, Adam by a large MatMul.

Each kernel also runs the op's resource twin (`_FusedMatMulResourceApplyGradientDescent`, ...),
whose handle arrives as the variable's storage, as ResourceApplyGradientDescent's does.

`_FusedMatMulApplyGradientDescent`: the weight gradient of a dense layer is `x^T @ dy`;
ApplyGradientDescent then reads it and the weights and writes the weights. Here one BLAS GEMM
adds `-alpha * x^T @ dy` straight into the weights (kernels/blas.py): no gradient array, no
second pass over the weights. The product is the same GEMM NumPy's matmul runs; only the final
`var - alpha * g` is rounded once (BLAS's multiply-add) instead of twice, so results agree with
the unfused pair to within one rounding of the weights. Whatever BLAS cannot take (other dtypes
or layouts, bad shapes) runs the MatMul and ApplyGradientDescent kernels themselves, with their
checks and errors.

`_FusedAddNApplyGradientDescent`: the update by the towers' averaged gradient,
`var -= alpha * (AddN(g_0..g_{N-1}) * c)` (or `/ c`, or no factor), as one compiled loop that
reads each array once instead of three kernels making a pass each. Per element it does the
unfused kernels' operations in their order and dtype: AddN's left-to-right sum
((g_0 + g_1) + g_2) + ..., then `* c` or `/ c`, then ApplyGradientDescent's loop step
`var -= delta * alpha`; numba without fastmath contracts nothing into a multiply-add, so the
results are bit-identical. Anything else (arrays that are not contiguous ndarrays of the
variable's dtype and shape, non-scalar alpha or factor) runs the AddN, Mul/RealDiv and
ApplyGradientDescent kernels themselves, with their values and errors.

`_FusedMatMulApplyAdam`: Adam by the gradient of a dense layer too large for the cache, made
and applied a block of rows at a time (see the kernel).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import intra_op, linalg
from tensorweave.kernels.blas import gemm_accumulate
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.fused import InnerNode
from tensorweave.kernels.jit import LOOP_DTYPES, compiled, loop_helper
from tensorweave.kernels.math import add_n_head
from tensorweave.kernels.registry import find_kernel, kernel
from tensorweave.kernels.training import (
    PARALLEL_SIZE,
    adam_args,
    adam_loop,
    locked,
    over_update_chunks,
    update_splits,
)
from tensorweave.ops import fused_ops
from tensorweave.runtime.executor.values import deref


def _inner_kernel(ctx, op: str):
    """The registration of `op`'s own kernel for this node's attrs: what a fused kernel falls
    back on."""
    kdef = find_kernel(op, ctx.device.device_type, ctx.attrs)
    if kdef is None:
        raise invalid_argument(f"{ctx.op_type}: no {op} kernel")
    return kdef


def _inner_update(ctx, update: str = "ApplyGradientDescent"):
    """(context, instance) of the kernel class of the update the node replaced, `update` or
    its resource twin (a resource twin's handles arrive as the variables' storage, as they do
    for the unfused op), built for the fused node (its name, use_locking and other attrs), so
    its errors name the user's update."""
    op = "Resource" + update if "ResourceApply" in ctx.op_type else update
    inner_ctx = KernelContext(InnerNode(ctx, op), ctx.device, ctx.session)
    return inner_ctx, _inner_kernel(ctx, op).impl(inner_ctx)


@kernel(("_FusedMatMulApplyGradientDescent", "_FusedMatMulResourceApplyGradientDescent"),
        expensive=True)
class FusedMatMulApplyGradientDescentKernel:
    """var -= alpha * op(a) @ op(b) by one accumulating GEMM, else MatMul then the update."""

    def __init__(self, ctx):
        self.apply_ctx, self.apply = _inner_update(ctx)
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
    on the calling thread alone."""
    threads = intra_op.threads()
    if m * n * k < linalg.PARALLEL_MACS or threads == 1 or m < 2 * linalg.BLOCK:
        rows(0, m, True)
        return
    if intra_op.gemm_on_blas_threads():
        rows(0, m)
        return
    size = -(-m // threads)
    intra_op.parallel_for(threads, lambda i: rows(i * size, min(m, (i + 1) * size), True),
                          gemm=True)


# --- Adam by a product ------------------------------------------------------------------------
# Gradient elements one block of the fused Adam update makes and applies at once: 1 MB of
# float32, so a block's product is still in the L2 cache when its rows are applied.
ADAM_BLOCK_ELEMENTS = 1 << 18


def adam_blocks_rows(node) -> bool:
    """Whether `node`'s product op(a) @ op(b) statically has PARALLEL_SIZE elements or more:
    the update then runs block by block on the intra-op threads (read by the update fusion
    pass, which fuses only such updates, and by the cost model, which keeps them inline)."""
    first = fused_ops.ADAM_MATRICES if node.op.startswith("_FusedMatMul") else 0
    a, b = node.input_shapes[first:first + 2]
    size = fused_ops.product_shape(a, b, node.attrs).num_elements()
    return size is not None and size >= PARALLEL_SIZE


@kernel(("_FusedMatMulApplyAdam", "_FusedMatMulResourceApplyAdam"), expensive=True)
class FusedMatMulApplyAdamKernel:
    """ApplyAdam by the gradient op(a) @ op(b), made and applied a block of rows at a time on
    the intra-op threads; else the MatMul and ApplyAdam kernels one after the other.

    Unfused, the gradient of a large dense layer (cnn_train's 3136x1024: 12.8 MB) is written
    out whole by the GEMM and read back by Adam's pass over var, m and v, all from memory.
    Here each block of ADAM_BLOCK_ELEMENTS gradient rows is a single-threaded product into a
    per-thread scratch buffer, applied while it is in cache: 1.85 against 2.28 ms for that
    layer (its GEMM split over the pool, then Adam in chunks, as the unfused kernels run it).
    Per element, Adam's compiled loop does exactly ApplyAdam's operations; the product's
    blocks are rows of the output, as linalg.matmul splits a product on the pool, so every
    gradient element is the same dot product."""

    def __init__(self, ctx):
        self.apply_ctx, self.apply = _inner_update(ctx, "ApplyAdam")
        self.matmul = linalg.MatMulKernel(ctx)
        self.transpose_a = bool(ctx.attrs["transpose_a"])
        self.transpose_b = bool(ctx.attrs["transpose_b"])
        self.locking = bool(ctx.attrs["use_locking"])
        self.loop = compiled(adam_loop)

    splits_work = staticmethod(adam_blocks_rows)

    def compute(self, ctx, var_ref, m_ref, v_ref, *args):
        scalars, (a, b) = args[:-2], args[-2:]
        refs = (var_ref, m_ref, v_ref)
        state = [deref(r) for r in refs]
        if _blockwise(state, scalars, a, b, self.transpose_a, self.transpose_b):
            op_a = a.T if self.transpose_a else a
            op_b = b.T if self.transpose_b else b
            if self.locking:
                with locked(refs):
                    self._run(state, scalars, op_a, op_b)
            else:
                self._run(state, scalars, op_a, op_b)
            return var_ref
        grad = self.matmul.compute(ctx, a, b)
        return self.apply.compute(self.apply_ctx, *refs, *scalars, grad)

    def _run(self, state, scalars, a, b) -> None:
        var, m, v = state
        rows, cols = var.shape
        constants = adam_args(self.apply_ctx.attrs, var, m, v, *scalars, None)[4:]
        flat = [x.reshape(-1) for x in state]
        step = max(1, ADAM_BLOCK_ELEMENTS // cols)

        def block(i: int) -> None:
            r0, r1 = i * step, min(rows, (i + 1) * step)
            grad = intra_op.scratch((r1 - r0) * cols, var.dtype).reshape(r1 - r0, cols)
            linalg.one_thread_product(a[r0:r1], b, grad)
            part = slice(r0 * cols, r1 * cols)
            self.loop(*(x[part] for x in flat), grad.reshape(-1), *constants)

        intra_op.parallel_for(-(-rows // step), block)


def _blockwise(state, scalars, a, b, transpose_a: bool, transpose_b: bool) -> bool:
    """Whether the blockwise path computes what MatMul and ApplyAdam would: var, m and v
    contiguous ndarrays of one loop dtype and 2-D shape of PARALLEL_SIZE elements or more,
    scalar hyperparameters, and matrices of that dtype whose product has var's shape."""
    var = state[0]
    if var.__class__ is not np.ndarray or var.dtype not in LOOP_DTYPES or var.ndim != 2 or \
            var.size < PARALLEL_SIZE or any(np.ndim(s) != 0 for s in scalars):
        return False
    for x in (*state, a, b):
        if x.__class__ is not np.ndarray or x.dtype != var.dtype or x.ndim != 2:
            return False
    if any(x.shape != var.shape or not x.flags.c_contiguous for x in state):
        return False
    rows = a.shape[1] if transpose_a else a.shape[0]
    inner = a.shape[0] if transpose_a else a.shape[1]
    b_inner, cols = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    return (rows, cols) == var.shape and inner == b_inner


# --- the averaged-gradient update ------------------------------------------------------------
_SCALES = {"none": 0, "mul": 1, "div": 2}


@loop_helper
def _grads_sum(grads, head, i):
    """AddN's sum of element i of `grads`, in TensorFlow's order (kernels/math.add_n_head)."""
    s = grads[0][i]
    for k in range(1, head):
        s += grads[k][i]
    for start in range(head, len(grads), 8):
        b = grads[start][i]
        for k in range(start + 1, start + 8):
            b += grads[k][i]
        s += b
    return s


def _add_n_update_loop(var, grads, head, alpha, factor, scale):
    """var -= (AddN(grads) [* or / factor]) * alpha on flat arrays; `grads` a tuple (numba
    compiles and caches one loop per length). The scale branch is outside the loops: a branch
    inside kept LLVM from vectorizing (kernels/training.py)."""
    if scale == 0:
        for i in range(var.size):
            var[i] -= _grads_sum(grads, head, i) * alpha
    elif scale == 1:
        for i in range(var.size):
            var[i] -= _grads_sum(grads, head, i) * factor * alpha
    else:
        for i in range(var.size):
            var[i] -= _grads_sum(grads, head, i) / factor * alpha


@kernel(("_FusedAddNApplyGradientDescent", "_FusedAddNResourceApplyGradientDescent"),
        dtypes=(np.float32, np.float64), expensive=True)
class FusedAddNApplyGradientDescentKernel:
    """var -= alpha * (AddN(grads) [* or / factor]) in one compiled pass, else the AddN,
    Mul/RealDiv and ApplyGradientDescent kernels one after the other.

    Inputs: (var, alpha, factor..., grads...): one factor for `scale` "mul" or "div", none for
    "none". Variables of PARALLEL_SIZE elements or more run as one chunk per intra-op thread,
    as ApplyGradientDescent's loop does."""

    def __init__(self, ctx):
        scale = ctx.attrs.get("scale", "none")
        self.scale = _SCALES.get(scale)
        self.factors = int(ctx.attrs.get("num_factors", 0))
        if self.scale is None or self.factors != (self.scale > 0):
            raise invalid_argument(f"{ctx.op_type}: scale {scale!r} with {self.factors} factors")
        self.apply_ctx, self.apply = _inner_update(ctx)
        # AddN, Mul and RealDiv are plain functions of their inputs (register_pure).
        self.add_n = _inner_kernel(ctx, "AddN").impl
        self.rescale = _inner_kernel(ctx, ("Mul", "RealDiv")[self.scale - 1]).impl \
            if self.scale else None
        self.locking = bool(ctx.attrs["use_locking"])
        self.loop = compiled(_add_n_update_loop)

    splits_work = staticmethod(update_splits)

    def compute(self, ctx, var_ref, alpha, *args):
        factor = args[0] if self.factors else 1
        grads = args[self.factors:]
        var = deref(var_ref)
        if _compilable(var, alpha, factor, grads):
            if self.locking:
                with var_ref.lock:
                    self._run(var, alpha, factor, grads)
            else:
                self._run(var, alpha, factor, grads)
            return var_ref
        delta = self.add_n(*grads)
        if self.rescale is not None:
            delta = self.rescale(delta, factor)
        return self.apply.compute(self.apply_ctx, var_ref, alpha, delta)

    def _run(self, var, alpha, factor, grads) -> None:
        t = var.dtype.type
        alpha, factor, scale = t(alpha), t(factor), self.scale
        flat = var.reshape(-1)
        flat_grads = tuple(g.reshape(-1) for g in grads)
        head = add_n_head(len(grads))
        over_update_chunks(var.size, lambda part: self.loop(
            flat[part], tuple(g[part] for g in flat_grads), head, alpha, factor, scale))


def _compilable(var, alpha, factor, grads) -> bool:
    """Whether the loop computes exactly what the unfused kernels would: contiguous ndarrays
    of one float dtype and shape, scalar alpha and factor."""
    if var.__class__ is not np.ndarray or var.dtype not in LOOP_DTYPES or \
            not var.flags.c_contiguous or np.ndim(alpha) != 0 or np.ndim(factor) != 0:
        return False
    dtype, shape = var.dtype, var.shape
    for g in grads:
        if g.__class__ is not np.ndarray or g.dtype != dtype or g.shape != shape or \
                not g.flags.c_contiguous:
            return False
    return True
