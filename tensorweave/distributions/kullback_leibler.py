"""tf.distributions.kl_divergence and RegisterKL: KL divergences by registered pair of families.

KL(a || b) is computed by a function registered for the pair of families (the nearest in each
class's MRO), with TensorFlow's formulas for Normal, Bernoulli, Categorical, Gamma (so
Exponential too), Beta and Dirichlet pairs and its errors for an unregistered or repeated pair."""
from __future__ import annotations

from tensorweave.distributions.families import Bernoulli, Categorical, Normal
from tensorweave.distributions.gamma_beta import Beta, Dirichlet, Gamma, lbeta_pair
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.math_special_ops import digamma, lgamma
from tensorweave.ops.math_unary_ops import log, sigmoid, square
from tensorweave.ops.nn_ops import softplus
from tensorweave.ops.nn_softmax_ops import log_softmax, softmax
from tensorweave.ops.reduction_ops import reduce_sum

__all__ = ["kl_divergence", "RegisterKL"]

_REGISTRY: dict = {}


def _lookup(type_a, type_b):
    for a in type_a.__mro__:
        for b in type_b.__mro__:
            fn = _REGISTRY.get((a, b))
            if fn is not None:
                return fn
    return None


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), batched.

    Raises:
      NotImplementedError: if no function is registered for the two families.
    """
    fn = _lookup(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with name_scope("KullbackLeibler"):
        return fn(distribution_a, distribution_b, name=name)


class RegisterKL:
    """Decorator registering `fn(a, b, name=None)` as KL(a || b) for two families."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _REGISTRY:
            a, b = self._key
            raise ValueError(f"KL({a.__name__} || {b.__name__}) has already been registered "
                             f"to: {_REGISTRY[self._key]}")
        _REGISTRY[self._key] = kl_fn
        return kl_fn


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a, b, name=None):
    """((mu_a - mu_b)^2 / s_b^2 + r - 1 - log r) / 2, with r = s_a^2 / s_b^2."""
    with name_scope(name, "kl_normal_normal"):
        var_b = square(b.scale)
        ratio = square(a.scale) / var_b
        return square(a.loc - b.loc) / (2.0 * var_b) + 0.5 * (ratio - 1.0 - log(ratio))


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """p_a log(p_a / p_b) + (1 - p_a) log((1 - p_a) / (1 - p_b)), through softplus of the
    logits (log p = -softplus(-logit), log(1 - p) = -softplus(logit))."""
    with name_scope(name, "kl_bernoulli_bernoulli"):
        ones = softplus(-b.logits) - softplus(-a.logits)
        zeros = softplus(b.logits) - softplus(a.logits)
        return sigmoid(a.logits) * ones + sigmoid(-a.logits) * zeros


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    """sum over classes of p_a (log p_a - log p_b)."""
    with name_scope(name, "kl_categorical_categorical"):
        return reduce_sum(softmax(a.logits) * (log_softmax(a.logits) -
                                               log_softmax(b.logits)), -1)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(a, b, name=None):
    """(a0 - a1) psi(a0) + lgamma(a1) - lgamma(a0) + a1 log(b0 / b1) + a0 (b1 / b0 - 1), with
    concentrations a0, a1 and rates b0, b1."""
    with name_scope(name, "kl_gamma_gamma"):
        a0, a1, b0, b1 = a.concentration, b.concentration, a.rate, b.rate
        return ((a0 - a1) * digamma(a0) + lgamma(a1) - lgamma(a0) +
                a1 * (log(b0) - log(b1)) + a0 * (b1 / b0 - 1.0))


@RegisterKL(Beta, Beta)
def _kl_beta_beta(a, b, name=None):
    """log B(a1, b1) - log B(a0, b0) + (a0 - a1) psi(a0) + (b0 - b1) psi(b0)
    + (a1 - a0 + b1 - b0) psi(a0 + b0)."""
    with name_scope(name, "kl_beta_beta"):
        a0, b0, a1, b1 = a.concentration1, a.concentration0, b.concentration1, b.concentration0
        total = a0 + b0
        return (lbeta_pair(a1, b1) - lbeta_pair(a0, b0) + (a0 - a1) * digamma(a0) +
                (b0 - b1) * digamma(b0) + (a1 - a0 + b1 - b0) * digamma(total))


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(a, b, name=None):
    """log B(alpha1) - log B(alpha0) + sum (alpha0 - alpha1) (psi(alpha0) - psi(sum alpha0))."""
    with name_scope(name, "kl_dirichlet_dirichlet"):
        alpha0, alpha1 = a.concentration, b.concentration
        total0 = reduce_sum(alpha0, -1, keepdims=True)
        return (reduce_sum(lgamma(alpha1), -1) - lgamma(reduce_sum(alpha1, -1)) -
                reduce_sum(lgamma(alpha0), -1) + lgamma(total0[..., 0]) +
                reduce_sum((alpha0 - alpha1) * (digamma(alpha0) - digamma(total0)), -1))
