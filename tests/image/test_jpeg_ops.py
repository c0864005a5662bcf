"""JPEG ops: extract_jpeg_shape (exact), decode_and_crop_jpeg and adjust_jpeg_quality /
random_jpeg_quality within the decoder-rounding tolerance of test_codec_ops against pixels
recorded from TensorFlow 2.21 (TF crops inside libjpeg-turbo, whose chroma upsampling at the
window's edges rounds a little differently: up to 4 levels, about 1 on average), the ops'
shapes and names, and TF's build and run errors."""
import base64
import io

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tensorweave.ops import image_codec_ops as K
from tensorweave.testing.op_case import OpCase, case_tests
from tests.image.test_codec_ops import _U8, JPEG, TF_JPEG_GRAY, _png_bytes


def _tf_pixels(encoded, shape):
    return np.frombuffer(base64.b64decode(encoded), np.uint8).reshape(shape)


# TF 2.21: decode_and_crop_jpeg(JPEG, [2, 3, 5, 7]); adjust_jpeg_quality(_ramp(), 40) and of
# its first channel at 75.
TF_CROP = _tf_pixels(
    "VX+nZI64cpzEgavRkbndocrosNf0Z5G3dZ/Fhq7Rl77fp8znuNz0xej8e6bJjLXVnMPgr9Prv+Dzz+/82vj/jrnZ"
    "ocjltNjuxeb30+/64vv/6P//pczpuNzyyer51/T84vr+7P//8P//", (5, 7, 3))
TF_ADJUST_40 = _tf_pixels(
    "AAUAAAgABBMACB4ACCgACDMAC0IACk8ABFcAA2QABnICBn4DBYgECZMID54QDK0RALkFAMgIAtMVB9obAAQABgwA"
    "DRgAECEAECsAETgBEkYEEVQHDVwDDGgFDXcIDYMJDo0MEJgQGKIXFrEXBr0JBc0LDdkWEd8bDQgAEhAAGB0AGycD"
    "GzAFHD0IHUsLHFgOGWENGG0PGn0TGogVGpIXG5wbJKcjIrUeFsIKF9ELH94WJOUcGQgAHhIAJB0BJygIJzIKJz0M"
    "KUwSJ1kUJGMUI28VJn0cJIodJZMgJ50jLqksLrUqJ8MaKNAZMNwmNeMsJgcAKg8AMRsDMyUIMy8KNDsPNUkUNFYZ"
    "MGIZL24dMX0jMYgnMZIpMpwuOqg3ObQ4Nb01OMo7QtVGR9xMNQYAOg8AQBoFQyULQy8OQjoTQ0kZQlUeP2IiPm0l"
    "P3wuPogxPpE1QJs7R6dDR7JIRLxOR8hUUNNfVdplSQcATxABVBsIViYPVy8VVTsaV0kiVFYnUmMtUW8zUH06UYlA"
    "UJNEUp1KWalUWbNbVL9hV8tqYNdzZNx4XQYAYQ8DaBsLaSUSaC4YaDogaUgnZ1UvZWI3Ym48YXxFYYlNYZJRY5xY"
    "aahiZ7NoYcBsY81za9p8b+GCbAEAcQsAeBYLeiETeisaezkje0cveVQ3c18+cWxGcntQcYdYc5BgdZtofKhzebV3"
    "bcR1bNB2c9x/duGBgAEAhAkBixYNjSEXjSsejTcojUY0ilM+hl5Fg2tPg3pbgoZlgpBthZt3jKiCh7SJeL6Md8yR"
    "f9mZheGekwIAmAsEnhcRoSIbnywlnzgvn0c9nFRGmV9RlWtblntolod0lJJ9l5yGnKiSmbSlhra2iMXIktTQmN7W"
    "owEAqAoHrhYTsCEdrysnrTczrkdCqlNMqF9ZpWxlpXpzo4Z+o5CJpJuSq6ifqbC2m7TTnsHpqdLysNz3rwAAtAgG"
    "uhQUvR8euykpujU2ukREt1BRtF5fsGpssXl6r4WHrpCSsJqdtqapt66/tLXhtsD1wc76x9b9ugABwAoJxRUXyB8i"
    "xiotxTY6xkVKwlFXwF9mvWxzvHuDuoeQupCcu5umwqizw7G9y77QzcfV09HU1NTSxwUGzA4Q0hke0yUn0y400TpB"
    "0UpRzVVezWVwyHB8yICOxoyaxpamx6CyzK290rm04Muc4dOI4NmB3dh6zwgL1BEV2x4i3Ckt3DM62j9H2U1W1lpl"
    "1Gp20HWE0YSUz5Chzpuuz6W51LHF27+x6tOD69th5txY4NlN", (16, 20, 3))
