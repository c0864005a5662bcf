"""tf.data.experimental.get_structure and TF's legacy names of the element spec classes.

`TensorStructure(dtype, shape)` and `SparseTensorStructure(dtype, shape)` make a TensorSpec and
a SparseTensorSpec (note the argument order: dtype first); `DatasetStructure` is DatasetSpec.
`Structure` stands for TensorFlow's TypeSpec base class: here an abstract class that the spec
classes an element can hold are registered with, so `isinstance(spec, Structure)` holds for
each of them (tensorweave's specs have no common base class).
"""
from __future__ import annotations

import abc

from tensorweave.data.dataset_ops import Dataset, DatasetSpec, SparseTensorSpec, TensorSpec
from tensorweave.data.iterator_ops import Iterator
from tensorweave.data.optional import OptionalSpec

__all__ = ["DatasetStructure", "SparseTensorStructure", "Structure", "TensorStructure",
           "get_structure"]

DatasetStructure = DatasetSpec


class Structure(abc.ABC):  # noqa: B024 - a registry of virtual subclasses, no methods
    """The type of an element component (TensorFlow's TypeSpec), for `isinstance` checks."""


for _spec_class in (TensorSpec, SparseTensorSpec, DatasetSpec, OptionalSpec):
    Structure.register(_spec_class)


def TensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """The TensorSpec of tensors of `dtype` and `shape`."""
    return TensorSpec(shape, dtype)


def SparseTensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """The SparseTensorSpec of SparseTensors of `dtype` values and dense shape `shape`."""
    return SparseTensorSpec(shape, dtype)


def get_structure(dataset_or_iterator):
    """The element structure of a dataset or an iterator: a nest of specs.

    Args:
      dataset_or_iterator: a `tf.data.Dataset` or a `tf.data.Iterator`.

    Returns:
      Its `element_spec`: TensorSpecs, SparseTensorSpecs and DatasetSpecs nested as its
      elements are.

    Raises:
      TypeError: for anything else.
    """
    if isinstance(dataset_or_iterator, (Dataset, Iterator)):
        return dataset_or_iterator.element_spec
    raise TypeError("Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a "
                    "`tf.data.Dataset` or tf.data.Iterator object, but got "
                    f"{type(dataset_or_iterator)}.")
