"""Dataset.snapshot and tf.data.experimental.snapshot: a pipeline's elements kept on disk.

The first full pass over a snapshot writes the input's elements under `path`, in a directory
named by the input pipeline's fingerprint (its description, its functions and the values of the
tensors it reads); later passes, in this or any later session or process running the same
pipeline, read them instead of running the input. The file is the `cache(filename)` format of
kernels/dataset_files.py, written under a temporary name and renamed when the pass ends, so an
unfinished pass leaves nothing a later one reads.

Departures from TensorFlow 2.21 (whose snapshot files this runtime cannot read anyway):
`compression` is accepted and the file is stored uncompressed; `shard_func` is accepted and
not applied (a snapshot is one file here; TensorFlow's shards only lay out its files);
`reader_func` is refused with a ValueError, since applying it needs a dataset of the shards'
datasets. Elements read back come in the order they were written, which is what TensorFlow's
default reader gives for a deterministic pipeline. As there, the cardinality is unknown (-2).
"""
from __future__ import annotations

import base64
import json

from tensorweave.data.dataset_ops import PipelineBuilder, UnaryDataset
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_snapshot  # noqa: F401 - registers the node
from tensorweave.protos import graph_pb2

__all__ = ["snapshot"]


class Snapshot(UnaryDataset):
    """The input's elements, written to `path` by a first full pass and read back after."""

    def __init__(self, input_dataset, path, compression="AUTO", reader_func=None,
                 shard_func=None):
        if reader_func is not None:
            raise ValueError("Dataset.snapshot(reader_func=...) is not supported by "
                             "tensorweave: a snapshot is read back in the order it was "
                             "written.")
        del compression, shard_func   # see the module docstring
        self._path = convert_to_tensor(path, _dtypes.string, name="path")
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        # The input described on its own: its text and the tensors it reads are its
        # fingerprint, whatever else the pipeline around it reads.
        alone = PipelineBuilder([])
        description = json.dumps({"root": self._input._dataset_spec(alone),
                                  "functions": [_canonical(f) for f in alone.functions]},
                                 sort_keys=True)
        return self._spec(builder, "snapshot", args=[builder.arg(self._path)],
                          fingerprint=description, reads=builder.args(alone.tensors))


def _canonical(record: dict) -> dict:
    """A function record whose GraphDef is serialized deterministically: attr maps are
    otherwise written in an order that changes from one process to the next."""
    graph = graph_pb2.GraphDef.FromString(base64.b64decode(record["graph"]))
    return {**record, "graph": base64.b64encode(graph.SerializeToString(deterministic=True))
            .decode("ascii")}


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """A transformation keeping the dataset's elements on disk under `path`.

    Args:
      path: a directory for the snapshot files (a string or scalar string tensor).
      compression: accepted; the files are stored uncompressed here.
      reader_func: must be None here (see the module docstring).
      shard_func: accepted and not applied: a snapshot is one file here.

    Returns:
      A function for `Dataset.apply`: the same elements, of unknown cardinality; the first
      full pass writes them, and later ones (any session or process running the same pipeline)
      read them back.

    Raises:
      ValueError: for a `reader_func`.
    """
    return lambda dataset: Snapshot(dataset, path, compression, reader_func, shard_func)
