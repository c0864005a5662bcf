"""Reading checkpoints outside a graph: NewCheckpointReader, list_variables, load_variable.

A reader parses and verifies the index once; tensors are read (and checksummed) on request.
A directory argument means the newest checkpoint named by its state file. A tensor saved as
slices (a partitioned variable) appears as the full tensor, as in TensorFlow.
"""
from __future__ import annotations

import glob
import os

from tensorweave.framework import errors
from tensorweave.train import checkpoint_format as _fmt
from tensorweave.train import checkpoint_management as _mgmt

__all__ = ["NewCheckpointReader", "list_variables", "load_checkpoint", "load_variable",
           "read_index"]


class CheckpointReader:
    """The tensors of one checkpoint (TF's `CheckpointReader`).

    Args:
      filepattern: the checkpoint prefix.

    Raises:
      NotFoundError: no checkpoint at `filepattern`.
      DataLossError: the checkpoint's index is corrupt.
    """

    def __init__(self, filepattern):
        self._prefix = os.fspath(filepattern)
        if isinstance(self._prefix, bytes):
            self._prefix = self._prefix.decode()
        self._index = read_index(self._prefix)

    def get_variable_to_shape_map(self) -> dict:
        """{tensor name: shape as a list of ints} (a partitioned variable's full shape)."""
        return {name: list(e.shape) for name, e in self._index.entries.items()}

    def get_variable_to_dtype_map(self) -> dict:
        """{tensor name: DType}."""
        return {name: e.dtype for name, e in self._index.entries.items()}

    def has_tensor(self, tensor_str) -> bool:
        return _key(tensor_str) in self._index.entries

    def get_tensor(self, tensor_str):
        """The tensor's value as a NumPy array; a scalar as a NumPy scalar (bytes for a string).
        A tensor saved as slices is assembled from them.

        Raises:
          NotFoundError: the checkpoint has no such tensor.
          ValueError: it is saved as slices that do not cover all of it.
          DataLossError: its bytes are truncated or fail the checksum.
        """
        name = _key(tensor_str)
        if name not in self._index.entries:
            from tensorweave.train.checkpoint_validation import missing_key_lines
            hint = missing_key_lines([name], sorted(self._index.entries))[0].strip()
            raise errors.NotFoundError(None, None, hint)
        try:
            value = _fmt.read_tensors(self._index, [name])[0]
        except errors.InvalidArgumentError as e:   # slices missing: TF's reader raises so
            raise ValueError(e.message) from None
        return value[()] if value.ndim == 0 else value

    def debug_string(self) -> bytes:
        """One line per tensor, sorted: `name (DT_FLOAT) [3,1]`; a tensor saved as slices
        with its full shape (TensorFlow lists its slices under binary-encoded keys)."""
        lines = []
        for name, e in sorted(self._index.entries.items()):
            dims = ",".join(str(d) for d in e.shape)
            lines.append(f"{name} ({_enum_name(e.dtype)}) [{dims}]\n")
        return "".join(lines).encode()


def read_index(prefix: str):
    """The verified index of the checkpoint `prefix`.

    Raises:
      NotFoundError: nothing at `prefix`.
      DataLossError: `prefix` has no index but names files itself (a directory, a V1
        checkpoint or another file), which TF then fails to open as a V1 table.
    """
    try:
        return _fmt.read_index(prefix)
    except errors.NotFoundError:
        found = sorted(glob.glob(prefix))
        if not found:
            raise
    path = found[0]
    reason = (f"FAILED_PRECONDITION: {path}; Is a directory" if os.path.isdir(path)
              else "DATA_LOSS: not an sstable (bad magic number)")
    raise errors.DataLossError(
        None, None, f"Unable to open table file {path}: {reason}: perhaps your file is in a "
        "different file format and you need to use a different restore operator?")


def _key(tensor_str) -> str:
    if isinstance(tensor_str, bytes):
        tensor_str = tensor_str.decode()
    return tensor_str


def _enum_name(dtype) -> str:
    from tensorweave.protos import types_pb2
    return types_pb2.DataType.Name(dtype.as_datatype_enum)


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TF1's name
    """A CheckpointReader for the checkpoint at `filepattern` (TF1's tf.train API)."""
    return CheckpointReader(filepattern)


def checkpoint_prefix(ckpt_dir_or_file) -> str:
    """The prefix of a checkpoint given as a prefix or as a directory (its newest)."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = _mgmt.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A CheckpointReader for a checkpoint prefix or a directory's newest checkpoint."""
    return CheckpointReader(checkpoint_prefix(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    """The value of tensor `name` (a trailing ':0' is ignored) in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """[(name, shape)] of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]
