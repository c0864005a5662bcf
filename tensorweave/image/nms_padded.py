"""tf.image.non_max_suppression_padded: TensorFlow 2.21's tiled, batched selection.

TF1's wrapper does not run an NMS op but `non_max_suppression_padded_v2`, built from plain
ops, and its quirks are observable, so this follows it step by step:
  * scores <= score_threshold are zeroed and so are their boxes' coordinates (the scores
    must be float32);
  * corners are ordered for all boxes by looking at the first box of the first image only;
  * boxes are sorted by descending score, padded with zero boxes to whole tiles of
    `tile_size`, and a box counts as selected while any of its coordinates is > 0 (a
    suppressed box is zeroed; a box with no positive coordinate is never selected);
  * a tile is first suppressed by the earlier tiles' kept boxes (IoU >= threshold), then by
    itself, iterating until an iteration removes at most `iou_threshold` of summed IoU;
  * IoU has 1e-8 added to its denominator.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_creation_ops import zeros, zeros_like
from tensorweave.ops.array_index_ops import gather, where
from tensorweave.ops.array_join_ops import concat, split
from tensorweave.ops.array_ops import expand_dims, reshape, shape, transpose
from tensorweave.ops.array_slicing_ops import slice as _slice
from tensorweave.ops.array_tile_pad_ops import pad, tile
from tensorweave.ops.cond import cond
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import (
    equal,
    greater,
    less,
    less_equal,
    logical_and,
    maximum,
    minimum,
)
from tensorweave.ops.math_unary_ops import cast, ceil
from tensorweave.ops.reduction_ops import (
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_min,
    reduce_sum,
    top_k,
)
from tensorweave.ops.sort_ops import argsort
from tensorweave.ops.while_loop import while_loop

__all__ = ["non_max_suppression_padded"]

_EPSILON = 1e-8
_F32 = _dtypes.float32
_I32 = _dtypes.int32


def _iou(a, b):
    """IoU `[batch, n, m]` of boxes a `[batch, n, 4]` and b `[batch, m, 4]` (min corners
    first), with 1e-8 added to the union as TF does."""
    ay0, ax0, ay1, ax1 = split(a, 4, axis=2)
    by0, bx0, by1, bx1 = [transpose(t, [0, 2, 1]) for t in split(b, 4, axis=2)]
    i_area = (maximum(minimum(ax1, bx1) - maximum(ax0, bx0), 0)
              * maximum(minimum(ay1, by1) - maximum(ay0, by0), 0))
    union = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - i_area + _EPSILON
    return i_area / union


def _self_suppressed(iou, threshold):
    """Which boxes of a tile its own kept boxes suppress, from the masked IoU `[batch, t, t]`
    (row i suppresses column j > i): rows of boxes suppressed by an unsuppressed box are
    cleared until an iteration removes at most `threshold` of summed IoU."""
    def body(iou, _, total):
        free = expand_dims(cast(less(reduce_max(iou, 1), threshold), _F32), 2)
        rows_kept = expand_dims(cast(less(reduce_max(free * iou, 1), threshold), _F32), 2)
        iou = rows_kept * iou
        new_total = reduce_sum(iou, [1, 2])
        return iou, reduce_any(greater(total - new_total, threshold)), new_total

    iou, _, _ = while_loop(lambda iou, go, total: go, body,
                           [iou, constant(True), reduce_sum(iou, [1, 2])])
    return greater(reduce_sum(iou, 1), 0)


def _suppress_tile(boxes, threshold, selected, idx, tile_size):
    """Zeroes the suppressed boxes of tile `idx` in `boxes` and counts its kept boxes."""
    batch, num_tiles = shape(boxes)[0], shape(boxes)[1] // tile_size
    box_tile = _slice(boxes, [0, idx * tile_size, 0], [batch, tile_size, 4])

    def by_earlier(j, box_tile):
        earlier = _slice(boxes, [0, j * tile_size, 0], [batch, tile_size, 4])
        kept = reduce_all(less(_iou(earlier, box_tile), threshold), [1])
        return j + 1, expand_dims(cast(kept, _F32), 2) * box_tile

    _, box_tile = while_loop(lambda j, _: less(j, idx), by_earlier, [constant(0), box_tile])
    iou = _iou(box_tile, box_tile)
    positions = _range(tile_size)
    later = greater(reshape(positions, [1, -1]), reshape(positions, [-1, 1]))
    iou = iou * cast(logical_and(expand_dims(later, 0), iou >= threshold), _F32)
    box_tile = box_tile * expand_dims(1.0 - cast(_self_suppressed(iou, threshold), _F32), 2)
    here = reshape(cast(equal(_range(num_tiles), idx), _F32), [1, -1, 1, 1])
    boxes = (tile(expand_dims(box_tile, 1), [1, num_tiles, 1, 1]) * here
             + reshape(boxes, [batch, num_tiles, tile_size, 4]) * (1 - here))
    selected += reduce_sum(cast(reduce_any(greater(box_tile, 0), [2]), _I32), [1])
    return reshape(boxes, [batch, -1, 4]), threshold, selected, idx + 1


def _canonical(boxes):
    """Orders the corners of every box the way the first box of the first image needs."""
    y1, x1, y2, x2 = split(boxes, 4, axis=2)
    y_min, y_max = cond(less_equal(y1[0, 0, 0], y2[0, 0, 0]),
                        lambda: (y1, y2), lambda: (y2, y1))
    x_min, x_max = cond(less_equal(x1[0, 0, 0], x2[0, 0, 0]),
                        lambda: (x1, x2), lambda: (x2, x1))
    return concat([y_min, x_min, y_max, x_max], axis=2)


def _padded_v2(boxes, scores, max_output_size, iou_threshold, score_threshold, sorted_input,
               canonicalized_coordinates, tile_size):
    """Selected indices `[batch, max_output_size]` (zero past the valid ones) and the valid
    counts of `batch_dims`, for boxes `[..., num_boxes, 4]`."""
    batch_dims, num_boxes = shape(boxes)[:-2], shape(boxes)[-2]
    boxes = reshape(boxes, [-1, num_boxes, 4])
    scores = reshape(scores, [-1, num_boxes])
    batch = shape(boxes)[0]
    # TF traces the threshold as a float32 tensor, so it always filters (a NaN score too)
    # and only float32 scores are accepted.
    with name_scope(None, "filter_by_score"):
        mask = cast(greater(scores, convert_to_tensor(score_threshold, _F32)), scores.dtype)
        scores *= mask
        boxes *= expand_dims(cast(mask, boxes.dtype), 2)
    if not canonicalized_coordinates:
        with name_scope(None, "canonicalize_coordinates"):
            boxes = _canonical(boxes)
    if not sorted_input:
        with name_scope(None, "sort_scores_and_boxes"):
            order = argsort(scores, axis=1, direction="DESCENDING")
            boxes = gather(boxes, order, axis=1, batch_dims=1)
    tiles = cast(ceil(cast(maximum(num_boxes, max_output_size), _F32) / float(tile_size)), _I32)
    padded_size = tiles * tile_size
    boxes = pad(cast(boxes, _F32), [[0, 0], [0, padded_size - num_boxes], [0, 0]])
    threshold = convert_to_tensor(iou_threshold, _F32)

    def more(boxes, threshold, selected, idx):
        return logical_and(less(reduce_min(selected), max_output_size), less(idx, tiles))

    boxes, _, selected, _ = while_loop(
        more, lambda *state: _suppress_tile(*state, tile_size),
        [boxes, threshold, zeros([batch], _I32), constant(0)],
        shape_invariants=[TensorShape([None, None, 4]), TensorShape([]), TensorShape([None]),
                          TensorShape([])])
    num_valid = minimum(selected, max_output_size)
    # The first max_output_size kept positions, in sorted order.
    kept = cast(reduce_any(greater(boxes, 0), [2]), _I32)
    idx = padded_size - top_k(kept * expand_dims(_range(padded_size, 0, -1), 0),
                              max_output_size)[0]
    idx = minimum(idx, num_boxes - 1)
    if not sorted_input:
        offsets = expand_dims(_range(batch) * num_boxes, 1)
        idx = reshape(gather(reshape(order, [-1]), reshape(idx + offsets, [-1])), [batch, -1])
    valid = less(expand_dims(_range(max_output_size), 0), expand_dims(num_valid, 1))
    idx = where(valid, idx, zeros_like(idx))
    return idx, reshape(num_valid, batch_dims)


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """Non-max suppression with a fixed-size result and the number of valid entries, for
    one image `[num_boxes, 4]` or a batch `[..., num_boxes, 4]` (TF1's
    tf.image.non_max_suppression_padded; TensorFlow's tiled algorithm, see the module doc).

    Args:
      boxes: a float Tensor `[..., num_boxes, 4]`.
      scores: a Tensor `[..., num_boxes]`.
      max_output_size: a scalar int, the most boxes to select.
      iou_threshold: boxes overlapping a kept box by this much or more are dropped.
      score_threshold: boxes scoring this or less are never selected.
      pad_to_max_output_size: pad the indices with zeros to `max_output_size` (required for
        batched boxes).
      name: a name scope (default "non_max_suppression_padded").
      sorted_input: the scores are already in descending order.
      canonicalized_coordinates: the corners are already `[y_min, x_min, y_max, x_max]`.
      tile_size: how many boxes are suppressed together.

    Returns:
      (selected_indices int32 `[M]` unpadded or `[..., max_output_size]` padded,
      valid_outputs int32 of the batch shape).

    Raises:
      ValueError: for batched boxes without `pad_to_max_output_size`.
    """
    with name_scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        scores = convert_to_tensor(scores, name="scores")
        rank = boxes.shape.ndims
        if not pad_to_max_output_size and rank is not None and rank > 2:
            raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must "
                             "be True for batched input")
        idx, num_valid = _padded_v2(boxes, scores, max_output_size, iou_threshold,
                                    score_threshold, sorted_input, canonicalized_coordinates,
                                    tile_size)
        if not pad_to_max_output_size:
            return idx[0, :num_valid], num_valid
        batch_dims = concat([shape(boxes)[:-2], expand_dims(max_output_size, 0)], 0)
        return reshape(idx, batch_dims), num_valid
