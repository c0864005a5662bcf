"""Kernels of tf.math.special's functions (ops/special_functions_ops.py): SciPy's Cephes ports,
in the input's dtype.

Where TensorFlow's (Eigen's) Cephes ports define the domain edges differently from SciPy, the
kernel says so in an `np.where`: Y0/Y1 are -inf and K0/K1 (scaled or not) +inf for x < 0
(SciPy: NaN); Expint is NaN for x < 0 and at +inf (SciPy extends Ei to x < 0); the Fresnel
integrals are +-0.5 once |x| > 36974, Cephes' cut-off (SciPy's asymptotic series overflows to
NaN near 1e300).
"""
from __future__ import annotations

import numpy as np
import scipy  # scipy.special loads on first use

from tensorweave.framework import dtypes as _dtypes
from tensorweave.kernels.math_special import in_input_dtype
from tensorweave.kernels.registry import register_pure

_FRESNEL_LIMIT = 36974.0  # Cephes' fresnel: beyond it both integrals are their limit, 0.5


def _special(name):
    """SciPy's `name`, looked up when the kernel first runs (not at import)."""
    return lambda x: getattr(scipy.special, name)(x)


def _negative_is(fn, value):
    """`fn(x)`, and `value` wherever x < 0 (Cephes' domain-error result)."""
    return lambda x: np.where(x < 0, value, fn(x))


def _expint(x):
    """Ei(x) for x >= 0; NaN for x < 0 and at +inf, as in TensorFlow."""
    return np.where((x < 0) | np.isposinf(x), np.nan, scipy.special.expi(x))


def _fresnel(index):
    """S(x) (index 0) or C(x) (index 1), and sign(x) / 2 beyond Cephes' cut-off."""
    def fn(x):
        big = np.abs(x) > _FRESNEL_LIMIT
        return np.where(big, np.copysign(0.5, x),
                        scipy.special.fresnel(np.where(big, 0, x))[index])
    return fn


for _op_type, _fn in (
        ("Dawsn", _special("dawsn")), ("Expint", _expint), ("Spence", _special("spence")),
        ("BesselJ0", _special("j0")), ("BesselJ1", _special("j1")),
        ("BesselY0", _negative_is(_special("y0"), -np.inf)),
        ("BesselY1", _negative_is(_special("y1"), -np.inf)),
        ("BesselK0", _negative_is(_special("k0"), np.inf)),
        ("BesselK0e", _negative_is(_special("k0e"), np.inf)),
        ("BesselK1", _negative_is(_special("k1"), np.inf)),
        ("BesselK1e", _negative_is(_special("k1e"), np.inf)),
        ("FresnelSin", _fresnel(0)), ("FresnelCos", _fresnel(1))):
    _fn.__name__ = "_" + _op_type.lower()
    register_pure(_op_type, in_input_dtype(_fn), dtypes=_dtypes.FLOATING)
