"""Update fusion: an SGD or Adam update of a MatMul gradient becomes one kernel.

  ApplyGradientDescent(var, alpha, MatMul(a, b))  =>  _FusedMatMulApplyGradientDescent
  ResourceApplyGradientDescent(handle, alpha, MatMul(a, b))
                                     =>  _FusedMatMulResourceApplyGradientDescent
  ApplyAdam(var, m, v, ..., MatMul(a, b))  =>  _FusedMatMulApplyAdam   (large products only)
  ResourceApplyAdam(...)                   =>  _FusedMatMulResourceApplyAdam

(kernels/fused_update.py). SGD: `var += -alpha * op(a) @ op(b)` with BLAS's beta = 1, the
weight update of every dense layer trained by plain SGD; the gradient array is never made.
Adam: the gradient is made and applied a block of rows at a time, each block still in cache;
only for products of PARALLEL_SIZE elements or more (`adam_blocks_rows`), whose gradient and
Adam state do not fit in the cache: below that the blocks' smaller products cost more than the
round trip they save (mlp_train's 784x512 layer: 519-659 against 528-553 us).
The MatMul must be pure, on the variable's device, float32/float64, not fetched, depended on by
no control edge and read by nothing but the update; graphs with control flow are left alone.
The fused node takes the update's name and inputs (var, alpha, a, b), so its readers and
control dependents are unchanged. Results agree
with the unfused pair to within one rounding of the weights for SGD (see the kernel), bit for
bit for Adam where the unfused product is split over the pool as the blocks are (a product on
BLAS's threads may round differently). Part of the remapping switch; runs after the remapper.

Order: the update used to wait for the gradient GEMM, and the layer's input-gradient GEMM
(`dy @ w^T`), which reads the same weights, ran first. The fused update is ready as soon as
`a` and `b` are, so it gets a control edge from every node reading the variable's value (the
ref itself or its `read` Identity) that is neither its ancestor nor its descendant: the step's
other reads of the weights see this step's values, never the updated ones.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.kernels.fused_update import adam_blocks_rows
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import REMAPPING, PassOptions
from tensorweave.runtime.passes.rewrite import (
    Editor,
    fused_update_type,
    is_pure,
    make_node,
    rewrite_updates,
    unordered_value_readers,
)

_DTYPES = (_dtypes.float32, _dtypes.float64)
FUSED = "_FusedMatMulApplyGradientDescent"
FUSED_ADAM = "_FusedMatMulApplyAdam"


@register_pass("update_fusion", order=82, toggle=REMAPPING)
def fuse_matmul_updates(graph, options: PassOptions | None = None):
    """Fuses each ApplyGradientDescent, and each large ApplyAdam, whose gradient only it
    reads from a MatMul."""
    ed = Editor(graph, options or PassOptions.defaults(graph))
    rewrite_updates(ed, _fuse_sgd)
    return rewrite_updates(ed, _fuse_adam, "ApplyAdam")


def _fuse_sgd(ed: Editor, update) -> None:
    _fuse(ed, update, FUSED, 2, {}, "fuse_matmul_apply_gradient_descent")


def _fuse_adam(ed: Editor, update) -> None:
    _fuse(ed, update, FUSED_ADAM, 9,
          {"use_nesterov": bool(update.attrs.get("use_nesterov", False))},
          "fuse_matmul_apply_adam")


def _fuse(ed: Editor, update, fused_op: str, grad_at: int, extra_attrs: dict, rule: str):
    """Replaces `update` (its gradient input `grad_at`) and the MatMul making that gradient
    by `fused_op` (or its resource twin) on the update's inputs, the gradient's replaced by
    the MatMul's two."""
    grad = update.inputs[grad_at]
    matmul = ed.producer(grad)
    dtype = update.attrs.get("T")
    if matmul.op != "MatMul" or dtype not in _DTYPES or not is_pure(matmul) or \
            matmul.device != update.device or ed.is_preserved(matmul.name) or \
            ed.only_reader(grad) is not update or update.inputs.count(grad) != 1:
        return
    if fused_op == FUSED_ADAM and not adam_blocks_rows(matmul):
        return
    attrs = {"T": dtype, "use_locking": bool(update.attrs.get("use_locking", False)),
             "transpose_a": bool(matmul.attrs.get("transpose_a", False)),
             "transpose_b": bool(matmul.attrs.get("transpose_b", False)), **extra_attrs}
    control = list(update.control_inputs) + [c for c in matmul.control_inputs
                                             if c not in update.control_inputs]
    fused = make_node(update.name, fused_update_type(fused_op, update), attrs,
                      list(update.inputs[:grad_at]) + list(matmul.inputs), update, ed.graph,
                      update.output_dtypes, update.output_shapes, control)
    ed.substitute(update, fused, rule, f"{matmul.name} + {update.name}")
    ed.add_control_inputs(fused, unordered_value_readers(ed, fused))
