"""KernelContext: what a kernel sees of its node and device, built once per node per executor."""
from __future__ import annotations


class KernelContext:
    """Static facts of one node on one device: attrs, dtypes, the array module, resources."""

    __slots__ = ("node_name", "op_type", "attrs", "device", "xp", "resources",
                 "input_dtypes", "output_dtypes", "creation_site", "session", "intra_op_threads")

    def __init__(self, node, device, session=None, intra_op_threads=None):
        self.node_name = node.name
        self.op_type = node.op
        self.attrs = node.attrs
        self.device = device
        self.xp = device.xp
        self.resources = device.resource_mgr
        self.input_dtypes = node.input_dtypes
        self.output_dtypes = node.output_dtypes
        self.creation_site = node.creation_site
        self.session = session
        # The intra-op threads TF would give this kernel where that changes its values (the
        # sharded random samplers): None for its session's device, 1 in tf.data functions.
        self.intra_op_threads = intra_op_threads

    def attr(self, name: str):
        return self.attrs[name]

    def __repr__(self) -> str:
        return f"KernelContext({self.node_name!r}, {self.op_type})"
