"""tf.distributions' base class: what every distribution offers, built from its few formulas.

A subclass gives its parameters and the formulas it has (`_sample_n`, `_log_prob`, `_cdf`,
`_entropy`, `_mean`, ...); the public methods convert their arguments, open TensorFlow's name
scopes (`Normal/log_prob/...`) and fall back as TensorFlow's do: prob from log_prob and back,
stddev from variance and back, log_cdf from cdf. `sample(sample_shape)` draws
prod(sample_shape) batches with `_sample_n` and reshapes them to sample_shape + batch_shape +
event_shape. Every result is made of graph ops, so gradients flow through them (through the
samples too, for a FULLY_REPARAMETERIZED distribution).
"""
from __future__ import annotations

import contextlib
import hashlib

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import reshape
from tensorweave.ops.math_unary_ops import exp, log, sqrt, square
from tensorweave.ops.reduction_ops import reduce_prod

__all__ = ["Distribution", "ReparameterizationType", "FULLY_REPARAMETERIZED",
           "NOT_REPARAMETERIZED"]


def gen_new_seed(seed, salt: str):
    """TensorFlow's distribution_util.gen_new_seed: the seed of a distribution's second draw,
    the first 32 bits of MD5(str(seed) + salt) without the sign bit (None stays None), so a
    seeded sample draws TensorFlow's numbers."""
    if seed is None:
        return None
    digest = hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


class ReparameterizationType:
    """Whether samples are a differentiable function of the parameters (TensorFlow's two
    instances, compared by identity)."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameterization Type: {self._rep_type}>"


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def _of_value(name: str, formula):
    """A public method of a value: `formula(self, value)` in the method's name scope."""
    def method(self, value, name=name):
        with self._scope(name):
            return formula(self, self._value(value))
    method.__name__ = name
    return method


def _statistic(name: str, formula=None):
    """A public statistic: `formula(self)` (default: the family's `_<name>`) in the method's
    name scope."""
    def method(self, name=name):
        with self._scope(name):
            return formula(self) if formula is not None else \
                getattr(self, "_" + method.__name__)()
    method.__name__ = name
    return method


class Distribution:
    """A batch of probability distributions of one family (TF1's tf.distributions.Distribution).

    Subclasses call `__init__` inside `with name_scope(name) as name` (so `name` ends in "/")
    and define `_batch_shape()` / `_batch_shape_tensor()` and the formulas they have.
    """

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._parameters = dict(parameters or {})
        self._graph_parents = list(graph_parents or [])
        self._name = name

    # --- properties -------------------------------------------------------------------------
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    parameters = property(lambda self: dict(self._parameters))
    reparameterization_type = property(lambda self: self._reparameterization_type)
    allow_nan_stats = property(lambda self: self._allow_nan_stats)
    validate_args = property(lambda self: self._validate_args)
    graph_parents = property(lambda self: list(self._graph_parents))

    @property
    def batch_shape(self) -> _ts.TensorShape:
        return _ts.as_shape(self._batch_shape())

    @property
    def event_shape(self) -> _ts.TensorShape:
        return _ts.as_shape(self._event_shape())

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._scope(name):
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._scope(name):
            return self._event_shape_tensor()

    def _event_shape(self):
        return _ts.TensorShape([])

    def _event_shape_tensor(self):
        from tensorweave.ops.constant_op import constant
        return constant([], dtype=_dtypes.int32)

    @contextlib.contextmanager
    def _scope(self, name: str):
        with name_scope(self.name), name_scope(name) as scope:
            yield scope

    # --- sampling ---------------------------------------------------------------------------
    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape sample_shape + batch_shape + event_shape."""
        with self._scope(name):
            shape = convert_to_tensor(sample_shape, _dtypes.int32, name="sample_shape")
            static = constant_value(shape)
            if static is not None:   # a known shape: constants, as TensorFlow builds them
                static = np.reshape(static, [-1])
                shape = convert_to_tensor(static, _dtypes.int32, name="sample_shape")
                count = np.int32(np.prod(static))
            else:
                if shape.shape.ndims == 0:
                    shape = reshape(shape, [1])
                count = reduce_prod(shape)
            samples = self._sample_n(count, seed)
            final = concat([shape, self.batch_shape_tensor(), self.event_shape_tensor()], 0)
            samples = reshape(samples, final)
            if static is not None:
                samples.set_shape(_ts.TensorShape(static.tolist()).concatenate(
                    self.batch_shape).concatenate(self.event_shape))
            return samples

    # --- densities and statistics, with TensorFlow's fallbacks -------------------------------
    def _value(self, value):
        return convert_to_tensor(value, dtype=self.dtype, name="value")

    log_prob = _of_value("log_prob", lambda self, v: self._log_prob(v)
                         if self._defines("_log_prob") else log(self._prob(v)))
    prob = _of_value("prob", lambda self, v: self._prob(v)
                     if self._defines("_prob") else exp(self._log_prob(v)))
    cdf = _of_value("cdf", lambda self, v: self._cdf(v))
    log_cdf = _of_value("log_cdf", lambda self, v: log(self._cdf(v)))
    survival_function = _of_value("survival_function", lambda self, v: 1.0 - self._cdf(v))
    entropy = _statistic("entropy")
    mean = _statistic("mean")
    mode = _statistic("mode")

    variance = _statistic("variance", lambda self: self._variance()
                          if self._defines("_variance") else square(self._stddev()))
    stddev = _statistic("stddev", lambda self: self._stddev()
                        if self._defines("_stddev") else sqrt(self._variance()))

    def _defines(self, formula: str) -> bool:
        """Whether this family has its own `formula` (else a public method derives it)."""
        return getattr(type(self), formula) is not getattr(Distribution, formula)

    def kl_divergence(self, other, name="kl_divergence"):
        from tensorweave.distributions.kullback_leibler import kl_divergence
        with self._scope(name):
            return kl_divergence(self, other)

    # What a family does not define (TensorFlow's NotImplementedError, naming it).
    def _missing(self, what: str):
        raise NotImplementedError(f"{what} is not implemented: {type(self).__name__}")

    def _sample_n(self, n, seed):
        self._missing("sample_n")

    def _log_prob(self, value):
        self._missing("log_prob")

    def _prob(self, value):
        self._missing("prob")

    def _cdf(self, value):
        self._missing("cdf")

    def _entropy(self):
        self._missing("entropy")

    def _mean(self):
        self._missing("mean")

    def _mode(self):
        self._missing("mode")

    def _variance(self):
        self._missing("variance")

    def _stddev(self):
        self._missing("stddev")

    def __repr__(self) -> str:
        return (f"<tf.distributions.{type(self).__name__} '{self.name}' "
                f"batch_shape={self.batch_shape} event_shape={self.event_shape} "
                f"dtype={self.dtype.name}>")
