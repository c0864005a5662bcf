"""tf.data.experimental.pad_to_cardinality: dict elements padded with masked fillers.

TensorFlow 2.21's composition in graph mode: each element gains `mask_key: True`, then comes a
filler (zeros of every component, `mask_key: False`) repeated `cardinality - cardinality()`
times. That count is a tensor, unchecked when the graph is built: an input of unknown
cardinality (-2) gets `cardinality + 2` fillers, and one longer than `cardinality` a negative
count, which repeats the filler without end, as in TensorFlow.
"""
from __future__ import annotations

from collections.abc import Mapping

from tensorweave.data import nest
from tensorweave.data.dataset_ops import Dataset
from tensorweave.ops.array_creation_ops import zeros


def pad_to_cardinality(cardinality, mask_key="valid"):
    """Pads a dataset of dict elements with fake elements up to `cardinality` elements.

    Args:
      cardinality: the number of elements to reach (an int or int64 scalar tensor).
      mask_key: the key added to every element: True for the dataset's own, False for the
        padding.

    Returns:
      A function from a dataset (of known, finite cardinality) to the padded dataset, for
      `Dataset.apply`.

    Raises:
      ValueError: when applied to a dataset whose elements are not dicts, or have a component
        of a partially known shape (its zeros cannot be made).
    """
    def apply(dataset):
        if not isinstance(dataset.element_spec, Mapping):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        filler = nest.map_structure(lambda spec: zeros(spec.shape, spec.dtype),
                                    dataset.element_spec)
        filler[mask_key] = False
        fillers = Dataset.from_tensors(filler).repeat(cardinality - dataset.cardinality())
        return dataset.map(lambda element: {**element, mask_key: True}).concatenate(fillers)
    return apply
