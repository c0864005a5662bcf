"""Update fusion: an SGD update of a MatMul gradient becomes one accumulating GEMM.

  ApplyGradientDescent(var, alpha, MatMul(a, b))  =>  _FusedMatMulApplyGradientDescent
  ResourceApplyGradientDescent(handle, alpha, MatMul(a, b))
                                     =>  _FusedMatMulResourceApplyGradientDescent

(kernels/fused_update.py: `var += -alpha * op(a) @ op(b)` with BLAS's beta = 1). This is the
weight update of every dense layer trained by plain SGD; the gradient array is never made.
The MatMul must be pure, on the variable's device, float32/float64, not fetched, depended on by
no control edge and read by nothing but the update; graphs with control flow are left alone.
The fused node takes the update's name and inputs (var, alpha, a, b), so its readers and
control dependents are unchanged. Results agree
with the unfused pair to within one rounding of the weights (see the kernel). Part of the
remapping switch; runs after the remapper.

Order: the update used to wait for the gradient GEMM, and the layer's input-gradient GEMM
(`dy @ w^T`), which reads the same weights, ran first. The fused update is ready as soon as
`a` and `b` are, so it gets a control edge from every node reading the variable's value (the
ref itself or its `read` Identity) that is neither its ancestor nor its descendant: the step's
other reads of the weights see this step's values, never the updated ones.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import REMAPPING, PassOptions
from tensorweave.runtime.passes.rewrite import (
    Editor,
    fused_update_type,
    is_pure,
    make_node,
    rewrite_sgd_updates,
    unordered_value_readers,
)

_DTYPES = (_dtypes.float32, _dtypes.float64)
FUSED = "_FusedMatMulApplyGradientDescent"


@register_pass("update_fusion", order=82, toggle=REMAPPING)
def fuse_matmul_updates(graph, options: PassOptions | None = None):
    """Fuses each ApplyGradientDescent whose delta only it reads from a MatMul."""
    return rewrite_sgd_updates(Editor(graph, options or PassOptions.defaults(graph)), _fuse)


def _fuse(ed: Editor, update) -> None:
    delta = update.inputs[2]
    matmul = ed.producer(delta)
    dtype = update.attrs.get("T")
    if matmul.op != "MatMul" or dtype not in _DTYPES or not is_pure(matmul) or \
            matmul.device != update.device or ed.is_preserved(matmul.name) or \
            ed.only_reader(delta) is not update or update.inputs.count(delta) != 1:
        return
    attrs = {"T": dtype, "use_locking": bool(update.attrs.get("use_locking", False)),
             "transpose_a": bool(matmul.attrs.get("transpose_a", False)),
             "transpose_b": bool(matmul.attrs.get("transpose_b", False))}
    control = list(update.control_inputs) + [c for c in matmul.control_inputs
                                             if c not in update.control_inputs]
    fused = make_node(update.name, fused_update_type(FUSED, update), attrs,
                      list(update.inputs[:2]) + list(matmul.inputs), update, ed.graph,
                      update.output_dtypes, update.output_shapes, control)
    ed.substitute(update, fused, "fuse_matmul_apply_gradient_descent",
                  f"{matmul.name} + {update.name}")
    ed.add_control_inputs(fused, unordered_value_readers(ed, fused))
