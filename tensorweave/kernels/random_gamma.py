"""Kernels of RandomGamma, RandomPoissonV2 and RandomGammaGrad.

The samplers share the random kernels' per-(session, node) Philox generator (`kernels/random.py`)
and draw with NumPy's samplers, so they follow TensorFlow's distributions and seeding rules but
not its values bit for bit. Invalid parameters behave like TensorFlow's CPU kernels: alpha == 0
draws 0, a negative or NaN alpha draws NaN, a negative rate draws 0. A NaN or infinite Poisson
rate (on which TensorFlow's sampler never returns) fails with InvalidArgumentError.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels.math_special import igamma_derivative
from tensorweave.kernels.random import RandomKernel, output_shape
from tensorweave.kernels.registry import kernel, register_pure

# NumPy's Poisson sampler rejects rates near 2**63; far below that, at 1e18, the normal
# approximation N(lam, lam) is already exact to float64 resolution (skewness 1e-9).
_POISSON_NORMAL_ABOVE = 1e18


@kernel("RandomGamma")
class RandomGammaKernel(RandomKernel):
    """Gamma(alpha, 1) samples: shape + alpha.shape of them (float16 drawn in float32)."""

    def draw(self, shape, alpha):
        alpha = np.asarray(alpha)
        out_shape = output_shape(shape) + alpha.shape
        work = np.float32 if self.dtype == np.float16 else self.dtype
        valid = alpha > 0
        concentration = np.broadcast_to(np.where(valid, alpha, 1).astype(work), out_shape)
        draws = self.rng.standard_gamma(concentration, dtype=work)
        draws = np.where(valid, draws, np.where(alpha == 0, 0, np.nan))
        return draws.astype(self.dtype, copy=False)


@kernel("RandomPoissonV2")
class RandomPoissonKernel(RandomKernel):
    """Poisson(rate) samples: shape + rate.shape of them, in the `dtype` attr's type."""

    def draw(self, shape, rate):
        rate = np.asarray(rate, np.float64)
        if not np.isfinite(rate).all():
            bad = rate[~np.isfinite(rate)][0]
            raise errors.InvalidArgumentError(None, None,
                                              f"Poisson rate must be finite, got {bad}")
        lam = np.broadcast_to(np.maximum(rate, 0), output_shape(shape) + rate.shape)
        huge = lam > _POISSON_NORMAL_ABOVE
        counts = self.rng.poisson(np.where(huge, 0, lam)).astype(np.float64)
        if huge.any():
            counts[huge] = np.rint(self.rng.normal(lam[huge], np.sqrt(lam[huge])))
        return counts.astype(self.dtype)


register_pure("RandomGammaGrad", lambda alpha, sample: igamma_derivative(alpha, sample, True),
              dtypes=(_dtypes.float32, _dtypes.float64))
