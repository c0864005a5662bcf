"""Non-max suppression ops against a plain-Python transcription of TF's greedy loop (heapq,
one candidate at a time), against results recorded from TensorFlow 2.21 (ties, thresholds,
soft-NMS, float16), and TF's build and run errors."""
import heapq
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

F32 = np.float32
NMS_TYPES = (tf.float32, tf.float16)


def iou_ref(a, b):
    """TF's IOU in float32, one pair at a time."""
    a, b = a.astype(F32), b.astype(F32)
    ya, yb = sorted(a[[0, 2]]), sorted(b[[0, 2]])
    xa, xb = sorted(a[[1, 3]]), sorted(b[[1, 3]])
    area_a = (ya[1] - ya[0]) * (xa[1] - xa[0])
    area_b = (yb[1] - yb[0]) * (xb[1] - xb[0])
    if area_a <= 0 or area_b <= 0:
        return F32(0)
    inter = max(min(ya[1], yb[1]) - max(ya[0], yb[0]), F32(0)) * \
        max(min(xa[1], xb[1]) - max(xa[0], xb[0]), F32(0))
    return inter / (area_a + area_b - inter)


def nms_ref(similarity, scores, max_out, iou_threshold, score_threshold=-np.inf, sigma=0.0):
    """TF's DoNonMaxSuppressionOp with heapq: (indices, scores) in the scores' dtype."""
    t = scores.dtype.type
    iou_threshold, score_threshold, sigma = t(iou_threshold), t(score_threshold), t(sigma)
    scale = t(-0.5) / sigma if sigma > 0 else t(0)
    heap = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected, kept = [], []
    while len(selected) < max_out and heap:
        neg, i, begin = heapq.heappop(heap)
        score = original = -neg
        suppressed = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = t(similarity(i, selected[j]))
            if sigma == 0 and sim > iou_threshold:
                suppressed = True
                break
            if sigma > 0:
                # exp as glibc's expf (TF's std::exp): correctly rounded, like this.
                score = t(score * t(math.exp(t(t(scale * sim) * sim))))
            if score <= score_threshold:
                break
        if suppressed:
            continue
        if score == original:
            selected.append(i)
            kept.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(selected)))
    return np.array(selected, np.int32), np.array(kept, scores.dtype)


def _boxes(n=40, decimals=2):
    """Random boxes (some with swapped corners, some empty) and coarse scores with ties."""
    def make(rng, dt):
        corner = rng.rand(n, 2) * 0.8
        boxes = np.concatenate([corner, corner + rng.rand(n, 2) * 0.4], 1)
        boxes[::3] = boxes[::3][:, [2, 3, 0, 1]]
        boxes[5::11, 2] = boxes[5::11, 0]
        return np.round(boxes, decimals).astype(dt)
    return make


def _scores(n=40, decimals=1):
    return lambda rng, dt: np.round(rng.rand(n), decimals).astype(dt)


def _by_iou(boxes):
    return lambda i, j: iou_ref(boxes[i], boxes[j])


def _v3(max_out, iou, score):
    def build(b, s):
        return tf.image.non_max_suppression(b, s, max_out, tf.cast(iou, s.dtype),
                                            tf.cast(score, s.dtype))
    return build, lambda b, s: nms_ref(_by_iou(b), s, max_out, iou, score)[0]


def _v5(max_out, iou, score, sigma):
    def build(b, s):
        return list(tf.image.non_max_suppression_with_scores(
            b, s, max_out, tf.cast(iou, s.dtype), tf.cast(score, s.dtype),
            tf.cast(sigma, s.dtype)))
    return build, lambda b, s: list(nms_ref(_by_iou(b), s, max_out, iou, score, sigma))


def _v4(max_out, iou, pad):
    def build(b, s):
        return list(tf.raw_ops.NonMaxSuppressionV4(
            boxes=b, scores=s, max_output_size=max_out, iou_threshold=iou,
            score_threshold=float("-inf"), pad_to_max_output_size=pad))

    def ref(b, s):
        picked = nms_ref(_by_iou(b), s, max_out, iou)[0]
        padded = np.zeros(max_out, np.int32)
        padded[:len(picked)] = picked
        return [padded if pad else picked, np.int32(len(picked))]
    return build, ref


