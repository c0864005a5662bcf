"""How the legacy kernels run a newer op's kernel instead of a copy of its code.

Either the same registration under the old op type (`reuse_kernels`), or the newer kernel class
built with attrs mapped from the old node's (`newer_kernel`).
"""
from __future__ import annotations

import copy
import importlib

from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.registry import register_as


def reuse_kernels(op_type: str, newer: str, module: str) -> None:
    """Registers every kernel of `newer` (defined in kernels/`module`) for `op_type` too: for
    ops whose inputs, outputs and attrs the newer op's kernel reads the same way."""
    importlib.import_module(f"tensorweave.kernels.{module}")   # the newer op's registrations
    register_as(op_type, newer)


def newer_kernel(kernel_class: type, ctx: KernelContext, op_type: str, **attrs):
    """`kernel_class` (a newer op's kernel) built for this node as if it were an `op_type`
    node with `attrs` added to its own."""
    mapped = copy.copy(ctx)
    mapped.op_type = op_type
    mapped.attrs = {**ctx.attrs, **attrs}
    return kernel_class(mapped)
