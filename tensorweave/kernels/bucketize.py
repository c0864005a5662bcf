"""The Bucketize kernel: a binary search of each value among the boundaries."""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel


@kernel("Bucketize")
class BucketizeKernel:
    """np.searchsorted(boundaries, x, side="right"): the boundaries at or below each value
    (a NaN lands past the last one, as in TensorFlow's upper_bound)."""

    def __init__(self, ctx):
        self.boundaries = np.asarray(ctx.attrs["boundaries"], np.float64)
        if np.any(self.boundaries[1:] < self.boundaries[:-1]):
            raise invalid_argument("Expected sorted boundaries")

    def compute(self, ctx, x):
        return np.searchsorted(self.boundaries, x, side="right").astype(np.int32)
