"""Runtime nodes of the tf.data.experimental transformations (data/transformations.py).

scan, take_while, unique, ignore_errors, assert_cardinality, group_by_window, the directed
interleave behind sample_from_datasets / choose_from_datasets and dense_to_sparse_batch (whose
SparseTensor element is an (indices, values, dense_shape) triple of arrays), each a node of
kernels/dataset_runtime.py registered under its spec kind when this module is imported. They
follow TensorFlow 2.21's kernels: the same element order, the same run-time errors. They run
one element at a time: each step depends on the state the previous element left (a scan
state, a seen set, a count, a group, the inputs a selector has exhausted).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import dataset_runtime
from tensorweave.kernels.dataset_runtime import ElementError, Node, build

_END = object()
INFINITE = -1


class Bound:
    """A compiled function of a spec record ({"fn", "captures"}) bound to its captures."""

    def __init__(self, record: dict, args, functions):
        self.runner = functions[record["fn"]]
        self.captured = [args[i] for i in record["captures"]]

    def __call__(self, values) -> list:
        return self.runner([*values, *self.captured])


class _Scan(dataset_runtime.UnaryNode):
    """Its params are the initial state; the function returns new state then output. A failed
    element leaves the state as it was (as TensorFlow's scan does)."""

    passes_errors = True

    def __iter__(self):
        run, captured, n_state = self.runner, self.captured, len(self.params)
        state = list(self.params)
        for e in self.child:
            if type(e) is ElementError:
                yield e
                continue
            try:
                out = run([*state, *e, *captured])
            except errors.OpError as error:
                yield self.failure(error)
                continue
            state = out[:n_state]
            yield tuple(out[n_state:])


class _TakeWhile(dataset_runtime.UnaryNode):
    passes_errors = True

    def __iter__(self):
        for e, out in self.outputs():
            if out is not None and not out[0]:
                return
            yield e


class _Unique(dataset_runtime.UnaryNode):
    """The first occurrence of each value (its shape and content) of a one-component input."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        if spec["n_components"] != 1:
            raise errors.InvalidArgumentError(
                None, None, "UniqueDataset only supports inputs with a single component.")

    def __iter__(self):
        seen = set()
        for e in self.child:
            if type(e) is ElementError:
                yield e
                continue
            value = np.asarray(e[0])
            content = tuple(value.ravel().tolist()) if value.dtype == object else \
                value.tobytes()
            key = (value.shape, content)
            if key not in seen:
                seen.add(key)
                yield e


class _IgnoreErrors(dataset_runtime.UnaryNode):
    """Drops the elements whose computation fails.

    Its input yields failed elements as ElementErrors (dataset_runtime), whatever consumes
    this node, and they are dropped here. An error raised below a node that cannot pass such
    items on ends the input: that Python generator cannot go on (TensorFlow would ask it for
    the next element).
    """

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.child.allow_errors()

    def __iter__(self):
        elements = iter(self.child)
        while True:
            try:
                e = next(elements, _END)
            except errors.OutOfRangeError:
                raise
            except errors.OpError:
                return
            if e is _END:
                return
            if type(e) is not dataset_runtime.ElementError:
                yield e


def _elements(n: int) -> str:
    if n == INFINITE:
        return "an infinite number of elements"
    return f"{n} element{'s' if n != 1 else ''}"


class _AssertCardinality(dataset_runtime.UnaryNode):
    """Its input's elements, counted: a failed one passes on uncounted, as in TF."""

    passes_errors = True

    def __iter__(self):
        expected, count = int(self.params[0]), 0
        for e in self.child:
            if type(e) is dataset_runtime.ElementError:
                yield e
                continue
            count += 1
            if expected != INFINITE and count > expected:
                raise errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain {_elements(expected)} "
                    f"but contained at least {_elements(count)}.")
            yield e
        if count != expected:
            raise errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain {_elements(expected)} but "
                f"contained only {_elements(count)}.")


class _GroupByWindow(Node):
    """Groups elements by an int64 key into windows of a per-key size; a full window is
    reduced to a dataset (whose pipeline reads the window's elements as its last argument)
    emitted before the next input is read. At the end the remaining windows are reduced in
    ascending key order (TensorFlow's std::map). A failed element, or a key or window size
    that cannot be had for one, is passed on at once and leaves the groups as they were, as
    are the failures of a window's dataset."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        self.child = build(spec["input"], args, functions)
        self.inner, self.functions = spec["reduce"]["inner"], functions
        self.key, self.size, self.reduce = (
            Bound(spec[k], args, functions) for k in ("key", "size", "reduce"))

    def inputs(self) -> list:
        return [self.child]

    def __iter__(self):
        groups: dict[int, list] = {}
        for e in self.child:
            if type(e) is dataset_runtime.ElementError:
                yield e
                continue
            try:
                key, size = self._key_and_size(e)
            except errors.OpError as error:
                yield self.failure(error)
                continue
            group = groups.setdefault(key, [])
            group.append(e)
            if len(group) >= size:
                del groups[key]
                yield from self._reduced(key, group)
        for key in sorted(groups):
            yield from self._reduced(key, groups[key])

    def _key_and_size(self, element) -> tuple[int, int]:
        key = int(self.key(element)[0])
        size = int(self.size([np.int64(key)])[0])
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Window size must be greater than zero, but got {size}.")
        return key, size

    def _reduced(self, key: int, group: list):
        try:
            values = self.reduce([np.int64(key)])
        except errors.OpError as error:
            return iter([self.failure(error)])
        window = build(self.inner, [*values, group], self.functions)
        if self.resumable:
            window.allow_errors()
        return iter(window)


class _GroupWindow(Node):
    """The elements of one group_by_window window: the last of its pipeline's args."""

    def __init__(self, spec, args, functions):
        self.elements = args[spec["args"][0]]

    def __iter__(self):
        return iter(self.elements)


