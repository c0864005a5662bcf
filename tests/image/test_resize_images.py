"""tf.image.resize_images (tf.image.resize) and resize_image_with_pad: method choice, 3-D and
4-D images, aspect ratio, the same-size shortcut, TF's names and errors (checked against TF
2.21). The pixels and gradients come from the resize ops, tested in test_resize_ops.py (the
ops compute in float32, too coarse for the harness's float64 central differences)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests
from tests.image.resize_reference import area_ref, bicubic_ref, bilinear_ref, nearest_ref

REFS = {0: bilinear_ref, 1: nearest_ref, 2: bicubic_ref, 3: area_ref,
        "bilinear": bilinear_ref, "nearest": nearest_ref, "bicubic": bicubic_ref, "area": area_ref}


def _img(*shape):
    return lambda rng, dt: (rng.rand(*shape) * 255).astype(dt)


def _resized(method, size, align=False, batch=True):
    def ref(x):
        out = REFS[method](x if batch else x[None], size, align)
        return out if batch else out[0]
    return ref


CASES = [
    *[OpCase(f"resize_images_{m}", lambda x, m=m: tf.image.resize_images(x, [7, 4], method=m),
             _resized(m, (7, 4), batch=False), [_img(5, 6, 3)], (tf.float32, tf.uint8),
             rtol=0, atol=0, unknown_shapes=False, grad=False) for m in (0, 1, 2, 3)],
    *[OpCase(f"resize_{m}_4d_aligned",
             lambda x, m=m: tf.image.resize(x, [3, 9], method=m, align_corners=True),
             _resized(m, (3, 9), True), [_img(2, 5, 6, 1)], rtol=0, atol=0,
             unknown_shapes=False, grad=False)
      for m in ("bilinear", "nearest", "bicubic", "area")],
    OpCase("resize_images_aspect",
           lambda x: tf.image.resize_images(x, [4, 12], preserve_aspect_ratio=True),
           _resized(0, (4, 5), batch=False), [_img(5, 6, 3)], rtol=0, atol=0,
           unknown_shapes=False, grad=False),
    OpCase("resize_image_with_pad",
           lambda x: tf.image.resize_image_with_pad(x, 8, 8),
           lambda x: np.pad(bilinear_ref(x[None], (6, 8))[0], [(1, 1), (0, 0), (0, 0)]),
           [_img(3, 4, 2)], rtol=0, atol=0, grad=False),
    OpCase("resize_image_with_pad_4d",
           lambda x: tf.image.resize_image_with_pad(x, 4, 10, method=1),
           lambda x: np.pad(nearest_ref(x, (4, 3)), [(0, 0), (0, 0), (3, 4), (0, 0)]),
           [_img(2, 6, 5, 1)], (tf.float32, tf.uint8), rtol=0, atol=0, unknown_shapes=False,
           grad=False),
]

test_forward, _ = case_tests(CASES)
_, test_shapes = case_tests([c for c in CASES if c.unknown_shapes])


def test_same_size_returns_the_images_and_names_follow_tensorflow():
    x = np.arange(30, dtype=np.uint8).reshape(5, 2, 3)
    with tf.Graph().as_default():
        same = tf.image.resize_images(x, [5, 2])
        resized = tf.image.resize_images(x, [3, 3])
        batch = tf.image.resize_images(tf.placeholder(tf.float32, [2, None, None, 3]),
                                       tf.placeholder(tf.int32, [2]), method=2, name="r")
        assert same.dtype == tf.uint8 and same.name == "resize/Squeeze:0"
        assert resized.name == "resize_1/Squeeze:0" and resized.shape.as_list() == [3, 3, 3]
        assert batch.name == "r/ResizeBicubic:0"
        assert batch.shape.as_list() == [2, None, None, 3]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(same), x)
    assert tf.image.ResizeMethod.AREA == 3 and tf.image.resize is tf.image.resize_images


@pytest.mark.parametrize("build,match", [
    (lambda: tf.image.resize_images(tf.placeholder(tf.float32), [2, 2]),
     "'images' contains no shape."),
    (lambda: tf.image.resize_images(np.zeros((2, 3), np.float32), [2, 2]),
     "'images' must have either 3 or 4 dimensions."),
    (lambda: tf.image.resize_images(np.zeros((2, 3, 1), np.float32), [2, 2, 2]),
     "'size' must be a 1-D Tensor of 2 elements: new_height, new_width"),
    (lambda: tf.image.resize_images(np.zeros((2, 3, 1), np.float32), [2.5, 2]),
     "'size' must be a 1-D int32 Tensor"),
    (lambda: tf.image.resize_images(np.zeros((2, 3, 1), np.float32), [2, 2], method=7),
     "Resize method is not implemented: 7"),
    (lambda: tf.image.resize_image_with_pad(np.zeros((2, 3, 1), np.float32), 0, 4),
     "target_height must be > 0."),
])
def test_construction_errors(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build()
