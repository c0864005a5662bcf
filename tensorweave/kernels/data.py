"""Kernels of the tf.data ops (ops/data_ops.py): the pipeline value and iterator resources.

An iterator is an `IteratorResource` in the device's resource manager (so each session has its
own); its handle value is the resource itself, its string handle "<key>@<serial>": the resource's
key and a number unique to this resource in the process, so that the handle of an iterator of
another session (or of an earlier one of this node) names no iterator here (NotFoundError, as in
TensorFlow), while a string not of that form is not a handle at all (InvalidArgumentError).
`MakeIterator` builds fresh runtime nodes (kernels/dataset_runtime.py) from the dataset value
and starts iterating; `IteratorGetNext` takes the next element, raising the error of a failed
one (an `ElementError`), after which the next call goes on, as TensorFlow's does. The
resource keeps what a checkpoint needs to rebuild its position (kernels/iterator_checkpoint.py):
the dataset, the elements produced since the initialization, whether the end was reached, and
the root of the seeds its nodes draw (kernels/dataset_seeds.py).
"""
from __future__ import annotations

import itertools
import json
import threading
from typing import NamedTuple

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.dataset_functions import FunctionRunner
from tensorweave.kernels.dataset_runtime import DatasetValue, ElementError
from tensorweave.kernels.dataset_seeds import SeedSource
from tensorweave.kernels.registry import kernel

_CONTAINER = "_iterators"
_serials = itertools.count()


class Position(NamedTuple):
    """Where an initialized iterator is: what a checkpoint saves to rebuild it."""

    dataset: DatasetValue
    produced: int      # elements produced since the initialization
    exhausted: bool    # the end of the dataset was reached
    seed_root: int     # the root of the seeds its nodes draw (SeedSource)


class IteratorResource:
    """One iterator: its element signature and, once initialized, the running Python
    iterator and its Position."""

    def __init__(self, key: str, types, shapes):
        self.key = key
        self.string_handle = f"{key}@{next(_serials)}"
        self.types = list(types)
        self.shapes = list(shapes)
        self._it = None
        self._dataset = None
        self._seeds = None
        self._produced = 0
        self._exhausted = False
        self._lock = threading.Lock()
        self._first_start = threading.Lock()

    def initialize(self, dataset: DatasetValue) -> None:
        self.start(dataset, SeedSource(), 0, False)

    def initialize_once(self, dataset: DatasetValue) -> None:
        """Initializes the iterator unless it already is (a one-shot iterator): steps running
        at once all see one initialization, so none starts the dataset over."""
        with self._first_start:
            if self._it is None:
                self.initialize(dataset)

    def start(self, dataset: DatasetValue, seeds: SeedSource, produced: int,
              exhausted: bool) -> None:
        """Iterates `dataset` from the start with node seeds from `seeds`, first skipping
        `produced` elements (replayed: the nodes are Python generators, whose state cannot be
        set directly); an `exhausted` iterator is at its end without replaying."""
        with seeds:
            if exhausted:
                it = iter(())
            else:
                root = dataset.make_node()
                root.allow_errors()
                it = iter(root)
            next(itertools.islice(it, produced, produced), None)
        with self._lock:
            self._it, self._dataset, self._seeds = it, dataset, seeds
            self._produced, self._exhausted = produced, exhausted

    def position(self) -> Position | None:
        """The current Position, None before the first initialization."""
        with self._lock:
            if self._it is None:
                return None
            return Position(self._dataset, self._produced, self._exhausted, self._seeds.root)

    def get_next(self):
        with self._lock:
            if self._it is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.")
            with self._seeds:
                element = next(self._it, None)
            if element is None:
                self._exhausted = True
            else:
                self._produced += 1
        if element is None:
            raise errors.OutOfRangeError(None, None, "End of sequence")
        if type(element) is ElementError:
            raise element.error
        return element


class DatasetPipelineKernel:
    """Parses the pipeline description and compiles its functions once per node."""

    def __init__(self, ctx):
        description = json.loads(ctx.attrs["pipeline"])
        self.spec = description["root"]
        self.records = description["functions"]
        self.functions = [FunctionRunner(f, ctx.device) for f in self.records]

    def compute(self, ctx, *args):
        return DatasetValue(self.spec, args, self.functions, self.records)


kernel("DatasetPipeline")(DatasetPipelineKernel)


@kernel("ReduceDataset")
class ReduceDatasetKernel:
    """Runs the pipeline to its end, folding each element into the state (Dataset.reduce)."""

    def __init__(self, ctx):
        self.function = FunctionRunner(json.loads(ctx.attrs["function"]), ctx.device)
        self.n_state = len(ctx.attrs["Tstate"])

    def compute(self, ctx, dataset, *args):
        initial, captured = args[:self.n_state], list(args[self.n_state:])
        state = list(initial)
        for element in dataset.make_node():
            state = self.function([*state, *element, *captured])
        # A state the function never replaced is the initial value itself: hand out a copy.
        state = [np.array(v, copy=True) if any(v is a for a in initial) else v for v in state]
        return tuple(state) if len(state) != 1 else state[0]


def _resource(ctx):
    name = ctx.attrs["shared_name"] or ctx.node_name
    key = f"{ctx.attrs['container']}/{name}"
    return ctx.resources.lookup_or_create(
        _CONTAINER, key, lambda: IteratorResource(key, ctx.attrs["output_types"],
                                                  ctx.attrs["output_shapes"]))


@kernel("IteratorV2")
def _iterator_v2(ctx):
    return _resource(ctx)


@kernel("OneShotIterator")
def _one_shot_iterator(ctx, dataset):
    resource = _resource(ctx)
    resource.initialize_once(dataset)
    return resource


@kernel("MakeIterator")
def _make_iterator(ctx, dataset, iterator):
    iterator.initialize(dataset)


@kernel("IteratorGetNext")
def _iterator_get_next(ctx, iterator):
    element = iterator.get_next()
    return element if len(element) != 1 else element[0]


@kernel("IteratorToStringHandle")
def _iterator_to_string_handle(ctx, iterator):
    return np.array(iterator.string_handle.encode(), dtype=object)


@kernel("IteratorFromStringHandleV2")
def _iterator_from_string_handle(ctx, handle):
    handle = handle.item() if isinstance(handle, np.ndarray) else handle
    handle = handle.decode(errors="replace") if isinstance(handle, bytes) else str(handle)
    key, at, serial = handle.rpartition("@")
    if not at or not key or not serial.isdigit():
        raise errors.InvalidArgumentError(
            None, None, "Could not parse string_handle as a valid ResourceHandle")
    resource = ctx.resources.lookup(_CONTAINER, key)
    if resource.string_handle != handle:
        raise errors.NotFoundError(None, None, f"Resource {handle} does not exist in this "
                                   "session.")
    types = ctx.attrs["output_types"]
    if types and list(types) != resource.types:
        raise errors.InvalidArgumentError(
            None, None, "Expected types " + str([t.name for t in types]) + " but got "
            "iterator of types " + str([t.name for t in resource.types]) + ".")
    return resource
