"""DecodeWav and EncodeWav: forward against NumPy and Python's `wave` module, static shapes,
TensorFlow 2.21's bytes, values and error messages."""
import hashlib
import io
import struct
import wave

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests


def _wav_file(pcm: np.ndarray, rate: int) -> bytes:
    """int16 [frames, channels] written by Python's wave module (the reference writer)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(pcm.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype("<i2").tobytes())
    return out.getvalue()


def _pcm16(audio: np.ndarray) -> np.ndarray:
    """Reference conversion: x * 2^15 rounded half away from zero, saturated; NaN gives 0."""
    scaled = np.nan_to_num(audio.astype(np.float64) * 32768, nan=0.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return np.clip(rounded, -32768, 32767).astype(np.int16)


def _decoded(data: bytes, channels: int = -1, samples: int = -1):
    """Reference decoder: the wave module's frames / 2^15, padded or cut to the desired size."""
    with wave.open(io.BytesIO(data)) as w:
        rate, file_channels = w.getframerate(), w.getnchannels()
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, file_channels)
    channels = file_channels if channels == -1 else channels
    samples = pcm.shape[0] if samples == -1 else samples
    cols = [pcm[:, min(c, file_channels - 1)] for c in range(channels)]
    audio = np.zeros([samples, channels], np.float32)
    kept = min(samples, pcm.shape[0])
    audio[:kept] = np.stack(cols, 1)[:kept] / np.float32(32768) if channels else 0
    return [audio, np.int32(rate)]


def _audio(rng, dtype):
    edges = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan, 0.5 / 32768,
             1.5 / 32768, -2.5 / 32768, 32767.5 / 32768, -32768.5 / 32768]
    return np.concatenate([rng.uniform(-1.1, 1.1, 50), edges]).astype(dtype).reshape(-1, 2)


STEREO = _wav_file(np.random.RandomState(1).randint(-32768, 32768, [9, 2]), 44100)
MONO = _wav_file(np.array([[0], [1], [-1], [32767], [-32768]]), 8000)
_str = (tf.string,)

CASES = [
    OpCase("encode_wav", lambda a: tf.audio.encode_wav(a, 16000),
           lambda a: np.array(_wav_file(_pcm16(a), 16000), dtype=object), [_audio],
           grad=False),
    OpCase("decode_wav", tf.audio.decode_wav, lambda c: _decoded(c.item()),
           [np.array(STEREO, dtype=object)], dtypes=_str, grad=False),
    OpCase("decode_wav_more_channels_fewer_samples",
           lambda c: tf.audio.decode_wav(c, desired_channels=4, desired_samples=5),
           lambda c: _decoded(c.item(), 4, 5), [np.array(STEREO, dtype=object)], dtypes=_str,
           grad=False),
    OpCase("decode_wav_mono_padded",
           lambda c: tf.audio.decode_wav(c, desired_channels=2, desired_samples=8),
           lambda c: _decoded(c.item(), 2, 8), [np.array(MONO, dtype=object)], dtypes=_str,
           grad=False),
    OpCase("decode_wav_first_channel", lambda c: tf.audio.decode_wav(c, 1),
           lambda c: _decoded(c.item(), 1), [np.array(STEREO, dtype=object)], dtypes=_str,
           grad=False),
    OpCase("decode_wav_no_channels_no_samples", lambda c: tf.audio.decode_wav(c, 0, 0),
           lambda c: _decoded(c.item(), 0, 0), [np.array(MONO, dtype=object)], dtypes=_str,
           grad=False),
]
test_forward, test_shapes = case_tests(CASES)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_bytes_and_values_match_tensorflow():
    """TF 2.21's EncodeWav bytes and DecodeWav values (their SHA-256) for seeded data."""
    rng = np.random.RandomState(0)
    audio = np.concatenate([
        rng.uniform(-1.2, 1.2, 20000), (rng.randint(-40000, 40000, 5000) + 0.5) / 32768,
        rng.randn(5000).astype(np.float32) * 1e-4,
        np.nextafter(np.float32(0.5 / 32768), np.float32([0, 1])),
        [0.49999997 / 32768, -0.49999997 / 32768, -0.0, 3e38, -3e38, 1e-45]]).astype(np.float32)
    pcm = rng.randint(-32768, 32768, 6000).astype("<i2").tobytes()
    file = (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, 3, 8000, 48000, 6, 16) + b"data" +
            struct.pack("<I", len(pcm)) + pcm)
    with tf.Graph().as_default():
        encoded = tf.audio.encode_wav(audio.reshape(-1, 2), 22050)
        padded = tf.audio.decode_wav(file, desired_channels=5, desired_samples=2500)
        plain = tf.audio.decode_wav(file)
        got, padded, plain = _run([encoded, padded, plain])
    assert hashlib.sha256(got).hexdigest() == \
        "e4a706f840b747e2670b474eab5d2dc06c0c6926db5a26b1e1e2419e570c2515"
    assert padded.audio.shape == (2500, 5) and padded.sample_rate == 8000
    assert hashlib.sha256(padded.audio.tobytes()).hexdigest() == \
        "6aeafe6403e06424128fa2e009573bdb69c9bfbd9c7a191cf8e04642e8993bb4"
    assert hashlib.sha256(plain.audio.tobytes()).hexdigest() == \
        "898b1fd77afbdef5f672ead5af904bffa2f1bd47edf0dd6e406c8a6b5a414179"


