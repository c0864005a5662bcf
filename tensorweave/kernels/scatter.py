"""Scatter kernels: update rows of a variable's storage in place (see ops/scatter_ops.py).

Each serves the ref op and its resource twin (ResourceScatterUpdate, ...): the storage arrives
as the ref or as the handle alike. The twins have no `use_locking` and always lock, as
TensorFlow's hold the variable's mutex.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.segment import scatter_rows
from tensorweave.runtime.executor.values import deref


def _int_divide(x, y):
    """C's integer division (toward zero), TensorFlow's meaning of `/` on integers."""
    return np.floor_divide(np.abs(x), np.abs(y)) * np.sign(x) * np.sign(y)


class _ScatterKernel:
    """Validates shapes and indices like TensorFlow, then combines rows with `ufunc`."""

    ufunc = None  # None: plain assignment (ScatterUpdate)

    def __init__(self, ctx):
        self.locking = ctx.attrs.get("use_locking", True)

    def compute(self, ctx, ref, indices, updates):
        params = deref(ref)
        indices, updates = np.asarray(indices), np.asarray(updates)
        expected = indices.shape + params.shape[1:]
        if params.ndim < 1:
            raise errors.InvalidArgumentError(
                None, None, f"params must be at least 1-D, got shape "
                f"{dims_text(params.shape)}")
        if updates.ndim != 0 and updates.shape != expected:
            raise errors.InvalidArgumentError(
                None, None, "Must have updates.shape = indices.shape + params.shape[1:] or "
                f"updates.shape = [], got updates.shape {dims_text(updates.shape)}, "
                f"indices.shape {dims_text(indices.shape)}, params.shape "
                f"{dims_text(params.shape)}")
        flat = indices.reshape(-1)
        bad = (flat < 0) | (flat >= params.shape[0])
        if bad.any():
            i = int(np.argmax(bad))
            raise errors.InvalidArgumentError(
                None, None, f"indices[{i}] = {flat[i]} is not in [0, {params.shape[0]})")
        rows = np.broadcast_to(updates, expected).reshape((flat.size,) + params.shape[1:])
        with ref.lock if self.locking else contextlib.nullcontext():
            self.combine(params, flat, rows)
        return ref

    def combine(self, params, flat, rows) -> None:
        scatter_rows(params, flat, rows, self.ufunc)


@kernel(("ScatterUpdate", "ResourceScatterUpdate"))
class ScatterUpdateKernel(_ScatterKernel):
    def combine(self, params, flat, rows) -> None:
        params[flat] = rows  # rows are written in order: the last of repeated indices wins


def _register(op_type: str, ufunc) -> None:
    kernel((op_type, "Resource" + op_type))(
        type(f"{op_type}Kernel", (_ScatterKernel,), {"ufunc": ufunc}))


for _op_type, _ufunc in (("ScatterAdd", np.add), ("ScatterSub", np.subtract),
                         ("ScatterMul", np.multiply), ("ScatterMin", np.minimum),
                         ("ScatterMax", np.maximum)):
    _register(_op_type, _ufunc)


@kernel(("ScatterDiv", "ResourceScatterDiv"))
class ScatterDivKernel(_ScatterKernel):
    """Float division; integers divide toward zero (one row at a time, in order)."""

    def combine(self, params, flat, rows) -> None:
        if params.dtype.kind in "iu":
            for i, r in zip(flat, rows):
                params[i] = _int_divide(params[i], r)
        else:
            scatter_rows(params, flat, rows, np.true_divide)
