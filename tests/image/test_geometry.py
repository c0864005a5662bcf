"""Flips, rotations, transposes, crops and pads of tf.image against NumPy, with gradients,
TF's op names and static shapes, and its errors (checked against TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

NUM = (tf.float32, tf.float64, tf.uint8, tf.int32)


def _img(*shape):
    return lambda rng, dt: (rng.rand(*shape) * 100).astype(dt)


_3D, _4D = _img(5, 6, 3), _img(2, 5, 6, 3)


def _rot_ref(k, batch):
    return lambda x: np.rot90(x, k, axes=(1, 2) if batch else (0, 1))


CASES = [
    OpCase("flip_left_right", tf.image.flip_left_right, lambda x: x[:, ::-1], [_3D], NUM),
    OpCase("flip_left_right_4d", tf.image.flip_left_right, lambda x: x[:, :, ::-1], [_4D]),
    OpCase("flip_up_down", tf.image.flip_up_down, lambda x: x[::-1], [_3D], NUM),
    OpCase("flip_up_down_4d", tf.image.flip_up_down, lambda x: x[:, ::-1], [_4D]),
    OpCase("transpose", tf.image.transpose, lambda x: x.transpose(1, 0, 2), [_3D], NUM),
    OpCase("transpose_image_4d", tf.image.transpose_image, lambda x: x.transpose(0, 2, 1, 3),
           [_4D]),
    *[OpCase(f"rot90_{k}", lambda x, k=k: tf.image.rot90(x, k), _rot_ref(k, False), [_3D],
             NUM if k == 1 else (tf.float32,)) for k in (-1, 0, 1, 2, 3, 6)],
    *[OpCase(f"rot90_4d_{k}", lambda x, k=k: tf.image.rot90(x, k), _rot_ref(k, True), [_4D])
      for k in (1, 2, 3)],
    OpCase("rot90_fed_k", lambda x, k: tf.image.rot90(x, k), lambda x, k: np.rot90(x, int(k)),
           [_3D, np.int32(3)], fixed_dtypes=(None, tf.int32)),
    OpCase("crop_to_bounding_box", lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 3, 3),
           lambda x: x[1:4, 2:5], [_3D], NUM),
    OpCase("crop_to_bounding_box_4d", lambda x: tf.image.crop_to_bounding_box(x, 0, 1, 5, 4),
           lambda x: x[:, 0:5, 1:5], [_4D], unknown_shapes=False),
    OpCase("pad_to_bounding_box", lambda x: tf.image.pad_to_bounding_box(x, 1, 2, 8, 9),
           lambda x: np.pad(x, [(1, 2), (2, 1), (0, 0)]), [_3D], NUM),
    OpCase("pad_to_bounding_box_4d", lambda x: tf.image.pad_to_bounding_box(x, 0, 3, 5, 9),
           lambda x: np.pad(x, [(0, 0), (0, 0), (3, 0), (0, 0)]), [_4D], unknown_shapes=False),
    OpCase("crop_or_pad_crop", lambda x: tf.image.resize_image_with_crop_or_pad(x, 3, 3),
           lambda x: x[1:4, 1:4], [_3D], NUM),
    OpCase("crop_or_pad_pad", lambda x: tf.image.resize_with_crop_or_pad(x, 8, 9),
           lambda x: np.pad(x, [(1, 2), (1, 2), (0, 0)]), [_3D]),
    OpCase("crop_or_pad_mixed_4d", lambda x: tf.image.resize_image_with_crop_or_pad(x, 2, 9),
           lambda x: np.pad(x[:, 1:3], [(0, 0), (0, 0), (1, 2), (0, 0)]), [_4D],
           unknown_shapes=False),
    *[OpCase(f"central_crop_{f}", lambda x, f=f: tf.image.central_crop(x, f),
             lambda x, s=s: x[s[0]:5 - s[0], s[1]:6 - s[1]], [_3D], unknown_shapes=f == 1.0)
      for f, s in [(0.1, (2, 2)), (0.5, (1, 1)), (0.9, (0, 0)), (1.0, (0, 0))]],
    OpCase("central_crop_4d", lambda x: tf.image.central_crop(x, 0.33),
           lambda x: x[:, 1:4, 2:4], [_4D], unknown_shapes=False),
]
# Crops and pads take an image of unknown rank for a 3-D one (as TF); central_crop needs the
# rank. Their 4-D rows check unknown dimensions in test_dynamic_rank_and_tensor_arguments.

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
_, test_shapes = case_tests([c for c in CASES if c.unknown_shapes])


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_dynamic_rank_and_tensor_arguments():
    """Unknown rank picks the 3-D or 4-D graph at run time (flips, rotations, transposes);
    crops and pads take unknown dimensions and Tensor offsets."""
    x = np.random.RandomState(0).rand(2, 5, 6, 3).astype(np.float32)
    for value in (x, x[0]):
        axis = value.ndim - 3
        with tf.Graph().as_default():
            unknown = tf.placeholder(tf.float32)
            dims = tf.placeholder(tf.float32, [None] * value.ndim)
            offset = tf.placeholder(tf.int32, [])
            outs = [tf.image.flip_left_right(unknown), tf.image.rot90(unknown, 1),
                    tf.image.transpose(unknown),
                    tf.image.crop_to_bounding_box(dims, offset, 1, 2, 3),
                    tf.image.pad_to_bounding_box(dims, offset, 0, 7, 6),
                    tf.image.resize_image_with_crop_or_pad(dims, offset + 1, 8)]
            got = _run(outs, {unknown: value, dims: value, offset: 2})
        np.testing.assert_array_equal(got[0], np.flip(value, axis + 1))
        np.testing.assert_array_equal(got[1], np.rot90(value, 1, (axis, axis + 1)))
        np.testing.assert_array_equal(got[2], np.swapaxes(value, axis, axis + 1))
        np.testing.assert_array_equal(got[3], value[..., 2:4, 1:4, :])
        np.testing.assert_array_equal(got[4], np.pad(value, [(0, 0)] * axis + [(2, 0), (0, 0),
                                                                                (0, 0)]))
        np.testing.assert_array_equal(got[5], np.pad(value[..., 1:4, :, :],
                                                     [(0, 0)] * axis + [(0, 0), (1, 1), (0, 0)]))


def test_random_flips_are_flips_and_batches_flip_independently():
    x = np.random.RandomState(1).rand(8, 4, 5, 1).astype(np.float32)
    with tf.Graph().as_default():
        single = tf.image.random_flip_left_right(x[0], seed=1)
        batch = tf.image.random_flip_up_down(x, seed=2)
        assert single.name == "random_flip_left_right/Merge:0" and single.shape == x[0].shape
        assert batch.name == "random_flip_up_down/add:0"
        with tf.Session() as sess:
            singles = [sess.run(single) for _ in range(20)]
            batches = [sess.run(batch) for _ in range(5)]
    assert all(np.array_equal(s, x[0]) or np.array_equal(s, x[0][:, ::-1]) for s in singles)
    assert len({s.tobytes() for s in singles}) == 2
    flipped = [[np.array_equal(b[i], x[i][::-1]) for i in range(8)] for b in batches]
    assert all(np.array_equal(b[i], x[i]) or f[i] for b, f in zip(batches, flipped)
               for i in range(8))
    assert 0 < np.mean(flipped) < 1


def test_tensorflow_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 3])
        assert tf.image.flip_left_right(x).name == "flip_left_right/ReverseV2:0"
        assert tf.image.transpose(x).name == "transpose/transpose:0"
        rotated = tf.image.rot90(tf.placeholder(tf.float32, [2, 5, 6, 3]), 1)
        assert rotated.name == "rot90/cond/Merge:0" and rotated.shape.as_list() == [2, None,
                                                                                    None, 3]
        crop = tf.image.crop_to_bounding_box(x, 1, 1, 2, 2)
        assert crop.name == "crop_to_bounding_box/Squeeze:0"
        assert crop.shape.as_list() == [2, 2, 3]
        assert tf.image.pad_to_bounding_box(x, 1, 1, 9, 9).shape.as_list() == [9, 9, 3]
        assert tf.image.central_crop(x, 0.5).shape.as_list() == [None, None, 3]
        assert tf.image.flip_up_down(tf.placeholder(tf.float32)).shape.ndims is None


_X = np.zeros((5, 6, 3), np.float32)


@pytest.mark.parametrize("build,match", [
    (lambda: tf.image.flip_left_right(_X[:, :, 0]), "must be at least three-dimensional"),
    (lambda: tf.image.flip_up_down(_X[None, None]),
     r"\(shape \(1, 1, 5, 6, 3\)\)must have either 3 or 4 dimensions"),
    (lambda: tf.image.rot90(_X[None, None]), r"\) must have either 3 or 4 dimensions"),
    (lambda: tf.image.rot90(_X, [1, 2]), r"Shape \(2,\) must have rank 0"),
    (lambda: tf.image.transpose(np.zeros((0, 2, 3))), "inner 3 dims of 'image.shape' must be > 0"),
    (lambda: tf.image.crop_to_bounding_box(_X, 4, 2, 3, 3),
     "height must be >= target \\+ offset."),
    (lambda: tf.image.crop_to_bounding_box(_X, -1, 2, 3, 3), "offset_height must be >= 0."),
    (lambda: tf.image.crop_to_bounding_box(_X, 1, 2, 0, 3), "target_height must be > 0."),
    (lambda: tf.image.pad_to_bounding_box(_X, 1, 2, 5, 9), "height must be <= target - offset"),
    (lambda: tf.image.pad_to_bounding_box(_X, 1, -2, 9, 9), "offset_width must be >= 0"),
    (lambda: tf.image.resize_image_with_crop_or_pad(_X, 0, 9), "target_height must be > 0."),
    (lambda: tf.image.central_crop(_X, 1.5), r"central_fraction must be within \(0, 1\]"),
    (lambda: tf.image.central_crop(_X[:, :, 0], 0.5), "must be at least three-dimensional"),
    (lambda: tf.image.central_crop(_X[None, None], 0.5),
     "`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = 5."),
])
def test_construction_errors(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build()


@pytest.mark.parametrize("build,match", [
    (lambda x, n: tf.image.crop_to_bounding_box(x, n, 2, 3, 3),
     r"assertion failed: \[height must be >= target \+ offset.\]"),
    (lambda x, n: tf.image.pad_to_bounding_box(x, 1, 2, n, 9),
     r"assertion failed: \[height must be <= target - offset\]"),
    # Assert's message C-escapes its strings, as TensorFlow's: \' for a quote.
    (lambda x, n: tf.image.flip_left_right(x[:n]),
     r"inner 3 dims of \\'image.shape\\' must be > 0."),
])
def test_runtime_errors(build, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 3])
        n = tf.placeholder(tf.int32, [])
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(build(x, n), {x: _X, n: 0 if "flip" in match or "inner" in match else 4})


def test_random_crop_takes_every_offset_and_checks_the_size():
    x = np.arange(30, dtype=np.int32).reshape(5, 6, 1)
    with tf.Graph().as_default():
        crop = tf.random_crop(x, [3, 4, 1], seed=3)
        too_big = tf.image.random_crop(x, [6, 1, 1], name="big")
        assert crop.name == "random_crop:0" and crop.shape.as_list() == [3, 4, 1]
        assert too_big.name == "big:0"
        with tf.Session() as sess:
            crops = [sess.run(crop) for _ in range(60)]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Need value.shape >= size, got"):
                sess.run(too_big)
    offsets = {(int(c[0, 0, 0]) // 6, int(c[0, 0, 0]) % 6) for c in crops}
    assert offsets == {(i, j) for i in range(3) for j in range(3)}
    assert all(np.array_equal(c, x[c[0, 0, 0] // 6:][:3, c[0, 0, 0] % 6:][:, :4]) for c in crops)
