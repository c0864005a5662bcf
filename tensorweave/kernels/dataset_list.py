"""Runtime node of tf.data.experimental.from_list: the listed elements, in order.

In: the spec {"elements": one list of arg indices per element}, each element's components
evaluated as graph tensors (they may differ in shape from one element to the next); out: those
elements, every epoch the same.
"""
from __future__ import annotations

from tensorweave.kernels import dataset_runtime


class _List(dataset_runtime.Node):
    def __init__(self, spec, args, functions):
        self.elements = [tuple(args[i] for i in element) for element in spec["elements"]]

    def __iter__(self):
        return iter(self.elements)


dataset_runtime.register_nodes({"list": _List})
