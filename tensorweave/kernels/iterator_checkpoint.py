"""Kernels of SerializeIterator and DeserializeIterator: an iterator's position as a string.

The state is UTF-8 JSON (format version 1):

    {"format": "tensorweave.IteratorState", "version": 1,
     "pipeline": "batch(repeat(shuffle(range)))", "types": ["int64"],
     "produced": 12, "exhausted": false, "seed_root": 1234...}

`pipeline` outlines the dataset's transformations and `types` is the iterator's element
signature: a restore into an iterator whose outline or types differ is refused (NotFoundError,
the class of TensorFlow's error for a pipeline that changed). `produced` counts the elements
since the iterator's initialization and `seed_root` is the root of the seeds its nodes draw
where the pipeline gave none (kernels/dataset_seeds.py). Restoring rebuilds the
nodes of the dataset the restoring iterator was initialized with, under that root, and
replays `produced` elements (IteratorResource.start in kernels/data.py); an exhausted
iterator is restored at its end.

State a replay cannot reproduce is external (TensorFlow's notion): a stateful op in one of the
pipeline's functions (a random op, py_func) other than those whose results depend only on
their inputs, and from_generator. The op's `external_state_policy` says what saving such an
iterator does, with TensorFlow's messages: FAIL raises FailedPreconditionError, WARN logs it,
IGNORE does nothing; from_generator cannot be saved under any policy (UnimplementedError),
as in TensorFlow.
"""
from __future__ import annotations

import base64
import json

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import get_op_def
from tensorweave.kernels.data import IteratorResource
from tensorweave.kernels.dataset_runtime import DatasetValue
from tensorweave.kernels.dataset_seeds import SeedSource
from tensorweave.kernels.registry import kernel
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import graph_pb2

_FORMAT, _VERSION = "tensorweave.IteratorState", 1
# The external_state_policy attr holds tf.data.experimental.ExternalStatePolicy's value:
# WARN 0, IGNORE 1 (nothing to do), FAIL 2.
_WARN, _FAIL = 0, 2

# Stateful ops whose results a replay reproduces: they depend only on their inputs (and on
# tables initialized before the iterator); function arguments are Placeholders.
_REPLAYABLE = frozenset({"Placeholder", "Assert", "Print", "PrintV2", "LookupTableFindV2",
                         "LookupTableSizeV2"})

_RESTORE_FAILED = ("Failed to restore dataset iterator from checkpoint: {}. Make sure the "
                   "dataset definition has not changed between the process that saved the "
                   "checkpoint and the process that is restoring it.")


def _children(spec: dict) -> list:
    """The specs of the datasets `spec` reads (inputs, inner and selector pipelines)."""
    out = []
    for key in sorted(spec):
        value = spec[key]
        values = value if isinstance(value, list) else [value]
        out.extend(v for v in values if isinstance(v, dict) and "kind" in v)
    return out


def _outline(spec: dict) -> str:
    """The transformations of a pipeline as nested kinds: "batch(repeat(shuffle(range)))"."""
    children = _children(spec)
    if not children:
        return spec["kind"]
    return f"{spec['kind']}({', '.join(_outline(c) for c in children)})"


def _has_generator(spec: dict) -> bool:
    return spec["kind"] == "generator" or any(_has_generator(c) for c in _children(spec))


def _external_op(dataset: DatasetValue) -> str | None:
    """The type of the first op whose state a replay cannot reproduce ("PyFunc" for
    from_generator, as TensorFlow names it), or None."""
    for record in dataset.records:
        graph_def = graph_pb2.GraphDef.FromString(base64.b64decode(record["graph"]))
        for node in graph_def.node:
            if node.op not in _REPLAYABLE and get_op_def(node.op).is_stateful:
                return node.op
    return "PyFunc" if _has_generator(dataset.spec) else None


def _check_external_state(dataset: DatasetValue, policy: int) -> None:
    op = _external_op(dataset)
    if op is not None and policy == _FAIL:
        raise errors.FailedPreconditionError(None, None, f"{op} is stateful.")
    if op is not None and policy == _WARN:
        logging.warning(f"FAILED_PRECONDITION: {op} is stateful.")
    if _has_generator(dataset.spec):
        raise errors.UnimplementedError(None, None,
                                        "GeneratorDataset does not support checkpointing.")


def _type_names(iterator: IteratorResource) -> list:
    return [t.name for t in iterator.types]


@kernel("SerializeIterator")
class SerializeIteratorKernel:
    """The iterator's state as a string scalar, after its external-state policy's check."""

    def __init__(self, ctx):
        self.policy = ctx.attrs["external_state_policy"]

    def compute(self, ctx, iterator: IteratorResource):
        position = iterator.position()
        if position is None:
            raise errors.FailedPreconditionError(
                None, None, "Save() failed because the iterator has not been initialized. "
                "Ensure that you have run the initializer operation for this iterator before "
                "saving it.")
        _check_external_state(position.dataset, self.policy)
        state = {"format": _FORMAT, "version": _VERSION,
                 "pipeline": _outline(position.dataset.spec), "types": _type_names(iterator),
                 "produced": position.produced, "exhausted": position.exhausted,
                 "seed_root": position.seed_root}
        return np.array(json.dumps(state).encode(), dtype=object)


def _parse(serialized) -> dict:
    """The state in a SerializeIterator value; InvalidArgumentError for anything else."""
    raw = serialized.item() if isinstance(serialized, np.ndarray) else serialized
    try:
        state = json.loads(raw)
    except (TypeError, ValueError):
        state = None
    if not isinstance(state, dict) or state.get("format") != _FORMAT:
        raise errors.InvalidArgumentError(None, None, _RESTORE_FAILED.format(
            "the checkpointed tensor is not a tensorweave iterator state"))
    if state.get("version") != _VERSION:
        raise errors.InvalidArgumentError(None, None, _RESTORE_FAILED.format(
            f"the iterator state has format version {state.get('version')}, this "
            f"tensorweave reads version {_VERSION}"))
    return state


@kernel("DeserializeIterator", expensive=True)   # replays the elements produced before saving
def _deserialize_iterator(ctx, iterator: IteratorResource, serialized):
    state = _parse(serialized)
    position = iterator.position()
    if position is None:
        raise errors.FailedPreconditionError(None, None, _RESTORE_FAILED.format(
            "Restore() failed because the iterator has not been initialized. Ensure that you "
            "have run the initializer operation for this iterator before restoring it."))
    dataset = position.dataset
    here = (_outline(dataset.spec), _type_names(iterator))
    if (state["pipeline"], state["types"]) != here:
        raise errors.NotFoundError(None, None, _RESTORE_FAILED.format(
            f"the checkpoint holds an iterator over {state['pipeline']} of types "
            f"{state['types']}, this iterator is over {here[0]} of types {here[1]}"))
    iterator.start(dataset, SeedSource(state["seed_root"]), state["produced"],
                   state["exhausted"])
