"""tf.nn.dropout as TensorFlow 2.21 builds it: select(U >= rate, x * 1/(1 - rate), 0).

TF1's `tf.nn.dropout` (compat.v1) takes `keep_prob` or `rate` and calls TF 2's dropout: a
uniform sample U in [0, 1) keeps an element where U >= rate, and SelectV2 (not a product with
the mask) puts the scaled `x` there and 0 elsewhere, so dropped inf, NaN and negative entries
are +0.0. A Python `rate` scales by a Mul with the constant 1/(1 - rate); a rate tensor by
RealDiv(x, 1 - rate). The gradient comes from SelectV2 and Mul/RealDiv (the mask is constant
to autodiff). `dropout_with_sampler` is the shared body of tf.nn.dropout, stateless_dropout
and general_dropout. The argument checks and messages are TensorFlow's.
"""
from __future__ import annotations

import numbers

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_index_ops import where_v2
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import shape
from tensorweave.ops.math_ops import greater_equal, multiply, realdiv, subtract
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.random_ops import random_uniform

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

    As TF 2.21's compat.v1 dropout: `rate = 1. - keep_prob` (a Sub op, outside the "dropout"
    scope, for a keep_prob tensor), then a uniform sample U keeps the elements where
    U >= rate, which become x / (1 - rate); every other element is +0.0, whatever x holds
    there (inf, NaN, negative). Give exactly one of `keep_prob` (deprecated) and `rate`. With
    a seed (and a graph seed) the mask is the same in every session.

    Args:
      x: A floating Tensor.
      keep_prob: Probability of keeping each element, a float in (0, 1] or a scalar Tensor.
      noise_shape: The shape of the random mask, broadcast against x (e.g. [batch, 1] keeps or
        drops whole rows); None entries take x's dimension.
      seed: The op-level seed of the mask (see `tf.set_random_seed`).
      name: A name for the operation (default scope "dropout").
      rate: Probability of dropping each element, a float in [0, 1) or a scalar Tensor of
        x's dtype.

    Returns:
      A Tensor of the same shape and type as `x`; `x` itself for a Python rate of 0.

    Raises:
      ValueError: if both or neither of keep_prob and rate are given, a Python rate is outside
        [0, 1), x is not floating, or rate is not a scalar of a dtype compatible with x's.
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    if keep_prob is not None:
        try:
            rate = 1. - keep_prob
        except TypeError:
            raise ValueError("`keep_prob` must be a floating point number or Tensor. "
                             f"Received: keep_prob={keep_prob}") from None
    elif rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    return dropout_with_sampler(x, rate, noise_shape, name, "dropout",
                                lambda shape, dtype: random_uniform(shape, seed=seed,
                                                                    dtype=dtype))


def dropout_with_sampler(x, rate, noise_shape, name, default_name, uniform_sampler):
    """select(sampler(noise_shape) >= rate, x / (1 - rate), 0), as TensorFlow 2.21's
    `_dropout` builds it; `uniform_sampler(shape=..., dtype=...)` gives values in [0, 1)."""
    with name_scope(name, default_name, [x]):
        is_number = isinstance(rate, numbers.Real)
        if is_number and not 0 <= rate < 1:
            raise rate_error(rate)
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                             f"Received: x_dtype={x.dtype}")
        if is_number and rate == 0:
            return x
        if is_number:
            scaled = multiply(x, convert_to_tensor(1 / (1 - rate), dtype=dtype))
        elif isinstance(rate, Tensor):
            rate.shape.with_rank(0)
            if rate.dtype != x.dtype:
                if rate.dtype.base_dtype != dtype:
                    raise ValueError("`x.dtype` must be compatible with `rate.dtype`. "
                                     f"Received: x.dtype={x.dtype} and rate.dtype={rate.dtype}")
                rate = cast(rate, dtype, name="rate")
            scaled = realdiv(x, subtract(convert_to_tensor(1, dtype=dtype), rate))
        else:
            raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: rate={rate}")
        noise = uniform_sampler(shape=noise_shape_of(x, noise_shape), dtype=dtype)
        kept = where_v2(greater_equal(noise, rate), scaled, convert_to_tensor(0, dtype=dtype))
        kept.set_shape(x.shape)
        return kept
