"""Kernels of the checkpoint ops: they read and write train/checkpoint_format files.

SaveV2 writes its inputs (variables reach it as their storage, read without a copy) as one
atomic single-shard checkpoint. RestoreV2 checks every key and dtype against the index, then
reads and checksums every tensor before it outputs any, so the Assigns after it run only when
the whole checkpoint is good.
"""
from __future__ import annotations

import os

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel, register_pure


def _format():
    """The checkpoint format module, imported on first use: kernels load before tf.train."""
    from tensorweave.train import checkpoint_format
    return checkpoint_format


def _text(value) -> str:
    """A scalar string tensor's value as str."""
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 else value
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise errors.InvalidArgumentError(None, None, f"Expected a scalar string, got {value!r}")


def _texts(value, what: str) -> list:
    array = np.asarray(value, dtype=object)
    if array.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be a vector of strings, got shape {list(array.shape)}")
    return [_text(v) for v in array]


def _check_whole_tensors(slices: list, count: int) -> None:
    if len(slices) != count:
        raise errors.InvalidArgumentError(
            None, None, f"shape_and_slices has {len(slices)} entries for {count} tensors")
    if any(slices):
        raise errors.UnimplementedError(
            None, None, "Saving or restoring tensor slices (partitioned variables) is not "
            "supported; shape_and_slices must be empty strings")


@kernel("SaveV2", expensive=True)
class SaveV2Kernel:
    """Writes the checkpoint `prefix` from the input tensors."""

    def __init__(self, ctx):
        self.dtypes = ctx.attrs["dtypes"]

    def compute(self, ctx, prefix, tensor_names, shape_and_slices, *tensors):
        names = _texts(tensor_names, "tensor_names")
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(
                None, None, f"Got {len(names)} tensor names for {len(tensors)} tensors")
        _check_whole_tensors(_texts(shape_and_slices, "shape_and_slices"), len(names))
        path = _text(prefix)
        # As TensorFlow's bundle writer, the prefix's directory is created if missing.
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        _format().write_checkpoint(path, names, tensors, self.dtypes)


@kernel("RestoreV2", expensive=True)
class RestoreV2Kernel:
    """Reads the named tensors of the checkpoint `prefix`, all verified before any is output."""

    def __init__(self, ctx):
        self.dtypes = ctx.attrs["dtypes"]

    def compute(self, ctx, prefix, tensor_names, shape_and_slices):
        names = _texts(tensor_names, "tensor_names")
        if len(names) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Got {len(names)} tensor names for {len(self.dtypes)} dtypes")
        _check_whole_tensors(_texts(shape_and_slices, "shape_and_slices"), len(names))
        from tensorweave.train.checkpoint_validation import check_restorable
        fmt = _format()
        index = fmt.read_index(_text(prefix))
        check_restorable(index, names, self.dtypes)
        values = fmt.read_tensors(index, names)
        return values[0] if len(values) == 1 else tuple(values)


@kernel("MergeV2Checkpoints", expensive=True)
class MergeV2CheckpointsKernel:
    """Merges the per-shard checkpoints into the destination checkpoint."""

    def __init__(self, ctx):
        self.delete_old_dirs = ctx.attrs["delete_old_dirs"]

    def compute(self, ctx, checkpoint_prefixes, destination_prefix):
        _format().merge_checkpoints(_texts(checkpoint_prefixes, "checkpoint_prefixes"),
                              _text(destination_prefix), self.delete_old_dirs)


def _sharded_filename(basename, shard, num_shards):
    return np.array(f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(),
                    dtype=object)


def _sharded_filespec(basename, num_shards):
    return np.array(f"{_text(basename)}-?????-of-{int(num_shards):05d}".encode(), dtype=object)


register_pure("ShardedFilename", _sharded_filename)
register_pure("ShardedFilespec", _sharded_filespec)
