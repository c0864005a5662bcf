"""Queues: FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue and their ops.

The ops are TensorFlow's resource-handle forms (FIFOQueueV2, QueueEnqueueV2, ...), so graphs
import by name. A queue op outputs a `resource` handle; its state lives in the device's
ResourceMgr (kernels/queue_state.py), one queue per session unless `shared_name` shares it.
Enqueue and dequeue run asynchronously: a blocked one holds no thread. The Python classes keep
TF1's constructor signatures, default op names and static shapes.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import random_seed, tensor_util
from tensorweave.framework import scopes as _scopes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.framework.shape_fns import scalar, unknown
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue",
           "PriorityQueue"]

_QUEUE_ATTRS = [Attr("shapes", "list(shape)", []), Attr("capacity", "int", -1),
                Attr("container", "string", ""), Attr("shared_name", "string", "")]
_HANDLE = ["handle: resource"]


_COMPONENT_TYPES = Attr("component_types", "list(type)", minimum=1)


def _define_queue(op_type: str, extra=(), types=_COMPONENT_TYPES):
    """A queue-creating op; `component_types: list(type) >= 1` unless `types` says else."""
    return define_op(op_type, outputs=_HANDLE, attrs=[types] + _QUEUE_ATTRS + list(extra),
                     shape_fn=scalar, is_stateful=True, not_differentiable=True)


FIFOQueueV2 = _define_queue("FIFOQueueV2")
PaddingFIFOQueueV2 = _define_queue("PaddingFIFOQueueV2")
RandomShuffleQueueV2 = _define_queue("RandomShuffleQueueV2", [
    Attr("min_after_dequeue", "int", 0), Attr("seed", "int", 0), Attr("seed2", "int", 0)])
# The priority is a component of its own: the others may be none.
PriorityQueueV2 = _define_queue("PriorityQueueV2", types=Attr(
    "component_types", "list(type)", [], minimum=0))

_TIMEOUT = Attr("timeout_ms", "int", -1)
QueueEnqueueV2, QueueEnqueueManyV2 = (
    define_op(op_type, inputs=_HANDLE + [Arg("components", type_list_attr="Tcomponents")],
              attrs=[_TIMEOUT], is_stateful=True, not_differentiable=True)
    for op_type in ("QueueEnqueueV2", "QueueEnqueueManyV2"))
QueueDequeueV2 = define_op(
    "QueueDequeueV2", inputs=_HANDLE, outputs=[Arg("components", type_list_attr="component_types")],
    attrs=[_TIMEOUT], shape_fn=unknown, is_stateful=True, not_differentiable=True)
QueueDequeueManyV2, QueueDequeueUpToV2 = (
    define_op(op_type, inputs=_HANDLE + ["n: int32"],
              outputs=[Arg("components", type_list_attr="component_types")], attrs=[_TIMEOUT],
              shape_fn=unknown, is_stateful=True, not_differentiable=True)
    for op_type in ("QueueDequeueManyV2", "QueueDequeueUpToV2"))
QueueCloseV2 = define_op("QueueCloseV2", inputs=_HANDLE,
                         attrs=[Attr("cancel_pending_enqueues", "bool", False)],
                         is_stateful=True, not_differentiable=True)
QueueSizeV2 = define_op("QueueSizeV2", inputs=_HANDLE, outputs=["size: int32"],
                        shape_fn=scalar, is_stateful=True, not_differentiable=True)
QueueIsClosedV2 = define_op("QueueIsClosedV2", inputs=_HANDLE, outputs=["is_closed: bool"],
                            shape_fn=scalar, is_stateful=True, not_differentiable=True)


def _as_type_list(dtypes) -> list:
    if isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(d) for d in dtypes]
    return [_dtypes.as_dtype(dtypes)]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False) -> list:
    """TF1's rules: no shapes → []; one shape per dtype; fully defined unless padding, and
    then a list of shapes of known rank."""
    if unknown_dim_allowed and (not isinstance(shapes, (list, tuple)) or not shapes or any(
            s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return []
    # A flat list of dims (even an empty one: a scalar) is the one component's shape.
    if isinstance(shapes, _ts.TensorShape) or (
            isinstance(shapes, (list, tuple)) and
            all(s is None or isinstance(s, int) for s in shapes)):
        shapes = [shapes]
    shapes = [_ts.as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if any(s.ndims is None for s in shapes):
        raise ValueError("All shapes must have a defined rank.")
    return shapes


def _check_lengths(shapes, dtypes) -> None:
    """TF's QueueBase check, once the queue op exists."""
    if shapes and len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes, received "
                         f"len(shapes)={len(shapes)}, len(dtypes)={len(dtypes)}")


