"""Kernels of the checkpoint ops: they read and write train/checkpoint_format files.

SaveV2 writes its inputs (variables reach it as their storage, read without a copy) as one
atomic single-shard checkpoint. RestoreV2 checks every key and dtype against the index, then
reads and checksums every tensor before it outputs any, so the Assigns after it run only when
the whole checkpoint is good.

A non-empty `shape_and_slices` entry is TensorFlow's slice spec, "<full dims> <slice>" with the
slice `start,length` (or `-`, all of it) per dimension, e.g. "10 5 4,3:0,5": SaveV2 stores the
tensor as that slice of the full tensor, RestoreV2 reads that slice (from whatever slices, or
whole tensor, the checkpoint holds). Errors are TensorFlow's.
"""
from __future__ import annotations

import contextlib
import os
import re

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
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


_PAIR = re.compile(r"(-?\d+),(-?\d+)")


def _parse_slice_spec(spec: str):
    """None for "" (the whole tensor), else (full shape, start, shape) of the slice spec."""
    if not spec:
        return None
    words = spec.split(" ")
    if len(words) < 2:
        raise invalid_argument(f"Need least two elements in shape_and_slice specification: {spec}")
    text = words[-1]
    start, shape = [], []
    for dim in filter(None, text.split(":")):    # TensorFlow skips empty dimensions
        if dim == "-":
            start.append(0)
            shape.append(None)      # all of the dimension
            continue
        match = _PAIR.fullmatch(dim)
        if match is None:
            raise invalid_argument(f"Expected a pair of numbers or '-' but got '{dim}': string = "
                                   f"{text}")
        lo, n = int(match[1]), int(match[2])
        if lo < 0 or n <= 0:
            raise invalid_argument("Expected non-negative start and positive length but got start "
                                   f"= {lo}, length = {n}: string = {text}")
        start.append(lo)
        shape.append(n)
    if not all(re.fullmatch(r"\d+", word) for word in words[:-1]):
        raise invalid_argument(f"Non numerical dimension in shape_and_slice: {spec}")
    full = [int(word) for word in words[:-1]]
    # A "-" beyond the full rank stays 0: check_slice_bounds reports the rank mismatch.
    shape = [(full[i] if i < len(full) else 0) if n is None else n for i, n in enumerate(shape)]
    _format().check_slice_bounds(full, start, shape, text)
    return tuple(full), tuple(start), tuple(shape)


def _slice_specs(shape_and_slices, count: int) -> list:
    """(spec text, parsed spec or None) per tensor."""
    texts = _texts(shape_and_slices, "shape_and_slices")
    if len(texts) != count:
        raise invalid_argument(f"shape_and_slices has {len(texts)} entries for {count} tensors")
    return [(text, _parse_slice_spec(text)) for text in texts]


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
        slices = []
        for (text, spec), tensor in zip(_slice_specs(shape_and_slices, len(names)), tensors):
            if spec is not None and tuple(np.shape(tensor)) != spec[2]:
                raise invalid_argument(f"Slice in shape_and_slice specification does not match the "
                                       f"shape of the tensor to  save: {text}, tensor: "
                                       f"{dims_text(np.shape(tensor))}")
            slices.append(None if spec is None else spec[:2])
        path = _text(prefix)
        # As TensorFlow's bundle writer, the prefix's directory is created if missing, but not
        # its parents (CreateDir, not RecursivelyCreateDir): then the write fails NotFound.
        with contextlib.suppress(FileExistsError, FileNotFoundError):
            os.mkdir(os.path.dirname(path) or ".")
        _format().write_checkpoint(path, names, tensors, self.dtypes, slices)


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
        specs = [spec for _, spec in _slice_specs(shape_and_slices, len(names))]
        from tensorweave.train.checkpoint_validation import check_restorable
        fmt = _format()
        index = fmt.read_index(_text(prefix))
        wanted = dict.fromkeys(zip(names, self.dtypes))   # the slices of a name: once
        check_restorable(index, [n for n, _ in wanted], [d for _, d in wanted])
        for name, spec in zip(names, specs):
            stored = index.entries[name].shape
            if spec is not None and spec[0] != stored:
                raise invalid_argument(f"tensor_name = {name}; shape in shape_and_slice spec "
                                       f"{dims_text(spec[0])} does not match the shape stored "
                                       f"in checkpoint: {dims_text(stored)}")
        values = fmt.read_tensors(index, names, [None if s is None else s[1:] for s in specs])
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
