"""WAV audio ops: DecodeWav and EncodeWav (tf.audio.decode_wav / encode_wav).

Audio is a float32 tensor [samples, channels] in [-1, 1); a file holds it as 16-bit PCM, a
sample `s` stored as `s * 2^15` rounded half away from zero and clamped to int16. The kernels
live in kernels/audio.py; neither op is differentiable, as in TensorFlow.
"""
from __future__ import annotations

import collections

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.shape_checks import shape_with_rank

__all__ = ["decode_wav", "encode_wav"]


def _desired(ctx, attr: str, what: str):
    """A desired_* attr as a static dimension: None when it is -1 (take the file's)."""
    value = ctx.attr(attr)
    if value < -1:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return None if value == -1 else value


def _decode_wav_shape(ctx):
    """audio [desired_samples or ?, desired_channels or ?] and a scalar sample_rate."""
    shape_with_rank(ctx.input_shape(0), 0)
    channels = _desired(ctx, "desired_channels", "channels")
    samples = _desired(ctx, "desired_samples", "samples")
    return [_ts.TensorShape([samples, channels]), _ts.TensorShape([])]


def _encode_wav_shape(ctx):
    """A scalar string from audio of rank 2 and a scalar sample_rate."""
    shape_with_rank(ctx.input_shape(0), 2)
    shape_with_rank(ctx.input_shape(1), 0)
    return [_ts.TensorShape([])]


DecodeWav = define_op(
    "DecodeWav", inputs=["contents: string"],
    outputs=["audio: float32", "sample_rate: int32"],
    attrs=[Attr("desired_channels", "int", -1), Attr("desired_samples", "int", -1)],
    shape_fn=_decode_wav_shape, not_differentiable=True)

EncodeWav = define_op(
    "EncodeWav", inputs=["audio: float32", "sample_rate: int32"], outputs=["contents: string"],
    shape_fn=_encode_wav_shape, not_differentiable=True)

DecodeWavOutput = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """Decodes a 16-bit PCM WAV file into a float tensor.

    Samples are scaled from int16 to [-1.0, 1.0) by dividing by 2^15. With `desired_channels`
    or `desired_samples` set, the result has exactly that many: extra channels repeat the file's
    last channel, extra samples are zero, and surplus ones are dropped.

    Args:
      contents: a scalar string Tensor, the bytes of a WAV file.
      desired_channels: the number of channels wanted, or -1 for the file's.
      desired_samples: the number of samples (frames) wanted, or -1 for the file's.
      name: the op name.

    Returns:
      A namedtuple (audio, sample_rate): `audio` float32 [samples, channels], `sample_rate` the
      file's rate as a scalar int32.

    Raises:
      InvalidArgumentError (when run): if `contents` is not a 16-bit PCM WAV file.
    """
    audio, sample_rate = apply_op(
        DecodeWav, [contents],
        {"desired_channels": desired_channels, "desired_samples": desired_samples}, name=name)
    return DecodeWavOutput(audio, sample_rate)


def encode_wav(audio, sample_rate, name=None):
    """Encodes audio as a 16-bit PCM WAV file.

    Each sample is multiplied by 2^15, rounded half away from zero and clamped to int16, so
    values outside [-1.0, 1.0) saturate.

    Args:
      audio: a float32 Tensor [samples, channels].
      sample_rate: a scalar int32 Tensor, the rate in Hz (positive).
      name: the op name.

    Returns:
      A scalar string Tensor: the WAV file's bytes.

    Raises:
      InvalidArgumentError (when run): if `sample_rate` is not positive or there are no
        channels or 2^16 or more.
    """
    return apply_op(EncodeWav, [audio, sample_rate], {}, name=name)

