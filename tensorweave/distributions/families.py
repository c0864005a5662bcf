"""The families of tf.distributions: Normal, Laplace, Uniform, Bernoulli and Categorical.

Each gives its parameters and formulas to the base class (distributions/distribution.py), in
TensorFlow's forms: Normal samples loc + scale * N(0, 1) (reparameterized), Uniform low +
(high - low) * U[0, 1); Bernoulli compares U[0, 1) with probs, Categorical draws with
`multinomial` from its logits. A Bernoulli or Categorical takes logits or probs (exactly one)
and derives the other (logits = log(p) - log1p(-p) resp. log(p); probs by sigmoid resp.
softmax).
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
)
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like, zeros_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import identity, reshape, shape, transpose
from tensorweave.ops.array_rearrange_ops import broadcast_dynamic_shape, broadcast_static_shape
from tensorweave.ops.check_ops import (
    assert_less,
    assert_less_equal,
    assert_near,
    assert_non_negative,
    assert_positive,
)
from tensorweave.ops.math_ops import greater, greater_equal, less, logical_or
from tensorweave.ops.math_special_ops import erfc
from tensorweave.ops.math_unary_ops import abs, cast, expm1, log, log1p, sigmoid, sign, square
from tensorweave.ops.nn_loss_ops import (
    sigmoid_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from tensorweave.ops.nn_ops import softplus
from tensorweave.ops.nn_softmax_ops import log_softmax, softmax
from tensorweave.ops.random_ops import multinomial, random_normal, random_uniform
from tensorweave.ops.reduction_ops import argmax, reduce_sum

__all__ = ["Normal", "Laplace", "Uniform", "Bernoulli", "Categorical"]

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def _float_params(validate=False, positive=(), **values) -> list:
    """The parameters as tensors of one float dtype: the first float tensor's or NumPy value's
    (a float64 array samples float64, as in TensorFlow), else float32; with `validate`
    (validate_args), every one behind assert_positive of those named in `positive`, as
    TensorFlow's families check (so any statistic runs the checks)."""
    typed = [_dtypes.as_dtype(v.dtype).base_dtype for v in values.values()
             if hasattr(v, "dtype")]
    dtype = next((d for d in typed if d.is_floating), _dtypes.float32)
    params = [convert_to_tensor(v, dtype=dtype, name=k) for k, v in values.items()]
    if not validate:
        return params
    return checked(params, [assert_positive(t) for k, t in zip(values, params)
                            if k in positive])


def checked(tensors: list, checks: list) -> list:
    """`tensors`, each computed only once the assertion ops `checks` have passed."""
    with control_dependencies(checks):
        return [identity(t) for t in tensors]


class _TwoParameters(Distribution):
    """A continuous, reparameterized family of two broadcast float parameters."""

    def _init_pair(self, first, second, names, validate_args, allow_nan_stats, parameters,
                   name, positive=()):
        with name_scope(name) as name:
            self._first, self._second = _float_params(
                validate_args, positive, **dict(zip(names, (first, second))))
            super().__init__(self._first.dtype, FULLY_REPARAMETERIZED, validate_args,
                             allow_nan_stats, parameters, [self._first, self._second], name)

    def _pair(self):
        return self._first, self._second

    def _batch_shape(self):
        a, b = self._pair()
        return broadcast_static_shape(a.shape, b.shape)

    def _batch_shape_tensor(self):
        a, b = self._pair()
        return broadcast_dynamic_shape(shape(a), shape(b))

    def _draw_shape(self, n):
        return concat([[n], self.batch_shape_tensor()], 0)


