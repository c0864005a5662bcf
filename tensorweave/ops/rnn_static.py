"""static_rnn and static_bidirectional_rnn: RNNs unrolled in the graph, one cell call per step.

The steps share one set of weights (the variable scope turns to reuse after step 0). With
`sequence_length`, rnn_util.mask_step zeroes each finished sequence's output and copies its
state through, using Select ops only — no loop construct is needed. dynamic_rnn (built on
while_loop) shares rnn_util with this module.
"""
from __future__ import annotations

from tensorweave.framework import nest
from tensorweave.ops import rnn_util
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.array_join_ops import concat, stack, unstack
from tensorweave.ops.array_tile_pad_ops import reverse_sequence
from tensorweave.ops.math_ops import greater_equal

__all__ = ["static_rnn", "static_bidirectional_rnn"]


def _check_inputs(inputs) -> None:
    if not nest.is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Creates a recurrent neural network specified by RNNCell `cell`, unrolled over `inputs`.

    Args:
      cell: an RNNCell.
      inputs: a list of T tensors (or nests of tensors) of shape [batch_size, input_size].
      initial_state: the cell's initial state; if None, `dtype` is required and the state
        starts at zero.
      dtype: the state's dtype when `initial_state` is None.
      sequence_length: an int32/int64 vector [batch_size]; at steps at or past a sequence's
        length its output is zero and its state is copied through.
      scope: the variable scope to build in (default "rnn").

    Returns:
      (outputs, state): the list of T outputs and the final state.

    Raises:
      TypeError: if `cell` is not an RNNCell or `inputs` not a list.
      ValueError: if `inputs` is empty, an input depth is unknown, or neither `initial_state`
        nor `dtype` is given.
    """
    rnn_util.assert_like_rnncell("cell", cell)
    _check_inputs(inputs)
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        batch_size = rnn_util.batch_size_of(nest.flatten(inputs[0]))
        if initial_state is not None:
            state = initial_state
        elif not dtype:
            raise ValueError("If no initial_state is provided, argument `dtype` must be "
                             "specified")
        else:
            state = cell.zero_state(batch_size, dtype)
        sequence_length = rnn_util.prepare_sequence_length(sequence_length)
        if sequence_length is not None:
            zero_output = rnn_util.zero_state_tensors(
                cell.output_size, batch_size, rnn_util.infer_state_dtype(dtype, state))
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            if sequence_length is not None:
                finished = greater_equal(time, sequence_length)
                output, new_state = rnn_util.mask_step(finished, zero_output, state, output,
                                                       new_state)
            outputs.append(output)
            state = new_state
    return outputs, state


def _reverse_seq(input_seq, lengths):
    """The list of steps reversed; with `lengths`, only each sequence's first lengths[b]."""
    if lengths is None:
        return list(reversed(input_seq))
    per_step = [nest.flatten(x) for x in input_seq]
    columns = []
    for steps in zip(*per_step):
        reversed_steps = unstack(reverse_sequence(stack(steps), lengths, seq_axis=0,
                                                  batch_axis=1))
        for before, after in zip(steps, reversed_steps):
            after.set_shape(before.shape)
        columns.append(reversed_steps)
    return [nest.pack_sequence_as(x, [column[t] for column in columns])
            for t, x in enumerate(input_seq)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """A forward and a backward static_rnn over `inputs`, outputs concatenated per step.

    The backward cell reads each sequence from its last valid step back (respecting
    `sequence_length`); its outputs are put back in forward order before concatenation.

    Args:
      cell_fw, cell_bw: the forward and backward RNNCells.
      inputs: a list of T tensors [batch_size, input_size] (or nests).
      initial_state_fw, initial_state_bw: optional initial states.
      dtype: the state dtype when an initial state is missing.
      sequence_length: an optional int32/int64 vector [batch_size].
      scope: the variable scope (default "bidirectional_rnn"); cells build under fw/ and bw/.

    Returns:
      (outputs, output_state_fw, output_state_bw): T tensors [batch, fw_size + bw_size] and
      the final states of both directions.

    Raises:
      TypeError: if a cell is not an RNNCell or `inputs` is not a list.
      ValueError: if `inputs` is empty.
    """
    rnn_util.assert_like_rnncell("cell_fw", cell_fw)
    rnn_util.assert_like_rnncell("cell_bw", cell_bw)
    _check_inputs(inputs)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = rnn_util.prepare_sequence_length(sequence_length)
            reversed_out, state_bw = static_rnn(cell_bw, _reverse_seq(inputs, lengths),
                                                initial_state_bw, dtype, lengths,
                                                scope=bw_scope)
    output_bw = _reverse_seq(reversed_out, lengths)
    flat = [concat([fw, bw], 1) for fw, bw in zip(nest.flatten(output_fw),
                                                  nest.flatten(output_bw))]
    return nest.pack_sequence_as(output_fw, flat), state_fw, state_bw
