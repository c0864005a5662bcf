"""Image codecs: PNG decoding equal to TensorFlow 2.21 for every colour type, bit depth,
tRNS chunk, requested channel count and dtype (hashes of TF's outputs); GIF frames equal to
TF's; BMP and PNG round trips; JPEG within a decoder-rounding tolerance of TF's pixels (TF uses
libjpeg-turbo's fast integer IDCT, Pillow the accurate one: up to 4 levels, under 1 on
average); TF's errors for bad attributes, wrong ops and corrupt data."""
import base64
import hashlib
import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tensorweave.ops import image_codec_ops as K
from tensorweave.testing.op_case import OpCase, case_tests


# --- PNG files of every colour type (hand-built chunks) ------------------------------------------
def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def make_png(rows, width, height, depth, color_type, plte=None, trns=None):
    """A PNG of the given unfiltered rows (bytes each), with optional PLTE and tRNS."""
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    body = _chunk(b"IHDR", header)
    body += _chunk(b"PLTE", plte) if plte is not None else b""
    body += _chunk(b"tRNS", trns) if trns is not None else b""
    idat = zlib.compress(b"".join(b"\x00" + r for r in rows))
    return b"\x89PNG\r\n\x1a\n" + body + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def _packed(values, depth):
    per = 8 // depth
    height, width = values.shape
    padded = np.zeros((height, -(-width // per) * per), np.uint8)
    padded[:, :width] = values
    groups = padded.reshape(height, -1, per).astype(np.uint16)
    shifts = 8 - depth * (np.arange(per) + 1)
    return [r.astype(np.uint8).tobytes() for r in (groups << shifts).sum(-1)]


def png_files():
    """Every PNG colour type and bit depth, with and without tRNS, 7x5 pixels."""
    rng = np.random.RandomState(5)
    width, height, files = 7, 5, {}
    for color_type, channels in [(0, 1), (2, 3), (4, 2), (6, 4)]:
        for depth in (8, 16):
            v = rng.randint(0, 2 ** depth, size=(height, width, channels))
            v[0, 0] = v[0, 0, 0]
            rows = [r.astype(">u2" if depth == 16 else np.uint8).tobytes()
                    for r in v.reshape(height, -1)]
            files[f"ct{color_type}_d{depth}"] = make_png(rows, width, height, depth, color_type)
            if color_type in (0, 2):
                trns = b"".join(struct.pack(">H", int(k)) for k in v[1, 1])
                files[f"ct{color_type}_d{depth}_trns"] = make_png(rows, width, height, depth,
                                                                  color_type, trns=trns)
    for depth in (1, 2, 4):
        v = rng.randint(0, 2 ** depth, size=(height, width))
        files[f"ct0_d{depth}"] = make_png(_packed(v, depth), width, height, depth, 0)
        files[f"ct0_d{depth}_trns"] = make_png(_packed(v, depth), width, height, depth, 0,
                                               trns=struct.pack(">H", int(v[0, 1])))
    for depth in (1, 2, 4, 8):
        n = 2 ** depth
        plte = rng.randint(0, 256, size=(n, 3)).astype(np.uint8).tobytes()
        v = rng.randint(0, n, size=(height, width))
        rows = _packed(v, depth) if depth < 8 else [r.astype(np.uint8).tobytes() for r in v]
        files[f"ct3_d{depth}"] = make_png(rows, width, height, depth, 3, plte=plte)
        trns = bytes(rng.randint(0, 256, size=max(1, n // 2)).astype(np.uint8))
        files[f"ct3_d{depth}_trns"] = make_png(rows, width, height, depth, 3, plte=plte,
                                               trns=trns)
    return files


PNG_FILES = png_files()
# sha256 (first 16 hex digits) of TF 2.21's decode_png of each file for channels 0, 1, 3, 4
# and dtypes uint8, uint16 (shape and bytes of each result, in that order).
TF_PNG_HASHES = {
    "ct0_d8": "24a36b470e31eea3",
    "ct0_d8_trns": "90c0bac6662dc04e",
    "ct0_d16": "29dcdb20e43d23c6",
    "ct0_d16_trns": "f42a9efa599ecf9b",
    "ct2_d8": "f54cbccbfc93ea3b",
    "ct2_d8_trns": "a1b80543befe8623",
    "ct2_d16": "e3839fb8e1f94c17",
    "ct2_d16_trns": "f43fe89c6ea6af3c",
    "ct4_d8": "7929d6b69724ea59",
    "ct4_d16": "b36eab3a535ad583",
    "ct6_d8": "1d3ff704fef602f2",
    "ct6_d16": "5148d1116c63bde6",
    "ct0_d1": "60d5b8552f18fcdd",
    "ct0_d1_trns": "4ebed1d960c291d4",
    "ct0_d2": "72ba2673d8dfca3d",
    "ct0_d2_trns": "069d83af5003e14f",
    "ct0_d4": "788c9ed5499a1467",
    "ct0_d4_trns": "9308e42b8b985c95",
    "ct3_d1": "73a67f28f4953177",
    "ct3_d1_trns": "7345019460ce8560",
    "ct3_d2": "572ab96c0bdc0a98",
    "ct3_d2_trns": "c9f648eb6ca1c4c7",
    "ct3_d4": "8629d036eb7bbdd7",
    "ct3_d4_trns": "58358bcefecd6d33",
    "ct3_d8": "577f966e2a0991f6",
    "ct3_d8_trns": "48b3be1074d112ca",
}


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.mark.parametrize("name", sorted(TF_PNG_HASHES))
def test_decode_png_equals_tensorflow(name):
    digest = hashlib.sha256()
    with tf.Graph().as_default():
        outs = [tf.image.decode_png(PNG_FILES[name], channels=ch, dtype=dt)
                for ch in (0, 1, 3, 4) for dt in (tf.uint8, tf.uint16)]
        for value in _run(outs):
            digest.update(str(value.shape).encode() + value.tobytes())
    assert digest.hexdigest()[:16] == TF_PNG_HASHES[name]


def test_png_channel_rules():
    """The libpng rules behind those hashes, spelled out on a 16-bit RGBA pixel."""
    pixel = np.array([[[0x1234, 0xabcd, 0x0f0f, 0x8001]]], np.uint16)
    data = make_png([pixel.astype(">u2").tobytes()], 1, 1, 16, 6)
    with tf.Graph().as_default():
        got = _run([tf.image.decode_png(data, dtype=tf.uint16),
                    tf.image.decode_png(data),                      # high bytes
                    tf.image.decode_png(data, channels=3),          # alpha dropped, not blended
                    tf.image.decode_png(data, channels=1, dtype=tf.uint16)])
    np.testing.assert_array_equal(got[0], pixel)
    np.testing.assert_array_equal(got[1], pixel >> 8)
    np.testing.assert_array_equal(got[2], pixel[..., :3] >> 8)
    gray = (9797 * 0x1234 + 19234 * 0xabcd + 3737 * 0x0f0f + 16384) >> 15
    np.testing.assert_array_equal(got[3], [[[gray]]])


def test_png_rgb_to_gray_in_linear_light_when_the_file_has_a_gamma():
    """TF 2.21 (libpng) gives [87, 156] without a gamma chunk and [120, 197] with gAMA
    0.45455 or sRGB; the RGB pixels themselves are not gamma-corrected."""
    pixels = np.array([[[200, 30, 90], [10, 250, 60]]], np.uint8)
    row = pixels.reshape(1, -1).tobytes()
    plain = make_png([row], 2, 1, 8, 2)
    cut = plain.index(b"IDAT") - 4
    for extra, gray in [(b"", [87, 156]), (_chunk(b"gAMA", struct.pack(">I", 45455)), [120, 197]),
                        (_chunk(b"sRGB", b"\x00"), [120, 197])]:
        data = plain[:cut] + extra + plain[cut:]
        with tf.Graph().as_default():
            got, rgb = _run([tf.image.decode_png(data, channels=1), tf.image.decode_png(data)])
        np.testing.assert_array_equal(got.ravel(), gray)
        np.testing.assert_array_equal(rgb, pixels)


# --- round trips, OpCase rows -----------------------------------------------------------
_RNG = np.random.RandomState(3)
_U8 = (_RNG.rand(6, 5, 3) * 255).astype(np.uint8)
_U16 = (_RNG.rand(4, 3, 2) * 65535).astype(np.uint16)


def _png_bytes(image, **kwargs):
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "PNG", **kwargs)
    return np.array(buffer.getvalue(), dtype=object)


def _bmp_bytes(image):
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "BMP")
    return np.array(buffer.getvalue(), dtype=object)


def _gif_bytes(indices, palette):
    image = Image.fromarray(indices, "P")
    image.putpalette(palette.ravel().tolist())
    buffer = io.BytesIO()
    image.save(buffer, "GIF")
    return np.array(buffer.getvalue(), dtype=object)


_INDICES = _RNG.randint(0, 8, (4, 7)).astype(np.uint8)
_PALETTE = _RNG.randint(0, 256, (8, 3)).astype(np.uint8)
_STRING = (tf.string,)
CASES = [
    OpCase("decode_gif_single_frame", K.decode_gif, lambda s: _PALETTE[_INDICES][None],
           [_gif_bytes(_INDICES, _PALETTE)], dtypes=_STRING, grad=False),
    OpCase("decode_png_pillow_file", K.decode_png, lambda s: _U8,
           [_png_bytes(_U8, optimize=True)], dtypes=_STRING, grad=False),
    OpCase("decode_png_gray_to_rgba", lambda s: K.decode_png(s, channels=4),
           lambda s: np.concatenate([np.repeat(_U8[..., :1], 3, -1),
                                     np.full(_U8.shape[:2] + (1,), 255, np.uint8)], -1),
           [_png_bytes(_U8[..., 0])], dtypes=_STRING, grad=False),
    OpCase("decode_png_8_to_16", lambda s: K.decode_png(s, dtype=tf.uint16),
           lambda s: _U8.astype(np.uint16) * 257, [_png_bytes(_U8)], dtypes=_STRING,
           grad=False),
    OpCase("decode_bmp_rgb", K.decode_bmp, lambda s: _U8, [_bmp_bytes(_U8)], dtypes=_STRING,
           grad=False),
    OpCase("decode_bmp_gray_to_rgba", lambda s: K.decode_bmp(s, channels=4),
           lambda s: np.concatenate([np.repeat(_U8[..., :1], 3, -1),
                                     np.full(_U8.shape[:2] + (1,), 255, np.uint8)], -1),
           [_bmp_bytes(_U8[..., 0])], dtypes=_STRING, grad=False),
    OpCase("decode_image_bmp_float", lambda s: K.decode_image(s, dtype=tf.float32),
           lambda s: _U8.astype(np.float32) * np.float32(1.0 / 255), [_bmp_bytes(_U8)],
           dtypes=_STRING, grad=False),
    OpCase("decode_image_png_uint16", lambda s: K.decode_image(s, dtype=tf.uint16),
           lambda s: _U16[..., :1], [_png_bytes(_U16[..., 0])], dtypes=_STRING, grad=False),
    OpCase("decode_image_png_int32", lambda s: K.decode_image(s, dtype=tf.int32),
           lambda s: (_U8.astype(np.int32) * 257) << 15, [_png_bytes(_U8)], dtypes=_STRING,
           grad=False),
    OpCase("encode_png_round_trip", lambda x: K.decode_png(K.encode_png(x), dtype=tf.uint16),
           lambda x: x, [_U16], dtypes=(tf.uint16,), grad=False),
    OpCase("encode_png_batch", lambda x: K.decode_png(K.encode_png(x)[1], channels=0),
           lambda x: x[1], [np.stack([_U8, _U8[::-1]])], dtypes=(tf.uint8,), grad=False),
    OpCase("encode_jpeg_round_trip", lambda x: K.decode_jpeg(K.encode_jpeg(x, quality=100)),
           lambda x: x, [np.full((16, 16, 3), [200, 100, 50], np.uint8)], dtypes=(tf.uint8,),
           grad=False),
]

test_forward, test_shapes = case_tests(CASES)


# --- GIF and JPEG against TensorFlow -------------------------------------------------------------
GIF = base64.b64decode(
    "R0lGODlhBgAFAIIAAK/EGfZD05dnXLmOF0hZbiraiKfmRLB/hyH5BAUAAAIALAAAAAAGAAUAAAghAAkAGHBAgIEB"
    "BAgcKAAAwMKBDAUACGDAAAEDAQ4MGBAQACH5BAUAAAIALAAAAAAGAAUAgq/EGfZD05dnXLmOF0hZbiraiKfmRLB/"
    "hwgfAAEMABAAAAADBwoQWHjggIAAAws0JHAAgMIBEAcEBAAh+QQFAAACACwAAAAABgAFAIKvxBn2Q9OXZ1y5jhdI"
    "WW4q2oin5kSwf4cIIQAHBBgwgIDAAQYCFFAY4MABAQMECChwgKCAAwAIFBgQEAA7")
TF_GIF_HASH = "1b1e63d9492c8b4d"   # TF's [3, 5, 6, 3] frames, sha256 of the bytes
JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4R"
    "DgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU"
    "FBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAKAAwDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAA"
    "AAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAk"
    "M2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKT"
    "lJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QA"
    "HwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdh"
    "cRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hp"
    "anN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk"
    "5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD0b9nz9k9II7d3tAqgAkla+0tC+E2k6VpkVuYVJUcnFavgWCOL"
    "SItkap8v8KgV01e9jsdV9o6cHZI+fwWDp1Ie0nqf/9k=")
TF_JPEG_RGB = np.frombuffer(base64.b64decode(
    "BipOEzZcH0RuLVOAPmSTSXOjWIKyZZG+d6TOhLHYlcHkn8ztFjxhJEpvNFmDQmmUUHmlXoe1bJfCeqXPibXcmMPm"
    "qdT0s9/8KVB3OF+GSXCZVX+nZI64cpzEgavRkbndocrosNjywuj/y/H/OWWMSXWcWoSsZ5G3dZ/Fhq7Rl77fp8zn"
    "uNz0xej71vb/3f3/TXqjXYqzbZnAe6bJjLXVnMPgr9Prv+Dzz+/82/f/5///6///XYy2cJ3GgKzRjrnZocjltNju"
    "xeb30+/64vv/6v//8f//8///dKHKhLHYlcDipczpuNzyyer51/T84vr+7P//8v//9v/+9//8iLTbmcPpqtPxud/2"
    "zO3+3Pj/5///7v//8///9//++//9+//6oMfur9X5web/zvH/3Pr/5///8f//9v//+f/9+//9/v/9/v/9tdv/xOj/"
    "0vb/3f7/5///8P//9P//+P/9+//9/P/7///9///9"), np.uint8).reshape(10, 12, 3)
TF_JPEG_GRAY = np.frombuffer(base64.b64decode(
    "IzA+TV5se4mbqLjCNUNTYnKAj52susvVSVhpd4aUo7HBz9/oXGx8iZemtsTU4O71cYGQnay7y9jn8Pn8g5SjsMDQ"
    "3uj0+f7+mKi3xNTi7PP6/f7+q7vK1uXx+Pv9/v/+wM7e6fL5/v7/////1OHu9vv/////////"),
    np.uint8).reshape(10, 12, 1)


def test_decode_gif_equals_tensorflow():
    with tf.Graph().as_default():
        frames, first = _run([tf.image.decode_gif(GIF),
                              tf.image.decode_image(GIF, expand_animations=False)])
    assert frames.shape == (3, 5, 6, 3)
    assert hashlib.sha256(frames.tobytes()).hexdigest()[:16] == TF_GIF_HASH
    np.testing.assert_array_equal(first, frames[0])


@pytest.mark.parametrize("channels,expected", [(0, TF_JPEG_RGB), (1, TF_JPEG_GRAY)])
def test_decode_jpeg_within_rounding_of_tensorflow(channels, expected):
    with tf.Graph().as_default():
        got = _run(tf.image.decode_jpeg(JPEG, channels=channels))
    diff = np.abs(got.astype(int) - expected)
    assert got.shape == expected.shape and diff.max() <= 4 and diff.mean() < 1.0


def test_decode_jpeg_ratio_and_png_through_jpeg_op():
    with tf.Graph().as_default():
        small, png = _run([tf.image.decode_jpeg(JPEG, ratio=2),
                           tf.image.decode_jpeg(_png_bytes(_U8).item())])
    assert small.shape == (5, 6, 3)
    np.testing.assert_array_equal(png, _U8)


def test_encode_jpeg_options():
    image = np.tile(np.arange(32, dtype=np.uint8)[:, None, None] * 8, (1, 24, 1))
    with tf.Graph().as_default():
        plain, cm, gray = _run([
            tf.image.encode_jpeg(image, quality=80),
            tf.image.encode_jpeg(image, density_unit="cm", x_density=50, y_density=40,
                                 progressive=True),
            tf.image.encode_jpeg(image, format="grayscale", xmp_metadata="<x/>")])
    assert plain[13] == 1 and cm[13:18] == b"\x02\x00\x32\x00\x28" and b"<x/>" in gray
    for data in (plain, cm, gray):
        decoded = np.asarray(Image.open(io.BytesIO(data)))
        assert np.abs(decoded.astype(int) - image[..., 0]).max() <= 6


def test_is_jpeg():
    with tf.Graph().as_default():
        flags = tf.image.is_jpeg([JPEG, GIF, b"\xff\xd8"])
        assert flags.name == "is_jpeg/Equal:0"
        np.testing.assert_array_equal(_run(flags), [True, False, False])


# --- static shapes and errors -----------------------------------------------------------
def test_static_shapes_and_names():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string)
        assert tf.image.decode_image(s).name == "decode_image/DecodeImage:0"
        assert tf.image.decode_png(s, channels=3).shape.as_list() == [None, None, 3]
        assert tf.image.decode_gif(s).shape.as_list() == [None, None, None, 3]
        assert tf.image.decode_image(s).shape.ndims is None
        assert tf.image.decode_image(s, expand_animations=False).shape.ndims == 3
        assert tf.image.decode_image(s, dtype=tf.int32).op.type == "Mul"
        images = tf.placeholder(tf.uint8, [2, 7, None, None, 3])
        assert tf.image.encode_png(images).shape.as_list() == [2, 7]
        assert tf.image.encode_jpeg(tf.placeholder(tf.uint8)).shape.as_list() == []


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.image.decode_png([b"a", b"b"]), ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: tf.image.decode_png(b"a", channels=-1), ValueError,
     "channels must be non-negative, got -1"),
    (lambda: tf.image.decode_png(b"a", dtype=tf.float32), TypeError,
     "DataType float32 not in list of allowed values: uint16, uint8"),
    (lambda: tf.image.encode_png(np.zeros((2, 3), np.uint8)), ValueError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.image.encode_png(np.zeros((2, 3, 3), np.float32)), TypeError,
     "DataType float32 not in list"),
    (lambda: tf.image.encode_jpeg(np.zeros((2, 3), np.uint8)), ValueError,
     "Shape must be rank 3 but is rank 2"),
    (lambda: tf.image.encode_jpeg(np.zeros((2, 3, 3), np.uint8), format="foo"), ValueError,
     "Attr 'format' of 'EncodeJpeg' Op passed string 'foo' not in"),
    (lambda: tf.image.encode_jpeg(np.zeros((2, 3, 3), np.uint8), density_unit="mm"), ValueError,
     "Attr 'density_unit' of 'EncodeJpeg' Op passed string 'mm' not in"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


_PNG = PNG_FILES["ct2_d8"]


@pytest.mark.parametrize("build,value,match", [
    (lambda s: tf.image.decode_png(s, channels=2), _PNG,
     "`channels` must be 0, 1, 3 or 4 but got 2"),
    (tf.image.decode_png, np.array([_PNG, _PNG], object),
     r"`contents` must be scalar but got shape\[2\]"),
    (tf.image.decode_png, b"", "Input is empty."),
    (tf.image.decode_jpeg, b"hello",
     "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."),
    (tf.image.decode_png, _PNG[:20], "Invalid PNG. Failed to initialize decoder."),
    (tf.image.decode_png, _PNG[:-30] + bytes([_PNG[-30] ^ 1]) + _PNG[-29:],
     "Invalid PNG data, size"),
    (tf.image.decode_png, _PNG[:-12], "Invalid PNG data, size"),
    (tf.image.decode_bmp, _PNG, "Trying to decode PNG format using DecodeBmp op"),
    (lambda s: tf.image.decode_jpeg(s, channels=4), JPEG, "JPEG does not support 4 channels"),
    (lambda s: tf.image.decode_jpeg(s, ratio=3), JPEG, "ratio must be 1, 2, 4, or 8, got 3"),
    (lambda s: tf.image.decode_jpeg(s, dct_method="X"), JPEG, "dct_method must be one of"),
    (tf.image.decode_jpeg, JPEG[:len(JPEG) // 2], "jpeg::Uncompress failed. Invalid JPEG data"),
    (tf.image.decode_png, GIF, "Got 3 frames, but animated gifs can only be decoded by"),
    (lambda s: tf.image.decode_image(s, channels=1), GIF, "channels must be 0 or 3 for GIF, got 1"),
    (tf.image.decode_gif, b"GIF89ahello", r"Invalid GIF data \(size 11\)"),
    (tf.image.decode_bmp, b"BMhello", "Incomplete bmp content, requires at least 32 bytes"),
    (lambda s: tf.image.decode_bmp(s, channels=1), _bmp_bytes(_U8).item(),
     "`channels` must be 0, 3 or 4 for BMP, but got 1"),
    (tf.image.decode_bmp, _bmp_bytes(_U8).item()[:-3],
     r"Input size should match \(header_size \+ row_size \* abs_height\) but they differ by -3"),
])
def test_decode_errors(build, value, match):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.string)
        out = build(holder)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(out, {holder: value})


@pytest.mark.parametrize("build,value,exc,match", [
    (tf.image.encode_png, np.zeros((2, 2, 5), np.uint8), tf.errors.InvalidArgumentError,
     "image must have 1, 2, 3, or 4 channels, got 5"),
    (lambda x: tf.image.encode_png(x, compression=12), np.zeros((2, 2, 3), np.uint8),
     tf.errors.InvalidArgumentError, r"compression should be in \[-1,9\], got 12"),
    (tf.image.encode_jpeg, np.zeros((2, 2, 2), np.uint8), tf.errors.InvalidArgumentError,
     r"image must have 1 or 3 channels, got \[2,2,2\]"),
    (lambda x: tf.image.encode_jpeg(x, format="rgb"), np.zeros((2, 2, 1), np.uint8),
     tf.errors.InvalidArgumentError, r"format rgb expects 3 channels, got \[2,2,1\]"),
    (lambda x: tf.image.encode_jpeg(x, quality=101), np.zeros((2, 2, 3), np.uint8),
     tf.errors.InvalidArgumentError, r"quality must be in \[0,100\], got 101"),
    (tf.image.encode_jpeg, np.zeros((0, 2, 3), np.uint8), tf.errors.InternalError,
     "JPEG encoding failed"),
])
def test_encode_errors(build, value, exc, match):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.uint8)
        out = build(holder)
        with pytest.raises(exc, match=match):
            _run(out, {holder: value})


def test_truncated_jpeg_recovers_when_asked():
    """As TF 2.21 does, half of a 48x40 JPEG decodes to the full size, gray where data is
    missing; without try_recover_truncated it is an error."""
    ramp = np.add.outer(np.arange(48) * 2, np.arange(40) * 3)[..., None] + [0, 40, 80] + \
        np.random.RandomState(0).randint(0, 20, (48, 40, 3))   # noise: most bytes are data
    buffer = io.BytesIO()
    Image.fromarray((ramp % 256).astype(np.uint8)).save(buffer, "JPEG", quality=95)
    half = buffer.getvalue()[:len(buffer.getvalue()) // 2]
    with tf.Graph().as_default():
        recovered = _run(tf.image.decode_jpeg(half, try_recover_truncated=True))
        with pytest.raises(tf.errors.InvalidArgumentError, match="jpeg::Uncompress failed"):
            _run(tf.image.decode_jpeg(half))
    assert recovered.shape == (48, 40, 3)
    np.testing.assert_array_equal(recovered[-1], np.full((40, 3), 128, np.uint8))
    block = np.abs(recovered[:8, :8].astype(int) - ramp[:8, :8] % 256)   # first decoded block
    assert block.mean() <= 6
