"""How the legacy kernels run a newer op's kernel instead of a copy of its code.

Either the same registration under the old op type (`registry.register_as`, after importing
the newer op's kernel module), or the newer kernel class built with attrs mapped from the old
node's (`newer_kernel`).
"""
from __future__ import annotations

import copy

from tensorweave.kernels.context import KernelContext


def newer_kernel(kernel_class: type, ctx: KernelContext, op_type: str, **attrs):
    """`kernel_class` (a newer op's kernel) built for this node as if it were an `op_type`
    node with `attrs` added to its own."""
    mapped = copy.copy(ctx)
    mapped.op_type = op_type
    mapped.attrs = {**ctx.attrs, **attrs}
    return kernel_class(mapped)
