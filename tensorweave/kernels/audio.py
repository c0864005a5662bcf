"""Kernels of DecodeWav and EncodeWav: 16-bit PCM WAV files to and from float audio.

A file is a RIFF header, a "fmt " chunk right after "WAVE", then chunks up to a "data" chunk;
chunks other than "data" are skipped by their stated size. Checks and messages are TensorFlow's,
in its order.
"""
from __future__ import annotations

import struct

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_SCALE = 1 << 15           # int16 full scale: a float sample s is stored as s * 2^15
_MAX_DATA = (1 << 31) - 1  # the largest data chunk TensorFlow reads
_TOO_SHORT = "Data too short when trying to read string"



class _Reader:
    """Little-endian fields read in order from the file's bytes; running off the end raises
    TensorFlow's "Data too short" error."""

    def __init__(self, data: bytes):
        self.data, self.offset = data, 0

    def take(self, size: int) -> bytes:
        if self.offset + size > len(self.data):
            raise invalid_argument(_TOO_SHORT)
        out = self.data[self.offset:self.offset + size]
        self.offset += size
        return out

    def unpack(self, fmt: str) -> int:
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def expect(self, text: bytes) -> None:
        found = self.take(len(text))
        if found != text:
            raise invalid_argument(f"Header mismatch: Expected {text.decode()} but found "
                                   f"{found.decode('latin-1')}")


def _read_format(reader: _Reader) -> tuple[int, int]:
    """The "fmt " chunk checked for 16-bit PCM; returns (channels, sample_rate)."""
    reader.expect(b"RIFF")
    reader.take(4)   # the RIFF size: TensorFlow does not check it
    reader.expect(b"WAVE")
    field = reader.take(4)
    if field != b"fmt ":
        raise invalid_argument(f"Unexpected field {field.decode('latin-1')}")
    chunk_size = reader.unpack("I")
    if chunk_size not in (16, 18):
        raise invalid_argument(f"Bad format chunk size for WAV: Expected 16 or 18, but got"
                               f"{chunk_size}")
    audio_format = reader.unpack("H")
    if audio_format != 1:
        raise invalid_argument(f"Bad audio format for WAV: Expected 1 (PCM), but got"
                               f"{audio_format}")
    channels = reader.unpack("H")
    if channels < 1:
        raise invalid_argument(f"Bad number of channels for WAV: Expected at least 1, but got "
                               f"{channels}")
    sample_rate = reader.unpack("I")
    bytes_per_second = reader.unpack("I")
    block_align = reader.unpack("H")
    bits = reader.unpack("H")
    if bits != 16:
        raise invalid_argument(f"Can only read 16-bit WAV files, but received {bits}")
    frame_bytes = 2 * channels
    if block_align != frame_bytes:
        raise invalid_argument(f"Bad bytes per sample in WAV header: Expected {frame_bytes} but "
                               f"got {block_align}")
    if bytes_per_second != sample_rate * frame_bytes:
        raise invalid_argument(
            f"Bad bytes per second in WAV header: Expected {sample_rate * frame_bytes} but got "
            f"{bytes_per_second} (sample_rate={sample_rate}, bytes_per_sample={frame_bytes})")
    if chunk_size == 18:   # WAVEFORMATEX's cbSize, unused for PCM; skipped even past the end
        reader.offset += 2
    return channels, sample_rate


def _read_samples(reader: _Reader, channels: int) -> np.ndarray:
    """The "data" chunk's samples as int16 [frames, channels]; other chunks are skipped."""
    while reader.offset < len(reader.data):
        chunk_id = reader.take(4)
        chunk_size = reader.unpack("I")
        if chunk_id != b"data":
            reader.offset += chunk_size
            continue
        if chunk_size > _MAX_DATA:
            raise invalid_argument(f"WAV data chunk 'data' is too large: {chunk_size} bytes, but "
                                   f"the limit is {_MAX_DATA}")
        if chunk_size % (2 * channels):   # a partial frame reads past the data TF expects
            raise invalid_argument(_TOO_SHORT)
        raw = reader.take(chunk_size)
        return np.frombuffer(raw, "<i2").reshape(-1, channels)
    raise invalid_argument("No data chunk found in WAV")


@kernel("DecodeWav")
class DecodeWavKernel:
    """A WAV file to float32 audio [samples, channels] and its int32 sample rate."""

    def __init__(self, ctx):
        self.channels = ctx.attrs["desired_channels"]
        self.samples = ctx.attrs["desired_samples"]

    def compute(self, ctx, contents):
        if np.ndim(contents) != 0:
            raise invalid_argument(f"contents must be scalar, got shape "
                                   f"{dims_text(np.shape(contents))}")
        reader = _Reader(bytes(np.asarray(contents, dtype=object).item()))
        file_channels, sample_rate = _read_format(reader)
        pcm = _read_samples(reader, file_channels)
        samples = pcm.shape[0] if self.samples == -1 else self.samples
        channels = file_channels if self.channels == -1 else self.channels
        # Channels past the file's repeat its last one; samples past its end are silence.
        source = np.minimum(np.arange(channels), file_channels - 1)
        audio = np.zeros([samples, channels], np.float32)
        kept = min(samples, pcm.shape[0])
        audio[:kept] = pcm[:kept][:, source].astype(np.float32) / np.float32(_SCALE)
        return audio, np.int32(sample_rate)


@kernel("EncodeWav")
def _encode_wav(ctx, audio, sample_rate):
    """float32 audio [samples, channels] to a 16-bit PCM WAV file's bytes."""
    if np.ndim(audio) != 2:
        raise invalid_argument(f"audio must be 2-dimensional{dims_text(np.shape(audio))}")
    if np.ndim(sample_rate) != 0:
        raise invalid_argument(f"Input sample_rate should be a scalar tensor, got "
                               f"{dims_text(np.shape(sample_rate))} instead.")
    rate = int(sample_rate) % (1 << 64)   # TensorFlow reads the int32 as an unsigned 64-bit
    if not 0 < rate < 1 << 32:
        raise invalid_argument(f"sample_rate must be in (0, 2^32), got: {rate}")
    frames, channels = np.shape(audio)
    if not 0 < channels < 1 << 16:
        raise invalid_argument(f"num_channels must be in (0, 2^16), got: {channels}")
    pcm = _to_int16(np.asarray(audio, np.float32))
    data_size = pcm.nbytes
    block_align = 2 * channels
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI", b"RIFF", (36 + data_size) % (1 << 32), b"WAVE", b"fmt ", 16, 1,
        channels, rate, rate * block_align % (1 << 32), block_align % (1 << 16), 16, b"data",
        data_size % (1 << 32))
    return np.array(header + pcm.astype("<i2").tobytes(), dtype=object)


def _to_int16(audio: np.ndarray) -> np.ndarray:
    """float samples times 2^15, rounded half away from zero, clamped to int16; NaN gives 0.

    The product is formed in float64, where it is exact, so adding 0.5 cannot round it up.
    """
    scaled = audio.astype(np.float64) * _SCALE
    rounded = np.trunc(scaled + np.copysign(0.5, scaled))
    clamped = np.clip(np.nan_to_num(rounded, nan=0.0), -_SCALE, _SCALE - 1)
    return clamped.astype(np.int16)
