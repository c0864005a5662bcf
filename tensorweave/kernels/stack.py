"""Stack kernels: the handle is the stack itself, a value that lives as long as the step's."""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel


class StackResource:
    """A bounded or unbounded LIFO of arrays."""

    __slots__ = ("name", "max_size", "items", "closed")

    def __init__(self, name: str, max_size: int):
        self.name = name
        self.max_size = max_size
        self.items: list = []
        self.closed = False

    def __repr__(self) -> str:
        return f"StackResource({self.name!r}, size={len(self.items)})"


@kernel("StackV2", type_attr="elem_type")
def _stack(ctx, max_size):
    name = ctx.attrs.get("stack_name") or ctx.node_name
    return StackResource(name.decode() if isinstance(name, bytes) else name, int(max_size))


def _open(stack: StackResource) -> StackResource:
    if stack.closed:
        raise errors.InvalidArgumentError(None, None, f"Stack {stack.name} has already been "
                                          "closed.")
    return stack


@kernel("StackPushV2")
def _push(ctx, stack, elem):
    stack = _open(stack)
    if 0 <= stack.max_size <= len(stack.items):
        raise errors.InvalidArgumentError(None, None, f"Stack {stack.name} has already reached "
                                          f"its maximum size {stack.max_size}")
    stack.items.append(elem)
    return elem


@kernel("StackPopV2", type_attr="elem_type")
def _pop(ctx, stack):
    stack = _open(stack)
    if not stack.items:
        raise errors.InvalidArgumentError(None, None, f"Stack {stack.name} is empty.")
    return stack.items.pop()


@kernel("StackCloseV2", dtypes=None)
def _close(ctx, stack):
    stack.items.clear()
    stack.closed = True
