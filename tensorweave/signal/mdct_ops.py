"""The modified discrete cosine transform and its inverse, built as TensorFlow builds them.

`mdct` frames the signal with 50% overlap, windows each frame, folds its four quarters
(a, b, c, d) into (-c_r - d, a - b_r) (`_r`: reversed) and takes the type IV DCT of that;
`inverse_mdct` takes the type IV DCT back (its own inverse up to scale), unfolds the half
frame (x, y) into (y, -y_r, -x_r, -x), windows it and overlap-adds. With a window that has
w[n]^2 + w[n + N/2]^2 = 1 and is symmetric (vorbis, Kaiser-Bessel-derived, or None's
constant 1/sqrt(2)), the overlapping aliases cancel (TDAC) and the inner samples come back.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import concat, split
from tensorweave.ops.array_tile_pad_ops import reverse
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.signal_ops import frame, overlap_and_add, vorbis_window
from tensorweave.signal.dct_ops import dct

__all__ = ["inverse_mdct", "mdct"]


def _window(frames, window_fn, length):
    """`frames` times `window_fn(length)`, or times 1/sqrt(2) (a rectangular TDAC window)."""
    if window_fn is None:
        return frames * (1.0 / np.sqrt(2))
    return frames * window_fn(length, dtype=frames.dtype)


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """The modified discrete cosine transform of `signals`' half-overlapping frames.

    Args:
      signals: a float32/float64 Tensor of shape [..., samples].
      frame_length: an integer scalar, the window length in samples; a multiple of 4.
      window_fn: a callable `(frame_length, dtype=...)` returning a [frame_length] window, or
        None for a rectangular window scaled by 1/sqrt(2). For perfect reconstruction by
        `inverse_mdct` it must be symmetric with w[n]^2 + w[n + frame_length // 2]^2 = 1
        (`vorbis_window`, `kaiser_bessel_derived_window`, None).
      pad_end: whether to zero-pad the end so the last partial frame is kept.
      norm: None for the unnormalized type IV DCT, "ortho" for the orthonormal one.
      name: the name scope (default "mdct").

    Returns:
      A Tensor of shape [..., frames, frame_length // 2], frames being about
      samples // (frame_length // 2).

    Raises:
      ValueError: if `signals` has rank 0, `frame_length` is not a scalar or not a multiple of
        4, or `norm` is not None or "ortho".
    """
    with name_scope(name, "mdct", [signals, frame_length]):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_length.shape.assert_has_rank(0)
        known = static_value(frame_length)
        if known is not None:
            if int(known) % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = convert_to_tensor(int(known) // 2, dtype=frame_length.dtype)
        else:
            frame_step = frame_length // 2
        frames = _window(frame(signals, frame_length, frame_step, pad_end=pad_end), window_fn,
                         frame_length)
        a, b, c, d = split(frames, 4, axis=-1)
        folded = concat([-reverse(c, [-1]) - d, a - reverse(b, [-1])], axis=-1)
        # The frame_length // 2 distinct coefficients of the windowed frame's MDCT.
        return dct(folded, type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The inverse MDCT: windowed, overlap-added frames whose aliases cancel between
    neighbours. Use the same `window_fn` as `mdct` did.

    Args:
      mdcts: a float32/float64 Tensor of shape [..., frames, frame_length // 2], the last
        dimension statically known.
      window_fn: a callable `(frame_length, dtype=...)` returning a [frame_length] window, or
        None for a rectangular window scaled by 1/sqrt(2).
      norm: None (the type IV DCT scaled by 1 / frame_length) or "ortho" (the orthonormal one).
      name: the name scope (default "inverse_mdct").

    Returns:
      A Tensor of shape [..., samples], samples = (frames - 1) * (frame_length // 2) +
      frame_length.

    Raises:
      ValueError: if `mdcts` has rank below 2, or `norm` is not None or "ortho" (TensorFlow
        fails there with an UnboundLocalError instead).
    """
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    with name_scope(name, "inverse_mdct", [mdcts]):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        mdcts.shape.with_rank_at_least(2)
        half_len = cast(mdcts.shape[-1], dtype=_dtypes.int32)
        if norm is None:
            unfolded = (0.5 / cast(half_len, mdcts.dtype)) * dct(mdcts, type=4)
        else:
            unfolded = dct(mdcts, type=4, norm="ortho")
        x, y = split(unfolded, 2, axis=-1)
        frames = concat([y, -reverse(y, [-1]), -reverse(x, [-1]), -x], axis=-1)
        return overlap_and_add(_window(frames, window_fn, 2 * half_len), half_len)
