"""Counting and summary statistics of tensor values: DenseBincount (tf.bincount),
UniqueWithCounts, ListDiff (tf.setdiff1d), HistogramFixedWidth, and the composites
tf.histogram_fixed_width_bins, tf.math.reduce_variance and tf.math.reduce_std.

None of the four ops has a gradient in TensorFlow; they are declared not differentiable. Their
outputs are counts or data-dependent selections, so their shapes are mostly known only at run
time: DenseBincount's and HistogramFixedWidth's lengths come from the statically known value of
`size` / `nbins` when the graph fixes it (tf.bincount of a constant has a static length, as in
TensorFlow). Kernels live in `kernels/counting.py`.
"""
from __future__ import annotations

import collections

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import reshape, shape
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import clip_by_value, greater, truediv
from tensorweave.ops.math_unary_ops import cast, floor

__all__ = ["bincount", "histogram_fixed_width", "histogram_fixed_width_bins", "setdiff1d",
           "unique_with_counts"]
# reduce_variance and reduce_std are tf.math-only names: tensorweave/math.py exports them.

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX
_BINCOUNT_WEIGHTS = frozenset({_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64})


def _dims(shape: TensorShape):
    return shape._dims


def _static_int(ctx, i: int):
    value = ctx.static_value(i)
    return None if value is None or value.ndim != 0 else int(value)


# --- DenseBincount ----------------------------------------------------------------------------
def _dense_bincount_shape(ctx):
    """[size] for a scalar or vector input, [rows, size] for a matrix (size unknown while its
    value is)."""
    dims = _dims(ctx.input_shape(0))
    if dims is not None and len(dims) > 2:
        raise ValueError(f"Shape must be at most rank 2 but is rank {len(dims)}")
    dims_with_rank(_dims(ctx.input_shape(1)), 0)
    size = _static_int(ctx, 1)
    if size is not None and size < 0:
        raise ValueError(f"size ({size}) must be non-negative")
    if dims is not None and len(dims) <= 1:
        return TensorShape([size])
    if dims is not None and len(dims) == 2:
        return TensorShape([dims[0], size])
    return _ts.unknown_shape()


DenseBincount = define_op(
    "DenseBincount", inputs=["input: Tidx", "size: Tidx", "weights: T"], outputs=["output: T"],
    attrs=[TypeAttr("Tidx", _INDEX), TypeAttr("T", _BINCOUNT_WEIGHTS),
           Attr("binary_output", "bool", False)],
    shape_fn=_dense_bincount_shape, not_differentiable=True)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32):
    """Counts the occurrences of each value in an integer array (TF1's tf.bincount).

    The result has length max(arr) + 1 (0 for an empty `arr`), at least `minlength` and at most
    `maxlength`; values >= `maxlength` are not counted.

    Args:
      arr: A Tensor of non-negative values; non-integer values are cast to int32. Counted
        over all its elements.
      weights: None, or a Tensor shaped like `arr` (int32, int64, float32 or float64): bin i
        then holds the sum of the weights of the elements equal to i.
      minlength: If given, the result is padded with zeros to at least this length.
      maxlength: If given, the result has at most this length.
      dtype: The result's dtype when `weights` is None (default int32).

    Returns:
      A 1-D Tensor of weights' dtype (or `dtype`), built in a name scope "bincount".

    Raises:
      TypeError: if `arr` is an integer type other than int32/int64, or the weights' dtype is
        not accepted.
      ValueError: if `maxlength` is statically negative.
      InvalidArgumentError: at run time, if `arr` has negative values or `weights` has a
        different shape.
    """
    from tensorweave.ops.array_ops import reshape, size
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import greater, maximum, minimum
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_max
    with name_scope("bincount"):
        arr = convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        if not arr.dtype.is_integer:
            arr = cast(arr, _dtypes.int32)
        nonempty = greater(size(arr), 0)
        output_size = cast(nonempty, arr.dtype.base_dtype) * (reduce_max(arr) + 1)
        if minlength is not None:
            minlength = convert_to_tensor(minlength, name="minlength", dtype=arr.dtype)
            output_size = maximum(minlength, output_size)
        if maxlength is not None:
            maxlength = convert_to_tensor(maxlength, name="maxlength", dtype=arr.dtype)
            output_size = minimum(maxlength, output_size)
        if weights is not None:
            weights = reshape(weights, [-1])
        arr = reshape(arr, [-1])
        if weights is None:
            weights = constant([], dtype=dtype)
        return apply_op(DenseBincount, [arr, output_size, weights])


