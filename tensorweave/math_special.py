"""tf.math.special: TF 2.21 compat.v1's special functions (re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.special_functions_ops import (
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    bessel_j0,
    bessel_j1,
    bessel_k0,
    bessel_k0e,
    bessel_k1,
    bessel_k1e,
    bessel_y0,
    bessel_y1,
    dawsn,
    expint,
    fresnel_cos,
    fresnel_sin,
    spence,
)
