"""Accumulator kernels: dense and sparse gradient accumulators with asynchronous take.

An accumulator (in the device's ResourceMgr) keeps a global step, a count and a running sum.
apply drops gradients whose local step is older than the global step; take waits (parked with
its `done` callback, cancellable with its step) until `num_required` gradients are in, then
returns the mean (or sum), resets, and advances the global step.
"""
from __future__ import annotations

import logging
import threading
from collections import deque

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.kernels.queue_state import Attempt, complete
from tensorweave.kernels.queues import resource_handle, resource_of
from tensorweave.kernels.registry import kernel

_log = logging.getLogger("tensorweave")
_TAKE_CANCELLED = "TakeGrad operation was cancelled"


class _Accumulator:
    """State shared by the dense and sparse accumulators: steps, count and waiting takers."""

    def __init__(self, name, dtype, shape, reduction_type):
        self.name = name
        self.np_dtype = dtype.as_numpy_dtype
        self.shape = shape
        self.mean = reduction_type == "MEAN"
        self.global_step = 0
        self.count = 0
        self._lock = threading.Lock()
        self._takers: deque[Attempt] = deque()
        self._reset()

    def apply(self, local_step: int, *grad) -> None:
        with self._lock:
            if local_step < self.global_step:
                _log.debug("Stale gradient for %s dropped: local step %d < global step %d",
                           self.name, local_step, self.global_step)
                return
            self._add(*grad)
            self.count += 1
            finished = self._serve()
        complete(finished)

    def take(self, num_required: int, step, done) -> None:
        if num_required <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}")
        attempt = Attempt(done, step, n=num_required)
        with self._lock:
            self._takers.append(attempt)
            finished = self._serve()
            if attempt in self._takers:
                attempt.token = step.register_cancellation(lambda e: self._cancel(attempt))
                if attempt.token is None:
                    self._takers.remove(attempt)
                    finished.append((attempt, None, errors.CancelledError(
                        None, None, _TAKE_CANCELLED)))
        complete(finished)

    def _cancel(self, attempt) -> None:
        with self._lock:
            if attempt not in self._takers:
                return
            self._takers.remove(attempt)
        complete([(attempt, None, errors.CancelledError(None, None, _TAKE_CANCELLED))])

    def _serve(self) -> list:
        """Hands the aggregate to the first taker if enough gradients are in."""
        if not self._takers or self.count < self._takers[0].n:
            return []
        attempt = self._takers.popleft()
        result = self._result()
        self._reset()
        self.count = 0
        self.global_step += 1
        return [(attempt, result, None)]

    def set_global_step(self, new_step: int) -> None:
        with self._lock:
            if new_step < self.global_step:
                _log.warning("Attempt to set the global step of %s to %d, smaller than %d",
                             self.name, new_step, self.global_step)
            self.global_step = new_step

    def close_resource(self) -> None:
        with self._lock:
            takers, self._takers = list(self._takers), deque()
        complete([(a, None, errors.CancelledError(None, None, _TAKE_CANCELLED))
                  for a in takers])

    def _check_shape(self, shape) -> None:
        if not self.shape.is_compatible_with(shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: expected {self.shape.as_list()}, got "
                f"{list(shape)}")


    def _check_leading_dims(self, shape) -> None:
        """TF's sparse accumulator takes the accumulator's shape as a prefix of the
        gradient's dense shape (so shape () constrains nothing)."""
        if self.shape.ndims is None:
            return
        if self.shape.ndims > len(shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: expected shape rank at least "
                f"{self.shape.ndims}, got {len(shape)}")
        for i, (want, got) in enumerate(zip(self.shape.as_list(), shape)):
            if want is not None and want != got:
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected shape dim {i} to be {want}, got "
                    f"{got}")


