"""Queue kernels: the queue-creating ops and the asynchronous enqueue/dequeue family.

A queue op looks up or creates its QueueResource (kernels/queue_state.py) in the device's
ResourceMgr under (container, shared_name or node name), once per session, and outputs a
resource handle: a 0-d object array holding the queue. Enqueue and dequeue kernels are
asynchronous (`compute_async`): they validate the components, hand them to the queue with the
executor's `done` callback and return at once.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import queue_state
from tensorweave.kernels.philox import PhiloxWords, op_seeds
from tensorweave.kernels.registry import kernel

_queue_ids = itertools.count()


def resource_handle(resource) -> np.ndarray:
    """A resource handle value: a 0-d object array holding `resource`."""
    handle = np.empty((), dtype=object)
    handle[()] = resource
    return handle


def resource_of(handle):
    """The resource a handle value holds (indexing an object array may already unwrap it)."""
    return handle[()] if isinstance(handle, np.ndarray) else handle


def _is_fed_by_runner(session, node_name):
    """A predicate: does a QueueRunner in the session graph's QUEUE_RUNNERS feed this queue?"""
    def is_fed() -> bool:
        if session is None:
            return True
        runners = session.graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        return any(getattr(getattr(r, "queue", None), "name", None) == node_name
                   for r in runners)
    return is_fed


class _QueueOpKernel:
    """Creates (or finds, when shared) the node's queue on first run; outputs its handle."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.container = attrs.get("container") or ""
        self.shared_name = attrs.get("shared_name") or ""
        self.dtypes = list(attrs["component_types"])
        self.shapes = [_ts.as_shape(s) for s in attrs.get("shapes") or ()]
        self.capacity = attrs.get("capacity", -1)
        self.handle = None

    def compute(self, ctx):
        if self.handle is None:
            queue = ctx.resources.lookup_or_create(
                self.container, self.shared_name or ctx.node_name, lambda: self._create(ctx))
            # A queue another op created must match this op's (TF's VerifyResource); the
            # handle is kept only once it does, so a mismatch fails every run.
            queue.check_shared(ctx.op_type, self.capacity, *self.components(), ctx.attrs)
            self.handle = resource_handle(queue)
        return self.handle

    def _create(self, ctx):
        name = self.shared_name or f"_{next(_queue_ids)}_{ctx.node_name}"
        warn = queue_state.starved_warning(ctx.node_name, ctx.op_type,
                                           _is_fed_by_runner(ctx.session, ctx.node_name))
        return self.make(name, warn, ctx)

    def components(self) -> tuple[list, list]:
        """The dtypes and shapes of the queue's elements."""
        return self.dtypes, self.shapes

    def make(self, name, warn, ctx):
        return queue_state.QueueResource(name, self.dtypes, self.shapes, self.capacity, warn)


@kernel("FIFOQueueV2")
class FIFOQueueKernel(_QueueOpKernel):
    """FIFOQueueV2: a first-in first-out queue."""


@kernel("PaddingFIFOQueueV2")
class PaddingFIFOQueueKernel(_QueueOpKernel):
    """PaddingFIFOQueueV2: batches pad dimensions that are unknown in `shapes`."""

    def make(self, name, warn, ctx):
        return queue_state.PaddingFIFOQueueResource(name, self.dtypes, self.shapes,
                                                    self.capacity, warn)


@kernel("RandomShuffleQueueV2")
class RandomShuffleQueueKernel(_QueueOpKernel):
    """RandomShuffleQueueV2: random order, TF's for the `seed`/`seed2` attrs."""

    def make(self, name, warn, ctx):
        attrs = ctx.attrs
        seeds = (attrs.get("seed", 0), attrs.get("seed2", 0))
        return queue_state.RandomShuffleQueueResource(
            name, self.dtypes, self.shapes, self.capacity, attrs.get("min_after_dequeue", 0),
            PhiloxWords(*op_seeds(*seeds)), warn, seeds)


@kernel("PriorityQueueV2")
class PriorityQueueKernel(_QueueOpKernel):
    """PriorityQueueV2: component 0 of every element is its scalar int64 priority."""

    def components(self) -> tuple[list, list]:
        """The int64 priority, then the components of the op's attrs."""
        return [_dtypes.int64] + self.dtypes, [_ts.TensorShape([])] + self.shapes

    def make(self, name, warn, ctx):
        return queue_state.PriorityQueueResource(name, *self.components(), self.capacity, warn)