class _DirectedInterleave(Node):
    """Each element from the input the next int64 of the selector names (TF 2.21's
    DirectedInterleaveDataset): a selection of an exhausted input is skipped, or ends
    everything when `stop_on_empty`; the end comes with the selector's or when every input is
    exhausted. A failed element of an input is passed on like any other.

    Given the weights of sample_from_datasets' selector (a weights tensor's values, in the
    spec's args), it also ends once every input the selector can still choose (weight finite
    and positive) is exhausted: TensorFlow would draw forever there, choosing only exhausted
    inputs, and hang its get_next."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        self.children = [build(s, args, functions) for s in spec["inputs"]]
        self.selector = build(spec["selector"], args, functions)
        self.stop = spec["stop_on_empty"]
        self.choosable = None
        if spec.get("args"):
            weights = np.asarray(args[spec["args"][0]], np.float64).reshape(-1)
            with np.errstate(invalid="ignore"):
                self.choosable = np.isfinite(weights) & (weights > 0)

    def inputs(self) -> list:
        return self.children

    def __iter__(self):
        inputs = [iter(c) for c in self.children]
        n, exhausted = len(inputs), [False] * len(inputs)
        for (index,) in self.selector:
            index = int(index)
            if not 0 <= index < n:
                raise errors.InvalidArgumentError(
                    None, None, f"Selector index out of range: {index} >= {n}")
            if exhausted[index]:
                continue
            e = next(inputs[index], _END)
            if e is not _END:
                yield e
                continue
            if self.stop:
                return
            exhausted[index] = True
            if all(exhausted) or self._nothing_choosable_left(exhausted):
                return

    def _nothing_choosable_left(self, exhausted: list) -> bool:
        choosable = self.choosable
        return choosable is not None and choosable.size == len(exhausted) and \
            not any(c and not x for c, x in zip(choosable.tolist(), exhausted))


class _DenseToSparseBatch(dataset_runtime.UnaryNode):
    """Batches of up to `size` dense elements as one sparse triple; a dim of `row_shape` that
    is -1 is the batch's largest."""

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.size = dataset_runtime.checked_batch_size(self.params[0])
        self.row_shape = spec["row_shape"]

    passes_errors = True

    def __iter__(self):
        return dataset_runtime.stacked(
            dataset_runtime.chunks(self.child, self.size, False),
            lambda chunk: _sparse_batch([np.asarray(e[0]) for e in chunk], self.row_shape),
            self.failure)


def _row_text(row_shape: list) -> str:
    """The row shape as TF's messages print it, -1 (unknown) as `?`."""
    return dims_text([d if d >= 0 else None for d in row_shape])


def _sparse_batch(rows: list, row_shape: list) -> tuple:
    """(indices, values, dense_shape) of `rows` stacked: every position of each row, row-major
    under its batch index (zeros included, as TensorFlow's kernel does)."""
    for row in rows:
        if row.ndim != len(row_shape):
            raise errors.InvalidArgumentError(
                None, None, f"Input element had shape ({dims_text(row.shape)}) that is "
                f"incompatible with the row shape ({_row_text(row_shape)}).")
        if any(0 <= want < have for have, want in zip(row.shape, row_shape)):
            raise errors.DataLossError(
                None, None, f"Input element had shape ({dims_text(row.shape)}) that is larger "
                f"than the row shape ({_row_text(row_shape)}).")
    dense_shape = [len(rows)] + [want if want >= 0 else max(row.shape[k] for row in rows)
                                 for k, want in enumerate(row_shape)]
    indices = np.concatenate([np.insert(np.argwhere(np.ones(row.shape, bool)), 0, i, axis=1)
                              for i, row in enumerate(rows)]).astype(np.int64)
    values = np.concatenate([row.reshape(-1) for row in rows])
    if values.dtype.kind in "SU":   # strings arrive as bytes scalars: TF's are objects
        values = values.astype(object)
    return indices, values, np.array(dense_shape, np.int64)


dataset_runtime.register_nodes({
    "scan": _Scan, "take_while": _TakeWhile, "unique": _Unique,
    "ignore_errors": _IgnoreErrors, "assert_cardinality": _AssertCardinality,
    "group_by_window": _GroupByWindow, "group_window": _GroupWindow,
    "directed_interleave": _DirectedInterleave, "dense_to_sparse_batch": _DenseToSparseBatch,
})
