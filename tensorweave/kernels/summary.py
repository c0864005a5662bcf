"""Summary kernels: each returns a serialized `Summary` proto as a scalar string.

Formats follow TensorFlow so TensorBoard shows them as it shows TF's:
  * histograms use TF's default bucket limits (±1e-12 · 1.1^k below 1e20, ±DBL_MAX, and 0); a
    value falls in the first bucket whose limit exceeds it, and runs of empty buckets are
    written as one empty bucket ending where the run ends;
  * images are PNG, byte for byte as TF's libpng writes them (kernels/png_writer.py); float
    images are rescaled per image, in the image's own precision, and
    truncated to uint8 as TF does;
  * audio is 16-bit PCM WAV (samples · 32768, rounded half away from zero, clipped).
"""
from __future__ import annotations

import io
import sys
import wave

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.graph_io import ndarray_to_tensor_proto
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import png_writer
from tensorweave.kernels.registry import kernel
from tensorweave.protos import summary_pb2

_DBL_MAX = sys.float_info.max


def _as_summary_output(summary: summary_pb2.Summary) -> np.ndarray:
    return np.array(summary.SerializeToString(), dtype=object)


def _text(value) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _scalar_tag(tag, message: str) -> str:
    tag = np.asarray(tag)
    if tag.ndim != 0:
        raise invalid_argument(message)
    return _text(tag[()])


def _output_tag(base: str, kind: str, index: int, max_outputs: int) -> str:
    """TF's media tags: 'base/kind/i' when several outputs may exist, else 'base/kind'."""
    return f"{base}/{kind}/{index}" if max_outputs > 1 else f"{base}/{kind}"


# --- scalars -----------------------------------------------------------------------------------
@kernel("ScalarSummary")
def _scalar_summary(ctx, tags, values):
    tags, values = np.asarray(tags), np.asarray(values)
    if tags.shape != values.shape:
        single = f" (tag '{_text(tags[()])}')" if tags.ndim == 0 else ""
        raise invalid_argument(f"tags and values are not the same shape: {dims_text(tags.shape)} "
                               f"!= {dims_text(values.shape)}{single}")
    summary = summary_pb2.Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1).astype(np.float64)):
        summary.value.add(tag=_text(tag), simple_value=float(value))
    return _as_summary_output(summary)


# --- histograms --------------------------------------------------------------------------------
def _default_bucket_limits() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:  # each limit 10% above the last, as TF computes them (in double)
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive, np.float64)


BUCKET_LIMITS = _default_bucket_limits()


_SORT_FROM = 1000  # from this size, one sort beats a binary search per value


def _bucket_counts(flat: np.ndarray) -> np.ndarray:
    """How many values fall in each bucket: bucket i holds limits[i-1] <= x < limits[i]."""
    last = len(BUCKET_LIMITS) - 1
    if flat.size < _SORT_FROM:
        index = np.minimum(np.searchsorted(BUCKET_LIMITS, flat, side="right"), last)
        return np.bincount(index, minlength=len(BUCKET_LIMITS))
    below = np.searchsorted(np.sort(flat), BUCKET_LIMITS, side="left")  # values < each limit
    counts = np.empty_like(below)
    counts[0] = below[0]
    np.subtract(below[1:], below[:-1], out=counts[1:])
    counts[last] += flat.size - below[last]  # x == DBL_MAX joins the last bucket
    return counts