class DenseAccumulator(_Accumulator):
    """Sums dense gradients; the result is sum / count (MEAN) or sum."""

    def _reset(self) -> None:
        self.sum = None

    def _add(self, grad) -> None:
        self._check_shape(grad.shape)
        if self.sum is not None and self.sum.shape != grad.shape:
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: expected {list(self.sum.shape)}, got "
                f"{list(grad.shape)}")
        if self.sum is None:
            self.sum = np.array(grad, dtype=self.np_dtype, copy=True)
        else:
            self.sum += grad

    def _result(self):
        out = self.sum
        return (out / self.count).astype(self.np_dtype) if self.mean else out


class SparseAccumulator(_Accumulator):
    """Sums rows by index; each row of the result is divided by how many gradients had it."""

    def _reset(self) -> None:
        self.rows: dict[int, list] = {}   # index -> [sum row, count]
        self.dense_shape = None

    def _add(self, indices, values, shape) -> None:
        if shape.size:
            self._check_leading_dims(tuple(shape))
            self.dense_shape = np.array(shape, dtype=np.int64)
        if len(indices) != len(values):
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: {len(indices)} indices for {len(values)} rows")
        for i, row in zip(indices.tolist(), values):
            entry = self.rows.get(i)
            if entry is None:
                self.rows[i] = [np.array(row, dtype=self.np_dtype, copy=True), 1]
            else:
                entry[0] += row
                entry[1] += 1

    def _result(self):
        order = sorted(self.rows)
        values = [self.rows[i][0] / self.rows[i][1] if self.mean else self.rows[i][0]
                  for i in order]
        row_shape = self.shape.as_list()[1:] if self.shape.ndims else []
        values = np.array(values, dtype=self.np_dtype) if values else \
            np.zeros([0] + [d or 0 for d in row_shape], self.np_dtype)
        shape = self.dense_shape if self.dense_shape is not None else np.array(
            [-1 if d is None else d for d in self.shape.as_list()] if self.shape.ndims
            is not None else [], np.int64)
        return np.array(order, dtype=np.int64), values, shape


class _CreateKernel:
    """Creates (or finds, when shared) the node's accumulator; outputs its handle."""

    accumulator_class = DenseAccumulator

    def __init__(self, ctx):
        self.handle = None

    def compute(self, ctx):
        if self.handle is None:
            attrs = ctx.attrs
            acc = ctx.resources.lookup_or_create(
                attrs.get("container") or "", attrs.get("shared_name") or ctx.node_name,
                lambda: self.accumulator_class(
                    attrs.get("shared_name") or ctx.node_name, attrs["dtype"],
                    _ts.as_shape(attrs["shape"]), attrs.get("reduction_type", "MEAN")))
            self.handle = resource_handle(acc)
        return self.handle


kernel(["ConditionalAccumulator", "ResourceConditionalAccumulator"])(_CreateKernel)


@kernel("SparseConditionalAccumulator")
class SparseCreateKernel(_CreateKernel):
    """SparseConditionalAccumulator: a SparseAccumulator per (container, shared_name)."""

    accumulator_class = SparseAccumulator


@kernel(["AccumulatorApplyGradient", "ResourceAccumulatorApplyGradient",
         "SparseAccumulatorApplyGradient"])
def _apply_gradient(ctx, handle, local_step, *grad):
    resource_of(handle).apply(int(local_step), *grad)


class TakeGradientKernel:
    """(Resource|Sparse)AccumulatorTakeGradient: asynchronous until enough gradients arrive."""

    def __init__(self, ctx):
        pass

    def compute_async(self, ctx, step, inputs, done):
        handle, num_required = inputs
        resource_of(handle).take(int(num_required), step, done)


kernel(["AccumulatorTakeGradient", "ResourceAccumulatorTakeGradient",
        "SparseAccumulatorTakeGradient"])(TakeGradientKernel)


@kernel(["AccumulatorNumAccumulated", "ResourceAccumulatorNumAccumulated"])
def _num_accumulated(ctx, handle):
    return np.int32(resource_of(handle).count)


@kernel(["AccumulatorSetGlobalStep", "ResourceAccumulatorSetGlobalStep"])
def _set_global_step(ctx, handle, new_global_step):
    resource_of(handle).set_global_step(int(new_global_step))
