"""l2_normalize, moments, batch_normalization and the statistics helpers around them
(sufficient_statistics, normalize_moments, weighted_moments, zero_fraction), built like TF1's.

None of these is an op of its own in TensorFlow: they are short formulas over reductions and
elementwise ops, so their gradients come from those ops. `moments` computes float16 statistics
in float32 (float16's range is too small for sums of squares), as TensorFlow does.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.array_index_ops import gather
from tensorweave.ops.array_ops import shape, squeeze, stop_gradient
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import (
    add,
    div_no_nan,
    equal,
    maximum,
    multiply,
    squared_difference,
    subtract,
)
from tensorweave.ops.math_unary_ops import cast, reciprocal, rsqrt, square
from tensorweave.ops.reduction_ops import (
    deprecated_argument_lookup,
    reduce_mean,
    reduce_prod,
    reduce_sum,
)

__all__ = ["l2_normalize", "moments", "batch_normalization", "sufficient_statistics",
           "normalize_moments", "weighted_moments", "zero_fraction"]


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """Normalizes along `axis` by the L2 norm: x / sqrt(max(sum(x ** 2, axis), epsilon)).

    Args:
      x: A floating Tensor.
      axis: The dimension or dimensions to normalize over (default: all).
      epsilon: A lower bound on the squared norm, so a zero vector stays zero.
      name: A name for the operation (default "l2_normalize").
      dim: Deprecated alias of `axis`.

    Returns:
      A Tensor of the same shape as `x`.
    """
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        inv_norm = rsqrt(maximum(square_sum, epsilon))
        return multiply(x, inv_norm, name=scope)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Calculates the mean and (population) variance of `x` over `axes`.

    The variance is mean(squared_difference(x, stop_gradient(mean))): the stop_gradient does
    not change the gradient, since the variance's derivative with respect to the mean is zero.

    Args:
      x: A Tensor.
      axes: The dimensions along which to compute mean and variance (list of ints).
      shift: Unused (kept for TF1 compatibility).
      name: A name for the operation (default scope "moments").
      keep_dims: Deprecated alias of `keepdims`.
      keepdims: Keep the reduced dimensions with length 1 (default False).

    Returns:
      Two Tensors (mean, variance) of `x`'s dtype.
    """
    del shift
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = bool(keepdims) if keepdims is not None else False
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        half = x.dtype.base_dtype == _dtypes.float16
        y = cast(x, _dtypes.float32) if half else x
        mean = reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduce_mean(squared_difference(y, stop_gradient(mean)), axes, keepdims=True,
                               name="variance")
        if not keepdims:
            mean = squeeze(mean, axes)
            variance = squeeze(variance, axes)
        if half:
            return cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """Batch normalization: scale * (x - mean) / sqrt(variance + epsilon) + offset.

    Computed like TensorFlow as x * inv + (offset - mean * inv) with
    inv = scale * rsqrt(variance + epsilon), so the per-channel terms are computed once.

    Args:
      x: Input Tensor of arbitrary dimensionality.
      mean: A mean Tensor, broadcastable to `x`.
      variance: A variance Tensor, broadcastable to `x`.
      offset: An offset (beta) Tensor or None.
      scale: A scale (gamma) Tensor or None.
      variance_epsilon: A small float added to the variance to avoid dividing by zero.
      name: A name for the operation (default scope "batchnorm").

    Returns:
      The normalized, scaled, offset tensor.
    """
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        dtype = x.dtype.base_dtype
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * cast(inv, dtype) + cast(shift, dtype)


def _keepdims(keepdims, keep_dims) -> bool:
    value = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return bool(value) if value is not None else False


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """Calculates the sufficient statistics for the mean and variance of `x` over `axes`.

    Args:
      x: A Tensor.
      axes: The dimensions along which to compute the statistics (list of ints).
      shift: A Tensor subtracted before summing (for numerical stability), or None.
      keep_dims: Deprecated alias of `keepdims`.
      name: A name for the operation (default scope "sufficient_statistics").
      keepdims: Keep the reduced dimensions with length 1.

    Returns:
      (count, mean_ss, var_ss, shift): the number of elements summed (a constant when the
      shape fixes it), sum(x - shift), sum((x - shift) ** 2) and the shift itself.
    """
    keepdims = _keepdims(keepdims, keep_dims)
    axes = list(axes)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        sizes = [dims[a] for a in axes] if dims is not None else [None]
        if all(d is not None for d in sizes):
            count = constant(float(np.prod(sizes)), dtype=x.dtype.base_dtype)
        else:
            picked = gather(cast(shape(x), x.dtype.base_dtype), axes)
            count = reduce_prod(picked, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = subtract(x, shift)
            v_ss = squared_difference(x, shift)
        else:
            m_ss, v_ss = x, square(x)
        m_ss = reduce_sum(m_ss, axes, keepdims=keepdims, name="mean_ss")
        v_ss = reduce_sum(v_ss, axes, keepdims=keepdims, name="var_ss")
        return count, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Turns sufficient statistics into a mean and a (population) variance.

    Args:
      counts: The number of elements summed.
      mean_ss: The sum of (shifted) elements.
      variance_ss: The sum of squared (shifted) elements.
      shift: The shift used, or None.
      name: A name for the operation (default scope "normalize").

    Returns:
      (mean, variance): mean_ss / counts (+ shift) and variance_ss / counts - shifted_mean ** 2.
    """
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = multiply(mean_ss, divisor, name="shifted_mean")
            mean = add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = subtract(multiply(variance_ss, divisor), square(shifted_mean),
                            name="variance")
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """The weighted mean and variance of `x` over `axes`, weights broadcast against `x`.

    Args:
      x: A Tensor.
      axes: The dimensions along which to compute mean and variance (list of ints).
      frequency_weights: A Tensor of weights broadcastable to `x`.
      name: A name for the operation (default scope "weighted_moments").
      keep_dims: Deprecated alias of `keepdims`.
      keepdims: Keep the reduced dimensions with length 1.

    Returns:
      (weighted_mean, weighted_variance), 0 where the weights sum to 0; float16 inputs are
      computed in float32.
    """
    keepdims = _keepdims(keepdims, keep_dims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype.base_dtype == _dtypes.float16
        if half:
            x = cast(x, _dtypes.float32)
        weights = cast(weights, x.dtype.base_dtype)
        weighted_sum = reduce_sum(weights * x, axes, keepdims=True, name="weighted_input_sum")
        total_weight = reduce_sum(add(weights, zeros_like(x)), axes, keepdims=True,
                                  name="sum_of_weights")
        mean = div_no_nan(weighted_sum, total_weight)
        distsq = reduce_sum(weights * squared_difference(x, mean), axes, keepdims=True,
                            name="weighted_distsq")
        variance = div_no_nan(distsq, total_weight)
        if not keepdims:
            mean = squeeze(mean, axes)
            variance = squeeze(variance, axes)
        if half:
            mean, variance = cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
        return mean, variance


def zero_fraction(value, name=None):
    """Returns the fraction of zeros in `value`, as a float32 scalar (NaN for an empty value).

    Args:
      value: A numeric Tensor.
      name: A name for the operation (default scope "zero_fraction").

    Returns:
      A float32 scalar named "fraction" inside the scope.
    """
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zeros = cast(equal(value, zeros_like(value)), _dtypes.float32)
        return reduce_mean(zeros, name="fraction")
