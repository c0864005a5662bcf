"""Runtime node of tf.data.experimental.group_by_reducer: one folded state per int64 key.

In: the spec's input pipeline and four compiled functions (data/grouping_reducer.py): key
(element -> int64 scalar), init (key -> state), reduce (state, element -> state) and finalize
(state -> output). The whole input is read first; a key's state starts from init when the key
is first seen. Out: one finalized element per key, in ascending key order (TensorFlow 2.21's
kernel keeps its states in a std::map). An error a function raises ends the iteration with it.
"""
from __future__ import annotations

import numpy as np

from tensorweave.kernels import dataset_runtime
from tensorweave.kernels.dataset_experimental import Bound


class _GroupByReducer(dataset_runtime.Node):
    def __init__(self, spec, args, functions):
        self.child = dataset_runtime.build(spec["input"], args, functions)
        self.key, self.init, self.reduce, self.finalize = (
            Bound(spec[k], args, functions) for k in ("key", "init", "reduce", "finalize"))

    def __iter__(self):
        states: dict[int, list] = {}
        for e in self.child:
            key = int(self.key(e)[0])
            state = states.get(key)
            if state is None:
                state = self.init([np.int64(key)])
            states[key] = self.reduce([*state, *e])
        for key in sorted(states):
            yield tuple(self.finalize(states[key]))


dataset_runtime.register_nodes({"group_by_reducer": _GroupByReducer})