def _overlaps(max_out, threshold, score):
    def build(o, s):
        return tf.image.non_max_suppression_overlaps(o, s, max_out, threshold, score)
    return build, lambda o, s: nms_ref(lambda i, j: o[i, j], s, max_out, threshold, score)[0]


def combined_ref(boxes, scores, per_class, total, iou, score, pad_per_class=False,
                 clip=True):
    """Per image and class the heapq greedy loop, then a stable sort by score."""
    batch, _, q, _ = boxes.shape
    classes = scores.shape[2]
    size = min(total, per_class * classes) if pad_per_class else total
    out = [np.zeros((batch, size, 4), F32), np.zeros((batch, size), F32),
           np.zeros((batch, size), F32), np.zeros(batch, np.int32)]
    for b in range(batch):
        found = []
        for c in range(classes):
            cb = boxes[b, :, c if q > 1 else 0]
            picked, kept = nms_ref(_by_iou(cb), scores[b, :, c], per_class, iou, score)
            found += [(-s, len(found), c, cb[i]) for i, s in zip(picked, kept)]
        found.sort(key=lambda f: (f[0], f[1]))
        found = found[:size]
        out[3][b] = len(found)
        for k, (neg, _, c, box) in enumerate(found):
            out[0][b, k] = np.clip(box, 0, 1) if clip else box
            out[1][b, k], out[2][b, k] = -neg, c
    return out


def _combined(per_class, total, iou, score, pad_per_class=False, clip=True):
    def build(b, s):
        return list(tf.image.combined_non_max_suppression(
            b, s, per_class, total, iou, score, pad_per_class, clip))
    return build, lambda b, s: combined_ref(b, s, per_class, total, iou, score,
                                            pad_per_class, clip)


def _batch_boxes(batch, n, q):
    def make(rng, dt):
        corner = rng.rand(batch, n, q, 2) - 0.1
        return np.concatenate([corner, corner + rng.rand(batch, n, q, 2) * 0.5], -1).astype(dt)
    return make


def _row(name, pair, inputs, dtypes=NMS_TYPES):
    build, ref = pair
    return OpCase(name, build, ref, inputs, dtypes=dtypes, rtol=0, atol=0, grad=False)


CASES = [
    _row("nms_v3", _v3(20, 0.5, -np.inf), [_boxes(), _scores()]),
    _row("nms_v3_score_threshold", _v3(40, 0.3, 0.45), [_boxes(), _scores(decimals=3)]),
    _row("nms_v3_iou_0", _v3(40, 0.0, -np.inf), [_boxes(decimals=1), _scores()]),
    _row("nms_v3_iou_1", _v3(7, 1.0, -np.inf), [_boxes(decimals=1), _scores()]),
    _row("nms_v3_empty", _v3(5, 0.5, -np.inf),
         [lambda rng, dt: np.zeros((0, 4), dt), lambda rng, dt: np.zeros(0, dt)]),
    _row("nms_v3_max_0", _v3(0, 0.5, -np.inf), [_boxes(5), _scores(5)]),
    _row("nms_v5_hard", _v5(15, 0.6, 0.1, 0.0), [_boxes(), _scores(decimals=2)]),
    *[_row(f"nms_v5_soft_{sigma}", _v5(30, 1.0, 0.2, sigma), [_boxes(), _scores()])
      for sigma in (0.1, 0.5, 2.0)],
    _row("nms_v4_padded", _v4(30, 0.5, True), [_boxes(), _scores()], dtypes=(tf.float32,)),
    _row("nms_v4_unpadded", _v4(10, 0.4, False), [_boxes(), _scores()]),
    _row("nms_overlaps", _overlaps(12, 0.5, 0.2),
         [lambda rng, dt: np.round(rng.rand(30, 30), 1).astype(dt), _scores(30)],
         dtypes=(tf.float32,)),
    _row("combined_shared_boxes", _combined(4, 9, 0.5, 0.3),
         [_batch_boxes(2, 12, 1), lambda rng, dt: rng.rand(2, 12, 3).astype(dt)],
         dtypes=(tf.float32,)),
    _row("combined_per_class_boxes", _combined(3, 20, 0.4, -np.inf, True, False),
         [_batch_boxes(1, 10, 2), lambda rng, dt: rng.rand(1, 10, 2).astype(dt)],
         dtypes=(tf.float32,)),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


# Recorded from TensorFlow 2.21 (tf.compat.v1): near-duplicates, swapped corners, an empty
# box, equal scores.
BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                  [1, 10.1, 0, 11.1], [0, 100, 1, 101], [0, 0, 0, 1], [0.5, 0.5, 0.5, 0.5]],
                 F32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.95, 0.9], F32)


