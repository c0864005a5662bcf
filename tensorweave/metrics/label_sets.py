"""Per-row set arithmetic of the @k metrics, built from dense element-wise comparisons.

TF's precision/recall@k count, for each row of the leading dimensions, |predictions ∩ labels|,
|predictions \\ labels| and |labels \\ predictions| with its set ops. Here a row is a pair of
dense vectors with validity masks (dense labels are all valid, every value, -1 included, as in
TF; sparse labels are valid where an entry is present): comparing every prediction with every
label gives membership, and comparing each entry with the earlier ones of its own row finds
first occurrences, so repeated ids count once, as in a set.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_ops import expand_dims, shape
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import equal, less, logical_and
from tensorweave.ops.math_unary_ops import cast, logical_not
from tensorweave.ops.reduction_ops import reduce_all, reduce_any, reduce_sum
from tensorweave.ops.sparse_ops import sparse_to_dense

_I64 = _dtypes.int64


def dense_label_sets(labels):
    """Labels as (values, valid): a dense int Tensor and a bool mask of the same shape.

    Args:
      labels: A Tensor, SparseTensor or SparseTensorValue of class ids; a sparse tensor's rows
        hold only its present entries.
    """
    if isinstance(labels, (SparseTensor, SparseTensorValue)):
        labels = SparseTensor.from_value(labels)
        values = sparse_to_dense(labels.indices, labels.dense_shape, labels.values, -1)
        valid = sparse_to_dense(labels.indices, labels.dense_shape, True, False)
        return values, valid
    labels = convert_to_tensor(labels)
    return labels, ones_like(labels, dtype=_dtypes.bool)


def _earlier(x):
    """[n, n] bool, true at [i, j] where j < i, n the length of x's last dimension."""
    positions = _range(shape(x)[-1])
    return less(expand_dims(positions, 0), expand_dims(positions, 1))


def _first_occurrences(x, valid):
    """Valid entries of x not equal to a valid entry earlier in their row."""
    same = logical_and(equal(expand_dims(x, -1), expand_dims(x, -2)), expand_dims(valid, -2))
    repeated = reduce_any(logical_and(same, _earlier(x)), -1)
    return logical_and(valid, logical_not(repeated))


def _count(mask):
    """The number of true entries of each row, as float64."""
    return cast(reduce_sum(cast(mask, _dtypes.int32), -1), _dtypes.float64)


def distinct_count(values, valid):
    """The number of distinct valid entries of each row (float64): TF's set_size."""
    return _count(_first_occurrences(values, valid))


def _check_rows(predictions_idx, values):
    """TF's set-op shape checks: rank >= 2 and equal leading dimensions. Static shapes that
    show otherwise raise a ValueError; where they cannot tell, `predictions_idx` comes back
    behind a run-time check (InvalidArgumentError "Mismatched shapes")."""
    p_shape, l_shape = predictions_idx.shape, values.shape
    for s in (p_shape, l_shape):
        if s.ndims is not None and s.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    if p_shape.ndims is not None and l_shape.ndims is not None:
        p_lead, l_lead = p_shape[:-1], l_shape[:-1]
        if p_lead.is_fully_defined() and l_lead.is_fully_defined():
            p_dims, l_dims = p_lead.as_list(), l_lead.as_list()
            for i, (a, b) in enumerate(zip(p_dims, l_dims)):
                if a != b:
                    raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{a} and {b}. Shapes are {p_dims} and {l_dims}.")
            return predictions_idx
    p_lead, l_lead = shape(predictions_idx)[:-1], shape(values)[:-1]
    check = Assert(reduce_all(equal(p_lead, l_lead)), ["Mismatched shapes", p_lead, "vs",
                                                       l_lead])
    return with_dependencies([check], predictions_idx)


class RowSets:
    """The rows of `predictions_idx` and of the labels as sets, ready to count.

    Args:
      predictions_idx: int64 [D1, ..., DN, k] predicted class ids.
      labels: (values, valid) from `dense_label_sets`, values of rank N + 1 and dtype int64.
      class_id: If given, both sets keep only this id.

    Raises:
      TypeError: if the label values are not int64 (TF's set ops need one dtype).
      ValueError: if static shapes show ranks below 2 or different leading dimensions.
    """

    def __init__(self, predictions_idx, labels, class_id=None):
        values, valid = labels
        if values.dtype.base_dtype != _I64:
            raise TypeError(f"Types don't match, <dtype: 'int64'> vs "
                            f"<dtype: '{values.dtype.base_dtype.name}'>.")
        predictions_idx = _check_rows(predictions_idx, values)
        predicted = ones_like(predictions_idx, dtype=_dtypes.bool)
        if class_id is not None:
            predicted = equal(predictions_idx, class_id)
            valid = logical_and(valid, equal(values, class_id))
        # hit[..., i, j]: prediction i equals label j, both kept.
        hit = logical_and(equal(expand_dims(predictions_idx, -1), expand_dims(values, -2)),
                          logical_and(expand_dims(predicted, -1), expand_dims(valid, -2)))
        self._predicted_labeled = reduce_any(hit, -1)
        self._labeled_predicted = reduce_any(hit, -2)
        self._new_predictions = _first_occurrences(predictions_idx, predicted)
        self._new_labels = _first_occurrences(values, valid)

    def intersection_size(self):
        """|predictions ∩ labels| of each row (float64)."""
        return _count(logical_and(self._new_predictions, self._predicted_labeled))

    def predictions_only_size(self):
        """|predictions \\ labels| of each row (float64)."""
        return _count(logical_and(self._new_predictions,
                                  logical_not(self._predicted_labeled)))

    def labels_only_size(self):
        """|labels \\ predictions| of each row (float64)."""
        return _count(logical_and(self._new_labels, logical_not(self._labeled_predicted)))

