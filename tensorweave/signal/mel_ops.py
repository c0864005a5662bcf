"""The linear-to-mel filterbank matrix (HTK's mel scale), built from ops as TensorFlow does."""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import linspace
from tensorweave.ops.array_join_ops import split
from tensorweave.ops.array_ops import expand_dims, reshape
from tensorweave.ops.array_tile_pad_ops import pad
from tensorweave.ops.math_ops import maximum, minimum
from tensorweave.ops.math_unary_ops import cast, log
from tensorweave.ops.signal_ops import frame

# mel(f) = 1127 ln(1 + f / 700)
_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz):
    return _MEL_HIGH_FREQUENCY_Q * log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _validate(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype) -> None:
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if not isinstance(sample_rate, Tensor):
        if sample_rate <= 0.0:
            raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
        if upper_edge_hertz > sample_rate / 2:
            raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency "
                             f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                             f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=_dtypes.float32, name=None):
    """A [num_spectrogram_bins, num_mel_bins] matrix of triangular mel filters.

    Multiplying a linear-frequency magnitude spectrogram by it gives a mel spectrogram. Band
    edges are equally spaced in mel between `lower_edge_hertz` and `upper_edge_hertz`; the DC
    bin gets no weight.

    Args:
      num_mel_bins: the number of mel bands.
      num_spectrogram_bins: the spectrogram's bins (fft_length // 2 + 1).
      sample_rate: the signal's sample rate in Hz (a number or a Tensor).
      lower_edge_hertz: the lowest frequency in the mel spectrum.
      upper_edge_hertz: the highest frequency in the mel spectrum (at most sample_rate / 2).
      dtype: the floating dtype of the matrix.
      name: the name scope (default "linear_to_mel_weight_matrix").

    Returns:
      A Tensor of shape [num_spectrogram_bins, num_mel_bins].

    Raises:
      ValueError: for non-positive bins or sample rate, bad band edges or a non-float dtype.
    """
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, Tensor) and static_value(sample_rate) is not None:
            sample_rate = static_value(sample_rate)
        _validate(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype)
        sample_rate = cast(sample_rate, dtype, name="sample_rate")
        lower = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        # Bin 0 (DC) is left out and padded back with zero weight.
        linear = linspace(zero, sample_rate / 2.0, num_spectrogram_bins)[1:]
        bins_mel = expand_dims(_hertz_to_mel(linear), 1)
        edges = frame(linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2),
                      frame_length=3, frame_step=1)
        low, center, high = (reshape(t, [1, num_mel_bins]) for t in split(edges, 3, axis=1))
        rising = (bins_mel - low) / (center - low)
        falling = (high - bins_mel) / (high - center)
        weights = maximum(zero, minimum(rising, falling))
        return pad(weights, [[1, 0], [0, 0]], name=scope)
