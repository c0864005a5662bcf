"""Resize ops against TensorFlow: forward and gradient kernels vs loop-by-loop transcriptions
of TF's CPU kernels (float32 arithmetic in TF's order, so equality is exact), golden values
recorded from TF 2.21, numerical gradients, static shapes, and TF's build and run errors."""
import base64
import hashlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.checker import compute_gradient
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import image_resize_ops as R
from tensorweave.testing.op_case import OpCase, case_tests
from tests.image.resize_reference import (
    area_ref,
    bicubic_grad_ref,
    bicubic_ref,
    bilinear_grad_ref,
    bilinear_ref,
    nearest_grad_ref,
    nearest_ref,
)

F32 = np.float32
FLOAT = (tf.float32, tf.float64)
REAL = (tf.float32, tf.float64, tf.float16, tf.uint8, tf.int32, tf.int64)
MODES = [(False, False), (True, False), (False, True)]   # (align_corners, half_pixel_centers)


# --- OpCase rows --------------------------------------------------------------------------------
def _image(*shape):
    return lambda rng, dt: (rng.rand(*shape) * 100).astype(dt)


def _grads(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(np.float32)


_FORWARD = [("bilinear", R.resize_bilinear, bilinear_ref),
            ("nearest", R.resize_nearest_neighbor, nearest_ref),
            ("bicubic", R.resize_bicubic, bicubic_ref)]
_GEOMETRIES = [((2, 5, 7, 3), (3, 4)), ((1, 4, 4, 2), (9, 11)), ((1, 1, 1, 3), (3, 2)),
               ((2, 6, 5, 1), (6, 5))]


def _forward_rows():
    rows = []
    for name, fn, ref in _FORWARD:
        for align, half in MODES:
            for k, (shape, size) in enumerate(_GEOMETRIES):
                rows.append(OpCase(
                    f"{name}_{int(align)}{int(half)}_{k}",
                    lambda x, fn=fn, s=size, a=align, h=half: fn(x, s, a, half_pixel_centers=h),
                    lambda x, ref=ref, s=size, a=align, h=half: ref(x, s, a, h),
                    [_image(*shape)], dtypes=REAL, rtol=0, atol=0, grad=False))
    for align in (False, True):
        for k, (shape, size) in enumerate(_GEOMETRIES + [((1, 13, 9, 2), (5, 4))]):
            rows.append(OpCase(f"area_{int(align)}_{k}",
                               lambda x, s=size, a=align: R.resize_area(x, s, a),
                               lambda x, s=size, a=align: area_ref(x, s, a),
                               [_image(*shape)], dtypes=REAL, rtol=0, atol=0, grad=False))
    return rows


def _grad_rows():
    rows = []
    for align, half in MODES:
        attrs = {"align_corners": align, "half_pixel_centers": half}
        for k, ((b, h, w, c), (oh, ow)) in enumerate(_GEOMETRIES):
            for name, op, ref in (("bilinear", R.ResizeBilinearGrad, bilinear_grad_ref),
                                  ("bicubic", R.ResizeBicubicGrad, bicubic_grad_ref)):
                rows.append(OpCase(
                    f"{name}_grad_{int(align)}{int(half)}_{k}",
                    lambda g, img, op=op, attrs=attrs: apply_op(op, [g, img], attrs),
                    lambda g, img, ref=ref, a=align, hf=half: ref(g, img, a, hf),
                    [_grads(b, oh, ow, c), _image(b, h, w, c)], dtypes=FLOAT,
                    fixed_dtypes=(tf.float32, None), rtol=0, atol=0, grad=False))
            rows.append(OpCase(
                f"nearest_grad_{int(align)}{int(half)}_{k}",
                lambda g, attrs=attrs, s=(h, w): apply_op(R.ResizeNearestNeighborGrad, [g, s],
                                                          attrs),
                lambda g, a=align, hf=half, s=(h, w): nearest_grad_ref(g, s, a, hf),
                [_image(b, oh, ow, c)], dtypes=(tf.float32, tf.float64, tf.int32, tf.uint8),
                rtol=0, atol=0, grad=False))
    return rows


CASES = _forward_rows() + _grad_rows() + [
    OpCase("bilinear_empty_batch", lambda x: R.resize_bilinear(x, [3, 2]),
           lambda x: np.zeros((0, 3, 2, 3), F32), [_image(0, 4, 4, 3)], grad=False),
    OpCase("area_empty_batch", lambda x: R.resize_area(x, [3, 2]),
           lambda x: np.zeros((0, 3, 2, 3), F32), [_image(0, 4, 4, 3)], grad=False),
    OpCase("nearest_grad_empty", lambda g: apply_op(R.ResizeNearestNeighborGrad, [g, [3, 2]]),
           lambda g: np.zeros((0, 3, 2, 1), F32), [_image(0, 5, 5, 1)], grad=False),
]

test_forward, test_shapes = case_tests(CASES)


# --- golden values from TensorFlow 2.21 -------------------------------------------------------
GOLDEN_INPUT = (np.arange(12, dtype=F32) ** 1.5).reshape(1, 3, 4, 1)
# TF 2.21's outputs for GOLDEN_INPUT, as base64 of the float32 bytes.
GOLDEN = {
    ("bilinear", (2, 5), False, False):
        "AAAAAM3MTD8sNgZAFKJxQOJGpkDzBHVB1K2SQYBBrEEeLMdBNAPcQQ==",
    ("bilinear", (2, 5), True, False):
        "AAAAAAAAQD/zBPU/J+daQOJGpkDzBLVBPUHPQbl96kHoWQNCdu4RQg==",
    ("bilinear", (2, 5), False, True):
        "AAAAQEY4RUBDc5VAbK7TQFNvCEG2w5dB8pSuQeC+yUE2LOZBEPD/QQ==",
    ("bilinear", (5, 3), False, False):
        "AAAAAE4Dzj9qBY1AmpmZQJHiAEGcw0FByM4uQYhxeUFfJ6ZBkJ2dQQ5tykEqt/pB8wS1QdFT5EGMcwtC",
    ("bilinear", (5, 3), True, False):
        "AAAAAPME9T/iRqZAAACAQEml7UA2uz1BAAAAQaoET0F9KZRB8wR1QQcAqUE0A9xB8wS1Qbl96kF27hFC",
    ("bilinear", (5, 3), False, True):
        "rKoqPvME9T8npplA/MRgQBReykDSiyBBHXsIQaoET0F3EI9B5meLQSwZtkGYdORBddm6Qbl96kEBsQ5C",
    ("nearest_neighbor", (2, 5), False, False):
        "AAAAAAAAAAAAAIA/8wQ1QOJGpkAAAABBAAAAQaziMkGpJmtBfSmUQQ==",
    ("nearest_neighbor", (2, 5), True, False):
        "AAAAAAAAgD/zBDVA8wQ1QOJGpkDzBLVBAADYQXL7/EFy+/xBdu4RQg==",
    ("nearest_neighbor", (2, 5), False, True):
        "AAAAAAAAgD/zBDVA8wQ1QOJGpkDzBLVBAADYQXL7/EFy+/xBdu4RQg==",
    ("nearest_neighbor", (5, 3), False, False):
        "AAAAAAAAgD/zBDVAAAAAAAAAgD/zBDVAAAAAQaziMkGpJmtBAAAAQaziMkGpJmtB8wS1QQAA2EFy+/xB",
    ("nearest_neighbor", (5, 3), True, False):
        "AAAAAPMENUDiRqZAAAAAQakma0F9KZRBAAAAQakma0F9KZRB8wS1QXL7/EF27hFC8wS1QXL7/EF27hFC",
    ("nearest_neighbor", (5, 3), False, True):
        "AAAAAPMENUDiRqZAAAAAAPMENUDiRqZAAAAAQakma0F9KZRB8wS1QXL7/EF27hFC8wS1QXL7/EF27hFC",
    ("bicubic", (2, 5), False, False):
        "AAAAAOnvJT8uo/c/rIN8QNmNrUB5goBBKn+XQVh4s0Ftv9NBTnLpQQ==",
    ("bicubic", (2, 5), True, False):
        "AAAAAOqhFD9Lm+Q/eLFjQOJGpkDzBLVBmizMQR4g6kGG2ARCdu4RQg==",
    ("bicubic", (2, 5), False, True):
        "Mq2RP/niAkA2iGRAvhezQHI57kANxJ5B59G1QV5Q00HubvJBy0UGQg==",
    ("bicubic", (5, 3), False, False):
        "AAAAAIwBxz9espFA3wxUQJFqzkBIFylBsYc1QSGrgkE2Aq9Bn/ChQVOO0EEEngFCPqfBQWZj80GufBRC",
    ("bicubic", (5, 3), True, False):
        "AAAAAEub5D/iRqZASjwoQLV3uUCQySJBAAAAQcINTkF9KZRBeYKAQTzlsEFuAeZB8wS1QR4g6kF27hFC",
    ("bicubic", (5, 3), False, True):
        "1RAHv4Igfj8L3XxAe6wUQJ1rn0DkXgxBsS8FQRBgTkFy+5BBOxySQZwwwEEaZPJBGITBQU0l9EHETxVC",
    ("area", (2, 5), False, False):
        "q6oqQFeNfUBG2bJANu7vQEgzGkFNA45BKN2lQZnUvkEp4NhBcPbzQQ==",
    ("area", (2, 5), True, False):
        "AACAQB6XrEBqZN9A8zMMQTa7PUHzBLVB/FbMQdBT5EFz+/xBdu4RQg==",
    ("area", (5, 3), False, False):
        "AQCAPvME9T/HVZNAkUtGQEbZskDlyQ5Bq7gMQaoET0Hxg4xBl/aVQZnUvkEE7+pBtMO9QbZ96kFEEg1C",
    ("area", (5, 3), True, False):
        "q6qqPk0DDkDiRqZAq6qqPk0DDkDiRqZAOvYQQVZlWEF+KZRBOvYQQVZlWEF+KZRB+K3AQaKn8EF27hFC",
}


@pytest.mark.parametrize("key", list(GOLDEN), ids=str)
def test_matches_tensorflow(key):
    op, size, align, half = key
    kwargs = {"align_corners": align}
    if op != "area":
        kwargs["half_pixel_centers"] = half
    with tf.Graph().as_default():
        out = getattr(tf.image, "resize_" + op)(GOLDEN_INPUT, size, **kwargs)
        with tf.Session() as sess:
            got = sess.run(out)
    expected = np.frombuffer(base64.b64decode(GOLDEN[key]), F32)
    np.testing.assert_array_equal(got.ravel(), expected)


# --- gradients ----------------------------------------------------------------------------------
@pytest.mark.parametrize("resize", [R.resize_bilinear, R.resize_bicubic,
                                    R.resize_nearest_neighbor], ids=lambda f: f.__name__)
@pytest.mark.parametrize("align,half", MODES)
def test_gradient_matches_central_differences(resize, align, half):
    """The resizes are linear in the image, so a large step is exact up to float32 rounding
    (they compute in float32 whatever the input dtype)."""
    value = np.random.RandomState(2).rand(2, 4, 5, 2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, value.shape)
        y = tf.cast(resize(x, [7, 3], align, half_pixel_centers=half), tf.float64)
        with tf.Session():
            theoretical, numerical = compute_gradient(x, value.shape, y, [2, 7, 3, 2],
                                                      x_init_value=value, delta=0.5)
    np.testing.assert_allclose(theoretical, numerical, atol=1e-5)


def test_gradient_ops_and_their_registrations():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((1, 3, 3, 1), np.float32))
        ints = tf.constant(np.ones((1, 3, 3, 1), np.int32))
        grads = tf.gradients(R.resize_bilinear(x, [5, 5]), x)
        assert grads[0].op.type == "ResizeBilinearGrad"
        assert tf.gradients(R.resize_nearest_neighbor(x, [5, 5]), x)[0].op.type == \
            "ResizeNearestNeighborGrad"
        assert tf.gradients(R.resize_bicubic(x, [5, 5]), x)[0].op.type == "ResizeBicubicGrad"
        # TF: no gradient for integer bicubic inputs, none defined for ResizeArea, and
        # ResizeBilinearGrad declared not differentiable.
        assert R._resize_bicubic_grad(R.resize_bicubic(ints, [5, 5]).op, x) == [None, None]
        with pytest.raises(LookupError, match="ResizeArea"):
            tf.gradients(R.resize_area(x, [2, 2]), x)
        assert tf.gradients(grads[0], x) == [None]


