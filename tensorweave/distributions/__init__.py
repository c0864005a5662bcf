"""tf.distributions: Normal, Uniform, Bernoulli and Categorical, KL divergences (re-exports).

TensorFlow 2.21's compat.v1 module has more families (Beta, Dirichlet, Gamma, Multinomial,
StudentT, ...); these four are the ones TF1 models (VAEs, policy gradients) use most.
"""
from tensorweave.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    ReparameterizationType,
)
from tensorweave.distributions.families import Bernoulli, Categorical, Normal, Uniform
from tensorweave.distributions.kullback_leibler import RegisterKL, kl_divergence

__all__ = ["Distribution", "ReparameterizationType", "FULLY_REPARAMETERIZED",
           "NOT_REPARAMETERIZED", "Normal", "Uniform", "Bernoulli", "Categorical",
           "RegisterKL", "kl_divergence"]
