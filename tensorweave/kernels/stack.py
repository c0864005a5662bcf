"""Stack kernels: LIFO stacks in the step's resource container (`StepState.resources`).

The handle is the pair [container, name], the name unique in the process ("StackV2_3"), as
TensorFlow names its per-step stacks.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel

_ids = itertools.count()
_CONTAINER = b"_stacks"


class StackState:
    """One stack: its elements and bound (TF checks the dtype on pop only)."""

    __slots__ = ("name", "max_size", "elements", "closed")

    def __init__(self, name: str, max_size: int):
        self.name, self.max_size = name, max_size
        self.elements: list = []
        self.closed = False


def _lookup(step, handle) -> StackState:
    try:
        stack = step.resources[handle[1]]
    except KeyError:
        raise errors.NotFoundError(None, None, f"Resource {handle[0].decode()}/"
                                   f"{handle[1].decode()} does not exist.") from None
    if stack.closed:
        raise errors.InvalidArgumentError(None, None, f"Stack[{stack.name}] has already been "
                                          "closed.")
    return stack


@kernel("StackV2", needs_step=True)
class StackKernel:
    """Creates the step's stack and outputs its handle."""

    def __init__(self, ctx):
        self.prefix = ctx.attrs["stack_name"] or ctx.node_name

    def compute(self, ctx, step, max_size):
        name = f"{self.prefix}_{next(_ids)}"
        key = name.encode()
        step.resources[key] = StackState(name, int(max_size))
        return np.array([_CONTAINER, key], dtype=object)


@kernel("StackPushV2", needs_step=True)
def _stack_push(ctx, step, handle, elem):
    stack = _lookup(step, handle)
    if 0 <= stack.max_size <= len(stack.elements):
        raise errors.InvalidArgumentError(None, None, f"Stack[{stack.name}] overflowed its "
                                          f"max_size ({stack.max_size})")
    stack.elements.append(elem)
    return elem


@kernel("StackPopV2", needs_step=True)
class StackPopKernel:
    """Pops the top element; its dtype must be the op's `elem_type`."""

    def __init__(self, ctx):
        self.dtype = np.dtype(ctx.attrs["elem_type"].as_numpy_dtype)

    def compute(self, ctx, step, handle):
        stack = _lookup(step, handle)
        try:
            elem = stack.elements.pop()
        except IndexError:
            raise errors.InvalidArgumentError(None, None, f"Stack[{stack.name}] is empty when "
                                              "calling Pop().") from None
        if np.asarray(elem).dtype != self.dtype:
            raise errors.InternalError(None, None, f"Popped element of dtype "
                                       f"{np.asarray(elem).dtype} from Stack[{stack.name}] but "
                                       f"the op expects {self.dtype}")
        return elem


@kernel("StackCloseV2", needs_step=True)
def _stack_close(ctx, step, handle):
    _lookup(step, handle).closed = True
    step.resources.pop(handle[1], None)