# --- static shapes and graph-construction errors ------------------------------------------------
def test_static_shapes():
    with tf.Graph().as_default():
        unknown = tf.placeholder(tf.float32)
        partial = tf.placeholder(tf.float32, [None, 5, None, 3])
        size = tf.placeholder(tf.int32, [2])
        assert R.resize_bilinear(unknown, [2, 3]).shape.as_list() == [None, 2, 3, None]
        assert R.resize_area(partial, size).shape.as_list() == [None, None, None, 3]
        assert R.resize_bicubic(partial, [-1, 4]).shape.as_list() == [None, None, 4, 3]
        assert R.resize_nearest_neighbor(partial, [0, 4]).shape.as_list() == [None, 0, 4, 3]
        grad = apply_op(R.ResizeBilinearGrad, [tf.placeholder(tf.float32), partial])
        assert grad.shape.as_list() == [None, 5, None, 3]
        nn_grad = apply_op(R.ResizeNearestNeighborGrad, [partial, [7, 8]])
        assert nn_grad.shape.as_list() == [None, 7, 8, 3]
        assert R.resize_bilinear(partial, [2, 3]).op.type == "ResizeBilinear"
        assert R.resize_area(partial, [2, 3], name="a").name == "a:0"


_IMG = np.ones((1, 4, 4, 3), np.float32)


