"""tf.image's random crops, flips and colour jitter against TensorFlow 2.21's values.

Every expected value below was printed by TensorFlow 2.21 (tf.compat.v1, CPU) for the same
program. sample_distorted_bounding_box draws TF's windows bit for bit (named cases spelled out;
a sweep of random small images and attrs compared by the first 16 hex digits of the SHA-256 of
begin and size as int64). The wrappers built on random_uniform (random_crop, the flips, the
colour jitter) are checked with an op seed only, a graph seed only and both, two calls a graph:
the crops and flips spelled out, the colour outputs by the digest of their float32 bytes.
"""
import hashlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.image_boxes import _SimplePhilox


def _digest(values, dtype) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype).tobytes()).hexdigest()[:16]


def _session_runs(build, runs, feed=None):
    """`runs` runs of what `build()` returns, in one session of a fresh graph."""
    with tf.Graph().as_default():
        fetches = build()
        with tf.Session() as sess:
            return [sess.run(fetches, feed) for _ in range(runs)]


# name: (image_size, its dtype, boxes (None: none), attrs,
#        TF's (begin[:2], size[:2]) run after run in one session)
NAMED = {
    "one_box_op_seed": (
        [480, 640, 3], "int32", [[[0.1, 0.2, 0.5, 0.7]]], {"seed": 7},
        [([34, 70], [320, 380]), ([95, 158], [235, 198]), ([62, 34], [364, 401]),
         ([167, 74], [293, 342])]),
    "seed_pair_several_boxes": (
        [300, 200, 3], "int32",
        [[[0.0, 0.0, 0.3, 0.3], [0.5, 0.4, 0.9, 1.0]],
         [[0.2, 0.2, 0.25, 0.6], [0.1, 0.1, 0.1, 0.1]]],
        {"seed": 3, "seed2": 11, "min_object_covered": 0.5, "aspect_ratio_range": [0.5, 2.0],
         "area_range": [0.1, 0.9]},
        [([1, 50], [102, 137]), ([165, 2], [120, 153]), ([35, 11], [218, 181]),
         ([149, 7], [101, 182])]),
    "no_boxes_use_image": (
        [224, 224, 3], "int64", None,
        {"seed": 5, "use_image_if_no_bounding_boxes": True, "min_object_covered": 0.0},
        [([27, 20], [192, 164]), ([118, 0], [65, 72]), ([58, 37], [89, 89]),
         ([79, 5], [91, 76])]),
    # Three attempts never cover 95% of the box: the whole image, every run.
    "attempts_fail": (
        [100, 120, 3], "int32", [[[0.3, 0.3, 0.9, 0.8]]],
        {"seed": 9, "max_attempts": 3, "min_object_covered": 0.95, "area_range": [0.05, 0.3]},
        [([0, 0], [100, 120])] * 4),
    "tiny_image": (
        [5, 7, 3], "uint8", [[[0.0, 0.0, 1.0, 1.0]]],
        {"seed": 2, "min_object_covered": 0.0, "area_range": [0.1, 1.0],
         "aspect_ratio_range": [0.2, 3.0]},
        [([1, 0], [2, 5]), ([0, 1], [4, 2]), ([2, 2], [2, 2]), ([0, 1], [4, 5])]),
    "seed2_only": (
        [64, 48, 3], "int16", [[[0.2, 0.1, 0.8, 0.6]]], {"seed2": 9},
        [([19, 7], [33, 38]), ([8, 0], [38, 43]), ([20, 10], [17, 21]), ([5, 0], [51, 48])]),
    "negative_seeds_one_attempt": (
        [64, 48, 3], "int32", [[[0.2, 0.1, 0.8, 0.6]]],
        {"seed": -3, "seed2": -1, "max_attempts": 1},
        [([5, 0], [42, 45]), ([0, 0], [64, 48]), ([17, 5], [45, 42]), ([39, 5], [17, 17])]),
    "wide_aspect": (
        [50, 400, 3], "int32", [[[0.0, 0.0, 1.0, 1.0]]],
        {"seed": 12, "aspect_ratio_range": [4.0, 12.0], "area_range": [0.3, 1.0],
         "min_object_covered": 0.2},
        [([14, 30], [33, 353]), ([3, 50], [26, 300]), ([16, 36], [26, 304]),
         ([10, 4], [39, 378])]),
}


@pytest.mark.parametrize("name", NAMED)
def test_sample_distorted_bounding_box_named_cases(name):
    size, dtype, boxes, attrs, expected = NAMED[name]

    def build():
        tf.set_random_seed(123)   # not used: TF1 passes seed/seed2 to the op as given
        boxes_t = tf.zeros([1, 0, 4]) if boxes is None else tf.constant(boxes, tf.float32)
        return tf.image.sample_distorted_bounding_box(tf.constant(size, getattr(tf, dtype)),
                                                      boxes_t, **attrs)

    runs = _session_runs(build, len(expected))
    assert [(b[:2].tolist(), s[:2].tolist()) for b, s, _ in runs] == expected
    for begin, window, bboxes in runs:
        assert begin.dtype == getattr(np, dtype) and begin[2] == 0
        assert window[2] == np.array(-1).astype(dtype)   # all channels (255 as uint8)
        corners = np.array([begin[0], begin[1], begin[0] + window[0], begin[1] + window[1]],
                           np.float32)
        np.testing.assert_array_equal(   # TF: float(corner) / float(image side)
            bboxes.ravel(), corners / np.array([size[0], size[1]] * 2, np.float32))


