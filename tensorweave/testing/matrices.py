"""Random matrix inputs for OpCase rows of the linear-algebra ops (real or complex)."""
from __future__ import annotations

import numpy as np


def random_matrices(*shape, shift=0.0):
    """An OpCase input generator: normal entries (complex ones for a complex dtype), plus
    `shift` on the diagonal of the innermost matrices."""
    def make(rng, dtype):
        x = rng.randn(*shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.randn(*shape)
        return (x + shift * np.eye(shape[-1]) if shift else x).astype(dtype)
    return make


def well_conditioned(*shape):
    """Square matrices (and triangles) whose diagonals are far from zero."""
    return random_matrices(*shape, shift=3.0)


def adjoint(x):
    """The conjugate transpose of the innermost matrices of a NumPy array."""
    return np.conj(np.swapaxes(x, -1, -2))