def _as_name_list(names, dtypes):
    if names is None:
        return None
    names = list(names) if isinstance(names, (list, tuple)) else [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return names


class QueueBase:
    """Base class of queues: a resource handle plus the component dtypes, shapes and names.

    Enqueue and dequeue ops wait (asynchronously) while the queue is full or empty; dequeuing
    from a closed, empty queue raises OutOfRangeError; enqueuing to a closed one CancelledError.
    """

    def __init__(self, dtypes, shapes, names, queue_ref):
        _check_lengths(shapes, dtypes)
        self._dtypes = list(dtypes)
        self._shapes = list(shapes) if shapes else [_ts.unknown_shape()] * len(dtypes)
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue whose ops act on `queues[index]` (all must have equal dtypes and names)."""
        if not queues or not isinstance(queues, (list, tuple)):
            raise TypeError("A list of queues expected")
        first = queues[0]
        for q in queues[1:]:
            if q.dtypes != first.dtypes:
                raise TypeError(f"Queue at index {queues.index(q)} has different types")
            if q.names != first.names:
                raise TypeError(f"Queue at index {queues.index(q)} has different names")
        shapes = [_common_shape([q.shapes[k] for q in queues]) for k in range(len(first.dtypes))]
        from tensorweave.ops.array_index_ops import gather
        from tensorweave.ops.array_join_ops import stack
        selected = gather(stack([q.queue_ref for q in queues]), index)
        return QueueBase(first.dtypes, shapes, first.names, selected)

    @property
    def queue_ref(self):
        """The underlying queue reference (a resource handle Tensor)."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the underlying queue."""
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        """The list of dtypes for each component of a queue element."""
        return self._dtypes

    @property
    def shapes(self) -> list:
        """The list of shapes for each component of a queue element."""
        return self._shapes

    @property
    def names(self):
        """The list of names for each component of a queue element, or None."""
        return self._names

    def _check_enqueue_dtypes(self, vals) -> list:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  "
                                 f"Dictionary: {sorted(vals.keys())}, Queue: "
                                 f"{sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        return [convert_to_tensor(v, dtype=dt, name=f"component_{i}")
                for i, (v, dt) in enumerate(zip(vals, self._dtypes))]

    def enqueue(self, vals, name=None):
        """Enqueues one element to this queue; the op waits while the queue is full.

        Args:
          vals: a tensor, a list or tuple of tensors, or a dict (for a queue with names).
          name: a name for the operation (optional).

        Returns:
          The operation that enqueues the element.
        """
        with _scopes.name_scope(name, f"{self._name}_enqueue") as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.assert_is_compatible_with(shape)
            return apply_op(QueueEnqueueV2, [self._queue_ref, vals], name=scope)

    def enqueue_many(self, vals, name=None):
        """Enqueues the slices of `vals` along dimension 0 as separate elements.

        Args:
          vals: a tensor, a list or tuple of tensors, or a dict; all of equal size in dim 0.
          name: a name for the operation (optional).

        Returns:
          The operation that enqueues the batch.
        """
        with _scopes.name_scope(name, f"{self._name}_EnqueueMany") as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch_dim = _ts.Dimension(None)
            for val, shape in zip(vals, self._shapes):
                val_shape = val.shape.with_rank_at_least(1)
                batch_dim = batch_dim.merge_with(val_shape[0])
                val_shape[1:].assert_is_compatible_with(shape)
            return apply_op(QueueEnqueueManyV2, [self._queue_ref, vals], name=scope)

    def _dequeue_return_value(self, tensors):
        if self._names:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    def _dequeue_op(self, op_def, inputs, name, batch_dim):
        out = apply_op(op_def, [self._queue_ref] + inputs,
                       {"component_types": self._dtypes}, name=name)
        tensors = out if isinstance(out, list) else [out]
        for t, shape in zip(tensors, self._shapes):
            t.set_shape(shape if batch_dim is False else
                        _ts.TensorShape([batch_dim]).concatenate(shape))
        return self._dequeue_return_value(tensors)

    def dequeue(self, name=None):
        """Dequeues one element; waits while the queue is empty.

        Returns:
          The tensor (one component), list of tensors, or dict (a queue with names).

        Raises (at run time):
          OutOfRangeError: the queue is closed and empty.
        """
        return self._dequeue_op(QueueDequeueV2, [], name or f"{self._name}_Dequeue", False)

    def dequeue_many(self, n, name=None):
        """Dequeues and concatenates `n` elements along a new dimension 0.

        Raises (at run time):
          OutOfRangeError: the queue is closed with fewer than `n` elements left.
        """
        n_value = tensor_util.constant_value(convert_to_tensor(n, _dtypes.int32)) \
            if not isinstance(n, int) else n
        dim = int(n_value) if n_value is not None else None
        return self._dequeue_op(QueueDequeueManyV2, [n], name or f"{self._name}_DequeueMany",
                                dim)

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but returns fewer (at least one) elements once the queue is closed.

        The batch dimension of the outputs is unknown.
        """
        return self._dequeue_op(QueueDequeueUpToV2, [n], name or f"{self._name}_DequeueUpTo",
                                None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: later enqueues fail; dequeues drain it, then fail.

        Args:
          cancel_pending_enqueues: also fail enqueues that are waiting for room.
          name: a name for the operation (optional).
        """
        return apply_op(QueueCloseV2, [self._queue_ref],
                        {"cancel_pending_enqueues": cancel_pending_enqueues},
                        name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        """A scalar bool tensor: whether the queue is closed."""
        return apply_op(QueueIsClosedV2, [self._queue_ref], name=name or f"{self._name}_Is_Closed")

    def size(self, name=None):
        """A scalar int32 tensor: the number of elements in the queue."""
        return apply_op(QueueSizeV2, [self._queue_ref], name=name or f"{self._name}_Size")


def _common_shape(shapes) -> _ts.TensorShape:
    first = shapes[0]
    return first if all(s == first for s in shapes) else _ts.unknown_shape()


def _queue_ref(op_def, dtypes, shapes, capacity, shared_name, name, extra=None):
    attrs = {"component_types": dtypes, "shapes": shapes, "capacity": capacity,
             "shared_name": shared_name or ""}
    attrs.update(extra or {})
    return apply_op(op_def, [], attrs, name=name)


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        """Creates a queue of at most `capacity` elements of `dtypes` components.

        Args:
          capacity: upper bound on the number of elements.
          dtypes: the DType of each component (a list, or one DType).
          shapes: optional fully defined shape per component (needed for dequeue_many).
          names: optional name per component; enqueue/dequeue then use dicts.
          shared_name: share the queue under this name among sessions of one device.
          name: name of the queue op.
        """
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        # Pinned to a CPU of whatever device the scope names, as TensorFlow 2.21 pins it
        # (its node_def carries "/device:CPU:*"): the queue's storage is host memory.
        with _scopes.device("CPU"):
            ref = _queue_ref(FIFOQueueV2, dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose dequeue_many pads unknown dimensions to the batch's largest."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        """Like FIFOQueue; `shapes` is required and may hold None dims (padded with 0 / b"")."""
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError("Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {len(shapes)} shapes.")
        ref = _queue_ref(PaddingFIFOQueueV2, dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in a random order."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        """Creates a shuffling queue.

        Args:
          capacity: upper bound on the number of elements.
          min_after_dequeue: dequeues wait until more than this many elements remain
            (ignored once the queue is closed), so elements mix.
          dtypes, shapes, names, shared_name, name: as for FIFOQueue.
          seed: op-level seed (combined with the graph seed, see tf.set_random_seed).
        """
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seeds = random_seed.seed_attrs(seed)
        seeds["min_after_dequeue"] = min_after_dequeue
        ref = _queue_ref(RandomShuffleQueueV2, dtypes, shapes, capacity, shared_name, name,
                         seeds)
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element of lowest priority first.

    Every element's first component is its scalar int64 priority (not part of `types`).
    """

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        """Creates a priority queue whose elements are (priority, *components of `types`)."""
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        ref = _queue_ref(PriorityQueueV2, types, shapes, capacity, shared_name, name)
        dtypes = [_dtypes.int64] + types
        shapes = [_ts.TensorShape([])] + shapes if shapes else []
        super().__init__(dtypes, shapes, _as_name_list(names, dtypes), ref)
