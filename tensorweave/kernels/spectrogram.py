"""Kernels of AudioSpectrogram and Mfcc (ops/spectrogram_ops.py), in float64 like TensorFlow's.

Spectrogram: frames are strided views of the audio, times a periodic Hann window
0.5 - 0.5 cos(2 pi n / window_size), through a real FFT of the next power of two; the squared
magnitude is rounded to float32 before any square root, which is taken in float32.

Mfcc, per frame: the square roots of the spectrogram's bins go through a triangular mel
filterbank (mel(f) = 1127 ln(1 + f / 700)), are logged with a floor of 1e-12 and go through an
orthonormal DCT-II whose first `dct_coefficient_count` rows are kept. The filterbank is
`filterbank_channel_count` triangles whose edges are equally spaced in mel between the
frequency limits; each bin from the first past the lower limit to the last below the upper one
gives part of its value to the triangle above it and the rest to the one below. When the upper
limit lies beyond the spectrogram's last bin TensorFlow computes nothing and returns zeros.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.ops.spectrogram_ops import fft_length, frame_count

_LOG_FLOOR = 1e-12



@kernel("AudioSpectrogram")
class AudioSpectrogramKernel:
    """Window, stride and FFT size parsed once; the Hann window made once."""

    def __init__(self, ctx):
        self.window_size = ctx.attrs["window_size"]
        self.stride = ctx.attrs["stride"]
        self.squared = ctx.attrs["magnitude_squared"]
        self.fft_length = fft_length(self.window_size)
        self.hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(self.window_size) /
                                       self.window_size)

    def compute(self, ctx, audio):
        if np.ndim(audio) != 2:
            raise invalid_argument(f"input must be 2-dimensional{dims_text(np.shape(audio))}")
        samples, channels = audio.shape
        frames = frame_count(samples, self.window_size, self.stride)
        if frames == 0 or channels == 0:
            return np.zeros([channels, frames, self.fft_length // 2 + 1], np.float32)
        # [frames, channels, window]: the windows as strided views, without copying the audio.
        windows = sliding_window_view(audio.astype(np.float64), self.window_size, axis=0)
        spectrum = np.fft.rfft(windows[::self.stride][:frames] * self.hann, self.fft_length)
        power = (spectrum.real ** 2 + spectrum.imag ** 2).astype(np.float32)
        out = power if self.squared else np.sqrt(power)
        return np.ascontiguousarray(out.transpose(1, 0, 2))


def _mel(hz):
    """Frequency in Hz to mel."""
    return 1127.0 * np.log1p(np.asarray(hz, np.float64) / 700.0)


class _MfccDesign:
    """The filterbank weights [bins, channels] and DCT matrix [coefficients, channels] of one
    spectrogram width and sample rate; `usable` is False when TensorFlow outputs zeros."""

    def __init__(self, bins: int, rate: int, attrs: dict):
        lower, upper = attrs["lower_frequency_limit"], attrs["upper_frequency_limit"]
        channels, coefficients = attrs["filterbank_channel_count"], attrs["dct_coefficient_count"]
        if (channels < 1 or rate <= 0 or bins < 2 or lower < 0 or upper <= lower
                or not 1 <= coefficients <= channels):
            raise invalid_argument(f"Mfcc initialization failed for channel count {bins}, sample "
                                   f"rate {rate} and filterbank_channel_count {channels}")
        mel_lower = _mel(lower)
        # channels + 1 edges: triangle c rises from edge c - 1 (the lower limit for c = 0) to
        # edge c and falls to edge c + 1.
        edges = mel_lower + (_mel(upper) - mel_lower) / (channels + 1) * np.arange(1, channels + 2)
        hz_per_bin = 0.5 * rate / (bins - 1)
        first, last = int(1.5 + lower / hz_per_bin), int(upper / hz_per_bin)
        self.usable = last < bins
        self.weights = np.zeros([bins, channels])
        for i in range(first, min(last, bins - 1) + 1):
            mel = _mel(i * hz_per_bin)
            below = min(int(np.searchsorted(edges, mel)), channels) - 1   # edges[below] < mel
            top = edges[below + 1]
            bottom = edges[below] if below >= 0 else mel_lower
            share = (top - mel) / (top - bottom)   # the part going to the triangle below
            if below >= 0:
                self.weights[i, below] = share
            if below + 1 < channels:
                self.weights[i, below + 1] = 1.0 - share
        k, j = np.ogrid[:coefficients, :channels]
        self.dct = np.sqrt(2.0 / channels) * np.cos(np.pi / channels * (j + 0.5) * k)


@kernel("Mfcc")
class MfccKernel:
    """The attrs parsed once; the filterbank built per spectrogram width and sample rate."""

    def __init__(self, ctx):
        self.attrs = dict(ctx.attrs)
        self.designs: dict = {}   # (bins, sample rate) -> _MfccDesign

    def _design(self, bins: int, rate: int):
        design = self.designs.get((bins, rate))
        if design is None:
            design = _MfccDesign(bins, rate, self.attrs)
            if len(self.designs) < 16:
                self.designs[(bins, rate)] = design
        return design

    def compute(self, ctx, spectrogram, sample_rate):
        if np.ndim(spectrogram) != 3:
            raise invalid_argument(f"spectrogram must be 3-dimensional"
                                   f"{dims_text(np.shape(spectrogram))}")
        if np.ndim(sample_rate) != 0:
            raise invalid_argument(f"Input sample_rate should be a scalar tensor, got "
                                   f"{dims_text(np.shape(sample_rate))} instead.")
        design = self._design(spectrogram.shape[2], int(sample_rate))
        out_shape = [*spectrogram.shape[:2], design.dct.shape[0]]
        if not design.usable:
            return np.zeros(out_shape, np.float32)
        with np.errstate(invalid="ignore"):   # negative power gives NaN, as in TensorFlow
            magnitude = np.sqrt(spectrogram.astype(np.float64))
        log_mel = np.log(np.maximum(magnitude @ design.weights, _LOG_FLOOR))
        return (log_mel @ design.dct.T).astype(np.float32).reshape(out_shape)