def test_matches_tensorflow():
    h = np.float16
    with tf.Graph().as_default():
        got = _run([
            tf.image.non_max_suppression(BOXES, SCORES, 6, 0.5),
            tf.image.non_max_suppression(BOXES, np.full(8, 0.5, F32), 8, 0.5),
            tf.image.non_max_suppression(BOXES, SCORES, 3, 0.5, 0.4),
            tf.image.non_max_suppression(BOXES.astype(h), SCORES.astype(h), 8, 0.8),
            *tf.image.non_max_suppression_with_scores(BOXES, SCORES, 8, 1.0, 0.2, 0.5),
            *tf.image.non_max_suppression_with_scores(
                BOXES.astype(h), SCORES.astype(h), 8, tf.constant(1.0, tf.float16),
                tf.constant(0.1, tf.float16), tf.constant(0.3, tf.float16)),
            tf.image.non_max_suppression_overlaps(np.abs(np.subtract.outer(SCORES, SCORES)),
                                                  SCORES, 5, 0.1)])
    expected = [[3, 6, 0, 7, 5], [0, 3, 5, 6, 7], [3, 6, 0], [3, 6, 0, 7, 5],
                [3, 6, 0, 7, 1, 5, 4], [0.95, 0.95, 0.9, 0.9, 0.38400355, 0.3, 0.2560026],
                [3, 6, 0, 7, 5, 1, 4], [0.95, 0.95, 0.9, 0.9, 0.3, 0.2458, 0.1652],
                [3, 6, 0, 7]]
    for g, e in zip(got, expected):
        if g.dtype.kind == "i":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_array_equal(g, np.array(e, g.dtype))
    assert got[7].dtype == np.float16


def test_combined_shapes_and_padding():
    rng = np.random.RandomState(3)
    boxes = _batch_boxes(2, 6, 1)(rng, F32)
    scores = rng.rand(2, 6, 2).astype(F32)
    with tf.Graph().as_default():
        out = tf.image.combined_non_max_suppression(boxes, scores, 2, 10, pad_per_class=True)
        assert [t.shape.as_list() for t in out] == [[2, 4, 4], [2, 4], [2, 4], [2]]
        assert out[0].op.type == "CombinedNonMaxSuppression"
        got = _run(out)
    for g, e in zip(got, combined_ref(boxes, scores, 2, 10, 0.5, -np.inf, True)):
        np.testing.assert_array_equal(g, e)


def test_combined_ties_match_tensorflow():
    """Equal scores within a class pop in the order of TF's score-only heap (recorded)."""
    rng = np.random.RandomState(7)
    corner = rng.rand(1, 12, 1, 2)
    boxes = np.round(np.concatenate([corner, corner + 0.3], -1), 2).astype(F32)
    scores = (np.round(rng.rand(1, 12, 2) * 3) / 4).astype(F32)
    with tf.Graph().as_default():
        got = _run(tf.image.combined_non_max_suppression(boxes, scores, 7, 12, 0.3, 0.1))
    np.testing.assert_array_equal(got[0][0, :, 0], np.array(
        [0.08, 0.68, 0.23, 0.98, 0.38, 0.44, 0.93, 0.29, 0.44, 0.6, 0.23, 0.5], F32))
    np.testing.assert_array_equal(got[1][0], [0.75] * 3 + [0.5] * 7 + [0.25] * 2)
    np.testing.assert_array_equal(got[2][0], [0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1])
    np.testing.assert_array_equal(got[3], [12])


