"""Gating gradients: making a set of gradients available only once all of them are computed.

TF orders gradient computations with `tf.tuple` (`control_flow_ops.tuple`): in its scope
(`tuple/`) a NoOp `group_deps` waits for every gradient's op, and each gradient passes through
an Identity `control_dependency[_N]` that waits for that NoOp. tf.gradients does this per op
when `gate_gradients=True` (Optimizer.GATE_OP), Optimizer.compute_gradients once over all the
gradients for GATE_GRAPH. It matters to TF's parallel executor: a variable's in-place update
must not run before another gradient that still reads the variable. (The runtime's dependency
passes drop these gates where they order nothing, runtime/passes/dependency.py.)

Inside a while loop's gradient loop each op's gradients are gated too, as TF gates each op
of its gradient loop body. The loop's gradient is built whole (autodiff/while_grad.py) and
hoists its a^T@b terms out of the loop; TF's guarantee (a captured value's gradient is
complete only after every read of the value in the loop) holds there too: the gradient loop's
last count waits for a hoisted term's gate, and when a hoisted row may be a variable's value
(read after the loop), the loop's gradients wait for that read.
"""
from __future__ import annotations

from tensorweave.framework.indexed_slices import IndexedSlices


def gate_together(grads: list) -> list:
    """`grads` (Tensors, IndexedSlices or None) through one TF `tuple`.

    As TF's `tuple`, an IndexedSlices is gated through its values: its values' op joins the
    gate and only its values pass through an Identity; its indices and dense shape are kept.
    """
    from tensorweave.ops.control_flow_ops import tuple as tuple_
    flat = [g.values if isinstance(g, IndexedSlices) else g for g in grads]
    gated = tuple_(flat)
    return [IndexedSlices(v, g.indices, g.dense_shape) if isinstance(g, IndexedSlices) else v
            for g, v in zip(grads, gated)]


def gate_op_gradients(grads: list) -> list:
    """An op's input gradients as tf.gradients(gate_gradients=True) leaves them: gated
    together when more than one flows, else as they are. As TF, the gate ignores device and
    colocation scopes (its Identities still sit with their gradients)."""
    from tensorweave.framework.scopes import colocate_with, device
    if sum(g is not None for g in grads) < 2:
        return grads
    with device(None), colocate_with(None, ignore_existing=True):
        return gate_together(grads)
