"""tf.nn.dropout, built like TF1's from random_uniform, floor and division.

keep + U[0, 1) lies in [keep, 1 + keep) and floors to 1 with probability keep, so
`x / keep * floor(keep + U)` keeps each element with probability keep and preserves the expected
sum; its gradient comes from Mul and RealDiv (the mask is a constant to autodiff: Floor and the
random op are not differentiable). The argument checks and messages are TensorFlow's.
"""
from __future__ import annotations

import numbers

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import shape
from tensorweave.ops.math_ops import div, multiply
from tensorweave.ops.math_unary_ops import floor
from tensorweave.ops.random_ops import random_uniform
from tensorweave.platform import tf_logging

__all__ = ["dropout"]


def noise_shape_of(x: Tensor, noise_shape):
    """The mask's shape: x's own, or `noise_shape` with unknown entries taken from x."""
    if noise_shape is None:
        return shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    try:
        dims = _ts.TensorShape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if dims.ndims is None or dims.is_fully_defined():
        return dims.as_list() if dims.ndims is not None else noise_shape
    x_dims = x.shape._dims
    if x_dims is None or len(x_dims) != dims.ndims:
        raise ValueError(f"noise_shape {dims} has unknown dimensions that x {x.shape} cannot "
                         "fill in")
    dynamic = None
    out = []
    for i, (n, d) in enumerate(zip(dims.as_list(), x_dims)):
        if n is not None:
            out.append(n)
        elif d is not None:
            out.append(d)
        else:
            dynamic = shape(x) if dynamic is None else dynamic
            out.append(dynamic[i])
    return out if dynamic is None else stack(out)


def rate_error(rate):
    return ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). "
                      f"Received: rate={rate}")


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Computes dropout: zeroes elements with probability `rate`, scales the rest by 1/keep.

    Built like TF1 from random_uniform, floor and division: keep + U[0, 1) floors to 1 with
    probability keep, so `x / keep * floor(keep + U)` keeps each element with probability keep
    and preserves the expected sum. Give exactly one of `keep_prob` (deprecated) and `rate`
    (= 1 - keep_prob). With a seed (and a graph seed) the mask is the same in every session.

    Args:
      x: A floating Tensor.
      keep_prob: Probability of keeping each element, a float in (0, 1] or a scalar Tensor.
      noise_shape: The shape of the random mask, broadcast against x (e.g. [batch, 1] keeps or
        drops whole rows); None entries take x's dimension.
      seed: The op-level seed of the mask (see `tf.set_random_seed`).
      name: A name for the operation (default scope "dropout").
      rate: Probability of dropping each element, a float in [0, 1) or a scalar Tensor.

    Returns:
      A Tensor of the same shape and type as `x`; `x` itself when nothing can be dropped.

    Raises:
      ValueError: if both or neither of keep_prob and rate are given, a Python rate is outside
        [0, 1), x is not floating, or the probability is not a scalar.
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    if keep_prob is not None:
        if not isinstance(keep_prob, (numbers.Real, Tensor)):
            raise ValueError("`keep_prob` must be a floating point number or Tensor. "
                             f"Received: keep_prob={keep_prob}")
        if isinstance(keep_prob, numbers.Real):
            rate = 1 - keep_prob
    elif rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    if isinstance(rate, numbers.Real):
        if not 0 <= rate < 1:
            raise rate_error(rate)
        if rate > 0.5:
            tf_logging.warning(f"Large dropout rate: {rate:g} (>0.5). In TensorFlow 2.x, "
                               "dropout() uses dropout rate instead of keep_prob. Please ensure "
                               "that this is intended.")
    with name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                             f"Received: x_dtype={x.dtype}")
        dtype = x.dtype.base_dtype
        if isinstance(rate, numbers.Real):
            if rate == 0:
                return x
            keep = convert_to_tensor(1 - rate, dtype=dtype, name="keep_prob")
        elif keep_prob is not None:
            keep = convert_to_tensor(keep_prob, dtype=dtype, name="keep_prob")
        else:
            keep = 1 - convert_to_tensor(rate, dtype=dtype, name="rate")
        keep.shape.with_rank(0)
        known = static_value(keep)
        if known is not None and known == 1:
            return x
        mask_shape = noise_shape_of(x, noise_shape)
        # keep + U[0, 1) lies in [keep, 1 + keep): it floors to 1 with probability keep.
        random_tensor = keep + random_uniform(mask_shape, seed=seed, dtype=dtype)
        binary_tensor = floor(random_tensor)
        result = multiply(div(x, keep), binary_tensor)
        result.set_shape(x.shape)
        return result

