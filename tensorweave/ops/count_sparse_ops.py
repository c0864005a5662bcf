"""Bin counts as SparseTensors: DenseCountSparseOutput, SparseCountSparseOutput, tf.sparse.bincount.

With axis=0 (or None) the wrapper flattens first: a dense input is reshaped to a vector, a
SparseTensor contributes only its values, and either way DenseCountSparseOutput counts them.
With axis=-1 a dense input goes to DenseCountSparseOutput as it is (the kernel counts each row
of a matrix) and a SparseTensor to SparseCountSparseOutput (counts per first-dimension index).
Output i of both ops is (indices [n, rank], values [n], dense_shape [rank]); only rank is known
statically. TensorFlow registers no gradient for either op, so tf.gradients through them raises
LookupError here too. RaggedCountSparseOutput is left out: tensorweave has no RaggedTensor.
Kernels: kernels/count_sparse.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import check_ops
from tensorweave.ops.array_ops import identity, reshape
from tensorweave.ops.constant_op import constant

__all__: list[str] = []   # tf.sparse.bincount only: tensorweave/sparse exports it

TensorShape = _ts.TensorShape
_COUNT_TYPES = frozenset({_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64})
_COUNT_ATTRS = [TypeAttr("T", _dtypes.INDEX), Attr("minlength", "int", -1, minimum=-1),
                Attr("maxlength", "int", -1, minimum=-1), Attr("binary_output", "bool"),
                TypeAttr("output_type", _COUNT_TYPES)]
_COUNT_OUTPUTS = ["output_indices: int64", "output_values: output_type",
                  "output_dense_shape: int64"]


def _count_outputs(rank) -> list[TensorShape]:
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _dense_count_shape(ctx):
    """TF's DenseCountSparseOutputShapeFn: weights merged into values unless known empty."""
    values, weights = ctx.input_shape(0)._dims, ctx.input_shape(1)._dims
    empty = weights is not None and any(d == 0 for d in weights)
    out = values if empty else merge_dims(weights, values)
    return _count_outputs(None if out is None else len(out))


def _sparse_count_shape(ctx):
    """TF's SparseCountSparseOutputShapeFn: the rank is the width of the indices."""
    _, rank = dims_with_rank(ctx.input_shape(0)._dims, 2)
    return _count_outputs(rank)


DenseCountSparseOutput = define_op(
    "DenseCountSparseOutput", inputs=["values: T", "weights: output_type"],
    outputs=_COUNT_OUTPUTS, attrs=_COUNT_ATTRS, shape_fn=_dense_count_shape,
    doc="Counts the values of a vector, or of each row of a matrix, as a SparseTensor.")

SparseCountSparseOutput = define_op(
    "SparseCountSparseOutput",
    inputs=["indices: int64", "values: T", "dense_shape: int64", "weights: output_type"],
    outputs=_COUNT_OUTPUTS, attrs=_COUNT_ATTRS, shape_fn=_sparse_count_shape,
    doc="Counts the values of a SparseTensor per first-dimension index, as a SparseTensor.")


def _sparse_weights(values: SparseTensor, weights, dtype):
    """TF's validate_sparse_weights: the weights' values, after run-time checks that they share
    `values`' dense shape and indices (skipped for the very same tensors)."""
    if weights is None:
        return constant([], dtype=dtype)
    if not isinstance(weights, SparseTensor):
        raise ValueError("Argument `weights` must be a SparseTensor if `values` is a "
                         f"SparseTensor. Received weights={weights} of type: "
                         f"{type(weights).__name__}")
    checks = []
    if weights.dense_shape is not values.dense_shape:
        checks.append(check_ops.assert_equal(
            weights.dense_shape, values.dense_shape,
            message="'weights' and 'values' must have the same dense shape."))
    if weights.indices is not values.indices:
        checks.append(check_ops.assert_equal(
            weights.indices, values.indices,
            message="'weights' and 'values' must have the same indices."))
    if not checks:
        return weights.values
    with control_dependencies(checks):
        return identity(weights.values)


def _int_attr(name: str, value) -> int:
    """minlength / maxlength as the op's int attr (-1 for None); TF's message otherwise."""
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"Expected int for argument '{name}' not {value!r}.")
    return int(value)


def sparse_bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
                    binary_output=False, name=None):
    """Counts the number of times an integer value appears in a tensor (tf.sparse.bincount).

    Entry [i, j] of the result (or [j] when everything is flattened) is the number of times the
    value j appears in slice i of `values` (the sum of the matching weights, or 1 with
    `binary_output`). Entries are sorted by i, then j; zero counts are absent.

    Args:
      values: An int32 or int64 Tensor or SparseTensor. With axis=-1 a Tensor must be 1-D or
        2-D (rows counted separately); a SparseTensor is counted per first-dimension index.
      weights: None, or a Tensor shaped like `values` (a SparseTensor with the same indices and
        dense shape for a SparseTensor `values`) of int32, int64, float32 or float64: each value
        then adds its weight instead of 1.
      axis: 0 or None to count over all elements, or -1 to count each slice [i, :].
      minlength: If given (a Python int), the output's last dimension is at least this.
      maxlength: If given (a Python int), values >= maxlength are skipped and the output's last
        dimension is exactly maxlength.
      binary_output: If true, count 1 for a value however often it appears.
      name: A name scope (default "count").

    Returns:
      A SparseTensor of weights' dtype (values' dtype without weights), of dense shape
      values.shape[:axis] + [N]: N is maxlength if given, else max(max value + 1, minlength),
      where the max value of an empty input counts as 0.

    Raises:
      ValueError: if both `weights` and `binary_output` are given, `axis` is not 0, -1 or None,
        `weights` is not a SparseTensor for SparseTensor `values`, or minlength / maxlength is
        below -1.
      TypeError: for values or weights of another dtype.
      InvalidArgumentError: at run time, for negative values, mismatched weights, or input of
        an unsupported rank.
    """
    with name_scope(name, "count", [values, weights]):
        if not isinstance(values, SparseTensor):
            values = convert_to_tensor(values, name="values")
        if weights is not None and not isinstance(weights, SparseTensor):
            weights = convert_to_tensor(weights, name="weights")
        if weights is not None and binary_output:
            raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. "
                             "Please specify only one.")
        if axis is None:
            axis = 0
        if axis not in (0, -1):
            raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                             "currently supported.")
        attrs = {"minlength": _int_attr("minlength", minlength),
                 "maxlength": _int_attr("maxlength", maxlength),
                 "binary_output": binary_output}
        if axis == 0:
            if isinstance(values, SparseTensor):
                if weights is not None:
                    weights = _sparse_weights(values, weights, None)
                values = values.values
            else:
                if isinstance(weights, SparseTensor):   # as TF's reshape of it fails
                    raise TypeError(f"Failed to convert elements of {weights} to Tensor.")
                if weights is not None:
                    weights = reshape(weights, [-1])
                values = reshape(values, [-1])
        if isinstance(values, SparseTensor):
            weights = _sparse_weights(values, weights, values.values.dtype)
            out = apply_op(SparseCountSparseOutput,
                           [values.indices, values.values, values.dense_shape, weights], attrs)
        else:
            if weights is None:
                weights = constant([], dtype=values.dtype)
            elif isinstance(weights, SparseTensor):
                raise ValueError("Argument `weights` must be a tf.Tensor if `values` is a "
                                 f"tf.Tensor. Received weights={weights} of type: "
                                 f"{type(weights).__name__}")
            out = apply_op(DenseCountSparseOutput, [values, weights], attrs)
        return SparseTensor(*out)
