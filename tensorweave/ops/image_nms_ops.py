"""Non-max suppression: NonMaxSuppressionV3, V4, V5, NonMaxSuppressionWithOverlaps and
CombinedNonMaxSuppression, with TF1's `tf.image.non_max_suppression*` and
`combined_non_max_suppression` wrappers. V4 has none: like TensorFlow, TF1's
`non_max_suppression_padded` runs a tiled composite instead (image/nms_padded.py).

Each op greedily keeps the highest-scoring box and drops the boxes that overlap it by more
than a threshold (V5 can decay their scores instead: soft-NMS). The selections are indices,
so none of these ops is differentiable (TF registers no gradient). Kernels:
`kernels/image_nms.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dim
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__: list[str] = []

_d = _dtypes
_NMS_TYPES = (_d.float16, _d.float32)


def _dims(ctx, i: int, rank: int):
    return dims_with_rank(ctx.input_shape(i)._dims, rank)


def _check_dim(value, expected: int) -> None:
    if value is not None and value != expected:
        raise ValueError(f"Dimension must be {expected} but is {value}")


def _scalar_dim(ctx, i: int):
    """A size given by scalar input i (TF's MakeDimForScalarInput): None when not static."""
    value = ctx.static_value(i)
    if value is None:
        return None
    if int(value) < 0:
        raise ValueError(f"Dimension size, given by scalar input {i}, must be non-negative but "
                         f"is {int(value)}")
    return int(value)


def nms_shape(ctx, scalars: int = 3):
    """boxes [n, 4], scores [n], then `scalars` scalar inputs; indices [?] (or padded to
    max_output_size), plus scores and the valid count for V4 / V5."""
    boxes, scores = _dims(ctx, 0, 2), _dims(ctx, 1, 1)
    for i in range(2, 2 + scalars):
        _dims(ctx, i, 0)
    merge_dim(boxes[0], scores[0])
    _check_dim(boxes[1], 4)
    if ctx.op_type == "NonMaxSuppressionV3":
        return _ts.TensorShape([None])
    size = _scalar_dim(ctx, 2) if ctx.attr("pad_to_max_output_size") else None
    outputs = [_ts.TensorShape([size])] * (2 if ctx.op_type == "NonMaxSuppressionV5" else 1)
    return outputs + [_ts.TensorShape([])]


def _overlaps_shape(ctx):
    overlaps, scores = _dims(ctx, 0, 2), _dims(ctx, 1, 1)
    for i in range(2, 5):
        _dims(ctx, i, 0)
    merge_dim(merge_dim(overlaps[0], scores[0]), overlaps[1])
    return _ts.TensorShape([None])


_THRESHOLD_TYPE = TypeAttr("T_threshold", _NMS_TYPES, _d.float32)
_PAD = Attr("pad_to_max_output_size", "bool", False)
_BOX_INPUTS = ["boxes: T", "scores: T", "max_output_size: int32"]
NonMaxSuppressionV3 = define_op(
    "NonMaxSuppressionV3",
    inputs=_BOX_INPUTS + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
    outputs=["selected_indices: int32"],
    attrs=[TypeAttr("T", _NMS_TYPES, _d.float32), _THRESHOLD_TYPE],
    shape_fn=nms_shape, not_differentiable=True)
NonMaxSuppressionV4 = define_op(
    "NonMaxSuppressionV4",
    inputs=_BOX_INPUTS + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
    outputs=["selected_indices: int32", "valid_outputs: int32"],
    attrs=[TypeAttr("T", _NMS_TYPES, _d.float32), _THRESHOLD_TYPE, _PAD],
    shape_fn=nms_shape, not_differentiable=True)
NonMaxSuppressionV5 = define_op(
    "NonMaxSuppressionV5",
    inputs=_BOX_INPUTS + ["iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"],
    outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
    attrs=[TypeAttr("T", _NMS_TYPES, _d.float32), _PAD],
    shape_fn=lambda ctx: nms_shape(ctx, scalars=4), not_differentiable=True)
NonMaxSuppressionWithOverlaps = define_op(
    "NonMaxSuppressionWithOverlaps",
    inputs=["overlaps: float32", "scores: float32", "max_output_size: int32",
            "overlap_threshold: float32", "score_threshold: float32"],
    outputs=["selected_indices: int32"], shape_fn=_overlaps_shape, not_differentiable=True)


def _combined_shape(ctx):
    """[batch, size, 4], [batch, size] twice and [batch]: size is max_total_size, or with
    pad_per_class min(max_total_size, max_size_per_class * classes)."""
    boxes, scores = _dims(ctx, 0, 4), _dims(ctx, 1, 3)
    for i in range(2, 6):
        _dims(ctx, i, 0)
    batch = merge_dim(boxes[0], scores[0])
    merge_dim(boxes[1], scores[1])
    _check_dim(boxes[3], 4)
    q, classes = boxes[2], scores[2]
    if q is not None and classes is not None and q not in (1, classes):
        raise ValueError("third dimension of boxes must be either 1 or equal to the third "
                         "dimension of scores")
    total = _scalar_dim(ctx, 3)
    if total is not None and total <= 0:
        raise ValueError("max_total_size should be > 0 ")
    size = total
    if ctx.attr("pad_per_class"):
        per_class = _scalar_dim(ctx, 2)
        if per_class is not None and per_class <= 0:
            raise ValueError("max_output_size_per_class must be > 0 ")
        size = None if None in (per_class, classes, total) else \
            min(total, per_class * classes)
    return [_ts.TensorShape([batch, size, 4]), _ts.TensorShape([batch, size]),
            _ts.TensorShape([batch, size]), _ts.TensorShape([batch])]


CombinedNonMaxSuppression = define_op(
    "CombinedNonMaxSuppression",
    inputs=["boxes: float32", "scores: float32", "max_output_size_per_class: int32",
            "max_total_size: int32", "iou_threshold: float32", "score_threshold: float32"],
    outputs=["nmsed_boxes: float32", "nmsed_scores: float32", "nmsed_classes: float32",
             "valid_detections: int32"],
    attrs=[Attr("pad_per_class", "bool", False), Attr("clip_boxes", "bool", True)],
    shape_fn=_combined_shape, not_differentiable=True)


def _thresholds(*pairs, dtype=None):
    """Python thresholds as named tensors (TF converts them before choosing the op)."""
    return [convert_to_tensor(value, dtype=dtype, name=name) for value, name in pairs]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Greedily selects boxes in descending score order, dropping every box whose IoU with
    an already selected box exceeds `iou_threshold` (TF1's tf.image.non_max_suppression).

    Boxes are `[y1, x1, y2, x2]` with either corner first; equal scores are taken in index
    order. A box of zero area overlaps nothing.

    Args:
      boxes: a float16/float32 Tensor `[num_boxes, 4]`.
      scores: a Tensor `[num_boxes]` of boxes' dtype.
      max_output_size: a scalar int32, the most boxes to select.
      iou_threshold: boxes overlapping a selected box by more than this are dropped.
      score_threshold: boxes scoring this or less are never selected.
      name: a name scope (default "non_max_suppression").

    Returns:
      An int32 Tensor `[M]` of selected indices into `boxes`, M <= max_output_size.

    Raises:
      ValueError: if the shapes are statically wrong.
      InvalidArgumentError: (at run time) for bad shapes, an iou_threshold outside [0, 1] or
        a negative max_output_size.
    """
    with name_scope(name, "non_max_suppression"):
        iou, score = _thresholds((iou_threshold, "iou_threshold"),
                                 (score_threshold, "score_threshold"))
        return apply_op(NonMaxSuppressionV3, [boxes, scores, max_output_size, iou, score])


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """Non-max suppression that also returns the selected scores, with optional soft-NMS
    (TF1's tf.image.non_max_suppression_with_scores).

    With `soft_nms_sigma > 0` an overlapping box is not dropped: its score is multiplied by
    exp(-iou^2 / (2 sigma)) (Bodla et al.) and it competes again; `iou_threshold` is then
    unused. A box whose score falls to `score_threshold` or below is dropped.

    Args:
      boxes: a float16/float32 Tensor `[num_boxes, 4]`.
      scores: a Tensor `[num_boxes]` of boxes' dtype.
      max_output_size: a scalar int32, the most boxes to select.
      iou_threshold: hard-NMS overlap threshold in [0, 1].
      score_threshold: the score a box must exceed.
      soft_nms_sigma: the soft-NMS sigma; 0 for hard NMS.
      name: a name scope (default "non_max_suppression_with_scores").

    Returns:
      (selected_indices int32 `[M]`, selected_scores `[M]`): the scores after decay.

    Raises:
      ValueError: if the shapes are statically wrong.
      TypeError: if the thresholds' dtype is not the boxes' dtype.
      InvalidArgumentError: (at run time) for bad shapes or thresholds, a negative sigma or
        max_output_size.
    """
    with name_scope(name, "non_max_suppression_with_scores"):
        iou, score, sigma = _thresholds((iou_threshold, "iou_threshold"),
                                        (score_threshold, "score_threshold"),
                                        (soft_nms_sigma, "soft_nms_sigma"))
        indices, kept, _ = apply_op(NonMaxSuppressionV5, [
            boxes, scores, max_output_size, iou, score, sigma],
            {"pad_to_max_output_size": False})
        return indices, kept


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Non-max suppression on a given overlap matrix instead of box IoUs (TF1's
    tf.image.non_max_suppression_overlaps).

    Args:
      overlaps: a float32 Tensor `[num_boxes, num_boxes]`; `overlaps[i, j]` is how much
        candidate i overlaps selected box j.
      scores: a float32 Tensor `[num_boxes]`.
      max_output_size: a scalar int32, the most boxes to select.
      overlap_threshold: boxes overlapping a selected box by more than this are dropped.
      score_threshold: boxes scoring this or less are never selected.
      name: a name scope (default "non_max_suppression_overlaps").

    Returns:
      An int32 Tensor `[M]` of selected indices.

    Raises:
      ValueError: if the shapes are statically wrong.
      InvalidArgumentError: (at run time) for bad shapes or a negative max_output_size.
    """
    with name_scope(name, "non_max_suppression_overlaps"):
        threshold, score = _thresholds((overlap_threshold, "overlap_threshold"),
                                       (score_threshold, "score_threshold"))
        return apply_op(NonMaxSuppressionWithOverlaps,
                        [overlaps, scores, max_output_size, threshold, score])


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """Non-max suppression per image and class, then the best `max_total_size` detections of
    each image (TF1's tf.image.combined_non_max_suppression).

    Args:
      boxes: a float32 Tensor `[batch, num_boxes, q, 4]`, q = 1 (shared boxes) or classes.
      scores: a float32 Tensor `[batch, num_boxes, num_classes]`.
      max_output_size_per_class: a scalar int32 > 0, the most boxes kept per class.
      max_total_size: a scalar int32 > 0, the most boxes kept per image.
      iou_threshold: overlap threshold in [0, 1].
      score_threshold: the score a box must exceed.
      pad_per_class: pad to min(max_total_size, max_output_size_per_class * classes)
        instead of max_total_size.
      clip_boxes: clip the returned coordinates to [0, 1].
      name: a name scope (default "combined_non_max_suppression").

    Returns:
      (nmsed_boxes `[batch, size, 4]`, nmsed_scores `[batch, size]`, nmsed_classes
      `[batch, size]` float32, valid_detections int32 `[batch]`), zero past the valid ones.

    Raises:
      ValueError: if the shapes are statically wrong.
      InvalidArgumentError: (at run time) for bad shapes, sizes or thresholds.
    """
    with name_scope(name, "combined_non_max_suppression"):
        iou, score = _thresholds((iou_threshold, "iou_threshold"),
                                 (score_threshold, "score_threshold"), dtype=_d.float32)
        return tuple(apply_op(CombinedNonMaxSuppression, [
            boxes, scores, max_output_size_per_class, max_total_size, iou, score],
            {"pad_per_class": pad_per_class, "clip_boxes": clip_boxes}))
