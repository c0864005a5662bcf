"""tf.nn.dynamic_rnn and tf.nn.bidirectional_dynamic_rnn: an RNNCell run by a while_loop.

The inputs (time-major inside) are unstacked into TensorArrays; each iteration reads one time
step, calls the cell, and writes its output; with `sequence_length`, rows past their end get a
zero output and keep their state (rnn_util.mask_step). The cell's variables are created on its
first call, outside the loop, under the "rnn" variable scope, so names match TensorFlow's
(`rnn/lstm_cell/kernel`).
"""
from __future__ import annotations

from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import rnn_util
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_loop import while_loop

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn"]


def _swap_batch_time(t):
    """[batch, time, ...] <-> [time, batch, ...]."""
    from tensorweave.ops.array_ops import transpose
    rank = t.shape.ndims
    if rank is not None and rank < 2:
        raise ValueError(f"Expected input tensor {t.name} to have rank at least 2")
    perm = [1, 0] + list(range(2, rank)) if rank is not None else None
    out = transpose(t, perm)
    if rank is not None:
        dims = t.shape.as_list()
        out.set_shape([dims[1], dims[0]] + dims[2:])
    return out


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Creates a recurrent neural network specified by RNNCell `cell` (TF1's tf.nn.dynamic_rnn).

    Args:
      cell: an RNNCell.
      inputs: [batch, time, ...] (or [time, batch, ...] with time_major), or a nest of them.
      sequence_length: optional int32/int64 vector [batch]: past a row's length its output is
        zero and its state is copied through.
      initial_state: the initial state (default: the cell's zero state, which needs `dtype`).
      dtype: the state's dtype when there is no initial_state.
      parallel_iterations: iterations of the loop that may run at once (default 32).
      swap_memory: accepted (there is no device memory to swap to).
      time_major: the layout of inputs and outputs.
      scope: variable scope (default "rnn").

    Returns:
      (outputs, state): outputs shaped like the inputs' [batch, time] (or [time, batch]) plus
      the cell's output size; the final state.

    Raises:
      TypeError: if `cell` is not an RNNCell.
      ValueError: without initial_state and dtype, or for inputs of rank < 2.
    """
    rnn_util.assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat = [convert_to_tensor(t, name="input") for t in nest.flatten(inputs)]
        if not time_major:
            flat = [_swap_batch_time(t) for t in flat]
        batch_size = rnn_util.batch_size_of(flat, batch_axis=1)
        if initial_state is not None:
            state = initial_state
        elif not dtype:
            raise ValueError("If there is no initial_state, you must give a dtype.")
        else:
            state = cell.zero_state(batch_size, dtype)
        sequence_length = rnn_util.prepare_sequence_length(sequence_length)
        outputs, final_state = _dynamic_loop(cell, inputs, flat, state, sequence_length,
                                             batch_size, dtype, parallel_iterations or 32,
                                             swap_memory)
        if not time_major:
            outputs = nest.map_structure(_swap_batch_time, outputs)
        return outputs, final_state


def _dynamic_loop(cell, structure, flat, state, sequence_length, batch_size, dtype,
                  parallel_iterations, swap_memory):
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import greater_equal
    time_steps = flat[0].shape[0] if flat[0].shape.ndims else None
    time_steps = getattr(time_steps, "value", time_steps)
    n = time_steps if time_steps is not None else shape(flat[0])[0]
    inputs_ta = [TensorArray(t.dtype, size=n, element_shape=t.shape[1:],
                             tensor_array_name=f"input_{i}").unstack(t)
                 for i, t in enumerate(flat)]
    state_dtype = rnn_util.infer_state_dtype(dtype, state)
    out_sizes = nest.flatten(cell.output_size)
    static_batch = rnn_util.static_batch(batch_size)
    outputs_ta = [TensorArray(state_dtype, size=n, tensor_array_name=f"output_{i}",
                              element_shape=_ts.TensorShape([static_batch])
                              .concatenate(_ts.as_shape(size)))
                  for i, size in enumerate(out_sizes)]
    zero_output = rnn_util.zero_state_tensors(cell.output_size, batch_size, state_dtype) \
        if sequence_length is not None else None
    flat_state = nest.flatten(state)

    def body(time, tas, *state_parts):
        step = [ta.read(time) for ta in inputs_ta]
        for t, s in zip(step, flat):
            t.set_shape(s.shape[1:])
        step_input = nest.pack_sequence_as(structure, step) if nest.is_nested(structure) \
            else step[0]
        old_state = nest.pack_sequence_as(state, list(state_parts))
        output, new_state = cell(step_input, old_state)
        if sequence_length is not None:
            output, new_state = rnn_util.mask_step(greater_equal(time, sequence_length),
                                                   zero_output, old_state, output, new_state)
        new_tas = [ta.write(time, o) for ta, o in zip(tas, nest.flatten(output))]
        return (time + 1, new_tas, *nest.flatten(new_state))

    result = while_loop(lambda time, *_: time < n, body, (0, outputs_ta, *flat_state),
                        parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                        name="while")
    final_tas, final_state = result[1], list(result[2:])
    outputs = []
    for ta, size in zip(final_tas, out_sizes):
        out = ta.stack()
        out.set_shape(_ts.TensorShape([time_steps, static_batch]).concatenate(
            _ts.as_shape(size)))
        outputs.append(out)
    for part, initial in zip(final_state, flat_state):
        part.set_shape(initial.shape)
    return (nest.pack_sequence_as(cell.output_size, outputs),
            nest.pack_sequence_as(state, final_state))


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward dynamic_rnn over the same inputs (TF1's form).

    The backward pass runs on the inputs reversed along time (each row within its
    sequence_length), and its outputs are reversed back.

    Returns:
      ((output_fw, output_bw), (state_fw, state_bw)).
    """
    from tensorweave.ops.array_tile_pad_ops import reverse as reverse_along
    from tensorweave.ops.array_tile_pad_ops import reverse_sequence
    rnn_util.assert_like_rnncell("cell_fw", cell_fw)
    rnn_util.assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(t):
        if sequence_length is None:
            return reverse_along(t, [time_axis])
        return reverse_sequence(t, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            out_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw,
                                           dtype, parallel_iterations, swap_memory, time_major,
                                           scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(reverse, inputs)
            out_bw, state_bw = dynamic_rnn(cell_bw, reversed_inputs, sequence_length,
                                           initial_state_bw, dtype, parallel_iterations,
                                           swap_memory, time_major, scope=bw_scope)
    return (out_fw, nest.map_structure(reverse, out_bw)), (state_fw, state_bw)
