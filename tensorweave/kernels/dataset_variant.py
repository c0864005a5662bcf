"""Runtime node of tf.data.experimental.from_variant: the pipeline a variant value holds.

In: the spec {"args": [the variant]}, whose value is a `DatasetValue`; out: the elements of a
fresh node of that pipeline per iterator, so its state starts over as any pipeline's does.
"""
from __future__ import annotations

from tensorweave.kernels import dataset_runtime


class _Variant(dataset_runtime.Node):
    def __init__(self, spec, args, functions):
        self.node = args[spec["args"][0]].make_node()

    def __iter__(self):
        return iter(self.node)

    def batches(self, n, drop):
        return self.node.batches(n, drop)


dataset_runtime.register_nodes({"variant": _Variant})
