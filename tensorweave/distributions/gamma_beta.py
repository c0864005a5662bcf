"""The Gamma, Exponential, Beta, Dirichlet and StudentT families of tf.distributions.

Gamma(concentration a, rate b) samples with `random_gamma` (whose gradient is the implicit
reparameterization, so samples differentiate as TensorFlow's do), its CDF is the regularized
incomplete gamma igamma(a, b x). Exponential(rate) is Gamma(1, rate) with its own sampler
(-log(U) / rate) and closed forms; it keeps Gamma's mode, NaN since its concentration is not
above 1, as TensorFlow's gives (the true mode is 0). Beta(c1, c0) samples as G1 / (G1 + G0) of
two gammas, its CDF is betainc. A mode that does not exist (a <= 1 for Gamma, c1 or c0 <= 1
for Beta) is NaN with allow_nan_stats, as in TensorFlow, else InvalidArgumentError when run.
Dirichlet(concentration [..., k]) has vector events of size k and samples normalized gammas;
its mode exists where every concentration exceeds 1 (TensorFlow 2.21's mode fails to build for
a batch of Dirichlets; here it works). StudentT(df, loc, scale) samples
loc + scale * N / sqrt(G / df) with G ~ Gamma(df / 2, 1 / 2); its mean is NaN for df <= 1 and
its variance infinite for 1 < df <= 2, NaN below.
"""
from __future__ import annotations

import numpy as np

from tensorweave.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
)
from tensorweave.distributions.families import _float_params
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.ops.array_creation_ops import fill, ones_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import identity, shape
from tensorweave.ops.array_rearrange_ops import broadcast_dynamic_shape, broadcast_static_shape
from tensorweave.ops.check_ops import assert_less
from tensorweave.ops.math_ops import greater, less, logical_and
from tensorweave.ops.math_special_ops import betainc, digamma, igamma, lgamma
from tensorweave.ops.math_unary_ops import cast, expm1, log, log1p, rsqrt, square
from tensorweave.ops.random_gamma_ops import random_gamma
from tensorweave.ops.random_ops import random_normal, random_uniform
from tensorweave.ops.reduction_ops import reduce_all, reduce_sum

__all__ = ["Gamma", "Exponential", "Beta", "Dirichlet", "StudentT"]


class _Positive(Distribution):
    """A family of broadcast positive float parameters, reparameterized."""

    def _init_params(self, values: dict, validate_args, allow_nan_stats, parameters, name,
                     positive=()):
        with name_scope(name) as name:
            self._params = _float_params(validate_args, positive, **values)
            super().__init__(self._params[0].dtype, FULLY_REPARAMETERIZED, validate_args,
                             allow_nan_stats, parameters, list(self._params), name)

    def _batch_shape(self):
        result = self._params[0].shape
        for p in self._params[1:]:
            result = broadcast_static_shape(result, p.shape)
        return result

    def _batch_shape_tensor(self):
        result = shape(self._params[0])
        for p in self._params[1:]:
            result = broadcast_dynamic_shape(result, shape(p))
        return result

    def _draw_shape(self, n):
        return concat([[n], self.batch_shape_tensor()], 0)

    def _mode_where(self, mode, above_one: list):
        """`mode` where every parameter of the (parameter, message) pairs `above_one` is
        above 1, else NaN (allow_nan_stats); or `mode` behind TensorFlow's assertions that
        they are (InvalidArgumentError with the message when run)."""
        if self.allow_nan_stats:
            exists = greater(above_one[0][0] * ones_like(mode), 1.0)
            for param, _ in above_one[1:]:
                exists = logical_and(exists, greater(param * ones_like(mode), 1.0))
            nan = fill(shape(mode), _const(np.nan, mode))
            return where(exists, mode, nan)
        checks = [assert_less(ones_like(param), param, message=message)
                  for param, message in above_one]
        with control_dependencies(checks):
            return identity(mode)


