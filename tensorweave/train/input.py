"""TF1's queue-based input pipeline: input producers, limit_epochs, match_filenames_once and
the batching functions (with their maybe_* forms, which enqueue only when `keep_input`).

Producers put a (shuffled, epoch-limited) tensor's rows into a FIFOQueue fed by a QueueRunner;
batching functions put single examples (or batches, `enqueue_many`) into a FIFO, padding or
random-shuffle queue fed by `num_threads` runner threads and dequeue batches from it. Op and
scope names follow TensorFlow's, so the graphs look like TF's to tools and checkpoints.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import scopes as _scopes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import data_flow_ops, summary_ops
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import gather
from tensorweave.ops.array_ops import identity, shape, size
from tensorweave.ops.cond import cond
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_ops import no_op, with_dependencies
from tensorweave.ops.file_io_ops import matching_files
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import maximum
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.partition_ops import dynamic_partition
from tensorweave.ops.random_ops import random_shuffle
from tensorweave.ops.sparse_serialize_ops import (
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from tensorweave.ops.variables import Variable
from tensorweave.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["limit_epochs", "match_filenames_once", "input_producer", "string_input_producer",
           "range_input_producer", "slice_input_producer", "batch", "batch_join",
           "shuffle_batch", "shuffle_batch_join", "maybe_batch", "maybe_batch_join",
           "maybe_shuffle_batch", "maybe_shuffle_batch_join"]


def limit_epochs(tensor, num_epochs=None, name=None):
    """Returns `tensor` `num_epochs` times, then raises OutOfRangeError.

    Counts in a local variable named "epochs" (initialize it with
    `tf.local_variables_initializer()`).

    Args:
      tensor: any Tensor.
      num_epochs: a positive integer, or None for no limit.
      name: a name for the operations (optional).

    Returns:
      `tensor`, or an Identity of it that counts its evaluations.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with _scopes.name_scope(name, "limit_epochs") as scope:
        zero64 = constant(0, dtype=_dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with _scopes.control_dependencies([counter]):
            return identity(tensor, name=scope)


def match_filenames_once(pattern, name=None):
    """Saves the files matching `pattern` once, in a local variable, so they stay fixed.

    Args:
      pattern: a file pattern (glob), or a 1-D tensor of patterns.
      name: a name for the variable (default "matching_filenames").

    Returns:
      A local, non-trainable Variable of unknown shape, initialized (by
      `tf.local_variables_initializer()`) with the matching file names.
    """
    with _scopes.name_scope(name, "matching_filenames") as scope:
        return Variable(matching_files(pattern), name=scope, trainable=False,
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])


