"""Kernels of the non-max-suppression ops (ops/image_nms_ops.py): NonMaxSuppressionV3, V4, V5,
NonMaxSuppressionWithOverlaps and CombinedNonMaxSuppression.

Greedy suppression is sequential by nature, so the selection runs as one compiled loop
(`kernels/jit.py`) that replays TensorFlow's CPU kernel step by step: candidates above the
score threshold enter a binary max-heap in index order, each popped candidate is compared with
the boxes selected since it was last looked at, and (soft-NMS) re-enters the heap with its
decayed score. The heap is libstdc++'s `push_heap` / `pop_heap`, so the pop order of equal
scores is TensorFlow's even where its comparator leaves ties open (CombinedNonMaxSuppression
orders by score alone). IoU is TF's float32 formula; for half inputs every score operation is
rounded to float16 as Eigen's half arithmetic does.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.registry import kernel

_F32 = np.float32


@loop_helper
def _round_half(x):
    """x rounded to the nearest float16 value (ties to even), kept as float32."""
    a = abs(float(x))
    if a != a or a == math.inf:
        return x
    if a >= 65520.0:
        return _F32(math.copysign(math.inf, x))
    quantum = 2.0 ** -24
    if a >= 2.0 ** -14:
        quantum = 2.0 ** (math.frexp(a)[1] - 11)
    return _F32(math.copysign(np.rint(a / quantum) * quantum, x))


@loop_helper
def _in_t(x, half):
    """x in the kernel's dtype T: float32, or float16 held in a float32."""
    return _round_half(x) if half else x


@loop_helper
def _iou(boxes, i, j):
    """TensorFlow's IOU: corners sorted per box, 0 when either box has no area."""
    ymin_i, ymax_i = min(boxes[i, 0], boxes[i, 2]), max(boxes[i, 0], boxes[i, 2])
    xmin_i, xmax_i = min(boxes[i, 1], boxes[i, 3]), max(boxes[i, 1], boxes[i, 3])
    ymin_j, ymax_j = min(boxes[j, 0], boxes[j, 2]), max(boxes[j, 0], boxes[j, 2])
    xmin_j, xmax_j = min(boxes[j, 1], boxes[j, 3]), max(boxes[j, 1], boxes[j, 3])
    area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i)
    area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j)
    if area_i <= 0 or area_j <= 0:
        return _F32(0)
    inter = max(min(ymax_i, ymax_j) - max(ymin_i, ymin_j), _F32(0)) * \
        max(min(xmax_i, xmax_j) - max(xmin_i, xmin_j), _F32(0))
    return inter / (area_i + area_j - inter)


@loop_helper
def _before(score_a, index_a, score_b, index_b, by_index):
    """The heap's `less`: a pops after b (lower score; on a tie, with `by_index`, the higher
    index, as TF's DoNonMaxSuppressionOp orders candidates)."""
    return score_a < score_b or (by_index and score_a == score_b and index_a > index_b)


@loop_helper
def _sift_up(h_score, h_index, h_begin, hole, score, index, begin, by_index):
    """Moves (score, index, begin) up from `hole` to its place (libstdc++'s __push_heap)."""
    parent = (hole - 1) // 2
    while hole > 0 and _before(h_score[parent], h_index[parent], score, index, by_index):
        h_score[hole], h_index[hole], h_begin[hole] = \
            h_score[parent], h_index[parent], h_begin[parent]
        hole = parent
        parent = (hole - 1) // 2
    h_score[hole], h_index[hole], h_begin[hole] = score, index, begin


@loop_helper
def _push(h_score, h_index, h_begin, size, score, index, begin, by_index):
    """libstdc++'s push_heap of (score, index, begin) onto a heap of `size` entries."""
    _sift_up(h_score, h_index, h_begin, size, score, index, begin, by_index)
    return size + 1


