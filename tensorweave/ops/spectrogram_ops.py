"""Speech features: AudioSpectrogram and Mfcc (TF1 contrib's audio_ops; tf.raw_ops only).

AudioSpectrogram slides a periodic Hann window of `window_size` samples along audio
[samples, channels], `stride` samples apart, and gives each frame's FFT magnitude (or squared
magnitude), the FFT zero-padded to the next power of two: [channels, frames, fft_length/2 + 1].
Mfcc turns such a squared-magnitude spectrogram into mel-frequency cepstral coefficients
[channels, frames, dct_coefficient_count]. TensorFlow 2.21 gives them no Python wrapper and no
gradient: asking for one raises LookupError, as there. The kernels are in
kernels/spectrogram.py.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.shape_checks import dims_with_rank, shape_with_rank

__all__: list[str] = []


def fft_length(window_size: int) -> int:
    """The FFT size of a window: the smallest power of two at least `window_size`."""
    return 1 << (window_size - 1).bit_length()


def frame_count(samples: int, window_size: int, stride: int) -> int:
    """Whole windows that fit in `samples`, `stride` apart (none when the audio is shorter)."""
    return 0 if samples < window_size else 1 + (samples - window_size) // stride


def _audio_spectrogram_shape(ctx):
    """[samples, channels] -> [channels, frames, fft_length / 2 + 1]."""
    samples, channels = dims_with_rank(ctx.input_shape(0)._dims, 2)
    window_size, stride = ctx.attr("window_size"), ctx.attr("stride")
    if window_size <= 1:
        raise ValueError(f"window size must be > 1, got {window_size}")
    if stride <= 0:
        raise ValueError(f"stride must be strictly positive, got {stride}")
    frames = None if samples is None else frame_count(samples, window_size, stride)
    return [_ts.TensorShape([channels, frames, fft_length(window_size) // 2 + 1])]


def _mfcc_shape(ctx):
    """[channels, frames, bins] and a scalar rate -> [channels, frames, dct_coefficient_count];
    the filterbank's attrs are checked when the kernel runs, as in TensorFlow."""
    channels, frames, _ = dims_with_rank(ctx.input_shape(0)._dims, 3)
    shape_with_rank(ctx.input_shape(1), 0)
    return [_ts.TensorShape([channels, frames, ctx.attr("dct_coefficient_count")])]


AudioSpectrogram = define_op(
    "AudioSpectrogram", inputs=["input: float32"], outputs=["spectrogram: float32"],
    attrs=[Attr("window_size", "int"), Attr("stride", "int"),
           Attr("magnitude_squared", "bool", False)],
    shape_fn=_audio_spectrogram_shape)

Mfcc = define_op(
    "Mfcc", inputs=["spectrogram: float32", "sample_rate: int32"], outputs=["output: float32"],
    attrs=[Attr("upper_frequency_limit", "float", 4000.0),
           Attr("lower_frequency_limit", "float", 20.0),
           Attr("filterbank_channel_count", "int", 40),
           Attr("dct_coefficient_count", "int", 13)],
    shape_fn=_mfcc_shape)