def test_op_types_and_static_shapes():
    with tf.Graph().as_default():
        assert tf.image.non_max_suppression(BOXES, SCORES, 3).op.type == "NonMaxSuppressionV3"
        idx, kept = tf.image.non_max_suppression_with_scores(BOXES, SCORES, 3)
        assert idx.op.type == "NonMaxSuppressionV5" and kept.shape.as_list() == [None]
        idx, valid = tf.raw_ops.NonMaxSuppressionV4(
            boxes=BOXES, scores=SCORES, max_output_size=3, iou_threshold=0.5,
            score_threshold=float("-inf"), pad_to_max_output_size=True)
        assert idx.op.type == "NonMaxSuppressionV4" and idx.shape.as_list() == [3]
        assert valid.shape.as_list() == []
        assert tf.gradients(tf.image.non_max_suppression_with_scores(
            tf.constant(BOXES), tf.constant(SCORES), 3)[1], []) == []


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.image.non_max_suppression(np.ones((3, 5), F32), np.ones(3, F32), 2),
     ValueError, "Dimension must be 4 but is 5"),
    (lambda: tf.image.non_max_suppression(np.ones((3, 4), F32), np.ones(2, F32), 2),
     ValueError, "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.image.non_max_suppression(np.ones((3, 4), F32), np.ones(3, F32), [2]),
     ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: tf.image.non_max_suppression(np.ones(4, F32), np.ones(3, F32), 2),
     ValueError, "Shape must be rank 2 but is rank 1"),
    (lambda: tf.image.non_max_suppression(np.ones((3, 4)), np.ones(3), 2), TypeError,
     "float64"),
    (lambda: tf.image.non_max_suppression_overlaps(np.ones((3, 2), F32), np.ones(3, F32), 2),
     ValueError, "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.image.non_max_suppression_padded(np.ones((2, 3, 4), F32),
                                                 np.ones((2, 3), F32), 2),
     ValueError, "must be True for batched input"),
    (lambda: tf.image.combined_non_max_suppression(np.ones((1, 3, 2, 4), F32),
                                                   np.ones((1, 3, 3), F32), 2, 4),
     ValueError, "third dimension of boxes must be either 1 or equal"),
    (lambda: tf.image.combined_non_max_suppression(np.ones((1, 3, 1, 4), F32),
                                                   np.ones((1, 3, 3), F32), 2, 0),
     ValueError, "max_total_size should be > 0"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


_B, _S = np.ones((3, 4), F32), np.ones(3, F32)


@pytest.mark.parametrize("build,feed,match", [
    (lambda p: tf.image.non_max_suppression(_B, _S, p), np.int32(-1),
     "output size must be non-negative"),
    (lambda p: tf.image.non_max_suppression(_B, _S, 2, p), F32(1.5),
     r"iou_threshold must be in \[0, 1\]"),
    (lambda p: tf.image.non_max_suppression(p, _S, 2), np.ones((3, 5), F32),
     r"boxes must have 4 columns \(Dimension must be 4 but is 5\)"),
    (lambda p: tf.image.non_max_suppression(_B, p, 2), np.ones(2, F32),
     r"scores has incompatible shape \(Dimensions must be equal, but are 3 and 2\)"),
    (lambda p: tf.image.non_max_suppression_with_scores(_B, _S, 2, soft_nms_sigma=p)[0],
     F32(-1), "soft_nms_sigma_val must be >= 0"),
    (lambda p: tf.image.non_max_suppression_overlaps(p, _S, 2), np.ones((3, 4), F32),
     r"overlaps must be square\[3,4\]"),
    (lambda p: tf.image.combined_non_max_suppression(np.ones((1, 3, 1, 4), F32),
                                                     np.ones((1, 3, 2), F32), p, 4)[0],
     np.int32(0), "max_size_per_class must be positive"),
    (lambda p: tf.image.combined_non_max_suppression(p, np.ones((1, 3, 2), F32), 2, 4)[0],
     np.ones((1, 3, 3, 4), F32), "third dimension of boxes must be either 1 or num classes"),
])
def test_runtime_errors(build, feed, match):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.as_dtype(feed.dtype))
        out = build(holder)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(out, {holder: feed})
