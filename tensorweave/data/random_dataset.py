"""Dataset.random and tf.data.experimental.RandomDataset: endless pseudorandom int64 scalars.

The values are TensorFlow 2.21's for the same (graph seed, op seed) pair: its Philox stream
(kernels/dataset_random.py), each element one uint32 word in [0, 2**32).
"""
from __future__ import annotations

import warnings

from tensorweave.data.dataset_ops import Dataset, TensorSpec
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import random_seed
from tensorweave.kernels import dataset_random  # noqa: F401 - registers the node


class RandomDataset(Dataset):
    """A `Dataset` of pseudorandom int64 scalars, without end.

    Args:
      seed: the op-level seed, combined with the graph-level seed as `tf.set_random_seed`
        sets it (neither: different values for every iterator).
      rerandomize_each_iteration: when True, each epoch a `repeat` above starts draws other
        values; by default every epoch repeats the same ones.
      name: unused (TensorFlow's name of the tf.data operation).
    """

    def __init__(self, seed=None, rerandomize_each_iteration=None, name=None):
        seeds = random_seed.get_seed(seed)
        self._seeds = None if seeds[0] is None else list(seeds)
        self._rerandomize = bool(rerandomize_each_iteration)
        if self._rerandomize:
            warnings.warn("In TF 1, the `rerandomize_each_iteration=True` option is only "
                          "supported for repeat-based epochs.", stacklevel=2)
        self._structure = TensorSpec([], _dtypes.int64)

    def _dataset_spec(self, builder):
        return {"kind": "random", "seeds": self._seeds, "rerandomize": self._rerandomize}
