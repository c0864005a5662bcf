"""Control-flow kernels.

NoOp and ControlTrigger do nothing: their nodes exist for their control edges. LoopCond
forwards the loop predicate. Switch, Merge, Enter, Exit and NextIteration route values between
frames and iterations, which only the executor can do (runtime/executor/frames.py handles them
without calling a kernel); their registrations say the CPU device can run them, and calling one
directly is an internal error.
"""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_pure


def _no_op():
    """Runs after the node's control inputs; produces nothing."""


def _loop_cond(pred):
    return pred


def _routed_by_executor(*_inputs):
    raise errors.InternalError(None, None, "A control-flow routing op ran outside the frames "
                               "executor")


register_pure("NoOp", _no_op)
register_pure("ControlTrigger", _no_op)
register_pure("LoopCond", _loop_cond)
for _op in ("Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
            "NextIteration", "RefNextIteration"):
    register_pure(_op, _routed_by_executor)
