"""EditDistance: Levenshtein distance between the sequences of two SparseTensors.

Not differentiable (as in TensorFlow). The kernel lives in `kernels/edit_distance.py`.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue

__all__ = ["edit_distance"]


def _edit_distance_shape(ctx):
    """max(hypothesis_shape, truth_shape) without the last dimension, when both are known."""
    for i, rank in enumerate((2, 1, 1, 2, 1, 1)):
        dims_with_rank(ctx.input_shape(i)._dims, rank)
    hyp, truth = ctx.static_value(2), ctx.static_value(5)
    if hyp is None or truth is None:
        return _ts.unknown_shape()
    for what, value in (("Hypothesis", hyp), ("Truth", truth)):
        if value.size < 2:
            raise ValueError(f"Input {what} SparseTensors must have rank at least 2, but "
                             f"{what.lower()}_shape rank is: {value.size}")
    if hyp.size != truth.size:
        raise ValueError("Num elements of hypothesis_shape does not match truth_shape: "
                         f"{hyp.size} vs. {truth.size}")
    return _ts.TensorShape([max(int(h), int(t)) for h, t in zip(hyp[:-1], truth[:-1])])


EditDistance = define_op(
    "EditDistance",
    inputs=["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
            "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
    outputs=["output: float32"],
    attrs=[Attr("normalize", "bool", True), TypeAttr("T")],
    shape_fn=_edit_distance_shape, not_differentiable=True)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Computes the Levenshtein distance between sequences (TF1's tf.edit_distance).

    The sequences are the values of each SparseTensor sharing all index coordinates but the
    last. Where only the truth has a sequence the distance is its length (1.0 normalized);
    where only the hypothesis has one it is its length (inf normalized).

    Args:
      hypothesis: a SparseTensor (or SparseTensorValue) of hypothesis sequences.
      truth: a SparseTensor (or SparseTensorValue) of reference sequences, of the same rank
        and dtype.
      normalize: divide each distance by the length of its truth sequence.
      name: the op name (default "edit_distance").

    Returns:
      A float32 Tensor of rank R - 1: the distances, shaped by the larger of the two dense
      shapes without their last dimension.

    Raises:
      TypeError: if either argument is not a SparseTensor.
      InvalidArgumentError: at run time for inconsistent shapes or ranks below 2.
    """
    sparse = []
    for what, value in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not isinstance(value, (SparseTensor, SparseTensorValue)):
            raise TypeError(f"{what} must be a SparseTensor.")
        sparse.append(SparseTensor.from_value(value))
    hypothesis, truth = sparse
    return apply_op(EditDistance, [hypothesis.indices, hypothesis.values,
                                   hypothesis.dense_shape, truth.indices, truth.values,
                                   truth.dense_shape], {"normalize": normalize}, name=name)
