"""tf.data.Iterator: a stateful iterator resource in the graph and the ops that drive it.

`make_initializable_iterator` and `Iterator.from_structure` create an `IteratorV2` resource
that `MakeIterator` (re)starts on a dataset; `make_one_shot_iterator` a `OneShotIterator` that
starts itself on first use in each session; `from_string_handle` selects an iterator at run time
through the string handle of another. As in TensorFlow, every Iterator makes its
`IteratorToStringHandle` op when it is made (after its initializer), and `string_handle()`
returns that one tensor.
"""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    Dataset,
    SparseTensorSpec,
    StructuredOutputs,
    TensorSpec,
    flat_specs,
    from_flat,
    pipeline_tensor,
    tensor_structure,
)
from tensorweave.data.optional import Optional
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops import data_ops, optional_ops

__all__ = ["Iterator", "make_one_shot_iterator", "make_initializable_iterator",
           "get_output_types", "get_output_shapes", "get_output_classes"]


def _flat_signature(structure):
    flat = flat_specs(structure)
    return [s.dtype for s in flat], [s.shape for s in flat]


def _structure_of(output_types, output_shapes, output_classes):
    """TensorFlow's `convert_legacy_structure`: a TensorSpec or SparseTensorSpec per class (a
    Tensor when `output_classes` is None); as there, the flat lists are zipped and the specs
    packed as `output_classes` nests."""
    types = nest.map_structure(_dtypes.as_dtype, output_types)
    if output_shapes is None:
        shapes = [_ts.unknown_shape()] * len(nest.flatten(types))
    else:
        from tensorweave.data.batching import shape_leaves
        shapes = shape_leaves(types, output_shapes)
    if output_classes is None:
        output_classes = nest.map_structure(lambda _: Tensor, types)
    specs = [_spec_of_class(c, s, t) for t, s, c in
             zip(nest.flatten(types), shapes, nest.flatten(output_classes))]
    return nest.pack(output_classes, specs)


def _spec_of_class(output_class, shape, dtype):
    if isinstance(output_class, (TensorSpec, SparseTensorSpec)):
        return output_class
    if isinstance(output_class, type) and issubclass(output_class, SparseTensor):
        return SparseTensorSpec(shape, dtype)
    if isinstance(output_class, type) and issubclass(output_class, Tensor):
        return TensorSpec(shape, dtype)
    raise TypeError(f"Could not build a structure for output class "
                    f"{getattr(output_class, '__name__', output_class)}. Make sure any "
                    "component class in `output_classes` inherits from one of the following "
                    "classes: `tf.TypeSpec`, `tf.sparse.SparseTensor`, `tf.Tensor`, "
                    "`tf.TensorArray`.")