# --- UniqueWithCounts -------------------------------------------------------------------------
def _unique_with_counts_shape(ctx):
    """TensorFlow checks no rank here (the kernel does): idx is shaped like x."""
    vector = TensorShape([None])
    return [vector, ctx.input_shape(0), vector]


UniqueWithCounts = define_op(
    "UniqueWithCounts", inputs=["x: T"], outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=[TypeAttr("T"), TypeAttr("out_idx", _INDEX, default=_dtypes.int32)],
    shape_fn=_unique_with_counts_shape, not_differentiable=True)

UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """The distinct elements of a 1-D tensor, each element's index among them, and how often
    each occurs (TF1's tf.unique_with_counts).

    Args:
      x: A 1-D Tensor (not complex).
      out_idx: int32 or int64, the dtype of `idx` and `count`.
      name: A name for the operation (default "UniqueWithCounts").

    Returns:
      A namedtuple (y, idx, count): `y` the distinct values in order of first occurrence,
      `idx` such that x == y[idx], `count[i]` the number of elements equal to y[i]. Each NaN is
      distinct.

    Raises:
      InvalidArgumentError: at run time, if `x` is not 1-D.
    """
    y, idx, count = apply_op(UniqueWithCounts, [x], {"out_idx": out_idx}, name=name)
    return UniqueWithCountsOutput(y, idx, count)


# --- ListDiff -----------------------------------------------------------------------------------
def _list_diff_shape(ctx):
    for i in (0, 1):
        dims_with_rank(_dims(ctx.input_shape(i)), 1)
    return [TensorShape([None]), TensorShape([None])]


ListDiff = define_op(
    "ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
    attrs=[TypeAttr("T"), TypeAttr("out_idx", _INDEX, default=_dtypes.int32)],
    shape_fn=_list_diff_shape, not_differentiable=True)

ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """The elements of `x` that are not in `y`, in order, with their positions in `x`
    (TF1's tf.setdiff1d).

    Args:
      x: A 1-D Tensor of a real numeric or string type.
      y: A 1-D Tensor of the same type: the values to remove.
      index_dtype: int32 or int64, the dtype of `idx`.
      name: A name for the operation (default "ListDiff").

    Returns:
      A namedtuple (out, idx) with out == x[idx]; duplicates in `x` are kept.

    Raises:
      TypeError: if x and y have different dtypes.
      ValueError: if x or y is statically not 1-D.
    """
    out, idx = apply_op(ListDiff, [x, y], {"out_idx": index_dtype}, name=name)
    return ListDiffOutput(out, idx)


# --- HistogramFixedWidth --------------------------------------------------------------------------
def _histogram_shape(ctx):
    (two,) = dims_with_rank(_dims(ctx.input_shape(1)), 1)
    if two is not None and two != 2:
        raise ValueError(f"Dimension must be 2 but is {two}")
    dims_with_rank(_dims(ctx.input_shape(2)), 0)
    nbins = _static_int(ctx, 2)
    if nbins is None:
        return _ts.unknown_shape(rank=1)
    if nbins <= 0:
        raise ValueError(f"Requires nbins > 0: {nbins}")
    return TensorShape([nbins])