@pytest.mark.parametrize("rate,channels,header", [
    # TF wraps the byte rate and block align to their field widths.
    (2**31 - 1, 1, struct.pack("<IH", 0xFFFFFFFE, 2)),
    (1, 65535, struct.pack("<IH", 0x1FFFE, 0xFFFE)),
    (2**30, 2, struct.pack("<IH", 0, 4)),
])
def test_header_fields_wrap_like_tensorflow(rate, channels, header):
    with tf.Graph().as_default():
        data = _run(tf.audio.encode_wav(np.zeros([1, channels], np.float32), rate))
    assert data[28:34] == header


def test_static_shapes_names_and_no_gradient():
    with tf.Graph().as_default():
        decoded = tf.audio.decode_wav(tf.placeholder(tf.string, []))
        assert type(decoded).__name__ == "DecodeWav" and decoded.audio.op.type == "DecodeWav"
        assert [decoded.audio.name, decoded.sample_rate.name] == ["DecodeWav:0", "DecodeWav:1"]
        assert decoded.audio.shape.as_list() == [None, None] and decoded.audio.dtype == tf.float32
        assert decoded.sample_rate.shape.as_list() == [] and decoded.sample_rate.dtype == tf.int32
        sized = tf.audio.decode_wav("", desired_samples=7, name="clip")
        assert sized.audio.shape.as_list() == [7, None] and sized.audio.name == "clip:0"
        assert sized.audio.op.get_attr("desired_channels") == -1
        assert tf.audio.decode_wav("", 2, 0).audio.shape.as_list() == [0, 2]
        x = tf.constant([[0.1], [0.2]])
        encoded = tf.audio.encode_wav(x, 8000)
        assert encoded.op.type == "EncodeWav" and encoded.shape.as_list() == []
        assert encoded.op.inputs[1].dtype == tf.int32
        audio = tf.audio.decode_wav(encoded).audio
        assert tf.gradients(tf.reduce_sum(audio), x) == [None]


@pytest.mark.parametrize("build,message", [
    (lambda: tf.audio.encode_wav(tf.zeros([3]), 1),
     "Shape must be rank 2 but is rank 1 for '{{node EncodeWav}} = EncodeWav[]"),
    (lambda: tf.audio.encode_wav(tf.zeros([3, 1]), [1]), "Shape must be rank 0 but is rank 1"),
    (lambda: tf.audio.decode_wav(["a"]), "Shape must be rank 0 but is rank 1"),
    (lambda: tf.audio.decode_wav("a", desired_channels=-5), "channels must be non-negative, "
     "got -5 for '{{node DecodeWav}} = DecodeWav[desired_channels=-5, desired_samples=-1]"),
    (lambda: tf.audio.decode_wav("a", desired_samples=-3), "samples must be non-negative, got -3"),
])
def test_graph_construction_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
    assert message in str(info.value)


def test_encode_wav_rejects_float64():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Input 'audio' of 'EncodeWav' Op has type float64 "
                                            "that does not match expected type of float32"):
            tf.audio.encode_wav(tf.zeros([3, 1], tf.float64), 1)


@pytest.mark.parametrize("audio,rate,message", [
    (np.zeros([3]), 1, "audio must be 2-dimensional[3]"),
    (np.zeros([3, 1, 1]), 1, "audio must be 2-dimensional[3,1,1]"),
    (np.zeros([3, 1]), [1], "Input sample_rate should be a scalar tensor, got [1] instead."),
    (np.zeros([3, 1]), -1, "sample_rate must be in (0, 2^32), got: 18446744073709551615"),
    (np.zeros([3, 0]), 0, "sample_rate must be in (0, 2^32), got: 0"),
    (np.zeros([3, 0]), 5, "num_channels must be in (0, 2^16), got: 0"),
    (np.zeros([1, 65536]), 1, "num_channels must be in (0, 2^16), got: 65536"),
])
def test_encode_wav_runtime_errors(audio, rate, message):
    with tf.Graph().as_default():
        a, r = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            _run(tf.audio.encode_wav(a, r), {a: audio, r: rate})
    assert message in info.value.message


