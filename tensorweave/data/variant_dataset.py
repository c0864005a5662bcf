"""tf.data.experimental.to_variant and from_variant: a dataset as a variant tensor and back.

`to_variant` is the dataset's DatasetPipeline tensor (`pipeline_tensor`): its value is the whole
pipeline (description, argument values and functions) as one runtime object. `from_variant`
makes a dataset of such a tensor; the structure it is given is trusted, as in TensorFlow, and
must be the variant's element structure. Its cardinality is the variant's pipeline's.
"""
from __future__ import annotations

from tensorweave.data.dataset_ops import Dataset, pipeline_tensor
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.kernels import dataset_variant  # noqa: F401 - registers the node

__all__ = ["from_variant", "to_variant"]


class VariantDataset(Dataset):
    """The elements of the pipeline a variant tensor holds."""

    def __init__(self, variant: Tensor, structure):
        self._variant = variant
        self._structure = structure

    def _dataset_spec(self, builder):
        return {"kind": "variant", "args": [builder.arg(self._variant)]}


def to_variant(dataset):
    """The scalar variant tensor representing `dataset`.

    Args:
      dataset: a `tf.data.Dataset`.

    Returns:
      A scalar `tf.variant` tensor.
    """
    return pipeline_tensor(dataset)[0]


def from_variant(variant, structure):
    """The dataset a variant tensor (from `to_variant`) represents.

    Args:
      variant: a scalar `tf.variant` tensor.
      structure: the element structure of that dataset (a nest of TensorSpecs or
        SparseTensorSpecs).

    Returns:
      A `tf.data.Dataset`.

    Raises:
      TypeError: when `variant` is not a variant tensor.
    """
    if not isinstance(variant, Tensor) or variant.dtype != _dtypes.variant:
        raise TypeError(f"`variant` must be a scalar tf.variant tensor, got {variant!r}.")
    return VariantDataset(variant, structure)