@loop_helper
def _pop(h_score, h_index, h_begin, size, by_index):
    """libstdc++'s pop_heap: the last entry sifts down from the root's hole (the right child
    wins ties), then up again. Returns the new size; the popped entry is left at [size]."""
    size -= 1
    score, index, begin = h_score[size], h_index[size], h_begin[size]
    h_score[size], h_index[size], h_begin[size] = h_score[0], h_index[0], h_begin[0]
    hole, child = 0, 0
    while child < (size - 1) // 2:
        child = 2 * (child + 1)
        if _before(h_score[child], h_index[child], h_score[child - 1], h_index[child - 1],
                   by_index):
            child -= 1
        h_score[hole], h_index[hole], h_begin[hole] = h_score[child], h_index[child], \
            h_begin[child]
        hole = child
    if size % 2 == 0 and child == (size - 2) // 2 and size > 0:
        child = 2 * (child + 1)
        h_score[hole], h_index[hole], h_begin[hole] = h_score[child - 1], \
            h_index[child - 1], h_begin[child - 1]
        hole = child - 1
    _sift_up(h_score, h_index, h_begin, hole, score, index, begin, by_index)
    return size


def _suppress_loop(boxes, overlaps, scores, max_out, iou_threshold, score_threshold, scale,
                   soft, half, by_index, out_index, out_score):
    """TF's DoNonMaxSuppressionOp (DoNMSPerClass when not `by_index`); returns the number of
    selected boxes, written to out_index / out_score. Similarity is the IoU of `boxes`, or
    `overlaps[candidate, selected]` when `boxes` has no rows."""
    n = scores.shape[0]
    h_score = np.empty(n, np.float32)
    h_index = np.empty(n, np.int64)
    h_begin = np.empty(n, np.int64)
    size = 0
    for i in range(n):
        if scores[i] > score_threshold:
            size = _push(h_score, h_index, h_begin, size, scores[i], i, 0, by_index)
    count = 0
    while count < max_out and size > 0:
        size = _pop(h_score, h_index, h_begin, size, by_index)
        score, index, begin = h_score[size], h_index[size], h_begin[size]
        original = score
        hard = False
        for j in range(count - 1, begin - 1, -1):
            sim = overlaps[index, out_index[j]] if boxes.shape[0] == 0 else \
                _iou(boxes, index, out_index[j])
            sim = _in_t(sim, half)
            if not soft and sim > iou_threshold:
                hard = True
                break
            if soft:
                weight = _in_t(np.exp(_in_t(_in_t(scale * sim, half) * sim, half)), half)
                score = _in_t(score * weight, half)
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            out_index[count] = index
            out_score[count] = score
            count += 1
        elif score > score_threshold:
            size = _push(h_score, h_index, h_begin, size, score, index, count, by_index)
    return count


def _scalar(value, name: str, rank_note: bool = False):
    """A scalar input's value; TF's "must be 0-D" InvalidArgumentError otherwise."""
    if np.ndim(value):
        note = f" (Shape must be rank 0 but is rank {np.ndim(value)})" if rank_note else ""
        raise invalid_argument(f"{name} must be 0-D, got shape {dims_text(np.shape(value))}{note}")
    return value[()] if isinstance(value, np.ndarray) else value


def _check_boxes(boxes, scores) -> None:
    """TF's ParseAndCheckBoxSizes and CheckScoreSizes."""
    if boxes.ndim != 2:
        raise invalid_argument(f"boxes must be 2-D{dims_text(boxes.shape)} (Shape must be rank 2 "
                               f"but is rank {boxes.ndim})")
    if boxes.shape[1] != 4:
        raise invalid_argument(f"boxes must have 4 columns (Dimension must be 4 but is "
                               f"{boxes.shape[1]})")
    _check_scores(scores, boxes.shape[0])


def _check_scores(scores, num_boxes: int) -> None:
    if scores.ndim != 1:
        raise invalid_argument(f"scores must be 1-D{dims_text(scores.shape)} (Shape must be rank 1 "
                               f"but is rank {scores.ndim})")
    if scores.shape[0] != num_boxes:
        raise invalid_argument(f"scores has incompatible shape (Dimensions must be equal, but are "
                               f"{num_boxes} and {scores.shape[0]})")


def _iou_threshold(value, dtype):
    threshold = dtype.type(value)
    if not (threshold >= 0 and threshold <= 1):
        raise invalid_argument("iou_threshold must be in [0, 1]")
    return threshold


