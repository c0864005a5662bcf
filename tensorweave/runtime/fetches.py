"""Fetch structures: flatten any nest of lists, tuples, namedtuples and dicts of graph elements
into unique Tensors and target Operations, and rebuild the same structure from the results.
A SparseTensor is fetched as its three component Tensors and rebuilt as a SparseTensorValue, an
IndexedSlices as its values, indices and dense_shape (when it has one) as an IndexedSlicesValue."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tensorweave.framework.errors import InaccessibleTensorError
from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue


class FetchStructure:
    """A flattened fetch argument: unique tensors, targets, and how to rebuild the result."""

    __slots__ = ("tensors", "targets", "_template")

    def __init__(self, graph, fetches):
        self.tensors: list[Tensor] = []
        self.targets: list[Operation] = []
        index: dict[Tensor, int] = {}
        self._template = self._flatten(graph, fetches, index)

    def _flatten(self, graph, fetch, index):
        if isinstance(fetch, (list, tuple)) and not _is_namedtuple(fetch):
            return (type(fetch), [self._flatten(graph, f, index) for f in fetch])
        if _is_namedtuple(fetch):
            return (type(fetch), [self._flatten(graph, f, index) for f in fetch])
        if isinstance(fetch, Mapping):
            return (type(fetch), [(k, self._flatten(graph, v, index)) for k, v in fetch.items()])
        if isinstance(fetch, SparseTensor):
            return (SparseTensorValue, [self._flatten(graph, t, index) for t in
                                        (fetch.indices, fetch.values, fetch.dense_shape)])
        if isinstance(fetch, IndexedSlices):
            return (IndexedSlicesValue, [None if t is None else self._flatten(graph, t, index)
                                         for t in (fetch.values, fetch.indices,
                                                   fetch.dense_shape)])
        element = _as_element(graph, fetch)
        check_fetchable(graph, element)
        if isinstance(element, Operation):
            if element not in self.targets:
                self.targets.append(element)
            return None
        if element not in index:
            index[element] = len(self.tensors)
            self.tensors.append(element)
        return index[element]

    def build(self, values: list):
        return _build(self._template, values)


def _build(template, values):
    if template is None:
        return None
    if isinstance(template, int):
        return values[template]
    kind, children = template
    if issubclass(kind, Mapping):
        return kind((k, _build(c, values)) for k, c in children)
    built = [_build(c, values) for c in children]
    if hasattr(kind, "_fields"):
        return kind(*built)
    return kind(built)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def check_fetchable(graph, element) -> None:
    """InaccessibleTensorError for an op (or its output) built inside a cond or while loop."""
    if not graph.is_fetchable(element):
        op = element.op if isinstance(element, Tensor) else element
        raise InaccessibleTensorError(
            f"Operation {op.name} has been marked as not fetchable. Typically this happens "
            "when it is defined in another function or code block. Use return values, "
            "explicit Python locals or TensorFlow collections to access it.")


def _as_element(graph, fetch):
    if fetch is None:
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}")
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except TypeError as e:
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a "
                        f"string or Tensor. ({e})") from None
    except ValueError as e:
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({e})") from None
    except KeyError as e:
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({e.args[0]})") from None


def to_result(value):
    """A fetched value as TF returns it: ndarrays, with 0-d results as NumPy scalars, and a
    scalar string as `bytes` (not NumPy's `bytes_`)."""
    if type(value) is np.ndarray:
        if value.ndim:
            return value
        value = value[()]
    elif not isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.ndim:
            return arr
        value = arr[()]
    return bytes(value) if type(value) is np.bytes_ else value
