"""tf.debugging.enable_check_numerics: every float output checked for NaN and Inf as it is made.

TensorFlow's mechanism, for graphs: on the thread that enabled it, each op an op wrapper makes
(op_callbacks.py) gets a CheckNumericsV2 on each float output, and the wrapper hands back the
checked tensors, so whatever is built on them (loop bodies, conds, gradients, optimizer
updates) runs only after the check. The check's message is written when the op is made:

    !!! Detected Infinity or NaN in output 0 of graph op "Log" (# of outputs: 1) !!!
      dtype: <dtype: 'float32'>
      shape: (2,)

      Input tensor: Tensor("while/sub:0", shape=(2,), dtype=float32)

      Stack trace of op's creation ("->": inferred user code):
        + train.py (L12) body
     -> |   return tf.log(v)

and the kernel appends "Tensor had NaN values" (or -Inf, +Inf). Not checked: ops that only
move values (a NaN there was already caught where it was made), control flow, placeholders and
variables, and the batch statistics FusedBatchNorm may leave NaN on an empty batch.
"""
from __future__ import annotations

import linecache
import threading

from tensorweave.framework import op_callbacks
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.logging_ops import CheckNumericsV2

# Ops whose outputs are their inputs moved around, or that never compute: not checked.
SAFE_OPS = frozenset({
    "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "Snapshot",
    "StopGradient", "PreventGradient", "Reshape", "ExpandDims", "Squeeze", "Transpose",
    "Slice", "StridedSlice", "Gather", "GatherV2", "GatherNd", "Concat", "ConcatV2", "Pack",
    "Unpack", "Split", "SplitV", "Tile", "Fill", "ZerosLike", "OnesLike", "Shape", "ShapeN",
    "Size", "Rank", "BroadcastTo", "VariableV2", "Variable", "VarHandleOp", "ReadVariableOp",
    "CheckNumerics", "CheckNumericsV2", "Enter", "RefEnter", "Exit", "RefExit", "Merge",
    "RefMerge", "Switch", "RefSwitch", "NextIteration", "RefNextIteration", "LoopCond",
    "_Arg", "_Retval"})
# (op type, output) pairs that may legitimately hold NaN (TensorFlow's list).
IGNORE_OP_OUTPUTS = frozenset(
    [(op, k) for op in ("FusedBatchNorm", "FusedBatchNormV2") for k in (1, 2, 3, 4)] +
    [("FusedBatchNormV3", k) for k in (1, 2, 3, 4, 5)])

_state = threading.local()


def enable_check_numerics(stack_height_limit=30, path_length_limit=50) -> None:
    """Checks every float output of the ops this thread makes from now on (idempotent)."""
    if not hasattr(_state, "limits"):
        _state.limits = (stack_height_limit, path_length_limit)
    op_callbacks.add_op_callback(_check_outputs)


def disable_check_numerics() -> None:
    """Stops checking the ops this thread makes (idempotent; checks made stay)."""
    try:
        op_callbacks.remove_op_callback(_check_outputs)
    except KeyError:
        pass


def _check_outputs(op):
    """The op's outputs, each float one through a CheckNumericsV2 made beside it."""
    if op.type in SAFE_OPS:
        return None
    outputs = list(op.outputs)
    checked = []
    for k, output in enumerate(outputs):
        dtype = output.dtype
        if not dtype.is_floating or dtype._is_ref_dtype or (op.type, k) in IGNORE_OP_OUTPUTS:
            checked.append(output)
            continue
        with name_scope(op.name + "/"):
            checked.append(apply_op(CheckNumericsV2, [output],
                                    {"message": error_message(op, k)}))
    return checked


def _unchecked(tensor):
    """The tensor a check made by this callback passes on, else `tensor` itself."""
    op = tensor.op
    if op.type == "CheckNumericsV2" and op.name.endswith("/CheckNumericsV2") and \
            op.get_attr("message").startswith(b"\n\n!!! Detected"):
        return op.inputs[0]
    return tensor


def error_message(op, k: int) -> str:
    """TensorFlow's description of output `k` of `op`, for the check's error."""
    stack_height_limit, path_length_limit = getattr(_state, "limits", (30, 50))
    output = op.outputs[k]
    lines = ["", "", f'!!! Detected Infinity or NaN in output {k} of graph op "{op.type}" '
             f"(# of outputs: {len(op.outputs)}) !!!",
             f"  dtype: {output.dtype}", f"  shape: {tuple(output.shape.as_list())}"
             if output.shape.ndims is not None else "  shape: <unknown>", ""]
    inputs = [_unchecked(t) for t in op.inputs]
    if len(inputs) == 1:
        lines.append(f"  Input tensor: {inputs[0]}")
    elif inputs:
        lines.append(f"  Input tensors ({len(inputs)}):")
        lines += [f"         {i}: {t}" for i, t in enumerate(inputs)]
    # An op records one frame, the user's line that made it (operation.user_creation_site).
    frames = op.traceback[-stack_height_limit:] if stack_height_limit else op.traceback
    if frames:
        lines += ["", "  Stack trace of op's creation (\"->\": inferred user code):"]
        for path, line in frames:
            shown = path if path_length_limit is None or len(path) <= path_length_limit \
                else "..." + path[len(path) - path_length_limit:]
            lines += [f"    + {shown} (L{line})",
                      f" -> |   {linecache.getline(path, line).strip()}"]
    return "\n".join(lines) + "\n"