def select(boxes, overlaps, scores, max_output_size, iou_threshold, score_threshold,
           soft_nms_sigma=0.0, by_index=True):
    """(indices int32, scores in the scores' dtype) that TF's greedy NMS selects. Thresholds
    and sigma are already in the kernel's dtype T (float32 or float16)."""
    max_out = int(max_output_size)
    if max_out < 0:
        raise invalid_argument("output size must be non-negative")
    t = scores.dtype.type
    half = scores.dtype == np.float16
    soft = bool(soft_nms_sigma > 0)
    scale = t(-0.5) / t(soft_nms_sigma) if soft else t(0)
    capacity = min(max_out, scores.shape[0])
    out_index = np.zeros(capacity, np.int64)
    out_score = np.zeros(capacity, np.float32)
    count = compiled(_suppress_loop)(
        np.ascontiguousarray(boxes, np.float32).reshape(-1, 4),
        np.ascontiguousarray(overlaps, np.float32), scores.astype(np.float32),
        max_out, _F32(iou_threshold), _F32(score_threshold), _F32(scale), soft, half, by_index,
        out_index, out_score)
    return out_index[:count].astype(np.int32), out_score[:count].astype(scores.dtype)


_NO_OVERLAPS = np.zeros((0, 0), np.float32)


def _thresholds(dtype, iou_threshold, score_threshold, rank_note=False):
    return (_iou_threshold(_scalar(iou_threshold, "iou_threshold", rank_note), dtype),
            dtype.type(_scalar(score_threshold, "score_threshold")))


@kernel("NonMaxSuppressionV3", dtypes=(np.float16, np.float32))
def nms_v3(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold):
    max_out = _scalar(max_output_size, "max_output_size", rank_note=True)
    iou, score = _thresholds(scores.dtype, iou_threshold, score_threshold, rank_note=True)
    _check_boxes(boxes, scores)
    return select(boxes, _NO_OVERLAPS, scores, max_out, iou, score)[0]


def _padded(indices, count_to: int, pad: bool):
    """TF's `pad_to_max_output_size`: zeros appended up to max_output_size."""
    if not pad:
        return indices
    return np.concatenate([indices, np.zeros(count_to - len(indices), indices.dtype)])


@kernel("NonMaxSuppressionV4", dtypes=(np.float16, np.float32))
def _nms_v4(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold):
    max_out = _scalar(max_output_size, "max_output_size")
    iou, score = _thresholds(scores.dtype, iou_threshold, score_threshold)
    _check_boxes(boxes, scores)
    indices, _ = select(boxes, _NO_OVERLAPS, scores, max_out, iou, score)
    pad = ctx.attrs["pad_to_max_output_size"]
    return _padded(indices, int(max_out), pad), np.int32(len(indices))


@kernel("NonMaxSuppressionV5", dtypes=(np.float16, np.float32))
def _nms_v5(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold, sigma):
    max_out = _scalar(max_output_size, "max_output_size")
    iou, score = _thresholds(scores.dtype, iou_threshold, score_threshold)
    sigma = scores.dtype.type(_scalar(sigma, "soft_nms_sigma"))
    if not sigma >= 0:
        raise invalid_argument("soft_nms_sigma_val must be >= 0")
    _check_boxes(boxes, scores)
    indices, kept = select(boxes, _NO_OVERLAPS, scores, max_out, iou, score, sigma)
    pad = ctx.attrs["pad_to_max_output_size"]
    return (_padded(indices, int(max_out), pad), _padded(kept, int(max_out), pad),
            np.int32(len(indices)))


@kernel("NonMaxSuppressionWithOverlaps")
def _nms_overlaps(ctx, overlaps, scores, max_output_size, overlap_threshold, score_threshold):
    max_out = _scalar(max_output_size, "max_output_size")
    threshold = _F32(_scalar(overlap_threshold, "overlap_threshold"))
    score = _F32(_scalar(score_threshold, "score_threshold"))
    if overlaps.ndim != 2:
        raise invalid_argument(f"overlaps must be 2-D{dims_text(overlaps.shape)}")
    if overlaps.shape[1] != overlaps.shape[0]:
        raise invalid_argument(f"overlaps must be square{dims_text(overlaps.shape)}")
    _check_scores(scores, overlaps.shape[0])
    empty = np.zeros((0, 4), np.float32)
    return select(empty, overlaps, scores, max_out, threshold, score)[0]