def _header(fmt=1, ch=1, rate=16000, bits=16, fmt_size=16, block=None, byte_rate=None,
            before=b"", between=b"", data=b"\x01\x00", data_size=None):
    """A WAV file with chosen header fields; the rest consistent."""
    block = ch * bits // 8 if block is None else block
    byte_rate = rate * block if byte_rate is None else byte_rate
    body = (b"WAVE" + before + b"fmt " + struct.pack("<IHHIIHH", fmt_size, fmt, ch, rate,
                                                     byte_rate, block, bits) + between +
            b"data" + struct.pack("<I", len(data) if data_size is None else data_size) + data)
    return b"RIFF" + struct.pack("<I", len(body)) + body


_TOO_SHORT = "Data too short when trying to read string"
_NO_DATA = "No data chunk found in WAV"


@pytest.mark.parametrize("contents,message", [
    (b"", _TOO_SHORT),
    (_header()[:10], _TOO_SHORT),
    (_header()[:-1], _TOO_SHORT),
    (b"RIFX" + _header()[4:], "Header mismatch: Expected RIFF but found RIFX"),
    (_header()[:8] + b"WAVX" + _header()[12:], "Header mismatch: Expected WAVE but found WAVX"),
    (_header(before=b"LIST\x04\x00\x00\x00abcd"), "Unexpected field LIST"),
    (_header(fmt_size=14), "Bad format chunk size for WAV: Expected 16 or 18, but got14"),
    (_header(fmt=3), "Bad audio format for WAV: Expected 1 (PCM), but got3"),
    (b"RIFF\0\0\0\0WAVEfmt \x12\0\0\0\3\0", "Bad audio format for WAV: Expected 1 (PCM), but got3"),
    (_header(ch=0, bits=8), "Bad number of channels for WAV: Expected at least 1, but got 0"),
    (_header(bits=24, data=b"\0\0\0"), "Can only read 16-bit WAV files, but received 24"),
    (_header(block=4, byte_rate=32000), "Bad bytes per sample in WAV header: Expected 2 but got 4"),
    (_header(ch=2, byte_rate=5, data=b"\1\0\1\0"), "Bad bytes per second in WAV header: Expected "
     "64000 but got 5 (sample_rate=16000, bytes_per_sample=4)"),
    (_header()[:36], _NO_DATA),
    (_header(fmt_size=18), _NO_DATA),   # the 2 cbSize bytes are taken from the data chunk's id
    (b"RIFF\0\0\0\0WAVEfmt \x12\0\0\0\1\0\1\0\0\0\0\0\0\0\0\0\2\0\x10\0\0", _NO_DATA),
    (_header(data=b"")[:-8] + b"LIST\xff\x00\x00\x00ab", _NO_DATA),
    (_header(between=b"LIST\x03\x00\x00\x00abc\x00"), _NO_DATA),   # no pad byte: TF's reading
    (_header(data=b"")[:-8] + b"abc", _TOO_SHORT),
    (_header(data=b"\1\0\2") + b"\0abcd", _TOO_SHORT),
    (_header(ch=2, data=b"\1\0\2\0\3\0") + b"\0" * 12, _TOO_SHORT),
    (_header(data_size=100), _TOO_SHORT),
    (_header(data_size=0xFFFFFFFF), "WAV data chunk 'data' is too large: 4294967295 bytes, but "
     "the limit is 2147483647"),
])
def test_decode_wav_runtime_errors(contents, message):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.string, [])
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            _run(tf.audio.decode_wav(holder), {holder: contents})
    assert message in info.value.message


def test_decode_wav_accepts_what_tensorflow_accepts():
    """Unchecked RIFF size, a second "fmt " chunk, trailing bytes, rate 0, WAVEFORMATEX."""
    files = [_header()[:4] + b"\x04\0\0\0" + _header()[8:],
             _header(between=b"fmt \x04\x00\x00\x00abcd"), _header() + b"junk",
             _header(rate=0), _header(fmt_size=18, between=b"\0\0")]
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.string, [])
        decoded = tf.audio.decode_wav(holder)
        for contents in files:
            audio, _ = _run(decoded, {holder: contents})
            np.testing.assert_array_equal(audio, [[1 / 32768]])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"contents must be scalar, got shape \[1\]"):
            _run(tf.audio.decode_wav(tf.placeholder(tf.string)), {"Placeholder_1:0": [b"a"]})
