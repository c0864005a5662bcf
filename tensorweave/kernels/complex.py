"""Kernels of Complex, Real, Imag and Angle (ops/complex_ops.py).

Complex casts the real parts to the output dtype and adds the imaginary parts times 1j in
place, so broadcasting follows NumPy's rules as the shape function does. Real, Imag and Angle
are NumPy's own functions; the output dtype is already the input's real dtype.
"""
from __future__ import annotations

import numpy as np

from tensorweave.kernels.registry import kernel, register_pure


@kernel("Complex")
class ComplexKernel:
    """real + imag * 1j in the `Tout` dtype."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["Tout"].as_numpy_dtype

    def compute(self, ctx, re, im):
        shape = np.broadcast_shapes(np.shape(re), np.shape(im))
        out = np.empty(shape, dtype=self.dtype)
        out.real = re
        out.imag = im
        return out


register_pure("Real", lambda x: np.ascontiguousarray(np.real(x)))
register_pure("Imag", lambda x: np.ascontiguousarray(np.imag(x)))
register_pure("Angle", np.angle)
