"""Gating gradients: making a set of gradients available only once all of them are computed.

TF orders gradient computations with `tf.tuple` (`control_flow_ops.tuple`): in its scope
(`tuple/`) a NoOp `group_deps` waits for every gradient's op, and each gradient passes through
an Identity `control_dependency[_N]` that waits for that NoOp. tf.gradients does this per op
when `gate_gradients=True` (Optimizer.GATE_OP), Optimizer.compute_gradients once over all the
gradients for GATE_GRAPH. It matters to TF's parallel executor: a variable's in-place update
must not run before another gradient that still reads the variable. (The runtime's dependency
passes drop these gates where they order nothing, runtime/passes/dependency.py.)

Not gated: the ops inside a while loop's gradient loop, which is built whole
(autodiff/while_grad.py) with another structure than TF's and hoists its a^T@b terms out of
the loop; TF gates each op of its gradient loop body.
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
