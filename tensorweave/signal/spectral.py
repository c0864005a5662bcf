"""tf.spectral: TF1's older name for the Fourier transforms and DCTs of tf.signal."""
from tensorweave.ops.fft_ops import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from tensorweave.signal.dct_ops import dct, idct

__all__ = ["dct", "fft", "fft2d", "fft3d", "idct", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d",
           "irfft3d", "rfft", "rfft2d", "rfft3d"]