HistogramFixedWidth = define_op(
    "HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"],
    outputs=["out: dtype"],
    attrs=[TypeAttr("T", {_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64}),
           TypeAttr("dtype", _INDEX, default=_dtypes.int32)],
    shape_fn=_histogram_shape, not_differentiable=True)


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """Counts `values` into `nbins` equal-width bins spanning `value_range`.

    Values below value_range[0] go to the first bin, values at or above value_range[1] to the
    last.

    Args:
      values: A numeric Tensor (int32, int64, float32 or float64) of any shape.
      value_range: A Tensor of the same dtype, [low, high] with low < high.
      nbins: A scalar int32: the number of bins (positive).
      dtype: int32 or int64, the dtype of the result.
      name: A name scope (default "histogram_fixed_width"; the op takes the scope's name).

    Returns:
      A 1-D Tensor of `nbins` counts.

    Raises:
      ValueError: if `value_range` is statically not a pair or `nbins` not positive.
      InvalidArgumentError: at run time, for NaN values, low >= high or nbins <= 0.
    """
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype.base_dtype,
                                        name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        return apply_op(HistogramFixedWidth, [values, value_range, nbins], {"dtype": dtype},
                        name=scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """Bins `values`: the index of the equal-width histogram bin each value falls into.

    Built from other ops as TensorFlow builds it, with its results: bin floor(nbins * (v - lo)
    / (hi - lo)) clipped to [0, nbins - 1], so values below the range land in bin 0 and values
    at or above its end in the last bin. As there, the arithmetic runs in the values' dtype
    (integer values fail: their quotient is float64), `value_range` must have that dtype, a
    range with lo >= hi is not checked, and NaN values become the int32 cast of NaN.

    Args:
      values: A floating Tensor of any shape.
      value_range: A [2] Tensor of the same dtype, [lo, hi].
      nbins: A scalar int32 Tensor: the number of bins.
      dtype: Ignored, as in TensorFlow: the result is always int32.
      name: A name scope (default "histogram_fixed_width_bins").

    Returns:
      An int32 Tensor shaped like `values`.

    Raises:
      TypeError: if the dtypes of `values` and `value_range` differ, or the values are
        integers.
      InvalidArgumentError: at run time, if `nbins` is not positive.
    """
    del dtype   # TensorFlow's function accepts it and always returns int32
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        values_shape = shape(values)
        values = reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        check = Assert(greater(nbins, 0), [f"nbins {nbins} must > 0"])
        nbins = with_dependencies([check], nbins)
        nbins_float = cast(nbins, values.dtype)
        scaled_values = truediv(values - value_range[0], value_range[1] - value_range[0],
                                name="scaled_values")
        indices = floor(nbins_float * scaled_values, name="indices")
        indices = cast(clip_by_value(indices, 0, nbins_float - 1), _dtypes.int32)
        return reshape(indices, values_shape)

# --- moments ------------------------------------------------------------------------------------
_MOMENT_DOC = """Computes the {what} of elements across dimensions (tf.math.reduce_{name}).
{extra}
    Args:
      input_tensor: A floating or complex Tensor.
      axis: The dimensions to reduce (int, list or Tensor); None reduces all of them.
      keepdims: If true, retains reduced dimensions with length 1.
      name: A name scope (default "reduce_{name}").

    Returns:
      The reduced Tensor: of input_tensor's dtype, or its real dtype for complex input.

    Raises:
      TypeError: for integer input.
    """


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    from tensorweave.ops.math_unary_ops import abs as _abs
    from tensorweave.ops.math_unary_ops import square
    from tensorweave.ops.reduction_ops import reduce_mean
    with name_scope(name or "reduce_variance"):
        input_tensor = convert_to_tensor(input_tensor)
        means = reduce_mean(input_tensor, axis=axis, keepdims=True)
        if means.dtype.is_integer:
            raise TypeError(f"Input must be either real or complex. Received integer type "
                            f"{means.dtype}.")
        diff = input_tensor - means
        # |d|^2 for complex d (TensorFlow: real(conj(d) * d)), d^2 for real d.
        squared_deviations = square(_abs(diff) if diff.dtype.is_complex else diff)
        return reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    from tensorweave.ops.math_unary_ops import sqrt
    with name_scope(name or "reduce_std"):
        input_tensor = convert_to_tensor(input_tensor)
        return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


reduce_variance.__doc__ = _MOMENT_DOC.format(
    what="variance", name="variance", extra="\n    The mean of the squared deviations from the "
    "mean (the population variance); for\n    complex input, of their squared magnitudes.\n")
reduce_std.__doc__ = _MOMENT_DOC.format(what="standard deviation", name="std",
                                        extra="\n    sqrt(reduce_variance(...)).\n")