def histogram_proto(values: np.ndarray) -> summary_pb2.HistogramProto:
    """TF's HistogramProto of finite `values` (any shape), empty buckets collapsed."""
    flat = np.asarray(values, np.float64).reshape(-1)
    proto = summary_pb2.HistogramProto()
    proto.min, proto.max = _DBL_MAX, -_DBL_MAX
    if flat.size:
        proto.min, proto.max = float(flat.min()), float(flat.max())
        proto.num = float(flat.size)
        # Summed in order, as TF accumulates them, so the doubles agree to the last bit.
        with np.errstate(over="ignore"):  # huge values give inf sums, as in TF
            proto.sum = float(np.cumsum(flat)[-1])
            squares = flat * flat
            proto.sum_squares = float(np.cumsum(squares, out=squares)[-1])
    counts = _bucket_counts(flat)
    # Each non-empty bucket is written; a run of empty buckets before it is written as one
    # empty bucket ending where the run ends, and so is the run after the last one.
    filled = np.flatnonzero(counts)
    gap = filled - 1 > np.concatenate(([-1], filled[:-1]))
    at = np.arange(filled.size) + np.cumsum(gap)
    trailing = filled.size == 0 or filled[-1] < len(BUCKET_LIMITS) - 1
    index = np.empty(at[-1] + 1 + trailing if filled.size else 1, np.int64)
    out_counts = np.zeros(index.size, np.float64)
    index[at], out_counts[at] = filled, counts[filled]
    index[at[gap] - 1] = filled[gap] - 1
    if trailing:
        index[-1] = len(BUCKET_LIMITS) - 1
    proto.bucket_limit.extend(BUCKET_LIMITS[index].tolist())
    proto.bucket.extend(out_counts.tolist())
    return proto


@kernel("HistogramSummary")
def _histogram_summary(ctx, tag, values):
    tag = _scalar_tag(tag, "tags must be scalar")
    values = np.asarray(values)
    finite = np.isfinite(values) if values.dtype.kind == "f" else None
    if finite is not None and not finite.all():
        first = values.reshape(-1)[np.argmin(finite.reshape(-1))]
        if np.isnan(first):
            raise invalid_argument(f"Nan in summary histogram for: {ctx.node_name}")
        raise invalid_argument(f"Infinity in Histogram for: {ctx.node_name}")
    summary = summary_pb2.Summary()
    summary.value.add(tag=tag).histo.CopyFrom(histogram_proto(values))
    return _as_summary_output(summary)


# --- images ------------------------------------------------------------------------------------
_IMAGE_CHANNELS = (1, 3, 4)   # gray, RGB, RGBA