def _sweep_case(k):
    """Sweep case k: a small image, up to 3 boxes and attrs drawn from RandomState(k)."""
    rng = np.random.RandomState(k)
    height, width = (int(v) for v in rng.randint(1, 40, 2))
    aspect = np.float32(rng.uniform(0.1, 3)) * np.float32([1, rng.uniform(1, 4)])
    low_area = np.float32(rng.uniform(0.01, 0.8))
    area = [low_area, np.float32(rng.uniform(low_area, 1))]
    corners = np.sort(rng.uniform(0, 1, (rng.randint(0, 4), 2, 2)).astype(np.float32), axis=1)
    attrs = dict(seed=int(rng.randint(1, 1000)), seed2=int(rng.randint(0, 1000)),
                 min_object_covered=float(np.float32(rng.uniform(0, 1))),
                 aspect_ratio_range=[float(v) for v in aspect],
                 area_range=[float(v) for v in area], max_attempts=int(rng.randint(1, 30)),
                 use_image_if_no_bounding_boxes=True)
    return height, width, corners.reshape(-1, 4).tolist(), attrs


# TF's digest of four runs' (begin, size) for sweep case k.
SWEEP = ["0253c610458f8020", "57a92bec2bf137fb", "c58cdab05989f0a6", "b8c5a3d08eda3635",
         "b468738446a12158", "cb346ae0d640d711", "c899449748acd48b", "a06ef320ee725f26",
         "8361e1ff9eca5571", "8dca9dce6d05ba8c", "c0ea6469fd6227dc", "233bed0f675e9193",
         "d1e3daefe1fe5df2", "4caa5424148f0bcc", "dc9762619f6d7b83", "cc1d71aaebf34ee7",
         "b468738446a12158", "aa55a21805c114c2", "06e238844bf0c8fb", "7a66cb8d5d651eee",
         "c12f8e1018d5e152", "c459149a6acb0ab5", "cce1992a3ec34507", "e8636ce7eac94d3f",
         "1b8285f94f2ad890", "58e4589280e6e4b7", "02202e423e490293", "ac2f8ccb5946a8f2",
         "8f31dafa0c016497", "750819bd6da0bb63", "efd0f4d43cc68496", "9237db8efc469822",
         "fc5d87a32c212e02", "b405d08f78789092", "a5caa1723f80846a", "42b855cc10041466",
         "b6ae604053fbb5d9", "49db43cecb8a26d0", "ac9a107f27ea7d7e", "59281234314dde34"]


@pytest.mark.parametrize("k", range(len(SWEEP)))
def test_sample_distorted_bounding_box_sweep(k):
    height, width, boxes, attrs = _sweep_case(k)
    runs = _session_runs(lambda: tf.image.sample_distorted_bounding_box(
        tf.constant([height, width, 3]), tf.constant(boxes, tf.float32, [1, len(boxes), 4]),
        **attrs)[:2], 4)
    assert _digest(runs, np.int64) == SWEEP[k]


def test_a_failed_run_still_moves_the_stream_on():
    """TF reserves the run's words before it checks the inputs: the run after a failed one
    gets the third window of the sequence, not the second."""
    with tf.Graph().as_default():
        boxes = tf.placeholder(tf.float32, [1, 1, 4])
        window = tf.image.sample_distorted_bounding_box([60, 80, 3], boxes, seed=4)[1]
        good = {boxes: [[[0.1, 0.1, 0.9, 0.9]]]}
        with tf.Session() as sess:
            assert sess.run(window, good).tolist() == [32, 39, -1]
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[0.0, 1.0\]: 1.5"):
                sess.run(window, {boxes: [[[0.1, 0.1, 1.5, 0.9]]]})
            assert sess.run(window, good).tolist() == [29, 27, -1]   # unbroken: [52, 48, -1]


def test_uniform_rejects_the_low_words_as_tensorflow():
    """ExactUniformInt(6): words below 2**32 % 6 = 4 are rejected; a power of two masks;
    0 takes a word and gives 0."""
    random = _SimplePhilox(((1, 2), (0, 0, 0, 0)), 1)
    random.words = [2, 3, 17, 0xFFFFFFFF, 5, 9]
    assert random.uniform(6) == 17 % 6 and random.used == 3
    assert random.uniform(8) == 7 and random.uniform(0) == 0 and random.used == 5