class _LocationScale(_TwoParameters):
    """A family of `loc` and `scale` (its name scope defaults to the class name)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name=None):
        self._init_pair(loc, scale, ("loc", "scale"), validate_args, allow_nan_stats,
                        dict(locals()), name or type(self).__name__, positive=("scale",))

    loc = property(lambda self: self._first)
    scale = property(lambda self: self._second)


class Normal(_LocationScale):
    """The normal distribution of mean `loc` and standard deviation `scale`."""

    def _z(self, x):
        with name_scope("standardize"):
            return (x - self.loc) / self.scale

    def _sample_n(self, n, seed):
        draws = random_normal(self._draw_shape(n), dtype=self.dtype, seed=seed)
        return draws * self.scale + self.loc

    def _log_prob(self, x):
        return -0.5 * square(self._z(x)) - (_HALF_LOG_TWO_PI + log(self.scale))

    def _cdf(self, x):
        return 0.5 * erfc(-self._z(x) / math.sqrt(2.0))

    def _entropy(self):
        scale = self.scale * ones_like(self.loc)
        return 0.5 + _HALF_LOG_TWO_PI + log(scale)

    def _mean(self):
        return self.loc * ones_like(self.scale)

    _mode = _mean

    def _stddev(self):
        return self.scale * ones_like(self.loc)


class Laplace(_LocationScale):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    def _sample_n(self, n, seed):
        # u uniform in (-1, 1), never -1: loc - scale sign(u) log(1 - |u|) (TensorFlow's).
        tiny = float(np.nextafter(np.float32(-1), np.float32(0)))
        u = random_uniform(self._draw_shape(n), minval=tiny, maxval=1.0, dtype=self.dtype,
                           seed=seed)
        return self.loc - self.scale * sign(u) * log1p(-abs(u))

    def _log_prob(self, x):
        return -abs(x - self.loc) / self.scale - log(2.0 * self.scale)

    def _cdf(self, x):
        z = (x - self.loc) / self.scale
        return 0.5 - 0.5 * sign(z) * expm1(-abs(z))

    def _entropy(self):
        return 1.0 + log(2.0 * self.scale) * ones_like(self.loc)

    def _mean(self):
        return self.loc * ones_like(self.scale)

    _mode = _mean

    def _stddev(self):
        return math.sqrt(2.0) * self.scale * ones_like(self.loc)


class Uniform(_TwoParameters):
    """The continuous uniform distribution on [low, high)."""

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        self._init_pair(low, high, ("low", "high"), validate_args, allow_nan_stats,
                        dict(locals()), name)
        if validate_args:
            self._first, self._second = checked([self._first, self._second], [assert_less(
                self._first, self._second, message="uniform not defined when low >= high.")])

    low = property(lambda self: self._first)
    high = property(lambda self: self._second)

    def range(self, name="range"):
        with self._scope(name):
            return self.high - self.low

    def _pair(self):
        return self.low, self.high

    def _sample_n(self, n, seed):
        draws = random_uniform(self._draw_shape(n), dtype=self.dtype, seed=seed)
        return self.low + (self.high - self.low) * draws

    def _prob(self, x):
        width = self.high - self.low
        outside = logical_or(less(x, self.low), greater_equal(x, self.high))
        inside = ones_like(x) / width
        return where(outside, zeros_like(inside), inside)

    def _cdf(self, x):
        width = self.high - self.low
        ramp = (x - self.low) / width
        below, above = less(x, self.low), greater_equal(x, self.high)
        return where(below, zeros_like(ramp), where(above, ones_like(ramp), ramp))

    def _entropy(self):
        return log(self.high - self.low)

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return square(self.high - self.low) / 12.0


class _Discrete(Distribution):
    """Bernoulli and Categorical: logits or probs, integer samples of `dtype`."""

    def _logits_and_probs(self, logits, probs, to_logits, to_probs, validate=False,
                          simplex=False):
        """Sets both from the one given. With `validate`, given probs sit behind TensorFlow's
        checks: within [0, 1], and (`simplex`) summing to 1 over the last axis."""
        if (logits is None) == (probs is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            self._logits = convert_to_tensor(logits, name="logits")
            self._probs = to_probs(self._logits)
            return
        probs = convert_to_tensor(probs, name="probs")
        if validate:
            checks = [assert_non_negative(probs, message="probs has components less than 0."),
                      assert_less_equal(probs, 1.0,
                                        message="probs has components greater than 1.")]
            if simplex:
                checks.append(assert_near(reduce_sum(probs, -1), 1.0,
                                          message="probs does not sum to 1."))
            (probs,) = checked([probs], checks)
        self._probs = probs
        self._logits = to_logits(probs)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _value(self, value):
        """An outcome as given (ints or floats): the formulas cast it as they need."""
        return convert_to_tensor(value, name="value")


class Bernoulli(_Discrete):
    """Bernoulli distributions: 1 with probability `probs` (sigmoid(`logits`)), else 0."""

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = dict(locals())
        with name_scope(name) as name:
            self._logits_and_probs(logits, probs, lambda p: log(p) - log1p(-p), sigmoid,
                                   validate_args)
            super().__init__(_dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args,
                             allow_nan_stats, parameters, [self._logits, self._probs], name)

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return shape(self._logits)

    def _sample_n(self, n, seed):
        draws = random_uniform(concat([[n], shape(self._probs)], 0), seed=seed,
                               dtype=self._probs.dtype)
        return cast(less(draws, self._probs), self.dtype)

    def _log_prob(self, event):
        event = cast(event, self._logits.dtype)
        logits = self._logits * ones_like(event)
        return -sigmoid_cross_entropy_with_logits(labels=event * ones_like(logits),
                                                  logits=logits)

    def _entropy(self):
        return -self._logits * (sigmoid(self._logits) - 1.0) + softplus(-self._logits)

    def _mean(self):
        return self._probs

    def _variance(self):
        return self._probs * (1.0 - self._probs)

    def _mode(self):
        return cast(greater(self._probs, 0.5), self.dtype)


class Categorical(_Discrete):
    """Categorical distributions over classes 0..K-1 of the last axis of `logits` / `probs`."""

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        parameters = dict(locals())
        with name_scope(name) as name:
            self._logits_and_probs(logits, probs, log, softmax, validate_args, simplex=True)
            super().__init__(_dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args,
                             allow_nan_stats, parameters, [self._logits, self._probs], name)

    @property
    def event_size(self):
        return shape(self._logits)[-1]

    def _batch_shape(self):
        return self._logits.shape[:-1] if self._logits.shape.ndims is not None else \
            _ts.unknown_shape()

    def _batch_shape_tensor(self):
        return shape(self._logits)[:-1]

    def _sample_n(self, n, seed):
        flat = reshape(self._logits, [-1, self.event_size]) if self._logits.shape.ndims != 2 \
            else self._logits
        draws = multinomial(flat, n, seed=seed,   # int32 or int64, then `dtype` (TF's)
                            output_dtype=_dtypes.int64 if self.dtype.size > 4 else _dtypes.int32)
        draws = reshape(transpose(draws), concat([[n], self.batch_shape_tensor()], 0))
        return cast(draws, self.dtype)

    def _log_prob(self, k):
        k = cast(k, _dtypes.int32)
        logits = self._logits
        if k.shape != logits.shape[:-1]:   # broadcast the classes against the batch
            logits = logits * ones_like(cast(k, logits.dtype))[..., None]
            k = k * cast(ones_like(logits[..., 0]), _dtypes.int32)
        return -sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -reduce_sum(softmax(self._logits) * log_softmax(self._logits), -1)

    def _mode(self):
        return cast(argmax(self._logits, -1), self.dtype)
