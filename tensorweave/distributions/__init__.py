"""tf.distributions: TensorFlow's twelve families and KL divergences (re-exports only).

Normal, Laplace, StudentT, Uniform, Gamma, Exponential, Beta, Dirichlet, Bernoulli,
Categorical, Multinomial and DirichletMultinomial: every family TensorFlow 2.21's compat.v1
module has.
"""
from tensorweave.distributions.counts import DirichletMultinomial, Multinomial
from tensorweave.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    ReparameterizationType,
)
from tensorweave.distributions.families import Bernoulli, Categorical, Laplace, Normal, Uniform
from tensorweave.distributions.gamma_beta import Beta, Dirichlet, Exponential, Gamma, StudentT
from tensorweave.distributions.kullback_leibler import RegisterKL, kl_divergence

__all__ = ["Distribution", "ReparameterizationType", "FULLY_REPARAMETERIZED",
           "NOT_REPARAMETERIZED", "Normal", "Laplace", "Uniform", "Gamma", "Exponential",
           "Beta", "Dirichlet", "StudentT", "Bernoulli", "Categorical", "Multinomial",
           "DirichletMultinomial",
           "RegisterKL", "kl_divergence"]