# Wrappers on random_uniform. Image values give away the crop offsets and flips.
PIXELS = np.array([[[0.9, 0.2, 0.4]], [[0.1, 0.6, 0.3]]], np.float32)   # 2x1x3
WRAPPERS = {
    "random_crop": lambda s: tf.random_crop(tf.reshape(tf.range(12.0), [3, 4, 1]), [1, 1, 1],
                                            seed=s),
    "image.random_crop": lambda s: tf.image.random_crop(tf.reshape(tf.range(12.0), [3, 4]),
                                                        [2, 2], seed=s),
    "random_flip_left_right": lambda s: tf.image.random_flip_left_right(
        tf.reshape(tf.range(2.0), [1, 2, 1]), seed=s),
    "random_flip_up_down": lambda s: tf.image.random_flip_up_down(
        tf.reshape(tf.range(2.0), [2, 1, 1]), seed=s),
    "random_flip_left_right/batch": lambda s: tf.image.random_flip_left_right(
        tf.reshape(tf.range(6.0), [3, 1, 2, 1]), seed=s),
    "random_flip_up_down/batch": lambda s: tf.image.random_flip_up_down(
        tf.reshape(tf.range(6.0), [3, 2, 1, 1]), seed=s),
    "random_brightness": lambda s: tf.image.random_brightness(PIXELS, 0.3, seed=s),
    "random_contrast": lambda s: tf.image.random_contrast(PIXELS, 0.2, 1.8, seed=s),
    "random_saturation": lambda s: tf.image.random_saturation(PIXELS, 0.2, 1.8, seed=s),
    "random_hue": lambda s: tf.image.random_hue(PIXELS, 0.4, seed=s),
}
_FLIP = {"op": [[[1, 0], [1, 0]]] * 3, "graph": [[[1, 0], [0, 1]], [[0, 1], [1, 0]],
                                                  [[1, 0], [1, 0]]],
         "both": [[[0, 1], [0, 1]], [[1, 0], [1, 0]], [[0, 1], [0, 1]]]}
_BATCH_FLIP = {
    "op": [[[0, 1, 3, 2, 4, 5]] * 2, [[0, 1, 2, 3, 5, 4]] * 2, [[0, 1, 2, 3, 4, 5]] * 2],
    "graph": [[[0, 1, 3, 2, 4, 5], [1, 0, 2, 3, 4, 5]], [[0, 1, 2, 3, 4, 5]] * 2,
              [[1, 0, 3, 2, 4, 5], [1, 0, 2, 3, 5, 4]]],
    "both": [[[1, 0, 2, 3, 5, 4]] * 2, [[0, 1, 2, 3, 4, 5]] * 2, [[0, 1, 2, 3, 4, 5]] * 2]}
# (wrapper, seeding): TF's outputs of two calls in one graph, three runs ([[first, second]..]),
# or the digest of their float32 bytes.
EXPECTED = {
    ("random_crop", "op"): [[[0], [0]], [[11], [11]], [[5], [5]]],
    ("random_crop", "graph"): [[[6], [3]], [[0], [2]], [[4], [6]]],
    ("random_crop", "both"): [[[3], [3]], [[5], [5]], [[2], [2]]],
    ("image.random_crop", "op"): [[[1, 2, 5, 6]] * 2, [[4, 5, 8, 9]] * 2, [[0, 1, 4, 5]] * 2],
    ("image.random_crop", "graph"): [[[5, 6, 9, 10], [6, 7, 10, 11]], [[4, 5, 8, 9]] * 2,
                                     [[1, 2, 5, 6], [6, 7, 10, 11]]],
    ("image.random_crop", "both"): [[[1, 2, 5, 6]] * 2, [[6, 7, 10, 11]] * 2,
                                    [[6, 7, 10, 11]] * 2],
    **{(f"random_flip_{way}", seeds): runs for way in ("left_right", "up_down")
       for seeds, runs in _FLIP.items()},
    **{(f"random_flip_{way}/batch", seeds): runs for way in ("left_right", "up_down")
       for seeds, runs in _BATCH_FLIP.items()},
    ("random_brightness", "op"): "efc66902f2b450c8",
    ("random_brightness", "graph"): "8058107977f49b8b",
    ("random_brightness", "both"): "b5b68a179e6302e7",
    ("random_contrast", "op"): "2fc46e8c1752fa32",
    ("random_contrast", "graph"): "1ecb7b32e304bbd8",
    ("random_contrast", "both"): "ce9989f7c90c21e0",
    ("random_saturation", "op"): "80a6aecb5d3706e4",
    ("random_saturation", "graph"): "447e6fce4bdf3897",
    ("random_saturation", "both"): "ebdcf55c765f2065",
    ("random_hue", "op"): "4c0b7062684966f2",
    ("random_hue", "graph"): "bd8f1cfb6ec2cf05",
    ("random_hue", "both"): "f806434d37afb5fa",
}


@pytest.mark.parametrize("name, seeds", EXPECTED)
def test_image_wrappers_draw_tensorflows_values(name, seeds):
    def build():
        if seeds != "op":
            tf.set_random_seed(17)
        x = tf.constant(PIXELS)
        tf.identity(x) * 1.0   # ops before the random ones: the graph seed's op seeds count them
        seed = None if seeds == "graph" else 5
        return [WRAPPERS[name](seed) for _ in range(2)]

    runs = np.array(_session_runs(build, 3)).reshape(3, 2, -1)
    expected = EXPECTED[name, seeds]
    if isinstance(expected, str):
        assert _digest(runs, np.float32) == expected
    else:
        assert runs.tolist() == expected
