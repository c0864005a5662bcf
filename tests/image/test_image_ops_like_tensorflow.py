"""tf.image against TensorFlow 2.21: the values below are TF's printed results for the same
TF1 programs (run under /work/shared/programs/run_with_tf.py)."""
import numpy as np
import pytest

import tensorweave as tf

F32 = np.float32


def _run(build):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(build())


def _padded(boxes, scores, max_output_size, iou_threshold, **kwargs):
    return _run(lambda: tf.image.non_max_suppression_padded(
        tf.constant(np.array(boxes, F32)), tf.constant(np.array(scores, F32)),
        max_output_size, iou_threshold, pad_to_max_output_size=True, **kwargs))


# (boxes, scores, max_output_size, iou_threshold, kwargs, TF's indices, TF's valid count).
# NonMaxSuppressionV4 would give [0, 1, 2] 3, [0, 1, 2] 3, [1, 2, 3, 0] 3, [0..4] 5.
@pytest.mark.parametrize("boxes,scores,size,iou,kwargs,indices,valid", [
    # A box with no positive coordinate is never selected.
    ([[-3, -3, -1, -1], [0, 0, 1, 1], [5, 5, 6, 6]], [0.9, 0.8, 0.7], 3, 0.5, {},
     [1, 2, 0], 2),
    # IoU equal to the threshold suppresses.
    ([[0, 0, 1, 1], [0, 0, 1, 2], [3, 3, 4, 4]], [0.9, 0.8, 0.7], 3, 0.5, {}, [0, 2, 0], 2),
    # The first box decides the corner order of all: box 1 turns inside out and survives.
    ([[1, 1, 0, 0], [0, 0, 1, 1], [0, 0.5, 1, 1.5], [2, 2, 3, 3]], [0.6, 0.9, 0.8, 0.7], 4,
     0.4, {}, [1, 2, 3, 0], 4),
    # Across tiles, IoU 0 >= threshold 0 suppresses disjoint boxes.
    ([[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7], [8, 8, 9, 9]],
     [0.9, 0.8, 0.7, 0.6, 0.5], 5, 0.0, {"tile_size": 2}, [0, 1, 0, 0, 0], 2),
    ([[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]], [0.9, 0.3, 0.7], 3, 0.5,
     {"score_threshold": 0.5}, [0, 2, 0], 2),
])
def test_non_max_suppression_padded_follows_tensorflows_tiled_algorithm(
        boxes, scores, size, iou, kwargs, indices, valid):
    got_indices, got_valid = _padded(boxes, scores, size, iou, **kwargs)
    np.testing.assert_array_equal(got_indices, indices)
    assert got_valid == valid


def _random_boxes(n, seed):
    rng = np.random.RandomState(seed)
    centres = rng.rand(n, 2).astype(F32) * 10
    sizes = rng.rand(n, 2).astype(F32) * 4 + 0.5
    boxes = np.concatenate([centres - sizes / 2, centres + sizes / 2], 1).astype(F32)
    return boxes, rng.rand(n).astype(F32)


def test_non_max_suppression_padded_batched_and_shapes():
    boxes, scores = _random_boxes(12, 6)
    flipped = boxes.copy()
    flipped[::3] = flipped[::3][:, [2, 3, 0, 1]]
    batch_boxes = np.stack([boxes, flipped, boxes - 5.0])
    batch_scores = np.stack([scores, scores[::-1], scores])
    indices, valid = _run(lambda: tf.image.non_max_suppression_padded(
        batch_boxes, batch_scores, 5, 0.3, pad_to_max_output_size=True, tile_size=4))
    np.testing.assert_array_equal(indices, [[10, 1, 2, 7, 11], [1, 10, 9, 4, 0],
                                            [10, 1, 2, 7, 11]])
    np.testing.assert_array_equal(valid, [5, 5, 5])
    indices, valid = _run(lambda: tf.image.non_max_suppression_padded(boxes, scores, 8, 0.2))
    np.testing.assert_array_equal(indices, [10, 1, 2, 7, 11, 5, 0, 6])
    indices, _ = _padded(boxes, scores, 6, 0.2, sorted_input=True)
    np.testing.assert_array_equal(indices, [0, 1, 2, 3, 4, 7])
    with tf.Graph().as_default():
        indices, valid = tf.image.non_max_suppression_padded(
            tf.placeholder(tf.float32, [None, None, 4]), tf.placeholder(tf.float32, [None, None]),
            3, pad_to_max_output_size=True)
        assert indices.shape.as_list() == [None, 3] and valid.shape.as_list() == [None]
        indices, valid = tf.image.non_max_suppression_padded(boxes, scores, 3,
                                                             pad_to_max_output_size=True)
        assert indices.shape.as_list() == [3] and valid.shape.as_list() == []


def test_non_max_suppression_padded_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be True for batched input"):
            tf.image.non_max_suppression_padded(np.ones((2, 3, 4), F32), np.ones((2, 3), F32), 2)
        # TF traces the score threshold as float32, so other score dtypes fail.
        with pytest.raises(TypeError, match="Input 'y' of 'Greater' Op has type float32"):
            tf.image.non_max_suppression_padded(np.ones((3, 4), np.float16),
                                                np.ones(3, np.float16), 2,
                                                pad_to_max_output_size=True)