@pytest.mark.parametrize("build,exc,match", [
    (lambda: R.resize_bilinear(np.ones((4, 4, 3), np.float32), [2, 2]), ValueError,
     "Shape must be rank 4 but is rank 3"),
    (lambda: R.resize_bilinear(_IMG, [1, 2, 3]), ValueError, "Dimension must be 2 but is 3"),
    (lambda: R.resize_area(_IMG, [[1, 2]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: R.resize_bicubic(np.ones((1, 2, 2, 1), bool), [2, 2]), TypeError,
     "DataType bool not in list of allowed values"),
    (lambda: apply_op(R.ResizeNearestNeighborGrad, [np.ones((4, 4, 3), np.float32), [3, 4]]),
     ValueError, "Shape must be rank 4 but is rank 3"),
    (lambda: apply_op(R.ResizeNearestNeighborGrad, [np.ones((1, 4, 4, 3), np.int64), [3, 4]]),
     TypeError, "DataType int64 not in list of allowed values"),
    (lambda: apply_op(R.ResizeBicubicGrad, [_IMG, np.ones((1, 2, 2, 3), np.float16)]),
     TypeError, "DataType float16 not in list of allowed values"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


# --- run-time errors (TF's messages) ------------------------------------------------------------
def _run(build, *feeds):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.as_dtype(np.asarray(f).dtype)) for f in feeds]
        out = build(*holders)
        with tf.Session() as sess:
            return sess.run(out, dict(zip(holders, feeds)))


_SIZE = np.array([2, 2], np.int32)


@pytest.mark.parametrize("build,feeds,match", [
    (lambda x, s: R.resize_bilinear(x, s, True, half_pixel_centers=True), [_IMG, _SIZE],
     "If half_pixel_centers is True, align_corners must be False."),
    (lambda x, s: R.resize_nearest_neighbor(x, s, True, half_pixel_centers=True),
     [_IMG, _SIZE], "If half_pixel_centers is True, align_corners must be False."),
    (lambda x, s: R.resize_bilinear(x, s), [_IMG[0], _SIZE],
     r"input must be 4-dimensional\[4,4,3\]"),
    (lambda x, s: R.resize_bicubic(x, s), [_IMG, np.array([0, 2], np.int32)],
     "output dimensions must be positive"),
    (lambda x, s: R.resize_area(x, s), [_IMG, np.array([2, -1], np.int32)],
     "output dimensions must be positive"),
    (lambda x, s: R.resize_bilinear(x, s), [_IMG, np.array([1, 2, 3], np.int32)],
     r"shape_t must have two elements\[3\]"),
    (lambda x, s: R.resize_bilinear(x, s), [_IMG, np.array([[1, 2]], np.int32)],
     r"shape_t must be 1-dimensional\[1,2\]"),
    (lambda x, s: R.resize_nearest_neighbor(x, s), [np.ones((1, 0, 4, 3), np.float32), _SIZE],
     "input image must be of non-zero size"),
    (lambda x, s: R.resize_area(x, s), [np.ones((1, 4, 4, 0), np.float32), _SIZE],
     "image must have at least one channel"),
    (lambda g, x: apply_op(R.ResizeBilinearGrad, [g, x]), [_IMG[0], _IMG],
     r"input_grad must be 4-dimensional\[4,4,3\]"),
    (lambda g, x: apply_op(R.ResizeBicubicGrad, [g, x]), [_IMG, _IMG[0]],
     r"original_image must be 4-dimensional\[4,4,3\]"),
    (lambda g, x: apply_op(R.ResizeBilinearGrad, [g, x]),
     [np.ones((1, 0, 4, 3), np.float32), _IMG], "resized dimensions must be positive"),
    (lambda g, x: apply_op(R.ResizeBicubicGrad, [g, x]),
     [_IMG, np.ones((1, 4, 0, 3), np.float32)], "original dimensions must be positive"),
    (lambda g, s: apply_op(R.ResizeNearestNeighborGrad, [g, s]),
     [_IMG, np.array([0, 4], np.int32)], "shape_t's elements must be positive"),
    (lambda g, s: apply_op(R.ResizeNearestNeighborGrad, [g, s]), [_IMG[0], _SIZE],
     r"input must be 4-dimensional\[4,4,3\]"),
])
def test_runtime_errors(build, feeds, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        _run(build, *feeds)


def test_nearest_keeps_dtype_and_bilinear_outputs_float32():
    img = (np.arange(16).reshape(1, 4, 4, 1) * 16).astype(np.uint8)
    nearest = _run(lambda x: R.resize_nearest_neighbor(x, [2, 2]), img)
    bilinear = _run(lambda x: R.resize_bilinear(x, [4, 4]), img)
    assert nearest.dtype == np.uint8 and bilinear.dtype == np.float32
    np.testing.assert_array_equal(nearest[0, :, :, 0], [[0, 32], [128, 160]])
    np.testing.assert_array_equal(bilinear, img.astype(np.float32))  # same size: a cast


# --- CropAndResize ------------------------------------------------------------------------------
CROP_IMAGE = (np.arange(20, dtype=F32) ** 1.3).reshape(1, 4, 5, 1)
CROP_BOXES = np.array([[0.1, 0.2, 0.9, 0.7], [0.6, 1.1, -0.2, 0.3]], F32)   # 2nd: flipped, out
CROP_WEIGHTS = np.linspace(0.5, 1.5, 12, dtype=F32).reshape(2, 3, 2, 1)
# TF 2.21's crops (extrapolation 0.5) and gradients of sum(crops * CROP_WEIGHTS) with respect
# to the image and the boxes, as base64 of the float32 bytes.
CROP_GOLDEN = {
    "bilinear": (
        "mrZgQEqG4ECFKX9BoNenQRZ5/0GkPhdCAAAAP0QqpUEAAAA/hn3eQAAAAD8AAAA/",
        "KFyPPVqqMz++skA+6WypPgAAAACME8k96oeaP236oT6N3eY+AAAAAJPC9T3rh5o/bvqhPkrGCT8AAAAAKp/3"
        "PSuf9z741wg+9dcIPwAAAAA=",
        "PBNwQq0BmUFuq9RChtO+QRmxc0IAAAAAUjqVQWCbsUE=",
    ),
    "nearest": (
        "AACAPzR6hUANrbRB/n/gQYoIE0KkXCtCAAAAPw2ttEEAAAA/c1QkQQAAAD8AAAA/",
        "AAAAAAAAAD8AAAAA0UUXPwAAAAAAAAAAL7qoPwAAAAAAAAAAAAAAAAAAAAAuuug/AAAAAHTRRT8AAAAAAAAA"
        "AEYXXT8AAAAAF110PwAAAAA=",
        "PBNwQq0BmUFuq9RChtO+QRmxc0IAAAAAUjqVQWCbsUE=",
    ),
}


def _crop_build(method):
    def build(image, boxes):
        crops = tf.image.crop_and_resize(image, boxes, [0, 0], [3, 2], method=method,
                                         extrapolation_value=0.5)
        return [crops, *tf.gradients(tf.reduce_sum(crops * CROP_WEIGHTS), [image, boxes])]
    return build


def _crop_golden(method):
    shapes = [(2, 3, 2, 1), CROP_IMAGE.shape, CROP_BOXES.shape]
    return lambda image, boxes: [np.frombuffer(base64.b64decode(v), F32).reshape(s)
                                 for v, s in zip(CROP_GOLDEN[method], shapes)]


CROP_CASES = [OpCase(f"crop_and_resize_{m}", _crop_build(m), _crop_golden(m),
                     [lambda rng, dt: CROP_IMAGE, lambda rng, dt: CROP_BOXES], rtol=0, atol=0,
                     grad=False) for m in ("bilinear", "nearest")]
test_crop_forward, test_crop_shapes = case_tests(CROP_CASES)

# sha256 (12 hex digits) of TF 2.21's crops, image gradient and boxes gradient for six boxes
# (flipped, partly outside, a point, the full image) of two 7x9 images.
CROP_HASHES = {
    ("bilinear", (5, 4)): ['847043a4df8f', '0e66e5ba5a70', 'f6e73950882f'],
    ("bilinear", (1, 6)): ['8fbec28222d5', 'f64fde8f58f6', '0ceced976a2d'],
    ("bilinear", (3, 1)): ['84733cb03d8e', '0938c7482f97', 'c443a4e4e48e'],
    ("nearest", (5, 4)): ['918d63b48be9', 'fea0e50f1576', '4ece7b31c3fe'],
    ("nearest", (1, 6)): ['dde574882faa', 'da05843cd3d6', 'c086a43a6c63'],
    ("nearest", (3, 1)): ['39577d6e7b38', '59b39b605758', 'd969ab2ae9c0'],
}


@pytest.mark.parametrize("method,size", list(CROP_HASHES), ids=str)
def test_crop_and_resize_matches_tensorflow(method, size):
    rng = np.random.RandomState(0)
    image = (rng.rand(2, 7, 9, 3) * 100).astype(F32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.8, 0.1, 0.2], [-0.3, 0.1, 0.5, 1.4],
                      [0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 1.0, 1.0], [0.33, 0.1, 0.34, 0.7]], F32)
    indices = np.array([0, 1, 1, 0, 1, 0], np.int32)
    for earlier in list(CROP_HASHES)[:list(CROP_HASHES).index((method, size))]:
        rng.rand(6, *earlier[1], 3)                      # the weights of the earlier cases
    weights = rng.rand(6, size[0], size[1], 3).astype(F32)
    with tf.Graph().as_default():
        x, bx = tf.constant(image), tf.constant(boxes)
        crops = tf.image.crop_and_resize(x, bx, indices, size, method=method,
                                         extrapolation_value=-1.0)
        grads = tf.gradients(tf.reduce_sum(crops * weights), [x, bx])
        assert [g.op.type for g in grads] == ["CropAndResizeGradImage", "CropAndResizeGradBoxes"]
        with tf.Session() as sess:
            values = sess.run([crops] + grads)
    digests = [hashlib.sha256(v.tobytes()).hexdigest()[:12] for v in values]
    # A one-row crop's box gradient adds doubles to a float in TF (see _box_terms): last bits.
    exact = 2 if size[0] == 1 and method == "nearest" else 3
    assert digests[:exact] == CROP_HASHES[method, size][:exact]


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.image.crop_and_resize(CROP_IMAGE, CROP_BOXES, [0, 0], [2, 2], method="area"),
     ValueError, "Attr 'method' of 'CropAndResize' Op passed string 'area' not in"),
    (lambda: tf.image.crop_and_resize(CROP_IMAGE, CROP_BOXES, [0, 0, 0], [2, 2]), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.image.crop_and_resize(CROP_IMAGE, CROP_BOXES[:, :3], [0, 0], [2, 2]),
     ValueError, "Dimension must be 4 but is 3"),
    (lambda: tf.image.crop_and_resize(CROP_IMAGE[0], CROP_BOXES, [0, 0], [2, 2]), ValueError,
     "Shape must be rank 4 but is rank 3"),
    (lambda: tf.image.crop_and_resize(CROP_IMAGE, CROP_BOXES, [0, 0], [2, 2], box_indices=[0]),
     ValueError, "Cannot specify both 'box_indices' and 'box_ind'"),
])
def test_crop_and_resize_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("boxes,indices,size,exc,match", [
    (CROP_BOXES, [0, 1], [2, 2], tf.errors.OutOfRangeError,
     r"box_index has values outside \[0, batch_size\)"),
    (np.array([[0, 0, np.inf, 1]], F32), [0], [2, 2], tf.errors.InvalidArgumentError,
     "Boxes contains at least one element that is not finite"),
    (CROP_BOXES, [0, 0], [0, 2], tf.errors.InvalidArgumentError,
     "crop dimensions must be positive"),
    (CROP_BOXES, [0], [2, 2], tf.errors.InvalidArgumentError, "box_index has incompatible shape"),
])
def test_crop_and_resize_runtime_errors(boxes, indices, size, exc, match):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32), tf.placeholder(tf.int32), tf.placeholder(tf.int32)]
        crops = tf.image.crop_and_resize(CROP_IMAGE, *holders)
        with tf.Session() as sess, pytest.raises(exc, match=match):
            sess.run(crops, dict(zip(holders, [boxes, indices, size])))


def test_crop_and_resize_static_shape_and_empty_boxes():
    with tf.Graph().as_default():
        crops = tf.image.crop_and_resize(tf.placeholder(tf.float32, [None, None, None, 3]),
                                         tf.placeholder(tf.float32, [None, 4]),
                                         tf.placeholder(tf.int32, [5]), [7, 2])
        assert crops.shape.as_list() == [5, 7, 2, 3]
        empty = tf.image.crop_and_resize(CROP_IMAGE, np.zeros((0, 4), F32),
                                         np.zeros(0, np.int32), [2, 3])
        with tf.Session() as sess:
            assert sess.run(empty).shape == (0, 2, 3, 1)
