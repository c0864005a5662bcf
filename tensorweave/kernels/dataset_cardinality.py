"""Kernels of DatasetCardinality and DatasetToSingleElement (ops/data_experimental_ops.py).

A pipeline's cardinality is computed from its description and argument values without running
it, by TensorFlow's rules per transformation (`Cardinality()` of each DatasetOp, TF 2.21):
-1 (INFINITE) for an endless pipeline, -2 (UNKNOWN) where only running it would tell (filter,
interleave, unbatch, files...). TF1's `Dataset.map` does not preserve cardinality
(`preserve_cardinality=False` in tf.compat.v1), so a map makes it unknown, as there.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel

INFINITE = -1
UNKNOWN = -2
_END = object()


def cardinality(spec: dict, args) -> int:
    """The number of elements the pipeline `spec` reading `args` yields (or -1, -2)."""
    kind = spec["kind"]
    rule = _RULES.get(kind)
    if rule is None:
        return UNKNOWN
    if "input" in spec:
        return rule(spec, args, cardinality(spec["input"], args))
    return rule(spec, args)


def _param(spec, args, k=0) -> int:
    return int(args[spec["args"][k]])


def _range(spec, args):
    start, stop, step = (int(args[i]) for i in spec["args"])
    return len(range(start, stop, step)) if step else UNKNOWN


def _slices(spec, args):
    return int(np.shape(args[spec["args"][0]])[0])


def _sparse_slices(spec, args):
    """The first dimension: a dense component's, or a SparseTensor's dense shape's first (a
    window's SparseTensors: the number of their dense shapes)."""
    starts, first = spec["sparse"], spec["args"][0]
    if spec.get("row_shapes"):
        return len(args[spec["args"][2]])
    return int(args[spec["args"][2]][0]) if 0 in starts else int(np.shape(args[first])[0])


def _zip(spec, args):
    result = INFINITE
    for n in (cardinality(s, args) for s in spec["inputs"]):
        if n == UNKNOWN:
            return UNKNOWN
        if n != INFINITE:
            result = n if result == INFINITE else min(result, n)
    return result


def _concatenate(spec, args):
    counts = [cardinality(s, args) for s in spec["inputs"]]
    if INFINITE in counts:
        return INFINITE
    return UNKNOWN if UNKNOWN in counts else sum(counts)


def _known(rule):
    """`rule(spec, args, n)` for a known finite input count; -1 and -2 pass through."""
    def apply(spec, args, n):
        return n if n < 0 else rule(spec, args, n)
    return apply


def _batch(spec, args, n):
    size = max(_param(spec, args), 1)
    return n // size if spec["drop_remainder"] else -(-n // size)


def _window(spec, args, n):
    size, shift, stride = (max(_param(spec, args, k), 1) for k in range(3))
    if spec["drop_remainder"]:
        rest = n - ((size - 1) * stride + 1)
        return 0 if rest < 0 else rest // shift + 1
    return -(-n // shift)


def _repeat(spec, args, n):
    count = _param(spec, args)
    if count < 0:
        return 0 if n == 0 else INFINITE
    if count == 0:
        return 0
    return n if n < 0 else count * n


def _take(spec, args, n):
    count = _param(spec, args)
    if n == UNKNOWN:
        return UNKNOWN
    if n == INFINITE:
        return count
    return n if count < 0 else min(n, count)


def _skip(spec, args, n):
    count = _param(spec, args)
    return 0 if count < 0 else max(0, n - count)


def _shard(spec, args, n):
    """TensorFlow's: n // num_shards, plus one for the shards before n % num_shards."""
    num_shards, index = _param(spec, args), _param(spec, args, 1)
    if not 0 <= index < num_shards:
        return UNKNOWN   # the dataset fails when iterated
    return n // num_shards + (1 if index < n % num_shards else 0)


def _directed_interleave(spec, args):
    """sample_from_datasets / choose_from_datasets: endless if an input is, else unknown."""
    counts = [cardinality(s, args) for s in spec["inputs"]]
    return INFINITE if INFINITE in counts else UNKNOWN


def _variant(spec, args):
    """from_variant: the cardinality of the pipeline the variant value holds."""
    value = args[spec["args"][0]]
    return cardinality(value.spec, value.args)


def _same(spec, args, n):
    return n


def _unknown(spec, args, n):
    return UNKNOWN


def _asserted(spec, args, n):
    return _param(spec, args)


_RULES = {
    "tensors": lambda spec, args: 1, "slices": _slices, "sparse_slices": _sparse_slices,
    "range": _range, "zip": _zip,
    "concatenate": _concatenate, "batch": _known(_batch), "padded_batch": _known(_batch),
    "window": _known(_window), "repeat": _repeat, "take": _take, "skip": _known(_skip),
    "shard": _known(_shard),
    "shuffle": _same, "prefetch": _same, "cache": _same, "scan": _same,
    "map": _unknown, "assert_cardinality": _asserted,
    # from_list's elements; Dataset.random is endless. (rebatch and group_by_reducer are
    # unknown in TensorFlow 2.21, as every kind without a rule here.)
    "list": lambda spec, args: len(spec["elements"]), "random": lambda spec, args: INFINITE,
    "variant": _variant, "directed_interleave": _directed_interleave,
    # copy_to_device, snapshot and SqlDataset are unknown (-2) in TensorFlow 2.21 too.
}


@kernel("DatasetCardinality")
def _dataset_cardinality(ctx, dataset):
    return np.int64(cardinality(dataset.spec, dataset.args))


@kernel("DatasetToSingleElement")
def _dataset_to_single_element(ctx, dataset):
    elements = iter(dataset.make_node())
    element = next(elements, _END)
    if element is _END:
        raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
    if next(elements, _END) is not _END:
        raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
    return element if len(element) != 1 else element[0]
