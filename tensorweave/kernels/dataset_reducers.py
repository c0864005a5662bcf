"""Runtime node of tf.data.experimental.group_by_reducer: one folded state per int64 key.

In: the spec's input pipeline and four compiled functions (data/grouping_reducer.py): key
(element -> int64 scalar), init (key -> state), reduce (state, element -> state) and finalize
(state -> output). The whole input is read first; a key's state starts from init when the key
is first seen. Out: one finalized element per key, in ascending key order (TensorFlow 2.21's
kernel keeps its states in a std::map). A failed input element, or a function's failure on
one, is passed on at once and leaves the states as they were (a new key's initial state
stays, as TF stores it before reducing); a failed finalize passes on and the next key follows.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import dataset_runtime
from tensorweave.kernels.dataset_experimental import Bound


class _GroupByReducer(dataset_runtime.Node):
    passes_errors = True

    def __init__(self, spec, args, functions):
        self.child = dataset_runtime.build(spec["input"], args, functions)
        self.key, self.init, self.reduce, self.finalize = (
            Bound(spec[k], args, functions) for k in ("key", "init", "reduce", "finalize"))

    def inputs(self) -> list:
        return [self.child]

    def __iter__(self):
        states: dict[int, list] = {}
        for e in self.child:
            if type(e) is dataset_runtime.ElementError:
                yield e
                continue
            try:
                key = int(self.key(e)[0])
                if key not in states:
                    states[key] = self.init([np.int64(key)])
                states[key] = self.reduce([*states[key], *e])
            except errors.OpError as error:
                yield self.failure(error)
        for key in sorted(states):
            try:
                yield tuple(self.finalize(states[key]))
            except errors.OpError as error:
                yield self.failure(error)


dataset_runtime.register_nodes({"group_by_reducer": _GroupByReducer})