class Iterator(StructuredOutputs):
    """Elements of a dataset, one `get_next()` run at a time (TF1's tf.data.Iterator)."""

    def __init__(self, iterator_resource: Tensor, initializer, structure):
        self._resource = iterator_resource
        self._initializer = initializer
        self._structure = structure
        self._string_handle = data_ops.iterator_to_string_handle(iterator_resource)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """An uninitialized iterator for datasets of this structure (see make_initializer)."""
        structure = _structure_of(output_types, output_shapes, output_classes)
        types, shapes = _flat_signature(structure)
        handle = data_ops.iterator_v2(types, shapes, shared_name=shared_name or "")
        return Iterator(handle, None, structure)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """The iterator whose `string_handle()` value is fed to `string_handle` at run time."""
        structure = _structure_of(output_types, output_shapes, output_classes)
        types, shapes = _flat_signature(structure)
        handle = data_ops.iterator_from_string_handle(string_handle, types, shapes)
        return Iterator(handle, None, structure)

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name=None):
        """An op that (re)starts this iterator on `dataset`."""
        got = _flat_signature(tensor_structure(dataset, "An iterator"))
        want = _flat_signature(self._structure)
        if nest.same_structure(dataset._structure, self._structure) and any(
                type(a) is not type(b) for a, b in zip(nest.flatten(self._structure),
                                                       nest.flatten(dataset._structure))):
            raise TypeError(f"Expected output classes {self.output_classes!r} but got dataset "
                            f"with output classes {dataset.output_classes!r}.")
        if not nest.same_structure(dataset._structure, self._structure) or got[0] != want[0]:
            raise TypeError(f"Expected output types {self.output_types} but got dataset with "
                            f"output types {dataset.output_types}.")
        if not all(s.is_compatible_with(d) for s, d in zip(want[1], got[1])):
            raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but "
                            f"got dataset with output shapes {dataset.output_shapes}.")
        variant, _ = pipeline_tensor(dataset)
        with name_scope(name, "make_initializer") as scope:
            return data_ops.make_iterator(variant, self._resource, name=scope)

    def get_next(self, name=None):
        """The next element as the dataset's nested structure of tensors.

        Running it raises OutOfRangeError after the last element and FailedPreconditionError
        before the iterator is initialized.
        """
        types, shapes = _flat_signature(self._structure)
        flat = data_ops.iterator_get_next(self._resource, types, shapes, name=name)
        return from_flat(self._structure, flat)

    def get_next_as_optional(self) -> Optional:
        """The next element as an `Optional`: after the last element, one without a value
        (running it raises no OutOfRangeError); FailedPreconditionError before the iterator is
        initialized."""
        types, shapes = _flat_signature(self._structure)
        variant = optional_ops.iterator_get_next_as_optional(self._resource, types, shapes)
        return Optional(variant, self._structure)

    def string_handle(self, name=None):
        """A scalar string tensor naming this iterator, for `from_string_handle`.

        Without `name`, the same tensor every time (made with the iterator); with one, a new
        op of that name.
        """
        if name is None:
            return self._string_handle
        return data_ops.iterator_to_string_handle(self._resource, name=name)

    @property
    def element_spec(self):
        return self._structure


def make_initializable_iterator(dataset: Dataset, shared_name=None) -> Iterator:
    """An iterator over `dataset` started (and restarted with new feeds) by `.initializer`."""
    types, shapes = _flat_signature(tensor_structure(dataset, "An iterator"))
    variant, _ = pipeline_tensor(dataset)
    handle = data_ops.iterator_v2(types, shapes, shared_name=shared_name or "")
    return Iterator(handle, data_ops.make_iterator(variant, handle), dataset._structure)


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator that starts itself on first use; the dataset may not read placeholders or
    stateful ops (a variable, a random op, a table) of the graph: ValueError, as TensorFlow's
    capture by value refuses them."""
    types, shapes = _flat_signature(tensor_structure(dataset, "An iterator"))
    variant, reads = pipeline_tensor(dataset)
    # TensorFlow takes an op seed here (to seed its dataset factory function), so with a graph
    # seed every later unseeded random op or shuffle gets the next one: take it as well.
    random_seed.get_seed(None)
    _check_capturable_by_value(reads)
    handle = data_ops.one_shot_iterator(variant, types, shapes)
    return Iterator(handle, None, dataset._structure)


def _check_capturable_by_value(tensors) -> None:
    """TensorFlow's capture by value (framework/function.py `_add_op_and_parents`): the ops
    the tensors are computed from, depth first through data inputs (not control inputs),
    must be neither stateful nor placeholders; a dataset variant may be stateful."""
    from tensorweave.data.function import is_stateful_in_tf
    seen = set()

    def visit(op):
        if op in seen:
            return
        seen.add(op)
        if op.type in ("Placeholder", "PlaceholderV2"):
            raise ValueError(f"Cannot capture a placeholder (name:{op.name}, type:"
                             f"{op.type}) by value.")
        if is_stateful_in_tf(op) and not (op.outputs and
                                          op.outputs[0].dtype.base_dtype == _dtypes.variant):
            raise ValueError(
                f"Cannot capture a stateful node (name:{op.name}, type:{op.type}) by value.: A "
                "likely cause of this error is that the dataset for which you are calling "
                "`make_one_shot_iterator()` captures a stateful object, such as a "
                "`tf.Variable` or `tf.lookup.StaticHashTable`, which is not supported. Use "
                "`make_initializable_iterator()` instead.")
        for t in op.inputs:
            visit(t.op)

    for t in tensors:
        visit(t.op)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes
