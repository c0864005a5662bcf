"""Helpers shared by the RNN drivers (static_rnn now, dynamic_rnn next): zero states, batch
sizes, and the sequence_length rule.

The rule (TF's): at a time step at or past a sequence's length, its output is zero and its
state is the previous state copied through. `mask_step` applies it with Select ops, so a
driver only has to supply the per-step `finished` vector — a Python step index compared
against `sequence_length` (static_rnn) or the loop counter (dynamic_rnn).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor

__all__ = []  # internal: imported by name


def assert_like_rnncell(name: str, cell) -> None:
    """TypeError in TF's words unless `cell` has the RNNCell interface."""
    missing = [f"'{attr}' property is missing" for attr in ("output_size", "state_size")
               if not hasattr(cell, attr)]
    if not (hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state")):
        missing.append("either 'zero_state' or 'get_initial_state' method is required")
    if not callable(cell):
        missing.append("is not callable")
    if missing:
        raise TypeError(f"The argument {name!r} ({cell}) is not an RNNCell: "
                        f"{', '.join(missing)}.")


def static_batch(batch_size):
    """The Python int behind `batch_size` (an int or a scalar Tensor), or None."""
    if isinstance(batch_size, Tensor):
        from tensorweave.framework.static_value import static_value
        value = static_value(batch_size)
        return None if value is None else int(value)
    return None if batch_size is None else int(batch_size)


def zeros_for(size, batch_size, dtype):
    """A zero tensor of shape [batch_size] + size; static shape keeps every known dim."""
    from tensorweave.ops.array_creation_ops import zeros
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims
    inner = _ts.as_shape(size).as_list()
    known = static_batch(batch_size)
    if known is not None:
        return zeros([known] + inner, dtype=dtype)
    shape = concat([expand_dims(batch_size, 0), inner], 0)
    out = zeros(shape, dtype=dtype)
    out.set_shape([None] + inner)
    return out


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros shaped like `state_size` (a nest of ints / TensorShapes) for `batch_size` rows."""
    dtype = _dtypes.as_dtype(dtype)
    return nest.map_structure(lambda size: zeros_for(size, batch_size, dtype), state_size)


def infer_state_dtype(explicit_dtype, state):
    """`explicit_dtype` if given, else the dtype shared by every tensor in `state`."""
    if explicit_dtype is not None:
        return _dtypes.as_dtype(explicit_dtype)
    leaves = nest.flatten(state)
    dtypes = {t.dtype.base_dtype for t in leaves}
    if len(dtypes) != 1:
        raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a "
                         f"single representative dtype. Dtypes received: {sorted(dtypes)}")
    return leaves[0].dtype.base_dtype


def batch_size_of(flat_inputs, batch_axis: int = 0):
    """The batch size of the inputs: a Python int when static, else a scalar int32 Tensor.

    Raises:
      ValueError: if a non-batch dimension is unknown (cells need their input depth).
    """
    from tensorweave.ops.array_ops import shape
    batch = _ts.Dimension(None)
    for x in flat_inputs:
        dims = x.shape.with_rank_at_least(batch_axis + 1)
        batch = batch.merge_with(dims[batch_axis])
        inner = dims.as_list()[batch_axis + 1:]  # the depth (time, before batch, may vary)
        if None in inner:
            raise ValueError(f"Input size (dimension {inner.index(None)} of input {x}) must "
                             "be accessible via shape inference, but saw value None.")
    if batch.value is not None:
        return batch.value
    return shape(flat_inputs[0])[batch_axis]


def prepare_sequence_length(sequence_length):
    """`sequence_length` as an int32 vector Tensor (or None)."""
    if sequence_length is None:
        return None
    from tensorweave.framework.tensor_conversion import convert_to_tensor
    from tensorweave.ops.math_unary_ops import cast
    sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size, but saw "
                         f"shape: {sequence_length.shape}")
    if sequence_length.dtype != _dtypes.int32:
        sequence_length = cast(sequence_length, _dtypes.int32)
    return sequence_length


def mask_step(finished, zero_output, old_state, new_output, new_state):
    """(output, state) of one step with finished rows zeroed / copied through.

    Args:
      finished: a bool [batch] Tensor, true where the step is past the sequence's end.
      zero_output, new_output: nests of [batch, ...] outputs (same structure).
      old_state, new_state: nests of [batch, ...] states (same structure).
    """
    from tensorweave.ops.array_index_ops import where

    def pick(past, live):
        out = where(finished, past, live)
        out.set_shape(live.shape)
        return out
    nest.assert_same_structure(old_state, new_state)
    return (nest.map_structure(pick, zero_output, new_output),
            nest.map_structure(pick, old_state, new_state))