TF_ADJUST_GRAY_75 = _tf_pixels(
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAODg4ODg4ODg4ODg4ODg4ODg4ODh0dHR0dHR0dHR0dHR0dHR0dHR0dKysrKysr"
    "KysrKysrKysrKysrKys8PDw8PDw8PDw8PDw8PDw8PDw8PEpKSkpKSkpKSkpKSkpKSkpKSkpKWVlZWVlZWVlZWVlZ"
    "WVlZWVlZWVloaGhoaGhoaGhoaGhoaGhoaGhoaHh4eHh4eHh4eHh4eHh4eHh4eHh4h4eHh4eHh4eHh4eHh4eHh4eH"
    "h4eWlpaWlpaWlpaWlpaWlpaWlpaWlqSkpKSkpKSkpKSkpKSkpKSkpKSktbW1tbW1tbW1tbW1tbW1tbW1tbXDw8PD"
    "w8PDw8PDw8PDw8PDw8PDw9LS0tLS0tLS0tLS0tLS0tLS0tLS4eHh4eHh4eHh4eHh4eHh4eHh4eE=", (16, 20, 1))


def _ramp():
    yy, xx = np.mgrid[0:16, 0:20]
    return np.stack([yy * 15, xx * 12, (yy * xx) % 256], -1).astype(np.uint8)


def _close(got, expected, mean=1.25):
    diff = np.abs(got.astype(int) - expected)
    assert got.shape == expected.shape and diff.max() <= 4 and diff.mean() < mean, \
        (diff.max(), diff.mean())


def _pillow_gray():
    return np.asarray(Image.open(io.BytesIO(JPEG)).convert("L"))[..., None]


_STRING = (tf.string,)
_JPEG = np.array(JPEG, dtype=object)
CASES = [
    OpCase("extract_jpeg_shape", K.extract_jpeg_shape, lambda s: np.array([10, 12, 3], np.int32),
           [_JPEG], dtypes=_STRING, grad=False),
    OpCase("extract_jpeg_shape_int64", lambda s: K.extract_jpeg_shape(s, tf.int64),
           lambda s: np.array([10, 12, 3], np.int64), [_JPEG], dtypes=_STRING, grad=False),
    # Against Pillow's own decode, cut.
    OpCase("decode_and_crop_jpeg_gray", lambda s, w: K.decode_and_crop_jpeg(s, w, channels=1),
           lambda s, w: _pillow_gray()[1:10, 0:12], [_JPEG, np.array([1, 0, 9, 12])],
           dtypes=_STRING, grad=False, fixed_dtypes=(None, tf.int32)),
    OpCase("encode_jpeg_variable_quality_round_trip",
           lambda x, q: K.decode_jpeg(K.encode_jpeg_variable_quality(x, q)), lambda x, q: x,
           [np.full((16, 16, 3), [200, 100, 50], np.uint8), np.array(100)],
           dtypes=(tf.uint8,), grad=False, fixed_dtypes=(None, tf.int32)),
]

test_forward, test_shapes = case_tests(CASES)


def test_decode_and_crop_jpeg_within_rounding_of_tensorflow():
    with tf.Graph().as_default():
        crop = tf.image.decode_and_crop_jpeg(JPEG, [2, 3, 5, 7])
        small = tf.io.decode_and_crop_jpeg(JPEG, [1, 1, 4, 5], ratio=2, channels=3)
        gray = tf.image.decode_and_crop_jpeg(JPEG, [1, 0, 9, 12], channels=1)
        assert crop.op.type == "DecodeAndCropJpeg" and crop.name == "DecodeAndCropJpeg:0"
        assert crop.shape.as_list() == [5, 7, None] and small.shape.as_list() == [4, 5, 3]
        with tf.Session() as sess:
            got, got_small, got_gray, whole = sess.run(
                [crop, small, gray, tf.image.decode_jpeg(JPEG, ratio=2)])
    _close(got, TF_CROP)
    # The gray plane is not upsampled: TF's crop is its full decode, cut.
    _close(got_gray, TF_JPEG_GRAY[1:10, 0:12], mean=1.0)
    np.testing.assert_array_equal(got_small, whole[1:5, 1:6])