def _check_types(queue, dtypes) -> None:
    if len(dtypes) != len(queue.dtypes):
        raise errors.InvalidArgumentError(
            None, None, f"Wrong number of components in tuple. Expected {len(queue.dtypes)}, "
            f"got {len(dtypes)}")
    for k, (want, got) in enumerate(zip(queue.dtypes, dtypes)):
        if want.base_dtype != got.base_dtype:
            raise errors.InvalidArgumentError(
                None, None, f"Type mismatch in tuple component {k}. Expected "
                f"{want.base_dtype.name}, got {got.base_dtype.name}")


def _immutable(array) -> bool:
    """Whether no one can write into `array`: it and every array it is a view of are read-only
    (a constant, or a slice of one: the executor binds constants read-only)."""
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return False
        if array.base is None:     # a read-only array owning its data
            return True
        array = array.base
    return isinstance(array, bytes)


def _runs(queue, components, many: bool) -> list:
    """Enqueue inputs as queue runs (chunk, start, stop) over private copies, checking shapes;
    an immutable array (a slice of a constant data set) is kept as it is."""
    arrays = [c if _immutable(c) else np.array(c, copy=True) for c in components]
    shapes = queue.shapes
    if many:
        sizes = {a.shape[0] if a.ndim else None for a in arrays}
        if None in sizes or len(sizes) != 1:
            raise errors.InvalidArgumentError(
                None, None, "EnqueueMany requires all components to have the same size in the "
                f"0th dimension; got shapes {[list(a.shape) for a in arrays]}")
    for k, a in enumerate(arrays):
        dims = a.shape[1:] if many else a.shape
        if shapes and not shapes[k].is_compatible_with(dims):
            expected = dims_text(shapes[k].as_list() if shapes[k].ndims is not None else [])
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch in tuple component {k}. Expected {expected}, got "
                f"{dims_text(dims)}")
    if not many:
        return [(tuple(a[None] for a in arrays), 0, 1)]
    size = arrays[0].shape[0]
    return [(tuple(arrays), 0, size)] if size else []


class _EnqueueKernel:
    """QueueEnqueueV2 / QueueEnqueueManyV2: completes once every element is in the queue."""

    many = False

    def __init__(self, ctx):
        self.dtypes = list(ctx.input_dtypes[1:])

    def compute_async(self, ctx, step, inputs, done):
        queue = resource_of(inputs[0])
        _check_types(queue, self.dtypes)
        queue.enqueue(_runs(queue, inputs[1:], self.many), step, done)


@kernel("QueueEnqueueV2")
class QueueEnqueueKernel(_EnqueueKernel):
    """Enqueues one element."""


@kernel("QueueEnqueueManyV2")
class QueueEnqueueManyKernel(_EnqueueKernel):
    """Enqueues the slices of the components along dimension 0."""

    many = True


class _DequeueKernel:
    """QueueDequeue(V2/ManyV2/UpToV2): completes with the components once they are available."""

    batched = True
    allow_smaller = False

    def __init__(self, ctx):
        self.dtypes = list(ctx.attrs["component_types"])
        self.single_output = len(self.dtypes) == 1

    def compute_async(self, ctx, step, inputs, done):
        queue = resource_of(inputs[0])
        _check_types(queue, self.dtypes)
        n = None
        if self.batched:
            n = int(inputs[1])
            if n < 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{ctx.op_type[5:-2]} requested {n} < 0 elements")
            if not queue.shapes and queue.kind != "PaddingFIFOQueue":
                raise errors.InvalidArgumentError(
                    None, None, f"{queue.kind}'s DequeueMany and DequeueUpTo require the "
                    "components to have specified shapes.")
        if self.single_output:
            def finish(outputs=None, error=None):
                done(outputs[0] if error is None else None, error)
        else:
            finish = done
        queue.dequeue(n, step, finish, self.allow_smaller)


@kernel("QueueDequeueV2")
class QueueDequeueKernel(_DequeueKernel):
    """Dequeues one element."""

    batched = False


@kernel("QueueDequeueManyV2")
class QueueDequeueManyKernel(_DequeueKernel):
    """Dequeues exactly n elements, stacked."""


@kernel("QueueDequeueUpToV2")
class QueueDequeueUpToKernel(_DequeueKernel):
    """Dequeues n elements, or what is left (at least one) once the queue is closed."""

    allow_smaller = True


@kernel("QueueCloseV2")
def _queue_close(ctx, handle):
    resource_of(handle).close(ctx.attrs.get("cancel_pending_enqueues", False))


@kernel("QueueSizeV2")
def _queue_size(ctx, handle):
    return np.int32(resource_of(handle).size())


@kernel("QueueIsClosedV2")
def _queue_is_closed(ctx, handle):
    return np.bool_(resource_of(handle).is_closed())
