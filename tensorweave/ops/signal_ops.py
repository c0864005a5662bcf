"""tf.signal's composite functions: spectrum shifts, framing and overlap-add, raised-cosine
windows, Kaiser and MDCT windows, the short-time Fourier transform and its inverse.

Each is built from existing ops as TensorFlow builds it (so values and gradients follow from
those ops' own), under TF's default name scope. The DCTs and MFCCs are in
`tensorweave/signal/dct_ops.py`, the MDCT in `tensorweave/signal/mdct_ops.py`, the mel
filterbank in `tensorweave/signal/mel_ops.py`, the Fourier transforms themselves in
`fft_ops.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import fft_ops
from tensorweave.ops.array_creation_ops import ones, zeros, zeros_like
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import gather, where
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import rank, reshape, shape, transpose
from tensorweave.ops.array_rearrange_ops import roll
from tensorweave.ops.array_tile_pad_ops import pad, tile
from tensorweave.ops.math_ops import equal, less, maximum
from tensorweave.ops.math_ops import pow as _pow
from tensorweave.ops.math_special_ops import bessel_i0e
from tensorweave.ops.math_unary_ops import cast, ceil, cos, exp, log, sin, sqrt, square
from tensorweave.ops.reduction_ops import cumsum, reduce_sum

__all__: list[str] = []   # namespace-only: exported by tensorweave.signal


# --- fftshift, ifftshift -----------------------------------------------------------------------
def _shift(x, axes, name, default_name: str, sign: int):
    """Rolls `axes` (all by default) by `sign * (size // 2)`."""
    with name_scope(name, default_name) as scope:
        x = convert_to_tensor(x)
        if axes is None:
            axes = tuple(range(x.shape.ndims))
            half = shape(x) // 2
        elif isinstance(axes, int):
            half = shape(x)[axes] // 2
        else:
            axes = convert_to_tensor(axes)
            axes = where(less(axes, 0), axes + rank(x), axes)
            half = gather(shape(x), axes) // 2
        return roll(x, half if sign > 0 else -half, axes, name=scope)


def fftshift(x, axes=None, name=None):
    return _shift(x, axes, name, "fftshift", 1)


def ifftshift(x, axes=None, name=None):
    return _shift(x, axes, name, "ifftshift", -1)


def _shift_doc(what: str, default_name: str, roll: str) -> str:
    return f"""{what}

    Args:
      x: a Tensor.
      axes: an int or sequence of ints, the axes to shift (default: all; needs a known rank).
      name: the name scope (default "{default_name}").

    Returns:
      `x` rolled by `{roll}` along each axis.
    """


fftshift.__doc__ = _shift_doc("Moves the zero-frequency component to the center of the "
                              "spectrum (numpy.fft.fftshift).", "fftshift", "size // 2")
ifftshift.__doc__ = _shift_doc("The inverse of fftshift (numpy.fft.ifftshift): differs from it "
                               "for odd lengths.", "ifftshift", "-(size // 2)")


# --- frame, overlap_and_add --------------------------------------------------------------------
def _frame_shape(signal, frame_length, frame_step, pad_end, axis):
    """The static shape of frame()'s result, as far as the graph fixes it (None: unknown)."""
    length, step, axis = (static_value(t) for t in (frame_length, frame_step, axis))
    if signal.shape.ndims is None:
        return None
    length = None if length is None else int(length)
    if axis is None:
        return [None] * (signal.shape.ndims + 1)
    dims = signal.shape.as_list()
    axis = int(axis) % len(dims)
    n, frames = dims[axis], None
    if n is not None and step is not None and pad_end:
        frames = max(0, -(-n // int(step)))
    elif n is not None and step is not None and length is not None:
        frames = max(0, (n - length + int(step)) // int(step))
    return dims[:axis] + [frames, length] + dims[axis + 1:]


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Splits `axis` of `signal` into overlapping frames of `frame_length`, `frame_step` apart.

    Args:
      signal: a Tensor of rank >= 1.
      frame_length: an int scalar, the samples per frame.
      frame_step: an int scalar, the samples between frame starts.
      pad_end: pad the end with `pad_value` so every sample is in a frame.
      pad_value: the padding value (a scalar of `signal`'s dtype).
      axis: the axis to frame (negative counts from the end).
      name: the name scope (default "frame").

    Returns:
      A Tensor of shape `signal.shape[:axis] + [frames, frame_length] + signal.shape[axis+1:]`.

    Raises:
      ValueError: if `signal` is a scalar or the other arguments are not scalars.
    """
    with name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        signal = convert_to_tensor(signal, name="signal")
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        axis = convert_to_tensor(axis, name="axis")
        signal.shape.with_rank_at_least(1)
        for t in (frame_length, frame_step, axis):
            t.shape.assert_has_rank(0)
        result_shape = _frame_shape(signal, frame_length, frame_step, pad_end, axis)
        axis = _range(rank(signal))[axis]
        n = shape(signal, out_type=frame_length.dtype)[axis]
        if pad_end:
            pad_value = convert_to_tensor(pad_value, signal.dtype)
            pad_value.shape.assert_has_rank(0)
            frames = -(-n // frame_step)
            extra = maximum(0, frame_length + frame_step * (frames - 1) - n)
            before = zeros([axis, 2], frame_length.dtype)
            after = zeros([rank(signal) - axis - 1, 2], frame_length.dtype)
            paddings = concat([before, [[0, extra]], after], 0)
            signal = pad(signal, paddings, constant_values=pad_value)
        else:
            frames = maximum(0, 1 + (n - frame_length) // frame_step)
        starts = reshape(_range(frames, dtype=frame_length.dtype) * frame_step, [-1, 1])
        offsets = reshape(_range(frame_length, dtype=frame_length.dtype), [1, -1])
        framed = gather(signal, starts + offsets, axis=axis)
        if result_shape:
            framed.set_shape(result_shape)
        return framed


def overlap_and_add(signal, frame_step, name=None):
    """Sums overlapping frames back into a signal (the adjoint of frame()).

    Args:
      signal: a Tensor of shape [..., frames, frame_length].
      frame_step: an integer scalar, the samples between frame starts.
      name: the name scope (default "overlap_and_add").

    Returns:
      A Tensor of shape [..., frame_length + frame_step * (frames - 1)].

    Raises:
      ValueError: if `signal` has rank < 2 or `frame_step` is not an integer scalar.
    """
    with name_scope(name, "overlap_and_add", [signal, frame_step]):
        signal = convert_to_tensor(signal, name="signal")
        signal.shape.with_rank_at_least(2)
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        frame_step.shape.assert_has_rank(0)
        if not frame_step.dtype.is_integer:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype}")
        step = cast(frame_step, _dtypes.int32)
        dims = shape(signal)
        outer, frames, length = dims[:-2], dims[-2], dims[-1]
        outer_rank = rank(signal) - 2
        out_length = length + step * (frames - 1)
        # Cut each frame into `segments` chunks of `step` samples; chunk s of frame f lands on
        # output block f + s, so after a shear (pad one frame, re-slice) the sum over chunks
        # gives each output block (TensorFlow's construction).
        segments = -(-length // step)
        paddings = concat([zeros([outer_rank, 2], _dtypes.int32),
                           [[0, segments], [0, segments * step - length]]], 0)
        x = reshape(pad(signal, paddings), concat([outer, [frames + segments, segments, step]], 0))
        x = transpose(x, concat([_range(outer_rank), outer_rank + [1, 0, 2]], 0))
        x = reshape(x, concat([outer, [(frames + segments) * segments, step]], 0))
        x = x[..., :(frames + segments - 1) * segments, :]
        x = reshape(x, concat([outer, [segments, frames + segments - 1, step]], 0))
        x = reshape(reduce_sum(x, -3), concat([outer, [(frames + segments - 1) * step]], 0))
        return x[..., :out_length]


# --- windows -----------------------------------------------------------------------------------
def _raised_cosine_window(name, default_name, window_length, periodic, dtype, a, b):
    """a - b * cos(2 pi n / N) for n < window_length, N = length (- 1 unless periodic)."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    with name_scope(name, default_name, [window_length, periodic]):
        window_length = convert_to_tensor(window_length, _dtypes.int32, name="window_length")
        window_length.shape.assert_has_rank(0)
        static_length = static_value(window_length)
        if static_length is not None and int(static_length) == 1:
            return ones([1], dtype=dtype)
        periodic = cast(convert_to_tensor(periodic, _dtypes.bool, name="periodic"),
                        _dtypes.int32)
        periodic.shape.assert_has_rank(0)
        even = 1 - window_length % 2
        n = cast(window_length + periodic * even - 1, dtype)
        count = cast(_range(window_length), dtype)
        window = a - b * cos(convert_to_tensor(2 * np.pi, dtype) * count / n)
        if static_length is not None:
            return window
        return where(equal(window_length, 1), ones([window_length], dtype), window)


def _window_doc(what: str, default_name: str) -> str:
    return f"""{what}

    Args:
      window_length: an int32 scalar, the number of samples.
      periodic: True for a periodic window (for spectral analysis), False for a symmetric one.
      dtype: the floating dtype of the window.
      name: the name scope (default "{default_name}").

    Returns:
      A 1-D Tensor of `window_length` samples.

    Raises:
      ValueError: if `dtype` is not floating.
    """


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    return _raised_cosine_window(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    return _raised_cosine_window(name, "hamming_window", window_length, periodic, dtype, 0.54,
                                 0.46)


hann_window.__doc__ = _window_doc("A Hann window: 0.5 - 0.5 cos(2 pi n / N).", "hann_window")
hamming_window.__doc__ = _window_doc("A Hamming window: 0.54 - 0.46 cos(2 pi n / N).",
                                     "hamming_window")


def _window_length(window_length, dtype):
    """TF's `_check_params`: a floating `dtype` and `window_length` as an int32 scalar."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    window_length = convert_to_tensor(window_length, _dtypes.int32)
    window_length.shape.assert_has_rank(0)
    return window_length, dtype


def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """A Kaiser window: I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta) (numpy.kaiser).

    Built from exponentially scaled Bessel functions, exp(num - beta) i0e(num) / i0e(beta),
    so that large `beta` does not overflow.

    Args:
      window_length: an int32 scalar, the number of samples N.
      beta: the shape parameter (a float or scalar Tensor); 0 is rectangular.
      dtype: the floating dtype of the window.
      name: the name scope (default "kaiser_window").

    Returns:
      A 1-D Tensor of `window_length` samples.

    Raises:
      ValueError: if `dtype` is not floating or `window_length` is not a scalar.
    """
    with name_scope(name, "kaiser_window"):
        window_length, dtype = _window_length(window_length, dtype)
        known = static_value(window_length)
        if known is not None and int(known) == 1:
            return ones([1], dtype=dtype)
        # The sample positions n - (N - 1) / 2 in float32, as TF (Range has no float16).
        half = (cast(window_length, _dtypes.float32) - 1.0) / 2.0
        arg = cast(_range(-half, half + 0.1, dtype=_dtypes.float32), dtype)
        beta = cast(beta, dtype)
        half = cast(half, dtype)
        num = beta * sqrt(maximum(1.0 - square(arg / half), 0.0))   # TF's relu
        return exp(num - beta) * (bessel_i0e(num) / bessel_i0e(beta))


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """A Kaiser-Bessel-derived window: the square root of the normalized running sum of a
    Kaiser window of N / 2 + 1 samples, mirrored (power-complementary, for the MDCT).

    Args:
      window_length: an int32 scalar, the number of samples N.
      beta: the shape parameter of the underlying Kaiser window.
      dtype: the floating dtype of the window.
      name: the name scope (default "kaiser_bessel_derived_window").

    Returns:
      A 1-D Tensor of 2 * (N // 2) samples (N for even N).

    Raises:
      ValueError: if `dtype` is not floating or `window_length` is not a scalar.
    """
    with name_scope(name, "kaiser_bessel_derived_window"):
        window_length, dtype = _window_length(window_length, dtype)
        kaiser = kaiser_window(window_length // 2 + 1, beta, dtype=dtype)
        running = cumsum(kaiser)
        half = sqrt(running[:-1] / running[-1])
        return concat([half, half[::-1]], axis=0)


def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """The Vorbis power-complementary window: sin(pi / 2 sin^2(pi (n + 0.5) / N)).

    Args:
      window_length: an int32 scalar, the number of samples N.
      dtype: the floating dtype of the window.
      name: the name scope (default "vorbis_window").

    Returns:
      A 1-D Tensor of `window_length` samples.

    Raises:
      ValueError: if `dtype` is not floating or `window_length` is not a scalar.
    """
    with name_scope(name, "vorbis_window"):
        window_length, dtype = _window_length(window_length, dtype)
        arg = cast(_range(window_length), dtype)
        inner = sin(np.pi / cast(window_length, dtype) * (arg + 0.5))
        return sin(np.pi / 2.0 * _pow(inner, 2.0))


# --- stft, inverse_stft ------------------------------------------------------------------------
def _enclosing_power_of_two(value):
    """The smallest power of two >= value, of value's dtype."""
    known = static_value(value)
    if known is not None:
        return convert_to_tensor(int(2 ** np.ceil(np.log(known) / np.log(2.0))), value.dtype)
    exponent = ceil(log(cast(value, _dtypes.float32)) / np.log(2.0))
    return cast(2.0 ** exponent, value.dtype)


def _scalar(value, name: str):
    t = convert_to_tensor(value, name=name)
    t.shape.assert_has_rank(0)
    return t


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform: windowed frames of `signals`, each through an RFFT.

    Args:
      signals: a float32/float64 Tensor of shape [..., samples].
      frame_length: an integer scalar, the window length in samples.
      frame_step: an integer scalar, the step between windows in samples.
      fft_length: an integer scalar, the FFT size (default: the smallest enclosing power of 2).
      window_fn: `fn(frame_length, dtype)` returning the window, or None for none.
      pad_end: pad the end of `signals` with zeros so every sample is in a frame.
      name: the name scope (default "stft").

    Returns:
      A complex Tensor of shape [..., frames, fft_length // 2 + 1].

    Raises:
      ValueError: if `signals` is a scalar or the lengths are not scalars.
    """
    with name_scope(name, "stft", [signals, frame_length, frame_step]):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else \
            convert_to_tensor(fft_length, name="fft_length")
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed *= window_fn(frame_length, dtype=framed.dtype)
        return fft_ops.rfft(framed, [fft_length])


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window_fn for inverse_stft that inverts stft with `forward_window_fn` exactly.

    The forward window divided by the sum of its squares over every frame overlapping a
    sample (zero where that sum is zero).

    Args:
      frame_step: an integer scalar, the step between windows in samples.
      forward_window_fn: the window_fn the forward stft used.
      name: the name scope of the window's ops (default "inverse_stft_window_fn").

    Returns:
      `fn(frame_length, dtype)` returning the inverse window.
    """
    def inverse_window(frame_length, dtype):
        with name_scope(name, "inverse_stft_window_fn", [forward_window_fn]):
            step = _scalar(frame_step, "frame_step")
            frame_length = _scalar(frame_length, "frame_length")
            forward = forward_window_fn(frame_length, dtype=dtype)
            overlaps = -(-frame_length // step)
            denom = pad(square(forward), [(0, overlaps * step - frame_length)])
            denom = reduce_sum(reshape(denom, [overlaps, step]), 0, keepdims=True)
            denom = reshape(tile(denom, [overlaps, 1]), [overlaps * step])[:frame_length]
            return where(equal(denom, 0.0), zeros_like(forward), forward / denom)
    return inverse_window


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The inverse short-time Fourier transform: IRFFT of each frame, windowed, overlap-added.

    With `window_fn=inverse_stft_window_fn(frame_step, forward_window)` it inverts stft.

    Args:
      stfts: a complex64/complex128 Tensor of shape [..., frames, fft_length // 2 + 1].
      frame_length: an integer scalar, the window length in samples.
      frame_step: an integer scalar, the step between windows in samples.
      fft_length: an integer scalar, the FFT size (default: the smallest power of 2 enclosing
        frame_length).
      window_fn: `fn(frame_length, dtype)` returning the window, or None for none.
      name: the name scope (default "inverse_stft").

    Returns:
      A float Tensor of shape [..., samples].

    Raises:
      ValueError: if `stfts` has rank < 2 or the lengths are not scalars.
    """
    with name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        stfts.shape.with_rank_at_least(2)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else \
            _scalar(fft_length, "fft_length")
        frames = fft_ops.irfft(stfts, [fft_length])
        # Crop or zero-pad each frame to frame_length.
        frames = frames[..., :frame_length]
        extra = maximum(0, frame_length - shape(frames, out_type=frame_length.dtype)[-1])
        frames = pad(frames, concat([zeros([rank(frames) - 1, 2], frame_length.dtype),
                                     [[0, extra]]], 0))
        known = static_value(frame_length)
        if known is not None and frames.shape.ndims is not None:
            frames.set_shape([None] * (frames.shape.ndims - 1) + [int(known)])
        if window_fn is not None:
            frames *= window_fn(frame_length, dtype=stfts.dtype.real_dtype)
        return overlap_and_add(frames, frame_step)
