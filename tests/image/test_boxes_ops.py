"""Bounding-box ops: sample_distorted_bounding_box's constraints, its statistics against
TensorFlow 2.21's (same settings, 2000+ draws), determinism under seeds, TF's errors, and an
Inception-style crop-and-resize pipeline; draw_bounding_boxes against a per-box transcription
of TF's drawing loop and against pixels recorded from TF 2.21."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

SIZE_TYPES = (tf.int32, tf.int64, tf.int16, tf.int8, tf.uint8)
BOX = [[[0.2, 0.3, 0.7, 0.6]]]
SDBB = tf.image.sample_distorted_bounding_box


def _whole_image(image_size, *_):
    """What the op returns when no window qualifies: the whole image."""
    height, width = int(image_size[0]), int(image_size[1])
    with np.errstate(invalid="ignore"):
        box = np.array([0, 0, height, width], np.float32) / \
            np.array([height, width, height, width], np.float32)
    return [np.array([0, 0, 0]).astype(image_size.dtype),
            np.array([height, width, -1]).astype(image_size.dtype), box.reshape(1, 1, 4)]


def _sdbb(**kwargs):
    return lambda size, boxes: list(SDBB(size, boxes, seed=3, **kwargs))


F32_BOXES = (None, tf.float32)
SAMPLE_CASES = [
    # No window can cover 150% of a box: the whole image after max_attempts.
    OpCase("sdbb_uncoverable", _sdbb(min_object_covered=1.5), _whole_image,
           [np.array([40, 50, 3]), np.array(BOX)], dtypes=SIZE_TYPES, grad=False,
           fixed_dtypes=F32_BOXES),
    # An area of exactly the image's: only the whole image qualifies.
    OpCase("sdbb_full_area", _sdbb(area_range=[1.0, 1.0]), _whole_image,
           [np.array([30, 30, 1]), np.array([[[0.1, 0.1, 0.2, 0.2], [0.5, 0.5, 0.9, 0.9]]])],
           dtypes=SIZE_TYPES, grad=False, fixed_dtypes=F32_BOXES),
    OpCase("sdbb_no_boxes_use_image",
           _sdbb(area_range=[1.0, 1.0], use_image_if_no_bounding_boxes=True), _whole_image,
           [np.array([7, 9, 3]), np.zeros((1, 0, 4))], dtypes=(tf.int32, tf.int64),
           grad=False, fixed_dtypes=F32_BOXES),
    # An empty image: no attempt can succeed, and the relative box is 0 / 0.
    OpCase("sdbb_zero_height", _sdbb(), _whole_image, [np.array([0, 5, 3]), np.array(BOX)],
           dtypes=(tf.int32,), grad=False, fixed_dtypes=F32_BOXES),
]


def _sample(n, size=(60, 80, 3), boxes=BOX, seed=11, **kwargs):
    """n windows of one op in one session: begins and sizes as [n, 3] arrays, bboxes."""
    with tf.Graph().as_default():
        outs = SDBB(list(size), boxes, seed=seed, **kwargs)
        with tf.Session() as sess:
            runs = [sess.run(outs) for _ in range(n)]
    return [np.array([r[k] for r in runs]) for k in range(3)]


def test_sample_windows_meet_the_constraints():
    begin, size, bboxes = _sample(500, min_object_covered=0.3, area_range=[0.1, 0.9],
                                  aspect_ratio_range=[0.5, 2.0])
    height, width = size[:, 0], size[:, 1]
    assert (begin[:, 2] == 0).all() and (size[:, 2] == -1).all()
    assert (begin[:, :2] >= 0).all() and (begin[:, 0] + height <= 60).all() and \
        (begin[:, 1] + width <= 80).all()
    area = height * width / (60 * 80)
    assert (area >= 0.1 - 1e-6).all() and (area <= 0.9 + 1e-6).all()
    # The aspect ratio is the drawn one up to rounding the width to whole pixels.
    assert (width / height >= 0.5 - 0.5 / height).all()
    assert (width / height <= 2.0 + 0.5 / height).all()
    # At least 30% of the box (rows 12..42, columns 24..48) is inside every window.
    rows = np.clip(np.minimum(begin[:, 0] + height, 42) - np.maximum(begin[:, 0], 12), 0, None)
    cols = np.clip(np.minimum(begin[:, 1] + width, 48) - np.maximum(begin[:, 1], 24), 0, None)
    assert (rows * cols / (30 * 24) >= 0.3).all()
    expected = np.stack([begin[:, 0] / 60, begin[:, 1] / 80, (begin[:, 0] + height) / 60,
                         (begin[:, 1] + width) / 80], -1).astype(np.float32)
    np.testing.assert_allclose(bboxes.reshape(-1, 4), expected, rtol=1e-6)
    assert len({tuple(b) for b in begin}) > 100    # the windows move around


# Means over 4000 draws of TF 2.21 with these settings (area fraction, aspect w / h, offsets
# and sizes): our draws must have the same distribution.
TF_STATS = [
    (dict(boxes=BOX, min_object_covered=0.3), (0.4170, 1.0518, 8.004, 16.278, 42.35, 44.34)),
    (dict(boxes=[[[0.0, 0.0, 1.0, 1.0]]], min_object_covered=0.0, area_range=[0.1, 0.5],
          aspect_ratio_range=[0.5, 2.0]), (0.2740, 1.2495, 12.928, 19.504, 33.30, 38.97)),
]


@pytest.mark.parametrize("kwargs,stats", TF_STATS)
def test_sample_statistics_match_tensorflow(kwargs, stats):
    begin, size, _ = _sample(2000, **kwargs)
    area = (size[:, 0] * size[:, 1] / (60 * 80)).mean()
    aspect = (size[:, 1] / size[:, 0]).mean()
    got = (area, aspect, begin[:, 0].mean(), begin[:, 1].mean(), size[:, 0].mean(),
           size[:, 1].mean())
    rtol = np.array([0.05, 0.03, 0.12, 0.08, 0.04, 0.04])
    assert (np.abs(np.subtract(got, stats)) <= rtol * np.array(stats)).all(), (got, stats)


def test_sample_seeds():
    first = _sample(10, seed=5)
    np.testing.assert_array_equal(_sample(10, seed=5)[0], first[0])    # a new session repeats
    assert not np.array_equal(_sample(10, seed=6)[0], first[0])
    assert not np.array_equal(_sample(10, seed=None)[0], _sample(10, seed=None)[0])
    # seed2 alone seeds it too; the graph seed is not used (TF1 passes the attrs as given).
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        op = SDBB([60, 80, 3], BOX, seed2=7)[0].op
        assert (op.get_attr("seed"), op.get_attr("seed2")) == (0, 7)
        assert op.name == "sample_distorted_bounding_box/SampleDistortedBoundingBoxV2"
        assert op.get_attr("aspect_ratio_range") == [0.75, 1.33]
        assert SDBB([6, 8, 3], BOX, name="crop")[0].name == "crop/crop:0"


@pytest.mark.parametrize("args,error,message", [
    (([40, 50], BOX), ValueError, "Dimension must be 3 but is 2"),
    (([[40, 50, 3]], BOX), ValueError, "Shape must be rank 1 but is rank 2"),
    (([40, 50, 3], BOX[0]), ValueError, "Shape must be rank 3 but is rank 2"),
    (([40, 50, 3], [[[0.1, 0.2, 0.6]]]), ValueError, "Dimension must be 4 but is 3"),
    (([40, 50, 3], BOX, 1, 0, [0.1]), ValueError, "Shape must be rank 0 but is rank 1"),
    (([40.0, 50, 3], BOX), TypeError, "DataType float32 not in list of allowed values"),
])
def test_sample_build_errors(args, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        SDBB(*args)


RUN_ERRORS = [
    (dict(aspect_ratio_range=[1.0]), "Aspect ratio range field must specify 2 dimensions"),
    (dict(aspect_ratio_range=[0.0, 0.5]), r"Aspect ratio range must be non-negative: \[0, 0.5\]"),
    (dict(area_range=[0.1, 0.2, 0.3]), "Area range field must specify 2 dimensions"),
    (dict(area_range=[-0.1, 0.5]), r"Area range must be non-negative: \[-0.1, 0.5\]"),
    (dict(area_range=[0.1, 2.0]), r"Area range must be less then or equal to 1.0: \[0.1, 2\]"),
    (dict(max_attempts=0), "Max attempts must be non-negative: 0"),
    (dict(image_size=[40, 50]), r"image_size must contain 3 elements\[2\]"),
    (dict(image_size=[[40, 50, 3]]), r"image_size must be 1-dimensional\[1,3\]"),
    (dict(image_size=[-3, 50, 3]), "image height cannot be >= int32 max"),
    (dict(image_size=np.array([4, 2**31 - 1, 3], np.int64)),
     "image width cannot be >= int32 max"),
    (dict(boxes=[[0.1, 0.2, 0.6, 0.7]]),
     r"input boxes must be 3-dimensional \[batch, num_boxes, coords\]: \[1,4\]"),
    (dict(boxes=[[[0.1, 0.2, 0.6]]]),
     r"bounding boxes must have shape \[4\] or \[\*, 4\], got \[1,1,3\]"),
    (dict(boxes=[[[0.1, 0.2, 1.6, 0.7]]]),
     r"All bounding box coordinates must be in \[0.0, 1.0\]: 1.6"),
    (dict(boxes=[[[np.nan, 0.2, 0.6, 0.7]]]),
     r"All bounding box coordinates must be in \[0.0, 1.0\]: nan"),
    (dict(boxes=np.zeros((1, 0, 4))), "No bounding boxes provided as input. One must enable "
     "use_image_if_no_bounding_boxes"),
    (dict(min_object_covered=-0.5), "Min object covered must be non-negative: -0.5"),
    (dict(min_object_covered=[0.5]), r"min_object_covered must be 0-D, got shape \[1\]"),
]


@pytest.mark.parametrize("kwargs,message", RUN_ERRORS)
def test_sample_run_errors(kwargs, message):
    """Fed through placeholders of unknown shape, so the shape function lets them pass."""
    values = {"image_size": [40, 50, 3], "boxes": BOX, "min_object_covered": 0.1}
    attrs = {k: v for k, v in kwargs.items() if k not in values}
    values.update({k: v for k, v in kwargs.items() if k in values})
    with tf.Graph().as_default():
        size = np.asarray(values["image_size"])
        holders = [tf.placeholder(tf.as_dtype(size.dtype), None), tf.placeholder(tf.float32),
                   tf.placeholder(tf.float32)]
        outs = SDBB(holders[0], holders[1], seed=1, min_object_covered=holders[2], **attrs)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(outs, dict(zip(holders, [size, values["boxes"],
                                              values["min_object_covered"]])))


def test_inception_style_crop_and_resize():
    """Inception's distorted_bounding_box_crop: slice the window out, resize it to 24x24."""
    image = np.random.RandomState(0).uniform(size=(48, 64, 3)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        pixels = tf.constant(image)
        begin, size, window = SDBB(tf.shape(pixels), tf.constant(BOX), seed=0,
                                   min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                   area_range=(0.05, 1.0), max_attempts=100,
                                   use_image_if_no_bounding_boxes=True)
        cropped = tf.slice(pixels, begin, size)
        cropped.set_shape([None, None, 3])
        resized = tf.image.resize_images(tf.expand_dims(cropped, 0), [24, 24])
        drawn = tf.image.draw_bounding_boxes(tf.expand_dims(pixels, 0), window)
        with tf.Session() as sess:
            for _ in range(5):
                b, s, crop, out, picture = sess.run([begin, size, cropped, resized, drawn])
                np.testing.assert_array_equal(crop, image[b[0]:b[0] + s[0], b[1]:b[1] + s[1]])
                assert out.shape == (1, 24, 24, 3)
                assert crop.min() <= out.min() and out.max() <= crop.max()
                # The window's outline is yellow in the drawn image.
                top = picture[0, int(b[0] / 48 * 47)]
                assert (top[int(b[1] / 64 * 63):int((b[1] + s[1]) / 64 * 63)] ==
                        [1, 1, 0]).all()


# --- draw_bounding_boxes ---------------------------------------------------------------------
DEFAULT_COLORS = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                  [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def draw_ref(images, boxes, colors=None):
    """TF's DrawBoundingBoxesOp loop, one box and one edge at a time."""
    out = images.copy()
    _, height, width, depth = images.shape
    table = np.array(DEFAULT_COLORS, np.float32)
    if depth == 1:
        table[:, 0] = 1
    if colors is not None and colors.size:
        table = colors.astype(np.float32)
    for b in range(images.shape[0]):
        for k, box in enumerate(boxes[b].astype(np.float32)):
            color = table[k % len(table), :depth]
            r0, r1 = (int(v * np.float32(height - 1)) for v in box[[0, 2]])
            c0, c1 = (int(v * np.float32(width - 1)) for v in box[[1, 3]])
            if r0 > r1 or c0 > c1 or r0 >= height or r1 < 0 or c0 >= width or c1 < 0:
                continue
            cols = slice(max(c0, 0), min(c1, width - 1) + 1)
            rows = slice(max(r0, 0), min(r1, height - 1) + 1)
            for edge, inside, index in ((True, r0 >= 0, r0), (True, r1 < height, r1),
                                        (False, c0 >= 0, c0), (False, c1 < width, c1)):
                if inside:
                    out[(b, index, cols) if edge else (b, rows, index)] = color
    return out


def _images(shape):
    return lambda rng, dt: rng.uniform(size=shape).astype(dt)


def _boxes(shape):
    return lambda rng, dt: rng.uniform(-0.3, 1.3, size=shape)


DRAW_TYPES = (tf.float32, tf.float16)
DRAW_CASES = [
    OpCase("draw_rgb", tf.image.draw_bounding_boxes, draw_ref,
           [_images((2, 7, 9, 3)), _boxes((2, 14, 4))], dtypes=DRAW_TYPES, grad=False,
           fixed_dtypes=(None, tf.float32)),
    OpCase("draw_gray", tf.image.draw_bounding_boxes, draw_ref,
           [_images((1, 5, 4, 1)), _boxes((1, 6, 4))], dtypes=DRAW_TYPES, grad=False,
           fixed_dtypes=(None, tf.float32)),
    OpCase("draw_rgba_one_row", tf.image.draw_bounding_boxes, draw_ref,
           [_images((3, 1, 6, 4)), _boxes((3, 4, 4))], dtypes=DRAW_TYPES, grad=False,
           fixed_dtypes=(None, tf.float32)),
    OpCase("draw_no_boxes", tf.image.draw_bounding_boxes, draw_ref,
           [_images((2, 3, 3, 3)), np.zeros((2, 0, 4))], dtypes=DRAW_TYPES, grad=False,
           fixed_dtypes=(None, tf.float32)),
    OpCase("draw_empty_batch", tf.image.draw_bounding_boxes, draw_ref,
           [np.zeros((0, 3, 3, 3)), np.zeros((0, 2, 4))], grad=False,
           fixed_dtypes=(None, tf.float32)),
    OpCase("draw_colors", lambda i, b, c: tf.image.draw_bounding_boxes(i, b, colors=c),
           draw_ref, [_images((2, 6, 8, 3)), _boxes((2, 9, 4)),
                      lambda rng, dt: rng.uniform(size=(4, 5))],
           dtypes=DRAW_TYPES, grad=False, fixed_dtypes=(None, tf.float32, tf.float32)),
    # An empty colour table means the default one.
    OpCase("draw_colors_empty_default", lambda i, b, c: tf.image.draw_bounding_boxes(
        i, b, colors=c), draw_ref, [_images((1, 4, 4, 4)), _boxes((1, 12, 4)),
                                    np.zeros((0, 4))], grad=False,
           fixed_dtypes=(None, tf.float32, tf.float32)),
]

test_forward, test_shapes = case_tests(SAMPLE_CASES + DRAW_CASES)

# Pixels of TF 2.21: rows of the single-image results.
YELLOW, BLUE, BLACK = [1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]


def test_draw_matches_tensorflow():
    with tf.Graph().as_default():
        out = tf.image.draw_bounding_boxes(
            np.zeros((1, 5, 6, 3), np.float32),
            [[[0.1, 0.2, 0.8, 0.9], [0.5, -0.5, 1.5, 0.6], [0.9, 0.1, 0.2, 0.7]]])
        colored = tf.image.draw_bounding_boxes(
            np.zeros((1, 2, 2, 3), np.float32), [[[0, 0, 1, 1.], [0, 0, 0, 0]]],
            colors=[[0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7, 0.8, 0.9, 1.0]])
        nan_box = tf.image.draw_bounding_boxes(np.zeros((1, 2, 2, 1), np.float32),
                                               [[[np.nan, 0, 1, 1.]]])
        assert out.op.type == "DrawBoundingBoxes" and colored.op.type == "DrawBoundingBoxesV2"
        with tf.Session() as sess:
            got, got_colored, got_nan = sess.run([out, colored, nan_box])
    np.testing.assert_array_equal(got[0, 2], [BLUE] * 4 + [YELLOW, BLACK])
    np.testing.assert_array_equal(got[0, 3], [BLACK, YELLOW, YELLOW, BLUE, YELLOW, BLACK])
    np.testing.assert_array_equal(got[0, 4], [BLACK] * 3 + [BLUE] + [BLACK] * 2)
    np.testing.assert_allclose(got_colored[0], [[[0.6, 0.7, 0.8], [0.1, 0.2, 0.3]],
                                                [[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]]])
    np.testing.assert_array_equal(got_nan, np.ones((1, 2, 2, 1)))


@pytest.mark.parametrize("images,boxes,message", [
    ((3, 3, 1), (1, 1, 4), "Shape must be rank 4 but is rank 3"),
    ((1, 3, 3, 1), (1, 4), "Shape must be rank 3 but is rank 2"),
    ((1, 3, 3, 1), (1, 1, 3), "Dimension must be 4 but is 3"),
    ((1, 3, 3, 5), (1, 1, 4), r"Channel depth should be either 1 \(GRY\), 3 \(RGB\), or 4"),
])
def test_draw_build_errors(images, boxes, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        tf.image.draw_bounding_boxes(tf.placeholder(tf.float32, images),
                                     tf.placeholder(tf.float32, boxes))


@pytest.mark.parametrize("images,boxes,colors,message", [
    ((1, 3, 3, 2), (1, 1, 4), None, r"Channel depth should be either 1 \(GRY\), 3 \(RGB\)"),
    ((2, 3, 3, 1), (1, 1, 4), None, "The batch sizes should be the same"),
    ((1, 3, 3, 3), (1, 1, 4), (3,), r"colors must be a 2-D matrix\[3\]"),
    ((1, 3, 3, 3), (1, 1, 4), (1, 2), "colors must have equal or more channels than the image "
     r"provided: \[1,2\]"),
])
def test_draw_run_errors(images, boxes, colors, message):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32) for _ in range(3)]
        out = tf.image.draw_bounding_boxes(holders[0], holders[1],
                                           colors=None if colors is None else holders[2])
        feed = {holders[0]: np.zeros(images), holders[1]: np.zeros(boxes)}
        if colors is not None:
            feed[holders[2]] = np.zeros(colors)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(out, feed)


# --- extract_glimpse -------------------------------------------------------------------------
def glimpse_ref(images, size, offsets, centered=True, normalized=True):
    """TF's version-1 GlimpseExtractionOp, one image at a time with slices; NaN marks the
    pixels outside the image (noise)."""
    batch, height, width, depth = images.shape
    gh, gw = int(size[0]), int(size[1])
    out = np.full((batch, gh, gw, depth), np.nan, np.float32)
    f = np.float32
    for i in range(batch):
        y, x = f(offsets[i, 0]), f(offsets[i, 1])
        if normalized:
            y, x = y * f(height), x * f(width)
        if centered:
            y, x = y / f(2) + f(height) / f(2), x / f(2) + f(width) / f(2)
        top, left = int(y - f(gh) / f(2)), int(x - f(gw) / f(2))
        r0, c0 = max(top, 0), max(left, 0)
        r1, c1 = min(top + gh, height), min(left + gw, width)
        if r1 > r0 and c1 > c0:
            out[i, r0 - top:r1 - top, c0 - left:c1 - left] = images[i, r0:r1, c0:c1]
    return out


def _glimpse(size, **kwargs):
    return lambda images, offsets: tf.image.extract_glimpse(images, size, offsets, **kwargs)


def _offsets(values):
    return np.array(values, np.float32)


GLIMPSE_CASES = [
    OpCase("glimpse_centered_normalized", _glimpse([3, 2]),
           lambda i, o: glimpse_ref(i, [3, 2], o),
           [_images((2, 5, 6, 2)), _offsets([[0.0, 0.0], [0.2, -0.4]])], grad=False),
    OpCase("glimpse_normalized", _glimpse([3, 2], centered=False),
           lambda i, o: glimpse_ref(i, [3, 2], o, centered=False),
           [_images((2, 5, 6, 2)), _offsets([[0.5, 0.5], [0.7, 0.3]])], grad=False),
    OpCase("glimpse_pixels_centered", _glimpse([3, 2], normalized=False),
           lambda i, o: glimpse_ref(i, [3, 2], o, normalized=False),
           [_images((2, 5, 6, 2)), _offsets([[1.0, -1.0], [0.4, 0.7]])], grad=False),
    OpCase("glimpse_pixels", _glimpse([3, 3], centered=False, normalized=False),
           lambda i, o: glimpse_ref(i, [3, 3], o, centered=False, normalized=False),
           [_images((2, 5, 6, 1)), _offsets([[2.0, 3.0], [3.7, 4.9]])], grad=False),
    OpCase("glimpse_whole_image", _glimpse([4, 4], uniform_noise=False),
           lambda i, o: glimpse_ref(i, [4, 4], o),
           [_images((1, 4, 4, 3)), _offsets([[0.0, 0.0]])], grad=False),
    OpCase("glimpse_empty", _glimpse([0, 2]), lambda i, o: glimpse_ref(i, [0, 2], o),
           [_images((2, 5, 6, 2)), _offsets([[0.0, 0.0], [0.0, 0.0]])], grad=False),
]

test_glimpse_forward, test_glimpse_shapes = case_tests(GLIMPSE_CASES)


@pytest.mark.parametrize("uniform_noise", [True, False])
def test_glimpse_noise_outside_the_image(uniform_noise):
    """Outside the image: uniform noise in [min, max] of that image (for both settings of
    uniform_noise, as TF1's op always gets noise="uniform"); inside: the pixels (TF's values
    for the inside of the 4x4 glimpse: [[90, 91], [92, 93], [94, 95]] in its first row)."""
    images = np.arange(2 * 5 * 6 * 2, dtype=np.float32).reshape(2, 5, 6, 2)
    offsets = np.array([[-2.0, -2.0], [4.0, 5.0]], np.float32)
    with tf.Graph().as_default():
        out = tf.image.extract_glimpse(images, [40, 40], offsets, centered=False,
                                       normalized=False, uniform_noise=uniform_noise)
        small = tf.image.extract_glimpse(images, [4, 4], offsets, centered=False,
                                         normalized=False, uniform_noise=uniform_noise)
        assert out.op.get_attr("noise") == b"uniform"
        with tf.Session() as sess:
            got, got_small = sess.run([out, small])
    expected = glimpse_ref(images, [40, 40], offsets, centered=False, normalized=False)
    inside = ~np.isnan(expected)
    np.testing.assert_array_equal(got[inside], expected[inside])
    assert got_small[1, 0, :3].tolist() == [[90, 91], [92, 93], [94, 95]]
    # The noise is unseeded (no seed attr, as in TF): over its 3140 values per image the mean
    # has a deviation of 59 / sqrt(12 * 3140) = 0.30 and the std one of 0.14, so the bounds
    # below are over 7 deviations wide.
    for i, (low, high) in enumerate([(0, 59), (60, 119)]):
        noise = got[i][~inside[i]]
        assert low <= noise.min() and noise.max() <= high
        assert abs(noise.mean() - (low + high) / 2) < 2.5 and abs(noise.std() - 17.0) < 1.0


@pytest.mark.parametrize("shapes,message", [
    (((5, 6, 2), (2,), (1, 2)), "Shape must be rank 4 but is rank 3"),
    (((2, 5, 6, 2), (3,), (2, 2)), "Dimension must be 2 but is 3"),
    (((2, 5, 6, 2), (2,), (2,)), "Shape must be rank 2 but is rank 1"),
    (((2, 5, 6, 2), (2,), (1, 2)), "Dimensions must be equal, but are 2 and 1"),
    (((2, 5, 6, 2), (2,), (2, 3)), "Dimension must be 2 but is 3"),
])
def test_glimpse_build_errors(shapes, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        tf.image.extract_glimpse(tf.placeholder(tf.float32, shapes[0]),
                                 tf.placeholder(tf.int32, shapes[1]),
                                 tf.placeholder(tf.float32, shapes[2]))


@pytest.mark.parametrize("values,message", [
    (((5, 6, 2), [2, 2], (1, 2)),
     r"input must be 4-dimensional \(batch_size, height, width, depth\)\[5,6,2\]"),
    (((2, 5, 6, 2), [2, 2, 2], (2, 2)), r"input must be a vector of size 2 \(height, width\)\[3\]"),
    (((2, 5, 6, 2), [-2, 2], (2, 2)), "Expected a non-negative size, got -2"),
    (((2, 5, 6, 2), [2, 2], (2,)), r"input must be a matrix\[2\]"),
    (((2, 5, 6, 2), [2, 2], (1, 2)), r"first dimension should be batch\[1,2\]"),
    (((2, 5, 6, 2), [2, 2], (2, 3)), r"second dimension should be of size 2 \(y,x\)\[2,3\]"),
])
def test_glimpse_run_errors(values, message):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32), tf.placeholder(tf.int32),
                   tf.placeholder(tf.float32)]
        out = tf.image.extract_glimpse(*holders)
        assert out.shape.as_list() == [None] * 4
        feed = dict(zip(holders, [np.zeros(values[0]), values[1], np.zeros(values[2])]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(out, feed)
