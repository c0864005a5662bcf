"""tf.data.experimental.copy_to_device and prefetch_to_device: elements moved to a device.

This runtime has CPU devices only, and a pipeline runs where its iterator runs, so a copy to
the session's CPU yields the same elements unchanged. TensorFlow 2.21 places the copy's ops on
the target device; on a machine without it, running the graph fails with InvalidArgumentError
("Cannot assign a device for operation ..."). Here the copy reads a device-name constant placed
on `target_device` (and one on `source_device`), so placement fails the same way, with this
runtime's wording; `allow_soft_placement` moves it to the CPU, as in TensorFlow. As there, the
copy's cardinality is unknown (-2).
"""
from __future__ import annotations

from tensorweave.data.dataset_ops import UnaryDataset
from tensorweave.data.options import AUTOTUNE
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import device as _device
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_device  # noqa: F401 - registers the node

__all__ = ["copy_to_device", "prefetch_to_device"]



class _CopyToDevice(UnaryDataset):
    """The input's elements, read through device-name constants placed on both devices."""

    def __init__(self, input_dataset, target_device: str, source_device: str):
        self._devices = []
        for what, name in (("target_device", target_device), ("source_device", source_device)):
            with _device(name):
                self._devices.append(convert_to_tensor(name, _dtypes.string, name=what))
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, "copy_to_device", args=builder.args(self._devices))


def copy_to_device(target_device, source_device="/cpu:0"):
    """A transformation that copies dataset elements to `target_device`.

    Args:
      target_device: the device name to copy to (e.g. "/cpu:0").
      source_device: the device the input dataset's elements are on.

    Returns:
      A function for `Dataset.apply`: the same elements, of unknown cardinality. Running it
      fails with InvalidArgumentError when either device is not one of the session's (unless
      the session allows soft placement).
    """
    return lambda dataset: _CopyToDevice(dataset, target_device, source_device)


def prefetch_to_device(device, buffer_size=None):
    """A transformation that prefetches dataset elements to `device`.

    Args:
      device: the device name to prefetch to.
      buffer_size: the number of elements to buffer on `device` (None: chosen automatically).

    Returns:
      A function for `Dataset.apply`: `copy_to_device(device)` then `prefetch(buffer_size)`.
    """
    size = AUTOTUNE if buffer_size is None else buffer_size
    return lambda dataset: dataset.apply(copy_to_device(device)).prefetch(size)