def _check_combined(boxes, scores) -> None:
    """TF's shape checks of CombinedNonMaxSuppression, in its order."""
    if boxes.ndim != 4:
        raise invalid_argument(f"boxes must be 4-D [batch, num_boxes, q, 4], got shape "
                               f"{dims_text(boxes.shape)}")
    if scores.ndim != 3:
        raise invalid_argument(f"scores must be 3-D [batch, num_boxes, num_classes], got shape "
                               f"{dims_text(scores.shape)}")
    if boxes.shape[2] not in (1, scores.shape[2]):
        raise invalid_argument("third dimension of boxes must be either 1 or num classes")
    if boxes.shape[3] != 4:
        raise invalid_argument("boxes must have 4 columns")
    if scores.shape[1] != boxes.shape[1]:
        raise invalid_argument("scores has incompatible shape")
    if boxes.shape[0] != scores.shape[0]:
        raise invalid_argument("boxes and scores must have same batch size")


@kernel("CombinedNonMaxSuppression")
def _combined_nms(ctx, boxes, scores, max_per_class, max_total, iou_threshold,
                  score_threshold):
    """Greedy NMS per (image, class) with TF's score-only heap, then each image's picks
    ordered by score (stably) and cut to `max_total_size`."""
    _check_combined(boxes, scores)
    per_class = int(_scalar(max_per_class, "max_size_per_class"))
    if per_class <= 0:
        raise invalid_argument("max_size_per_class must be positive")
    total = int(_scalar(max_total, "max_total_size"))
    if total <= 0:
        raise invalid_argument("max_total_size must be > 0")
    iou = _F32(_scalar(iou_threshold, "iou_threshold"))
    score = _F32(_scalar(score_threshold, "score_threshold"))
    if not (iou >= 0 and iou <= 1):
        raise invalid_argument("iou_threshold must be in [0, 1]")
    batch, num_boxes, q = boxes.shape[:3]
    classes = scores.shape[2]
    size_per_class = min(per_class, num_boxes)
    pad_per_class = ctx.attrs["pad_per_class"]
    out_size = min(total, per_class * classes) if pad_per_class else total
    # Per image: slot (class * size_per_class + k) holds the class's k-th pick, as in TF.
    slot_score = np.full((batch, classes * size_per_class), -np.inf, np.float32)
    slot_box = np.zeros((batch, classes * size_per_class), np.int64)
    for b in range(batch):
        for c in range(classes):
            picked, kept = select(boxes[b, :, c if q > 1 else 0], _NO_OVERLAPS, scores[b, :, c],
                                  size_per_class, iou, score, by_index=False)
            start = c * size_per_class
            slot_score[b, start:start + len(picked)] = kept
            slot_box[b, start:start + len(picked)] = picked
    order = np.argsort(-slot_score, axis=1, kind="stable")
    valid = np.minimum((slot_score > -np.inf).sum(axis=1), out_size)
    keep = min(out_size, order.shape[1])
    order = order[:, :keep]
    taken = np.arange(keep) < valid[:, None]
    rows = np.arange(batch)[:, None]
    cls = order // max(size_per_class, 1)
    picked_boxes = boxes[rows, slot_box[rows, order], np.where(q > 1, cls, 0)]
    if ctx.attrs["clip_boxes"]:
        picked_boxes = np.clip(picked_boxes, 0, 1)
    out_boxes = np.zeros((batch, out_size, 4), np.float32)
    out_scores = np.zeros((batch, out_size), np.float32)
    out_classes = np.zeros((batch, out_size), np.float32)
    out_boxes[:, :keep] = np.where(taken[..., None], picked_boxes, 0)
    out_scores[:, :keep] = np.where(taken, slot_score[rows, order], 0)
    out_classes[:, :keep] = np.where(taken, cls, 0)
    return out_boxes, out_scores, out_classes, valid.astype(np.int32)