class Gamma(_Positive):
    """The gamma distribution of shape `concentration` and inverse scale `rate`."""

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        self._init_params({"concentration": concentration, "rate": rate}, validate_args,
                          allow_nan_stats, dict(locals()), name,
                          positive=("concentration", "rate"))

    concentration = property(lambda self: self._params[0])
    rate = property(lambda self: self._params[1])

    def _sample_n(self, n, seed):
        return random_gamma([n], self.concentration, beta=self.rate, dtype=self.dtype,
                            seed=seed)

    def _log_prob(self, x):
        a, b = self.concentration, self.rate
        return (a - 1.0) * log(x) - b * x + a * log(b) - lgamma(a)

    def _cdf(self, x):
        return igamma(self.concentration, self.rate * x)

    def _entropy(self):
        a, b = self.concentration, self.rate
        return a - log(b) + lgamma(a) + (1.0 - a) * digamma(a)

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / (self.rate * self.rate)

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        return self._mode_where(mode, [(self.concentration,
                                        "mode not defined when any concentration <= 1")])


class Exponential(Gamma):
    """The exponential distribution of `rate`: Gamma(1, rate)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        with name_scope(name) as name:
            (rate,) = _float_params(validate_args, ("rate",), rate=rate)
            super().__init__(ones_like(rate), rate, validate_args, allow_nan_stats,
                             name=name)
        self._parameters = {"rate": rate, "validate_args": validate_args,
                            "allow_nan_stats": allow_nan_stats, "name": name}

    def _sample_n(self, n, seed):
        tiny = float(np.finfo(self.dtype.as_numpy_dtype).tiny)
        u = random_uniform(self._draw_shape(n), minval=tiny, maxval=1.0, dtype=self.dtype,
                           seed=seed)
        return -log(u) / self.rate

    def _log_prob(self, x):
        return log(self.rate) - self.rate * x

    def _cdf(self, x):
        return -expm1(-self.rate * x)

    def _entropy(self):
        return 1.0 - log(self.rate)


class Beta(_Positive):
    """The beta distribution on [0, 1] of `concentration1` (alpha) and `concentration0`."""

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        self._init_params({"concentration1": concentration1,
                           "concentration0": concentration0}, validate_args,
                          allow_nan_stats, dict(locals()), name,
                          positive=("concentration1", "concentration0"))

    concentration1 = property(lambda self: self._params[0])
    concentration0 = property(lambda self: self._params[1])

    @property
    def total_concentration(self):
        return self.concentration1 + self.concentration0

    def _sample_n(self, n, seed):
        ones = ones_like(self.total_concentration)
        g1 = random_gamma([n], self.concentration1 * ones, dtype=self.dtype, seed=seed)
        g0 = random_gamma([n], self.concentration0 * ones, dtype=self.dtype,
                          seed=gen_new_seed(seed, "beta"))
        return g1 / (g1 + g0)

    def _log_prob(self, x):
        a, b = self.concentration1, self.concentration0
        return (a - 1.0) * log(x) + (b - 1.0) * log1p(-x) - lbeta_pair(a, b)

    def _cdf(self, x):
        ones = ones_like(x)
        return betainc(self.concentration1 * ones, self.concentration0 * ones, x)

    def _entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (lbeta_pair(a, b) - (a - 1.0) * digamma(a) - (b - 1.0) * digamma(b) +
                (total - 2.0) * digamma(total))

    def _mean(self):
        return self.concentration1 / self.total_concentration

    def _variance(self):
        total = self.total_concentration
        return self.concentration1 * self.concentration0 / (total * total * (total + 1.0))

    def _mode(self):
        a, b = self.concentration1, self.concentration0
        mode = (a - 1.0) / (a + b - 2.0)
        return self._mode_where(mode, [(a, "Mode undefined for concentration1 <= 1."),
                                       (b, "Mode undefined for concentration0 <= 1.")])


def lbeta_pair(a, b):
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), broadcast."""
    return lgamma(a) + lgamma(b) - lgamma(a + b)


