"""Dataset.reduce: the whole dataset folded into one state by a traced function.

`reduce_func(state, element)` is traced once on placeholders of the state and element
structures (a tuple element stays one argument, as in TensorFlow); when the state it returns has
a less specific shape than it was given (a growing vector), it is traced again with the relaxed
shapes until they settle. The result is one `ReduceDataset` node reading the dataset's pipeline,
the initial state and the function's captures; running it runs the pipeline to its end.
"""
from __future__ import annotations

import json

from tensorweave.data import function as _function
from tensorweave.data import nest
from tensorweave.data.dataset_ops import TensorSpec, pipeline_tensor, spec_of, tensor_structure
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import data_ops

_MAX_RETRACES = 8


def reduce_dataset(dataset, initial_state, reduce_func, name=None):
    """The final state (same structure as `initial_state`) after folding every element."""
    element = tensor_structure(dataset, "Dataset.reduce()")
    initial = nest.map_structure(convert_to_tensor, initial_state)
    traced, state = settle_state(
        lambda s: _function.trace(reduce_func, (s, element), get_default_graph(),
                                  "Dataset.reduce()"),
        nest.map_structure(spec_of, initial), lambda result: result, "reduce_func",
        "Dataset.reduce()")
    outputs = nest.flatten(traced.result)
    variant, _ = pipeline_tensor(dataset)
    record = json.dumps(traced.record(outputs))
    flat = data_ops.reduce_dataset(variant, nest.flatten(initial), traced.captured, record,
                                   [s.shape for s in nest.flatten(state)], name=name)
    return nest.pack(initial, flat)


def settle_state(trace, state, new_state_of, fn_name: str, what: str):
    """(traced, state): `trace(state)` retraced with the state's shapes relaxed towards the
    new state it returns until they settle, TensorFlow's rule for a folded state.
    `new_state_of(result)` is the new state in a traced result (and may check its form);
    `fn_name` names the traced function and `what` the transformation in errors."""
    for _ in range(_MAX_RETRACES):
        traced = trace(state)
        relaxed = relaxed_state(state, new_state_of(traced.result), fn_name)
        if relaxed == state:
            return traced, state
        state = relaxed
    raise ValueError(f"{what}: the shapes of the state did not settle.")


def relaxed_state(state, result, what="reduce_func"):
    """`state` with each shape made compatible with the traced result's; TypeError when the
    result's structure or dtypes differ from the state's, as TensorFlow raises."""
    if not nest.same_structure(state, result):
        raise TypeError(f"The structure of the new state returned by `{what}` must match "
                        f"the initial state. Expected {state} but got {result}.")
    flat_state, flat_result = nest.flatten(state), nest.flatten(result)
    for want, got in zip(flat_state, flat_result):
        if got.dtype.base_dtype != want.dtype:
            raise TypeError("The element types for the new state must match the initial "
                            f"state. Expected {want.dtype!r} but got {got.dtype.base_dtype!r}.")
    return nest.pack(state, [TensorSpec(s.shape.most_specific_compatible_shape(r.shape), s.dtype)
                             for s, r in zip(flat_state, flat_result)])
