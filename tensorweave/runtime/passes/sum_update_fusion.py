"""Sum-update fusion: the SGD update by the towers' averaged gradient becomes one kernel.

  ApplyGradientDescent(var, alpha, AddN(g_0..g_{N-1}))           =>  scale "none"
  ApplyGradientDescent(var, alpha, Mul(AddN(g...), c))  (or c * AddN)  =>  scale "mul"
  ApplyGradientDescent(var, alpha, RealDiv(AddN(g...), c))       =>  scale "div"
  all three  =>  _FusedAddNApplyGradientDescent(var, alpha, [c], g_0..g_{N-1})

This is the variable update of in-graph data parallelism: each tower computes its gradient and
the variable's device averages them (`tf.add_n(grads) / towers`, which the arithmetic pass has
made `Mul(AddN, 1/towers)` when that is exact) before the update. Unfused, the AddN, the Mul and
the update each make a pass over memory and the first two allocate an array; the fused kernel
(kernels/fused_update.py) is one compiled loop doing the same operations per element, so
results are bit-identical. Which side of the Mul the factor is on does not matter: IEEE
multiplication is commutative (the same correctly rounded product; at most a NaN's payload
could differ when both operands are NaN, which no kernel here defines either).

Conditions: T float32/float64; N >= 2; the AddN and the Mul/RealDiv pure, on the update's
device, not fetched, each read only by the next node (through one input) and depended on by no
control edge; `c` has static shape [] (any scalar tensor; it becomes an input). The fused node
takes the update's name, so its readers and control dependents are unchanged, and it keeps the
control inputs of the nodes it replaces. Like update_fusion, it then waits for the step's other
reads of the variable that are neither its ancestors nor its descendants (the fused update is
ready sooner than the unfused one, which waited for the AddN and the Mul); those edges could
cross frames, so graphs with control flow are left alone. Part of the remapping switch; runs
after arithmetic optimization (which makes `/ towers` a Mul when exact) and after
update_fusion (the patterns are disjoint: a MatMul delta there, an AddN here), before
elementwise_fusion and the memory pass (which then see neither the AddN nor the Mul).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import REMAPPING, PassOptions
from tensorweave.runtime.passes.rewrite import (
    Editor,
    fused_update_type,
    is_pure,
    known_shape,
    make_node,
    rewrite_updates,
    unordered_value_readers,
)

_DTYPES = (_dtypes.float32, _dtypes.float64)
FUSED = "_FusedAddNApplyGradientDescent"


@register_pass("sum_update_fusion", order=83, toggle=REMAPPING)
def fuse_sum_updates(graph, options: PassOptions | None = None):
    """Fuses each ApplyGradientDescent of a (scaled) AddN that only it reads."""
    return rewrite_updates(Editor(graph, options or PassOptions.defaults(graph)), _fuse)


def _fuse(ed: Editor, update) -> None:
    dtype = update.attrs.get("T")
    delta = update.inputs[2]
    if dtype not in _DTYPES or not _fusible(ed, delta, update):
        return
    head = ed.producer(delta)
    scale, factor, add_n = "none", [], head
    if head.op != "AddN":                 # Mul or RealDiv of the sum by a scalar
        operands = _sum_and_factor(ed, head)
        if operands is None or not _fusible(ed, operands[0], head):
            return
        scale = "mul" if head.op == "Mul" else "div"
        factor, add_n = [operands[1]], ed.producer(operands[0])
    if len(add_n.inputs) < 2:
        return
    removed = [add_n] if add_n is head else [add_n, head]
    attrs = {"T": dtype, "N": len(add_n.inputs), "num_factors": len(factor), "scale": scale,
             "use_locking": bool(update.attrs.get("use_locking", False))}
    control = list(update.control_inputs)
    for node in removed:
        control.extend(c for c in node.control_inputs if c not in control)
    fused = make_node(update.name, fused_update_type(FUSED, update), attrs,
                      list(update.inputs[:2]) + factor + list(add_n.inputs), update, ed.graph,
                      update.output_dtypes, update.output_shapes, control)
    ed.substitute(update, fused, "fuse_add_n_apply_gradient_descent",
                  " + ".join(n.name for n in removed + [update]))
    ed.add_control_inputs(fused, unordered_value_readers(ed, fused))


def _fusible(ed: Editor, tensor, reader) -> bool:
    """Whether the producer of `tensor` may disappear into `reader`: pure, on its device, in
    its dtype, not fetched, read only by it and by no control edge."""
    node = ed.producer(tensor)
    return node.op in ("AddN", "Mul", "RealDiv") and is_pure(node) and \
        node.device == reader.device and node.attrs.get("T") == reader.attrs.get("T") and \
        not ed.is_preserved(node.name) and ed.only_reader(tensor) is reader


def _sum_and_factor(ed: Editor, scaling):
    """(the AddN's output, the scalar factor) of Mul(sum, c), Mul(c, sum) or RealDiv(sum, c)."""
    x, y = scaling.inputs[:2]
    candidates = [(x, y), (y, x)] if scaling.op == "Mul" else [(x, y)]
    for sum_tensor, factor in candidates:
        if ed.producer(sum_tensor).op == "AddN" and _is_scalar(ed, factor):
            return sum_tensor, factor
    return None


def _is_scalar(ed: Editor, tensor) -> bool:
    producer = ed.producer(tensor)
    shapes = producer.output_shapes
    return tensor[1] < len(shapes) and known_shape(shapes[tensor[1]]) == ()
