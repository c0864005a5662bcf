"""tf.data.experimental.group_by_reducer and its Reducer: a fold per key of the elements.

`key_func` maps an element to an int64 scalar key; per key, `init_func(key)` makes a state,
`reduce_func(state, element)` folds each element of the key into it, and at the end
`finalize_func(state)` makes the key's one output element. The four functions are traced here
(the state's shapes relaxed and reduce_func traced again until they settle, as TensorFlow
does); kernels/dataset_reducers.py runs them, emitting the outputs in ascending key order.
"""
from __future__ import annotations

from tensorweave.data import function as _function
from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    TensorSpec,
    UnaryDataset,
    flat_tensors,
    spec_of,
    tensor_structure,
)
from tensorweave.data.reduce import settle_state
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.kernels import dataset_reducers  # noqa: F401 - registers the node

_WHAT = "tf.data.experimental.group_by_reducer()"


class Reducer:
    """The reduction of one group: its initial state, its fold and its output.

    Args:
      init_func: key (an int64 scalar tensor) -> the initial state (a nested structure of
        tensors).
      reduce_func: (state, element) -> the new state, of the state's structure and dtypes.
      finalize_func: state -> the group's output element (a tuple state is passed as separate
        arguments).
    """

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


def _trace(fn, structure):
    return _function.trace(fn, structure, get_default_graph(), _WHAT)


class GroupByReducer(UnaryDataset):
    def __init__(self, input_dataset, key_func, reducer):
        element = tensor_structure(input_dataset, _WHAT)
        self._key = _trace(key_func, element)
        key = self._key.result
        if not isinstance(key, Tensor) or key.dtype.base_dtype != _dtypes.int64 or \
                not key.shape.is_compatible_with([]):
            specs = nest.map_structure(spec_of, key)
            types = nest.map_structure(lambda s: s.dtype, specs)
            shapes = nest.map_structure(lambda s: s.shape, specs)
            raise ValueError("Invalid `key_func`. Expected `key_func` to return a scalar "
                             f"tf.int64 tensor, but instead `key_func` has output types={types} "
                             f"and shapes={shapes}.")
        self._init = _trace(reducer.init_func, TensorSpec([], _dtypes.int64))
        initial = nest.map_structure(spec_of, self._init.result)

        def new_state(result):
            _check_state_types(initial, result)
            return result
        self._reduce, state = settle_state(
            lambda s: _trace(reducer.reduce_func, (s, element)), initial, new_state,
            "reducer.reduce_func", _WHAT)
        self._finalize = _trace(reducer.finalize_func, state)
        super().__init__(input_dataset, nest.map_structure(spec_of, self._finalize.result))

    def _dataset_spec(self, builder):
        spec = self._spec(builder, "group_by_reducer")
        for name, traced, outputs in (
                ("key", self._key, [self._key.result]),
                ("init", self._init, nest.flatten(self._init.result)),
                ("reduce", self._reduce, nest.flatten(self._reduce.result)),
                ("finalize", self._finalize, flat_tensors(self._finalize.result))):
            spec[name] = builder.function(traced, outputs, {})
        return spec


def _check_state_types(initial, result) -> None:
    """TypeError, in TensorFlow's words, when the new state's dtypes differ from the initial
    state's."""
    new = [r.dtype.base_dtype for r in nest.flatten(result)]
    old = [s.dtype for s in nest.flatten(initial)]
    if any(a != b for a, b in zip(new, old)):
        raise TypeError("Invalid `reducer`. The element types for the new state "
                        f"{nest.map_structure(lambda r: r.dtype.base_dtype, result)} do not "
                        "match the element types of the old state "
                        f"{nest.map_structure(lambda s: s.dtype, initial)}.")
