"""Kernels of the FFT ops (ops/fft_ops.py), on scipy.fft over the inner-most 1-3 dimensions.

Complex transforms keep their dtype; RFFT crops its input to `fft_length` and IRFFT reads the
first `fft_length[-1] // 2 + 1` entries of the last dimension (the imaginary parts of the DC and
Nyquist entries are ignored), with TensorFlow's argument checks. Empty inputs give zeros.
"""
from __future__ import annotations

import numpy as np
import scipy  # scipy.fft loads on first use (SciPy imports submodules lazily)

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel

_RANKS = {"": 1, "2D": 2, "3D": 3}


def _rank_of(op_type: str) -> int:
    return _RANKS[op_type.removeprefix("I").removeprefix("R").removeprefix("FFT")]


def _check_rank(x, rank: int) -> None:
    if x.ndim < rank:
        shape = ",".join(str(d) for d in x.shape)
        raise invalid_argument(f"Input must have rank of at least {rank} but got: [{shape}]")


@kernel(["FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"], expensive=True)
class ComplexFFTKernel:
    """x -> fftn / ifftn over the last `rank` axes, in x's precision."""

    def __init__(self, ctx):
        self.rank = _rank_of(ctx.op_type)
        self.transform = scipy.fft.ifftn if ctx.op_type.startswith("I") else scipy.fft.fftn

    def compute(self, ctx, x):
        _check_rank(x, self.rank)
        if x.size == 0:
            return np.zeros_like(x)
        axes = tuple(range(-self.rank, 0))
        return self.transform(x, axes=axes).astype(x.dtype, copy=False)


@kernel(["RFFT", "IRFFT", "RFFT2D", "IRFFT2D", "RFFT3D", "IRFFT3D"], expensive=True)
class RealFFTKernel:
    """x, fft_length -> rfftn (real to half spectrum) or irfftn (back) of size fft_length."""

    def __init__(self, ctx):
        self.rank = _rank_of(ctx.op_type)
        self.inverse = ctx.op_type.startswith("I")
        self.out_dtype = ctx.attrs["Treal" if self.inverse else "Tcomplex"].as_numpy_dtype

    def compute(self, ctx, x, fft_length):
        rank = self.rank
        _check_rank(x, rank)
        if fft_length.shape != (rank,):
            raise invalid_argument(f"fft_length must be length {rank} vector")
        lengths = [int(n) for n in fft_length]
        out_shape = list(x.shape)
        for i, n in enumerate(lengths):
            if n < 0:
                raise invalid_argument(f"fft_length[{i}] must >= 0, but got: {n}")
            inner = i == rank - 1
            need = n // 2 + 1 if inner and self.inverse else n
            index = x.ndim - rank + i
            if x.shape[index] != 0 and x.shape[index] < need:
                raise invalid_argument(f"Input dimension {index} must have length of at least "
                                       f"{need} but got: {x.shape[index]}")
            out_shape[index] = n // 2 + 1 if inner and not self.inverse and n else n
        if x.size == 0 or 0 in out_shape:
            return np.zeros(out_shape, self.out_dtype)
        axes = tuple(range(-rank, 0))
        if self.inverse:
            out = scipy.fft.irfftn(x, s=lengths, axes=axes)
        else:
            out = scipy.fft.rfftn(x, s=lengths, axes=axes)
        return out.astype(self.out_dtype, copy=False)
