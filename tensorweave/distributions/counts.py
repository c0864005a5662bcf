"""The count families of tf.distributions: Multinomial and DirichletMultinomial.

Both have vector events of float counts over the classes of the last axis, summing to
`total_count`, and sample with TensorFlow 2.21's graphs, so seeded samples are its numbers.
Multinomial maps over the flattened batch (map_fn), drawing n * total_count classes of each
row with one `multinomial` op that every iteration runs again, so its stream moves on from row
to row in the order the rows run: here row after row; in TensorFlow a race between parallel
iterations (usually each window of 10 rows in reverse on a first run), so only one row's
samples are TensorFlow's for certain. DirichletMultinomial draws gammas of its
concentration with `seed`, takes their logs as logits and draws total_count classes per row
with gen_new_seed(seed, "dirichlet_multinomial"); where totals differ (TensorFlow takes only a
scalar total_count there) it draws max(total_count) per row and counts the first total_count,
which for equal totals are TensorFlow's draws.
"""
from __future__ import annotations

from tensorweave.distributions.distribution import (
    NOT_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
)
from tensorweave.distributions.families import _float_params
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_creation_ops import range as range_op
from tensorweave.ops.array_index_ops import one_hot
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import reshape, shape, transpose
from tensorweave.ops.functional_ops import map_fn
from tensorweave.ops.math_ops import less
from tensorweave.ops.math_special_ops import lgamma
from tensorweave.ops.math_unary_ops import cast, log
from tensorweave.ops.nn_softmax_ops import log_softmax, softmax
from tensorweave.ops.random_gamma_ops import random_gamma
from tensorweave.ops.random_ops import multinomial
from tensorweave.ops.reduction_ops import reduce_max, reduce_sum

__all__ = ["Multinomial", "DirichletMultinomial"]


def _count_draws(logits, totals, dtype, seed):
    """[rows, k] counts: row i counts totals[i] classes drawn from logits[i]."""
    k = shape(logits)[-1]
    most = cast(reduce_max(totals), _dtypes.int32)
    draws = multinomial(logits, most, seed=seed)                       # [rows, most]
    kept = less(cast(range_op(most), totals.dtype)[None, :], totals[:, None])
    return reduce_sum(one_hot(draws, k, dtype=dtype) * cast(kept, dtype)[..., None], 1)


class _Counts(Distribution):
    """A batch of count distributions over the classes of the last axis of its parameter."""

    def _init_counts(self, total_count, parameter, validate_args, allow_nan_stats, parameters,
                     name):
        self._total_count = convert_to_tensor(total_count, dtype=parameter.dtype,
                                              name="total_count")
        self._parameter = parameter
        super().__init__(parameter.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._total_count, parameter], name)

    total_count = property(lambda self: self._total_count)

    def _batch_shape(self):
        from tensorweave.ops.array_rearrange_ops import broadcast_static_shape
        return broadcast_static_shape(self._total_count.shape, self._parameter.shape[:-1])

    def _batch_shape_tensor(self):
        from tensorweave.ops.array_rearrange_ops import broadcast_dynamic_shape
        return broadcast_dynamic_shape(shape(self._total_count),
                                       shape(self._parameter)[:-1])

    def _event_shape(self):
        return self._parameter.shape[-1:]

    def _event_shape_tensor(self):
        return shape(self._parameter)[-1:]

    def _final_shape(self, n, k):
        return concat([[n], self.batch_shape_tensor(), [k]], 0)

    def _log_factorials(self, counts):
        return lgamma(self._total_count + 1.0) - reduce_sum(lgamma(counts + 1.0), -1)


class Multinomial(_Counts):
    """Counts of `total_count` draws from the classes of `logits` / `probs`."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        parameters = dict(locals())
        if (logits is None) == (probs is None):
            raise ValueError("Must pass probs or logits, but not both.")
        with name_scope(name) as name:
            if probs is None:
                (self._logits,) = _float_params(logits=logits)
                self._probs = softmax(self._logits)
            else:
                (self._probs,) = _float_params(probs=probs)
                self._logits = log(self._probs)
            self._init_counts(total_count, self._logits, validate_args, allow_nan_stats,
                              parameters, name)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _sample_n(self, n, seed):
        k = self.event_shape_tensor()[0]
        draws = cast(self._total_count, _dtypes.int32)
        draws = ones_like(self._logits[..., 0], dtype=_dtypes.int32) * draws
        logits = ones_like(draws[..., None], dtype=self._logits.dtype) * self._logits

        def one_row(args):
            """n samples of one row's counts: n * total classes drawn in one run, [n, k]."""
            row, total = args
            classes = reshape(multinomial(row[None, ...], total, seed), [n, -1])
            return reduce_sum(one_hot(classes, k, dtype=self.dtype), -2)

        rows = [reshape(logits, [-1, k]), n * reshape(draws, [-1])]
        counts = map_fn(one_row, rows, dtype=self.dtype)   # [rows, n, k]
        return reshape(transpose(counts, [1, 0, 2]), self._final_shape(n, k))

    def _log_prob(self, counts):
        return self._log_factorials(counts) + reduce_sum(counts * log_softmax(self._logits),
                                                         -1)

    def _mean(self):
        return self._total_count[..., None] * self._probs

    def _variance(self):
        return self._mean() * (1.0 - self._probs)


class DirichletMultinomial(_Counts):
    """Counts of `total_count` draws from class probabilities drawn from
    Dirichlet(`concentration`)."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with name_scope(name) as name:
            (self._concentration,) = _float_params(validate_args, ("concentration",),
                                                   concentration=concentration)
            self._total = reduce_sum(self._concentration, -1)
            self._init_counts(total_count, self._concentration, validate_args,
                              allow_nan_stats, parameters, name)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total)

    def _sample_n(self, n, seed):
        k = self.event_shape_tensor()[0]
        alpha = self._concentration * ones_like(self._total_count)[..., None]
        gammas = random_gamma([n], alpha, dtype=self.dtype, seed=seed)
        totals = reshape(self._total_count * ones_like(gammas[..., 0]), [-1])
        counts = _count_draws(reshape(log(gammas), [-1, k]), totals, self.dtype,
                              gen_new_seed(seed, "dirichlet_multinomial"))
        return reshape(counts, self._final_shape(n, k))

    def _log_prob(self, counts):
        alpha, total = self._concentration, self._total
        return (self._log_factorials(counts) + lgamma(total) -
                lgamma(self._total_count + total) +
                reduce_sum(lgamma(counts + alpha) - lgamma(alpha), -1))

    def _mean(self):
        return self._total_count[..., None] * self._concentration / self._total[..., None]

    def _variance(self):
        share = self._concentration / self._total[..., None]
        n, total = self._total_count[..., None], self._total[..., None]
        return n * share * (1.0 - share) * (n + total) / (1.0 + total)