class Dirichlet(Distribution):
    """The Dirichlet distribution on the simplex of the last axis of `concentration`."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        parameters = dict(locals())
        with name_scope(name) as name:
            (self._concentration,) = _float_params(validate_args, ("concentration",),
                                                   concentration=concentration)
            self._total = reduce_sum(self._concentration, -1)
            super().__init__(self._concentration.dtype, FULLY_REPARAMETERIZED, validate_args,
                             allow_nan_stats, parameters, [self._concentration], name)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total)

    def _batch_shape(self):
        return self._concentration.shape[:-1]

    def _batch_shape_tensor(self):
        return shape(self._concentration)[:-1]

    def _event_shape(self):
        return self._concentration.shape[-1:]

    def _event_shape_tensor(self):
        return shape(self._concentration)[-1:]

    def _sample_n(self, n, seed):
        gamma = random_gamma([n], self._concentration, dtype=self.dtype, seed=seed)
        return gamma / reduce_sum(gamma, -1, keepdims=True)

    def _lbeta(self):
        return reduce_sum(lgamma(self._concentration), -1) - lgamma(self._total)

    def _log_prob(self, x):
        return reduce_sum((self._concentration - 1.0) * log(x), -1) - self._lbeta()

    def _entropy(self):
        k = cast(shape(self._concentration)[-1], self.dtype)
        return (self._lbeta() + (self._total - k) * digamma(self._total) -
                reduce_sum((self._concentration - 1.0) * digamma(self._concentration), -1))

    def _mean(self):
        return self._concentration / self._total[..., None]

    def _variance(self):
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self._total[..., None])

    def _mode(self):
        k = cast(shape(self._concentration)[-1], self.dtype)
        mode = (self._concentration - 1.0) / (self._total[..., None] - k)
        if self.allow_nan_stats:
            exists = reduce_all(greater(self._concentration, 1.0), -1, keepdims=True)
            return where(exists & ones_like(mode, dtype=exists.dtype), mode,
                         fill(shape(mode), _const(np.nan, mode)))
        message = "Mode undefined when any concentration <= 1"
        with control_dependencies([assert_less(ones_like(self._concentration),
                                               self._concentration, message=message)]):
            return identity(mode)


class StudentT(_Positive):
    """Student's t distribution of `df` degrees of freedom, location `loc`, scale `scale`."""

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        self._init_params({"df": df, "loc": loc, "scale": scale}, validate_args,
                          allow_nan_stats, dict(locals()), name, positive=("df", "scale"))

    df = property(lambda self: self._params[0])
    loc = property(lambda self: self._params[1])
    scale = property(lambda self: self._params[2])

    def _ones(self):
        return ones_like(self.df * self.loc * self.scale)

    def _sample_n(self, n, seed):
        df = self.df * self._ones()
        normal = random_normal(self._draw_shape(n), dtype=self.dtype, seed=seed)
        gamma = random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                             seed=gen_new_seed(seed, "student_t"))
        return normal * rsqrt(gamma / df) * self.scale + self.loc

    def _log_prob(self, x):
        y = (x - self.loc) / self.scale
        half_df = 0.5 * self.df
        return (-(half_df + 0.5) * log1p(square(y) / self.df) - 0.5 * log(self.df) -
                0.5 * np.log(np.pi) - log(self.scale) + lgamma(half_df + 0.5) - lgamma(half_df))

    def _cdf(self, x):
        y = (x - self.loc) / self.scale
        lower = 0.5 * betainc(0.5 * self.df * ones_like(y), 0.5 * ones_like(y),
                              self.df / (square(y) + self.df))
        return where(less(y, 0.0), lower, 1.0 - lower)

    def _entropy(self):
        half_df = 0.5 * self.df * self._ones()
        return ((half_df + 0.5) * (digamma(half_df + 0.5) - digamma(half_df)) +
                0.5 * log(self.df) + lbeta_pair(half_df, 0.5) + log(self.scale))

    def _mean(self):
        mean = self.loc * self._ones()
        return self._where_df_above(1.0, mean, np.nan, "mean not defined for components of "
                                                        "df <= 1")

    def _variance(self):
        df = self.df * self._ones()
        variance = square(self.scale) * df / (df - 2.0)
        with_inf = where(greater(df, 2.0), variance, fill(shape(df), _const(np.inf, df)))
        return self._where_df_above(1.0, with_inf, np.nan, "variance not defined for "
                                                            "components of df <= 1")

    def _mode(self):
        return self.loc * self._ones()

    def _where_df_above(self, bound: float, value, missing: float, message: str):
        """`value` where df > bound, else `missing` (allow_nan_stats) or an assertion."""
        df = self.df * ones_like(value)
        if self.allow_nan_stats:
            return where(greater(df, bound), value, fill(shape(value), _const(missing, value)))
        with control_dependencies([assert_less(bound * ones_like(df), df, message=message)]):
            return identity(value)


def _const(value: float, like):
    return np.array(value, like.dtype.as_numpy_dtype)