def test_adjust_jpeg_quality_within_rounding_of_tensorflow():
    image = _ramp()
    with tf.Graph().as_default():
        rgb = tf.image.adjust_jpeg_quality(image, 40)
        gray = tf.image.adjust_jpeg_quality(image[..., :1], tf.constant(75))
        as_float = tf.image.adjust_jpeg_quality(image.astype(np.float32) / 255, 40)
        assert rgb.name == "adjust_jpeg_quality/Identity_1:0"
        assert rgb.shape.as_list() == [None, None, 3] and as_float.dtype == tf.float32
        ops = [op.type for op in tf.get_default_graph().get_operations()]
        assert ops[:6] == ["Const", "Identity", "Const", "EncodeJpegVariableQuality",
                           "DecodeJpeg", "Identity"]
        with tf.Session() as sess:
            got_rgb, got_gray, got_float = sess.run([rgb, gray, as_float])
    _close(got_rgb, TF_ADJUST_40)
    _close(got_gray, TF_ADJUST_GRAY_75, mean=1.0)
    np.testing.assert_allclose(got_float, got_rgb / 255, atol=1e-6)


def test_random_jpeg_quality():
    image = _ramp()
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        out = tf.image.random_jpeg_quality(image, 10, 95, seed=4)
        quality = [op for op in tf.get_default_graph().get_operations()
                   if op.type == "RandomUniformInt"][0].outputs[0]
        with tf.Session() as sess:
            runs = [sess.run([out, quality]) for _ in range(4)]
    for got, q in runs:
        assert 10 <= q < 95
        with tf.Graph().as_default(), tf.Session() as sess:
            np.testing.assert_array_equal(got, sess.run(tf.image.adjust_jpeg_quality(image, q)))
    assert len({int(q) for _, q in runs}) > 1
    with pytest.raises(ValueError, match="must be less than"):
        tf.image.random_jpeg_quality(image, 60, 40)
    with pytest.raises(ValueError, match="jpeg encoding range must be between 0 and 100."):
        tf.image.random_jpeg_quality(image, -1, 40)


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.image.extract_jpeg_shape([JPEG]), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.io.extract_jpeg_shape(JPEG, output_type=tf.float32), TypeError,
     "not in list of allowed values"),
    (lambda: tf.image.decode_and_crop_jpeg(JPEG, [1, 3, 5]), ValueError,
     "Dimension must be 4 but is 3"),
    (lambda: tf.image.adjust_jpeg_quality(np.zeros((1, 2, 2, 3), np.uint8), 50), ValueError,
     "Shape must be rank 3 but is rank 4"),
])
def test_build_errors(build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()


_WINDOW_ERROR = r"jpeg::Uncompress failed. Invalid JPEG data or crop window."
RUN_ERRORS = [
    (lambda: K.extract_jpeg_shape(_png_bytes(_U8).item()), "Invalid JPEG data, size"),
    (lambda: K.extract_jpeg_shape(b"\xff\xd8\xffjunk"), "Invalid JPEG data, size 7"),
    (lambda: K.extract_jpeg_shape(b""), "Invalid JPEG data, size 0"),
    (lambda: K.decode_and_crop_jpeg(JPEG, [8, 3, 5, 7]), _WINDOW_ERROR),
    (lambda: K.decode_and_crop_jpeg(JPEG, [-1, 3, 5, 7]), _WINDOW_ERROR),
    (lambda: K.decode_and_crop_jpeg(JPEG, [1, 3, 0, 7]), _WINDOW_ERROR),
    (lambda: K.decode_and_crop_jpeg(JPEG, [1, 3, 4, 5], ratio=2), _WINDOW_ERROR),
    (lambda: K.decode_and_crop_jpeg(_png_bytes(_U8).item(), [1, 3, 5, 7]),
     "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG."),
    (lambda: K.decode_and_crop_jpeg(JPEG, [1, 3, 5, 7], channels=4),
     "JPEG does not support 4 channels"),
    (lambda: K.decode_and_crop_jpeg(JPEG, tf.placeholder_with_default([[1, 2, 3, 4]], None)),
     r"crop_window must be 1-D, got shape \[1,4\]"),
    (lambda: tf.image.adjust_jpeg_quality(_ramp(), 101), r"quality must be in \[0,100\], got 101"),
    (lambda: tf.image.adjust_jpeg_quality(_ramp(), [50]), r"quality must be scalar: \[1\]"),
    (lambda: K.encode_jpeg_variable_quality(_ramp()[..., :2], 50),
     r"image must have 1 or 3 channels, got \[16,20,2\]"),
]


@pytest.mark.parametrize("build,message", RUN_ERRORS)
def test_run_errors(build, message):
    with tf.Graph().as_default():
        out = build()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(out)


def test_adjust_jpeg_quality_of_empty_image():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InternalError, match="JPEG encoding failed"):
            sess.run(tf.image.adjust_jpeg_quality(np.zeros((0, 3, 3), np.uint8), 50))
