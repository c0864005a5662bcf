"""Runtime node of Dataset.snapshot: elements written once to `path`, read back after.

In: the spec {"input", "args": [path], "fingerprint": the input's description, "reads": the
arg indices of the tensors the input reads}. The snapshot's file is `path/<sha256 of the
description and those tensors' values>/snapshot` in kernels/dataset_files.py's cache format.
Out: the file's elements if a complete one exists, else the input's, recorded and written (to a
temporary name, then renamed) when the pass reaches the end: a partial pass writes nothing.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

from tensorweave.framework import graph_io
from tensorweave.kernels import dataset_files, dataset_runtime


def _fingerprint(description: str, values) -> str:
    digest = hashlib.sha256(description.encode())
    for value in values:
        digest.update(graph_io.ndarray_to_tensor_proto(np.asarray(value)).SerializeToString())
    return digest.hexdigest()


class _Snapshot(dataset_runtime.UnaryNode):
    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        key = _fingerprint(spec["fingerprint"], [args[i] for i in spec["reads"]])
        self.directory = os.path.join(dataset_files.path(np.asarray(self.params[0]).item()),
                                      key)

    def __iter__(self):
        filename = os.path.join(self.directory, "snapshot")
        elements = dataset_files.read_cache(filename)
        if elements is not None:
            yield from elements
            return
        recorded = []
        for e in self.child:
            recorded.append(e)
            yield e
        os.makedirs(self.directory, exist_ok=True)
        dataset_files.write_cache(filename, recorded)


dataset_runtime.register_nodes({"snapshot": _Snapshot})