def test_adjust_contrast_names_its_input_images():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"\(adjust_contrast/images, "):
            tf.image.adjust_contrast(np.ones((4, 3), F32), 2.0)


IMAGE = np.arange(24, dtype=F32).reshape(2, 3, 4, 1) ** 1.5 / 10


@pytest.mark.parametrize("build,expected", [
    (lambda x: tf.image.resize_bilinear(x, (2, 5), half_pixel_centers=True),
     [0.20000000298023224, 0.30815595388412476, 0.4670320153236389, 0.6615041494369507,
      0.8527178764343262, 1.8970561027526855, 2.1822729110717773, 2.521820306777954,
      2.8771588802337646, 3.1992218494415283, 4.717691898345947, 5.102720260620117,
      5.552830696105957, 6.014824867248535, 6.42758321762085, 8.30820369720459,
      8.771374702453613, 9.309125900268555, 9.856847763061523, 10.343286514282227]),
    (lambda x: tf.image.resize_bicubic(x, (4, 3), align_corners=True),
     [0.0, 0.17859891057014465, 0.5196152925491333, 0.385903537273407, 0.7569417357444763,
      1.2334485054016113, 1.3488658666610718, 1.9264038801193237, 2.564927816390991,
      2.2627415657043457, 2.9265682697296143, 3.648287296295166, 4.156922340393066,
      4.958938121795654, 5.809474945068359, 5.411940097808838, 6.283022880554199,
      7.199032783508301, 7.449308395385742, 8.414800643920898, 9.420923233032227,
      8.9442720413208, 9.968128204345703, 11.030412673950195]),
    (lambda x: tf.image.resize_area(x, (2, 3)),
     [0.30983617901802063, 0.5589022636413574, 0.892428994178772, 1.8745403289794922,
      2.385380744934082, 2.9366707801818848, 5.043770790100098, 5.749518394470215,
      6.484663486480713, 8.26014518737793, 9.088447570800781, 9.941898345947266]),
    (lambda x: tf.image.resize_images(tf.cast(x * 10, tf.uint8), (5, 3), method=1),
     [0, 1, 2, 0, 1, 2, 8, 11, 14, 8, 11, 14, 22, 27, 31, 41, 46, 52, 41, 46, 52, 64, 70, 76,
      64, 70, 76, 89, 96, 103]),
    (lambda x: tf.image.crop_and_resize(x, [[0.9, 0.8, -0.2, 0.1]], [1], (2, 3),
                                        extrapolation_value=-1.0),
     [10.061773300170898, 9.339248657226562, 8.634966850280762, -1.0, -1.0, -1.0]),
    (lambda x: tf.gradients(tf.reduce_sum(tf.image.resize_bilinear(x, (2, 7))
                                          * tf.reshape(tf.range(14.0), [1, 2, 7, 1])), x)[0],
     [0.4285714030265808, 3.1428565979003906, 5.999999523162842, 11.428571701049805,
      5.214285850524902, 7.571427822113037, 9.0, 13.214286804199219, 5.214285850524902,
      7.571427822113037, 9.0, 13.214286804199219] * 2),
])
def test_resize_and_crop_values(build, expected):
    got = _run(lambda: build(tf.constant(IMAGE)))
    np.testing.assert_array_equal(got.ravel(), np.array(expected, got.dtype))


def test_crop_and_resize_box_gradient():
    def build():
        boxes = tf.constant([[0.1, 0.2, 0.8, 0.7]])
        crops = tf.image.crop_and_resize(tf.constant(IMAGE), boxes, [0], (2, 2))
        return tf.gradients(tf.reduce_sum(crops * tf.reshape(tf.range(4.0), [1, 2, 2, 1])),
                            boxes)[0]
    np.testing.assert_array_equal(_run(build).ravel(), np.array(
        [2.4028143882751465, 2.337412118911743, 16.354814529418945, 4.798500061035156], F32))


def test_seeded_random_ops_draw_as_tensorflow():
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        image = tf.constant(np.arange(60, dtype=F32).reshape(4, 5, 3))
        flipped = tf.image.random_flip_left_right(image, seed=3)
        cropped = tf.image.random_crop(image, [2, 3, 3], seed=3)
        brighter = tf.image.random_brightness(image, 0.5, seed=3)
        with tf.Session() as sess:
            runs = [sess.run([flipped, cropped, brighter]) for _ in range(2)]
    assert runs[0][0][0, :, 0].tolist() == [12.0, 9.0, 6.0, 3.0, 0.0]
    assert runs[1][0][0, :, 0].tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]
    assert runs[0][1][:, :, 0].tolist() == [[30.0, 33.0, 36.0], [45.0, 48.0, 51.0]]
    assert runs[1][1][:, :, 0].tolist() == [[15.0, 18.0, 21.0], [30.0, 33.0, 36.0]]
    assert runs[0][2][0, 0, 0] == F32(-0.09891211986541748)
    assert runs[1][2][0, 0, 0] == F32(0.20619487762451172)


def test_convert_image_dtype_saturates():
    got = _run(lambda: tf.image.convert_image_dtype(
        tf.constant([-0.5, 0.0, 0.4, 1.0, 1.7]), tf.uint8, saturate=True))
    assert got.tolist() == [0, 0, 102, 255, 255]
