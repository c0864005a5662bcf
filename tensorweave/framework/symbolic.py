"""tf.is_symbolic_tensor: whether a value is a graph Tensor (as opposed to data or a wrapper)."""
from __future__ import annotations

from tensorweave.framework.operation import Tensor

__all__ = ["is_symbolic_tensor"]


def is_symbolic_tensor(tensor) -> bool:
    """Tests whether `tensor` is a symbolic (graph) Tensor.

    As in TensorFlow 2.21, only a Tensor qualifies: Variables, SparseTensors, IndexedSlices,
    NumPy arrays and Python values do not.

    Args:
      tensor: any object.

    Returns:
      True if `tensor` is a Tensor.
    """
    return isinstance(tensor, Tensor)