def _float_image_to_uint8(img: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's per-image rescaling of a float [h, w, c] image into uint8 (see `image`)."""
    pixels = img.reshape(-1, img.shape[-1])
    finite = np.isfinite(pixels).all(axis=1)
    good = pixels[finite].astype(np.float32)
    low = good.min() if good.size else np.float32(np.inf)
    high = good.max() if good.size else np.float32(-np.inf)
    if low < 0:
        max_abs = max(abs(low), abs(high))
        scale = np.float32(0.0) if max_abs < 1e-6 else np.float32(127.0) / max_abs
        offset = 128.0
    else:
        scale = np.float32(0.0) if high < 1e-6 else np.float32(255.0) / high
        offset = 0.0
    kind = img.dtype.type
    clean = np.where(finite[:, None], pixels, kind(0))
    with np.errstate(all="ignore"):  # a float16 scale may overflow, as it does in TF
        scaled = clean * kind(scale) + kind(offset)  # arithmetic in the image's precision
    # A non-finite result (an overflowed float16 scale) converts to 0, as on TF's CPUs.
    out = np.clip(np.nan_to_num(scaled, nan=0.0, posinf=0.0, neginf=0.0), 0, 255)
    out = out.astype(np.uint8)
    out[~finite] = bad_color[:img.shape[-1]]
    return out.reshape(img.shape)


@kernel("ImageSummary")
class ImageSummaryKernel:
    def __init__(self, ctx):
        self.max_images = ctx.attrs["max_images"]
        self.bad_color = np.asarray(ctx.attrs["bad_color"]).astype(np.uint8).reshape(-1)

    def compute(self, ctx, tag, images):
        tag = _scalar_tag(tag, "Tags must be a scalar")
        images = np.asarray(images)
        if images.ndim != 4 or images.shape[-1] not in _IMAGE_CHANNELS:
            raise invalid_argument(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                                   f"{dims_text(images.shape)}")
        channels = images.shape[-1]
        if images.dtype != np.uint8 and self.bad_color.size < channels:
            raise invalid_argument(f"bad_color must have at least {channels} values, got "
                                   f"{self.bad_color.size}")
        summary = summary_pb2.Summary()
        for i in range(min(self.max_images, images.shape[0])):
            img = images[i]
            if img.dtype != np.uint8:
                img = _float_image_to_uint8(img, self.bad_color)
            value = summary.value.add(tag=_output_tag(tag, "image", i, self.max_images))
            value.image.height, value.image.width = img.shape[0], img.shape[1]
            value.image.colorspace = channels
            value.image.encoded_image_string = png_writer.encode(img)
        return _as_summary_output(summary)


# --- audio -------------------------------------------------------------------------------------
def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV of float samples [frames, channels] in [-1, 1]."""
    scaled = np.float64(np.float32(32768.0) * np.nan_to_num(samples, posinf=1.0, neginf=-1.0))
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)  # roundf: half away from 0
    pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


@kernel("AudioSummaryV2")
class AudioSummaryKernel:
    def __init__(self, ctx):
        self.max_outputs = ctx.attrs["max_outputs"]

    def compute(self, ctx, tag, clips, sample_rate):
        tag = _scalar_tag(tag, "Tag must be a scalar")
        rate = np.asarray(sample_rate)
        if rate.size != 1:
            raise invalid_argument("sample_rate must be rank-0 or contain a single value")
        rate = float(rate.reshape(-1)[0])
        if not rate > 0:
            raise invalid_argument("sample_rate must be > 0")
        clips = np.asarray(clips, np.float32)
        if clips.ndim not in (2, 3):
            raise invalid_argument(f"Tensor must be 3-D or 2-D, got: {dims_text(clips.shape)}")
        if clips.ndim == 2:
            clips = clips[:, :, None]
        summary = summary_pb2.Summary()
        for i in range(min(self.max_outputs, clips.shape[0])):
            value = summary.value.add(tag=_output_tag(tag, "audio", i, self.max_outputs))
            value.audio.sample_rate = rate
            value.audio.num_channels = clips.shape[2]
            value.audio.length_frames = clips.shape[1]
            value.audio.content_type = "audio/wav"
            value.audio.encoded_audio_string = encode_wav(clips[i], int(rate))
        return _as_summary_output(summary)


# --- tensors and merging -----------------------------------------------------------------------
@kernel("TensorSummaryV2")
def _tensor_summary_v2(ctx, tag, tensor, serialized_metadata):
    summary = summary_pb2.Summary()
    value = summary.value.add(tag=_scalar_tag(tag, "tag must be scalar"))
    value.metadata.SetInParent()
    try:
        value.metadata.MergeFromString(bytes(np.asarray(serialized_metadata)[()]))
    except Exception:  # noqa: BLE001 - TF ignores metadata it cannot parse
        value.metadata.Clear()
        value.metadata.SetInParent()
    value.tensor.CopyFrom(ndarray_to_tensor_proto(np.asarray(tensor)))
    return _as_summary_output(summary)


@kernel("MergeSummary")
def _merge_summary(ctx, *inputs):
    # A serialized Summary is a sequence of `value` fields, so concatenating the inputs is
    # their merge; each input is parsed only to validate it and check its tags.
    seen: set[str] = set()
    parts = []
    part = summary_pb2.Summary()
    for serialized in inputs:
        for item in np.asarray(serialized, dtype=object).reshape(-1):
            try:
                part.ParseFromString(item)
            except Exception:  # noqa: BLE001 - protobuf's DecodeError, or not bytes at all
                raise invalid_argument("Could not parse one of the summary inputs") from None
            for value in part.value:
                if value.tag:  # untagged values (old TensorSummary ops) may repeat
                    if value.tag in seen:
                        raise invalid_argument(f"Duplicate tag {value.tag} found in summary "
                                               "inputs ")
                    seen.add(value.tag)
            parts.append(item)
    return np.array(b"".join(parts), dtype=object)
