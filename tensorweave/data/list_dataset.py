"""tf.data.experimental.from_list: a dataset of the elements of a Python list, in order.

Unlike from_tensor_slices, each element is converted on its own, so elements may differ in
shape: the element spec has, per component, the most specific shape compatible with all of
them (an unknown dimension where they differ, an unknown rank where their ranks do).
"""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import Dataset, TensorSpec, spec_of
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_list  # noqa: F401 - registers the node


class ListDataset(Dataset):
    def __init__(self, elements):
        if not elements:
            raise ValueError("Invalid `elements`. `elements` should not be empty. If you want "
                             "an empty dataset, use `tf.data.Dataset.range(0)`.")
        if not isinstance(elements, list):
            raise ValueError("Invalid `elements`. `elements` must be a list.")
        self._elements = [nest.map_structure(
            lambda v: convert_to_tensor(v, name="component"), e) for e in elements]
        first = nest.map_structure(spec_of, self._elements[0])
        flat = nest.flatten(first)
        for i, element in enumerate(self._elements[1:], 1):
            specs = nest.map_structure(spec_of, element)
            if not nest.same_structure(first, specs):
                raise ValueError(
                    "The two structures don't have the same nested structure.\n\nFirst "
                    f"structure: type={type(first).__name__} str={first}\n\nSecond structure: "
                    f"type={type(specs).__name__} str={specs}")
            flat = [_supertype(a, b, i) for a, b in zip(flat, nest.flatten(specs))]
        self._structure = nest.pack(first, flat)

    def _dataset_spec(self, builder):
        return {"kind": "list",
                "elements": [builder.args(nest.flatten(e)) for e in self._elements]}


def _supertype(a: TensorSpec, b: TensorSpec, i: int) -> TensorSpec:
    """The spec compatible with both components; TypeError when their dtypes differ (which
    TensorFlow 2.21 reports as an AttributeError of its own)."""
    if a.dtype != b.dtype:
        raise TypeError(f"Invalid `elements`. Element {i} has a component of type "
                        f"{b.dtype!r} where the elements before it have {a.dtype!r}.")
    return a.most_specific_compatible_type(b)


def from_list(elements, name=None):
    """A `Dataset` of the elements of `elements`, one by one.

    Args:
      elements: a non-empty list of elements of the same nested structure (tuples, dicts and
        tensors or values convertible to them); their components may differ in shape, not in
        dtype.
      name: unused (TensorFlow's name of the tf.data operation).

    Returns:
      A `Dataset`.

    Raises:
      ValueError: for an empty or non-list `elements`, or elements of different structures.
      TypeError: for components of different dtypes.
    """
    return ListDataset(elements)
