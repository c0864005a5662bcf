"""tf.nn.raw_rnn: an RNNCell driven by a user `loop_fn` that chooses each step's input, decides
when each batch row is finished, and what to emit (TF1's most general RNN loop).

`loop_fn(time, cell_output, cell_state, loop_state)` returns (finished, next_input,
next_cell_state, emit_output, next_loop_state); it is called once before the loop (with
cell_output, cell_state and loop_state None: it gives the initial input and state) and after
every cell step. The loop runs while some row is unfinished; finished rows emit zeros and keep
their state (scalars excepted, as TF does). Everything the loop carries is flattened into one
list of loop variables, then packed back for the cell and loop_fn.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import rnn_util
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_loop import while_loop

__all__ = ["raw_rnn"]


def _emit_sizes(emit_structure, cell, flat_state):
    """(structure, per-emit sizes [static shape or shape tensor], dtypes)."""
    from tensorweave.ops.array_ops import shape
    if emit_structure is not None:
        flat = nest.flatten(emit_structure)
        sizes = [e.shape if e.shape.is_fully_defined() else shape(e) for e in flat]
        return emit_structure, sizes, [e.dtype for e in flat]
    sizes = nest.flatten(cell.output_size)
    return cell.output_size, sizes, [flat_state[0].dtype] * len(sizes)


def _static(size) -> _ts.TensorShape:
    """A static emit size as a TensorShape; a size only known as a tensor is unknown."""
    if isinstance(size, (_ts.TensorShape, int, list, tuple)):
        return _ts.as_shape(size)
    return _ts.TensorShape(None)


def _zeros(batch_size, size, dtype):
    """zeros([batch_size] + size) for a static size or a shape tensor."""
    from tensorweave.ops.array_creation_ops import zeros
    from tensorweave.ops.array_join_ops import concat
    static = _static(size)
    if static.is_fully_defined():
        if isinstance(batch_size, int):
            return zeros([batch_size] + static.as_list(), dtype)
        size = static.as_list()
    return zeros(concat([[batch_size], size], 0), dtype)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Creates an RNN specified by RNNCell `cell` and loop function `loop_fn` (TF1).

    Args:
      cell: an RNNCell.
      loop_fn: a callable (time, cell_output, cell_state, loop_state) -> (finished [batch]
        bool, next_input, next_cell_state, emit_output, next_loop_state); see the module
        docstring. At time 0 its emit_output (or None: the cell's output_size) fixes the
        structure, shapes and dtypes of what is emitted.
      parallel_iterations: iterations of the loop that may run at once (default 32).
      swap_memory: accepted (there is no device memory to swap to).
      scope: variable scope (default "rnn").

    Returns:
      (emit_ta, final_state, final_loop_state): TensorArrays (in emit_output's structure) of
      the emitted values per step, the final cell state, and the final loop state (None when
      loop_fn's initial loop state was None).

    Raises:
      TypeError: `cell` is not an RNNCell or `loop_fn` is not callable.
      ValueError: the inputs' batch sizes differ, or loop_fn's results do not keep the
        structure of the state, input and emit.
    """
    from tensorweave.ops.array_index_ops import where
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import logical_not, logical_or
    from tensorweave.ops.reduction_ops import reduce_all
    rnn_util.assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError(f"Argument `loop_fn` must be a callable. Received: {loop_fn}.")
    with vs.variable_scope(scope or "rnn"):
        time = constant(0, dtype=_dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None)
        flat_input = [convert_to_tensor(t) for t in nest.flatten(next_input)]
        loop_state = init_loop_state if init_loop_state is not None else \
            constant(0, dtype=_dtypes.int32)
        static_batch = _ts.dimension_at_index(flat_input[0].shape, 0)
        for t in flat_input:
            static_batch.assert_is_compatible_with(_ts.dimension_at_index(t.shape, 0))
        batch = _ts.dimension_value(static_batch)
        batch_size = batch if batch is not None else shape(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        flat_state = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        emit_structure, sizes, dtypes = _emit_sizes(emit_structure, cell, flat_state)
        tas = [TensorArray(dtype, size=0, dynamic_size=True, tensor_array_name=f"rnn_output_{i}",
                           element_shape=_ts.TensorShape([batch]).concatenate(_static(size)))
               for i, (dtype, size) in enumerate(zip(dtypes, sizes))]
        zero_emit = [_zeros(batch_size, size, dtype) for size, dtype in zip(sizes, dtypes)]
        flat_loop = nest.flatten(loop_state)
        counts = [len(flat_input), len(tas), len(flat_state), len(flat_loop)]

        def split(parts):
            out, start = [], 0
            for n in counts:
                out.append(list(parts[start:start + n]))
                start += n
            return out

        def keep_finished(finished_now, current, candidate):
            """Rows already finished keep `current` (scalars take the candidate)."""
            return [cand if cur.shape.ndims == 0 else where(finished_now, cur, cand)
                    for cur, cand in zip(current, candidate)]

        def body(time, finished_now, *parts):
            inputs, emit_tas, state, loops = split(parts)
            cell_input = nest.pack_sequence_as(next_input, inputs)
            cell_state = nest.pack_sequence_as(initial_state, state)
            output, new_cell_state = cell(cell_input, cell_state)
            nest.assert_same_structure(cell_state, new_cell_state)
            nest.assert_same_structure(cell.output_size, output)
            next_time = time + 1
            done, new_input, new_state, emit, new_loop = loop_fn(
                next_time, output, new_cell_state, nest.pack_sequence_as(loop_state, loops))
            nest.assert_same_structure(cell_state, new_state)
            nest.assert_same_structure(cell_input, new_input)
            nest.assert_same_structure(emit_structure, emit)
            loops = loops if new_loop is None else nest.flatten(new_loop)
            emit = keep_finished(finished_now, zero_emit, nest.flatten(emit))
            new_state = keep_finished(finished_now, state, nest.flatten(new_state))
            emit_tas = [ta.write(time, e) for ta, e in zip(emit_tas, emit)]
            return (next_time, logical_or(finished_now, done), *nest.flatten(new_input),
                    *emit_tas, *new_state, *loops)

        result = while_loop(lambda time, finished_now, *_: logical_not(reduce_all(finished_now)),
                            body, (time, finished, *flat_input, *tas, *flat_state, *flat_loop),
                            parallel_iterations=parallel_iterations or 32,
                            swap_memory=swap_memory)
        _, final_tas, final_state, final_loop = split(result[2:])
        emit_ta = nest.pack_sequence_as(emit_structure, final_tas)
        final_state = nest.pack_sequence_as(initial_state, final_state)
        final_loop_state = None if init_loop_state is None else \
            nest.pack_sequence_as(loop_state, final_loop)
        return emit_ta, final_state, final_loop_state