def _fraction_full_summary(queue, capacity, tag):
    summary_ops.scalar(tag, cast(queue.size(), _dtypes.float32) * (1.0 / capacity))


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """Outputs the rows of `input_tensor` to a queue for an input pipeline.

    Args:
      input_tensor: a tensor whose rows (dimension 0) are the elements.
      element_shape: the shape of a row, if `input_tensor`'s is not fully known.
      num_epochs: produce each row this many times, then close the queue (None: forever).
      shuffle: shuffle the rows within each epoch.
      seed, capacity, shared_name: for the shuffle and the queue.
      summary_name: if set, a scalar summary of how full the queue is.
      name: a name for the queue and scope.
      cancel_op: the QueueRunner's cancel op (optional).

    Returns:
      The FIFOQueue, with a QueueRunner in the QUEUE_RUNNERS collection.
    """
    with _scopes.name_scope(name, "input_producer"):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            _ts.as_shape(element_shape) if element_shape is not None else _ts.unknown_shape())
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity, [input_tensor.dtype.base_dtype],
                                        shapes=[element_shape], shared_name=shared_name,
                                        name=name)   # None: "FIFOQueueV2", as TF names it
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full_summary(queue, capacity, summary_name)
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """Outputs strings (e.g. filenames) to a queue for an input pipeline.

    Args:
      string_tensor: a non-empty 1-D string tensor (or list of strings).
      num_epochs, shuffle, seed, capacity, shared_name, name, cancel_op: as input_producer.

    Returns:
      A FIFOQueue of scalar strings, fed by a QueueRunner.
    """
    message = "string_input_producer requires a non-null input tensor"
    # TF's test is `not string_tensor` for anything but a Tensor: a (ref) Variable such as
    # match_filenames_once's passes, and so does its numpy's truth-value ValueError.
    if not isinstance(string_tensor, (Tensor, Variable)) and not string_tensor:
        raise ValueError(message)
    with _scopes.name_scope(name, "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        with _scopes.control_dependencies([Assert(size(string_tensor) > 0, [message])]):
            string_tensor = identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """Outputs the integers 0..limit-1 to a queue for an input pipeline.

    Returns:
      A FIFOQueue of scalar int32s, fed by a QueueRunner.
    """
    with _scopes.name_scope(name, "input_producer") as scope:
        return input_producer(_range(limit), [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """Produces one slice (row) of each tensor in `tensor_list`, in step.

    Returns:
      A list of tensors: row i of each input, for the i dequeued from an index queue.
    """
    with _scopes.name_scope(name, "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]


# --- batching ---------------------------------------------------------------------------------
def _as_tensor_lists(tensors_list) -> list:
    """Each example's tensors as a list: a dict's values by key, else what iterating gives
    (TF iterates before opening its name scope: a single Tensor raises TypeError, a NumPy
    array gives its rows)."""
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0])
        if any(set(tensors) != keys for tensors in tensors_list[1:]):
            raise ValueError("All dictionaries in tensors_list must have the same keys")
        return [[tensors[k] for k in sorted(tensors, key=str)] for tensors in tensors_list]
    return [list(tensors) for tensors in tensors_list]


def _validate(tensor_list) -> list:
    """Tensors and SparseTensors (TF's convert_n_to_tensor_or_indexed_slices)."""
    tensor_list = [t if isinstance(t, SparseTensor) else convert_to_tensor(t)
                   for t in tensor_list]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _restore(original, dequeued):
    """Dequeued tensors in the caller's structure (a one-tensor list gives a Tensor, like TF)."""
    flat = dequeued if isinstance(dequeued, list) else [dequeued]
    if isinstance(original, dict):
        return {k: flat[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


# SparseTensors travel through the queue serialized: each example as the [3] strings of
# serialize_sparse (rows of serialize_many_sparse with enqueue_many), a batch of them
# deserialize_many_sparse back into one SparseTensor. TF stores them in a SparseTensorsMap
# (AddSparseToTensorsMap / TakeManySparseFromTensorsMap) and enqueues int64 handles instead;
# the batches are the same.
def _store_sparse(tensor_list, enqueue_many, length=None):
    """The tensors to enqueue (the first `length`, as TF's zip) and, per tensor, None or the
    rank of one example of a SparseTensor."""
    stored, ranks = [], []
    for t in tensor_list[:length]:
        if not isinstance(t, SparseTensor):
            stored.append(t)
            ranks.append(None)
            continue
        rank = _ts.Dimension(t.dense_shape.shape.with_rank(1)[0])
        ranks.append(rank - 1 if enqueue_many else rank)
        stored.append(serialize_many_sparse(t) if enqueue_many else serialize_sparse(t))
    return stored, ranks


def _same_sparsity(ranks, other) -> bool:
    """TF's _SparseMetaData equality: sparse where the other is, with compatible ranks."""
    return len(ranks) == len(other) and all(
        (a is None) == (b is None) and (a is None or a.is_compatible_with(b))
        for a, b in zip(ranks, other))


def _store_sparse_join(tensor_lists, enqueue_many):
    """_store_sparse for each list: TF takes as many tensors from each as the first has,
    which must be sparse in the same places."""
    stored_lists, ranks = [], None
    for tensor_list in tensor_lists:
        stored, other = _store_sparse(tensor_list, enqueue_many,
                                      None if ranks is None else len(ranks))
        if ranks is not None and not _same_sparsity(ranks, other):
            raise ValueError(f"Inconsistent SparseTensors list: {tensor_lists[0]} vs. "
                             f"{tensor_list}")
        ranks = other if ranks is None else [
            None if a is None else a.merge_with(b) for a, b in zip(ranks, other)]
        stored_lists.append(stored)
    return stored_lists, ranks


def _restore_sparse(dequeued, ranks, dtypes):
    """The dequeued batch with SparseTensors rebuilt; with several outputs, each passes
    through a control_dependency on all of them (TF's names and order)."""
    single = not isinstance(dequeued, list)
    tensors = [t if rank is None else
               deserialize_many_sparse(t, dtype, rank=(rank + 1).value)
               for t, rank, dtype in zip([dequeued] if single else dequeued, ranks, dtypes)]
    if single or all(rank is None for rank in ranks):
        return tensors[0] if single else tensors
    values = [t.values if isinstance(t, SparseTensor) else t for t in tensors]
    gated = []
    for t in tensors:
        if isinstance(t, SparseTensor):
            gated.append(SparseTensor(*(with_dependencies(values, c) for c in
                                        (t.indices, t.values, t.dense_shape))))
        else:
            gated.append(with_dependencies(values, t))
    return gated


def _common_dtypes(tensor_lists) -> list:
    """The component dtypes, which every list must share (TensorFlow's check and message)."""
    dtypes = [t.dtype.base_dtype for t in tensor_lists[0]]
    for tensor_list in tensor_lists[1:]:
        others = [t.dtype.base_dtype for t in tensor_list]
        if others != dtypes:
            raise TypeError("Expected types to be consistent: "
                            f"{', '.join(d.name for d in dtypes)} vs. "
                            f"{', '.join(d.name for d in others)}.")
    return dtypes


def _shapes(tensor_lists, shapes, enqueue_many):
    if shapes is not None:
        return shapes
    merged = []
    for i in range(len(tensor_lists[0])):
        shape_i = None
        for tensor_list in tensor_lists:
            s = tensor_list[i].shape
            if s.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tensor_list[i]}")
            s = s.with_rank_at_least(1)[1:] if enqueue_many else s
            shape_i = s if shape_i is None else shape_i.merge_with(s)
        merged.append(shape_i)
    return merged


def _validate_keep_input(keep_input, enqueue_many):
    """`keep_input` as a bool tensor: a scalar, or a vector (one per example) with
    `enqueue_many`, with TensorFlow's checks."""
    keep_input = convert_to_tensor(keep_input)
    ndims = keep_input.shape.ndims
    if ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _enqueue_ops(enqueue, tensor_lists, keep_input) -> list:
    """One enqueue op per tensor list, filtered by `keep_input` as TensorFlow does: a vector
    selects examples with a dynamic_partition, a scalar guards the enqueue with a cond (or
    picks the enqueue or a no_op when its value is known when the graph is built)."""
    if keep_input.shape.ndims == 1:
        select = cast(keep_input, _dtypes.int32)
        return [enqueue([dynamic_partition(t, select, 2)[1] for t in tensor_list])
                for tensor_list in tensor_lists]
    known = constant_value(keep_input)
    if known is not None:
        return [enqueue(tensor_list) if known else no_op() for tensor_list in tensor_lists]
    return [cond(keep_input, lambda tensor_list=tensor_list: enqueue(tensor_list), no_op)
            for tensor_list in tensor_lists]


def _batch_impl(tensors_list, batch_size, make_queue, threads_per_list, enqueue_many, shapes,
                allow_smaller_final_batch, summary_tag, scope_default, name, check=None,
                keep_input=True):
    """The shared body of the batching functions (batch, ..., maybe_shuffle_batch_join).

    In TensorFlow's order: the lists iterated; inside the name scope `check()`
    (shuffle_batch's capacity), the tensors, `keep_input`, SparseTensors serialized, the
    dtypes agreeing across lists, then the shapes, before any queue op.
    """
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    tensor_lists = _as_tensor_lists(tensors_list)
    with _scopes.name_scope(name, scope_default) as scope:
        if check is not None:
            check()
        tensor_lists = [_validate(tensor_list) for tensor_list in tensor_lists]
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        value_dtypes = [t.dtype.base_dtype for t in tensor_lists[0]]
        tensor_lists, sparse_ranks = _store_sparse_join(tensor_lists, enqueue_many)
        dtypes = _common_dtypes(tensor_lists)
        queue = make_queue(dtypes, _shapes(tensor_lists, shapes, enqueue_many))
        enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
        ops = _enqueue_ops(enqueue, tensor_lists, keep_input)
        add_queue_runner(QueueRunner(queue, ops * threads_per_list))
        summary_tag(queue)
        if allow_smaller_final_batch:
            dequeued = queue.dequeue_up_to(batch_size, name=scope)
        else:
            dequeued = queue.dequeue_many(batch_size, name=scope)
        dequeued = _restore_sparse(dequeued, sparse_ranks, value_dtypes)
        return _restore(tensors_list[0], dequeued)


def _fifo_batch(tensors_list, batch_size, num_threads, capacity, enqueue_many, shapes,
                dynamic_pad, allow_smaller_final_batch, shared_name, name, default,
                keep_input=True):
    queue_class = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
    return _batch_impl(
        tensors_list, batch_size,
        lambda dtypes, shapes: queue_class(capacity, dtypes, shapes, shared_name=shared_name),
        num_threads, enqueue_many, shapes, allow_smaller_final_batch,
        lambda q: _fraction_full_summary(q, capacity, f"fraction_of_{capacity}_full"),
        default, name, keep_input=keep_input)


def _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, num_threads, seed,
                   enqueue_many, shapes, allow_smaller_final_batch, shared_name, name, default,
                   keep_input=True):
    def summary(queue):
        full = (cast(maximum(0, queue.size() - min_after_dequeue), _dtypes.float32) *
                (1.0 / (capacity - min_after_dequeue)))
        summary_ops.scalar(f"fraction_over_{min_after_dequeue}_of_"
                           f"{capacity - min_after_dequeue}_full", full)

    def check_capacity():
        # shuffle_batch only: TensorFlow's shuffle_batch_join does not check (and fails
        # dividing by zero when they are equal).
        if default == "shuffle_batch" and capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                             f"{min_after_dequeue}.")
    return _batch_impl(
        tensors_list, batch_size,
        lambda dtypes, shapes: data_flow_ops.RandomShuffleQueue(
            capacity, min_after_dequeue, dtypes, shapes, seed=seed, shared_name=shared_name),
        num_threads, enqueue_many, shapes, allow_smaller_final_batch, summary, default, name,
        check_capacity, keep_input)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Creates batches of tensors in `tensors` through a queue filled by `num_threads` threads.

    Args:
      tensors: a list, tuple or dict of tensors (one example, or a batch if `enqueue_many`).
      batch_size: the batch size.
      num_threads: number of enqueuing threads.
      capacity: maximum number of elements in the queue.
      enqueue_many: whether each tensor in `tensors` is a batch of examples.
      shapes: the shape of each example (default: inferred).
      dynamic_pad: pad None dimensions to the batch maximum (PaddingFIFOQueue).
      allow_smaller_final_batch: the last batch may be smaller; the batch dimension is then
        unknown.
      shared_name, name: for the queue and the scope.

    Returns:
      Tensors in the structure of `tensors`, with a leading batch dimension.
    """
    return _fifo_batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Like `batch`, with one enqueuing thread per element of `tensors_list`."""
    return _fifo_batch(tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Creates batches by randomly shuffling tensors through a RandomShuffleQueue.

    Args:
      tensors, batch_size, capacity, num_threads, enqueue_many, shapes,
        allow_smaller_final_batch, shared_name, name: as for `batch`.
      min_after_dequeue: elements kept in the queue after a dequeue, for mixing.
      seed: seed for the shuffling.

    Returns:
      Tensors in the structure of `tensors`, with a leading batch dimension.
    """
    return _shuffle_batch([tensors], batch_size, capacity, min_after_dequeue, num_threads,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Like `shuffle_batch`, with one enqueuing thread per element of `tensors_list`."""
    return _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, 1, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                          "shuffle_batch_join")


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    """Like `batch`, enqueuing only the examples for which `keep_input` is True.

    Args:
      tensors, batch_size, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
        allow_smaller_final_batch, shared_name, name: as for `batch`.
      keep_input: a bool scalar (keep this example, or this whole batch with
        `enqueue_many`), or with `enqueue_many` a bool vector (one per example).

    Returns:
      Tensors in the structure of `tensors`, with a leading batch dimension.

    Raises:
      ValueError: if `keep_input` has unknown rank, rank above 1, or is a vector without
        `enqueue_many`.
    """
    return _fifo_batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch",
                       keep_input)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """Like `batch_join`, enqueuing only what `keep_input` keeps (see `maybe_batch`)."""
    return _fifo_batch(tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join",
                       keep_input)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like `shuffle_batch`, enqueuing only what `keep_input` keeps (see `maybe_batch`)."""
    return _shuffle_batch([tensors], batch_size, capacity, min_after_dequeue, num_threads,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, "shuffle_batch", keep_input)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                             seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like `shuffle_batch_join`, enqueuing only what `keep_input` keeps (see
    `maybe_batch`)."""
    return _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, 1, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                          "shuffle_batch_join", keep_input)
