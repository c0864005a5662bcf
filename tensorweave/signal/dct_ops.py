"""Discrete cosine transforms (types I-IV) and MFCCs, built on RFFT/IRFFT as TensorFlow does.

A DCT of length N is the real part of a 2N-point RFFT of the (zero-padded) input times a
phase ramp; the inverse of type II is type III (scaled), and type IV is the odd half of a
2N-point type II.
"""
from __future__ import annotations

import math

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import fft_ops
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_creation_ops import zeros
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, rank, shape
from tensorweave.ops.array_tile_pad_ops import pad
from tensorweave.ops.complex_ops import complex as _complex
from tensorweave.ops.complex_ops import real
from tensorweave.ops.math_ops import maximum
from tensorweave.ops.math_unary_ops import cast, exp, rsqrt, sqrt


def _validate(x, dct_type, n, axis, norm) -> None:
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = _ts.dimension_value(convert_to_tensor(x).shape[-1])
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _edge_weights(first, rest_factor: float, length):
    """[first, first * rest_factor, ...] of `length` entries (the ortho normalization)."""
    return pad(expand_dims(first, 0), [[0, length - 1]], constant_values=first * rest_factor)


def _fit_length(x, n: int):
    """`x` truncated or zero-padded to `n` entries along its last dimension."""
    seq_len = _ts.dimension_value(x.shape[-1]) if x.shape.ndims else None
    if seq_len is not None and n <= seq_len:
        return x[..., 0:n]
    if seq_len is not None:
        return pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - seq_len]])
    extra = maximum(0, n - shape(x)[-1])
    return pad(x, concat([zeros([rank(x) - 1, 2], _dtypes.int32), [[0, extra]]], 0))[..., 0:n]


def _dct(x, dct_type, n, norm, name):
    with name_scope(name, "dct", [x]):
        x = convert_to_tensor(x)
        zero = convert_to_tensor(0.0, dtype=x.dtype)
        if n is not None:
            x = _fit_length(x, n)
        size = _ts.dimension_value(x.shape[-1]) or shape(x)[-1]
        size_f = cast(size, x.dtype)
        if dct_type == 1:
            return real(fft_ops.rfft(concat([x, x[..., -2:0:-1]], axis=-1)))
        if dct_type == 2:
            ramp = _complex(zero, -_range(size_f) * math.pi * 0.5 / size_f)
            out = real(fft_ops.rfft(x, fft_length=[2 * size])[..., :size] * (2.0 * exp(ramp)))
            if norm == "ortho":
                out *= _edge_weights(0.5 * rsqrt(size_f), math.sqrt(2.0), size)
            return out
        if dct_type == 3:
            if norm == "ortho":
                x *= _edge_weights(sqrt(size_f), math.sqrt(0.5), size)
            else:
                x *= size_f
            ramp = _complex(zero, _range(size_f) * math.pi * 0.5 / size_f)
            spectrum = 2.0 * exp(ramp) * _complex(x, zero)
            return fft_ops.irfft(spectrum, fft_length=[2 * size])[..., :size]
        out = _dct(x, 2, 2 * size, None, None)[..., 1::2]
        if norm == "ortho":
            out *= math.sqrt(0.5) * rsqrt(size_f)
        return out


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    _validate(input, type, n, axis, norm)
    return _dct(input, type, n, norm, name)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    _validate(input, type, n, axis, norm)
    return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm, name)


def _dct_doc(what: str) -> str:
    return f"""{what}

    Args:
      input: a float32/float64 Tensor; the transform runs over its last dimension.
      type: the DCT type, 1, 2, 3 or 4.
      n: the transform length: the input is truncated or zero-padded to it (default: its
        last dimension).
      axis: must be -1.
      norm: None or "ortho" (not for type 1).
      name: the name scope (default "dct").

    Returns:
      A Tensor like `input` with last dimension `n`.

    Raises:
      ValueError: for an unsupported type, n, norm or (type 1) a last dimension < 2.
      NotImplementedError: for an axis other than -1.
    """


dct.__doc__ = _dct_doc("Discrete cosine transform of `input`'s last dimension (scipy.fft.dct's "
                       "convention).")
idct.__doc__ = _dct_doc("Inverse DCT: the DCT of the inverse type (II <-> III; I and IV invert "
                        "themselves).\n\n    Unnormalized, `idct(dct(x))` is `x` scaled by 2N "
                        "(type I: 2(N - 1)).")


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: an orthonormal-scaled type II DCT of log mel
    spectrograms (as in HTK).

    Args:
      log_mel_spectrograms: a float32/float64 Tensor of shape [..., num_mel_bins].
      name: the name scope (default "mfccs_from_log_mel_spectrograms").

    Returns:
      A Tensor of the same shape: the MFCCs (keep the first few as features).

    Raises:
      ValueError: if num_mel_bins is statically 0.
    """
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms)
        bins = _ts.dimension_value(x.shape[-1]) if x.shape.ndims else None
        if bins == 0:
            raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        if bins is None:
            bins = shape(x)[-1]
        out = _dct(x, 2, None, None, None)
        return out * rsqrt(cast(bins, out.dtype) * 2.0)


__all__ = ["dct", "idct", "mfccs_from_log_mel_spectrograms"]
