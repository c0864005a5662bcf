"""Runtime node of tf.data.experimental.copy_to_device: the input's elements, unchanged.

In: the spec {"input", "args": [target, source device-name tensors]}, whose placement on those
devices (runtime/placement.py) already refused devices this session lacks; out: the input's
elements and batches as they are (every device here shares the host's memory).
"""
from __future__ import annotations

from tensorweave.kernels import dataset_runtime


class _CopyToDevice(dataset_runtime.UnaryNode):
    passes_errors = True   # its input's elements, failed ones included, pass through

    def __iter__(self):
        return iter(self.child)

    def batches(self, n, drop):
        return self.child.batches(n, drop)


dataset_runtime.register_nodes({"copy_to_device": _CopyToDevice})
