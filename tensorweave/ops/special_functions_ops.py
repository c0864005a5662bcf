"""tf.math.special: Dawson's integral, the exponential integral, Fresnel integrals, Spence's
function and the Bessel functions J, Y and K of orders 0 and 1 (K also exponentially scaled).

Elementwise table rows with SciPy kernels (kernels/special_functions.py); each wrapper opens
TensorFlow's name scope ("bessel_j0/BesselJ0"). Gradients are TensorFlow's formulas: J1's is
1/2 at 0, Spence's is -1 at 1, where the general formula divides by zero. The modified
functions I0, I1 and their scaled forms live in math_extra_ops / math_special_ops.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.scopes import control_dependencies
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_index_ops import where_v2
from tensorweave.ops.math_extra_ops import bessel_i0, bessel_i1
from tensorweave.ops.math_ops import equal
from tensorweave.ops.math_special_ops import bessel_i0e, bessel_i1e, scoped_fn
from tensorweave.ops.math_unary_ops import (
    FLOAT,
    cast,
    cos,
    exp,
    log,
    reciprocal,
    sin,
    square,
    unary_op,
)

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1",
           "bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1",
           "dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]

Dawsn = unary_op("Dawsn", FLOAT)
Expint = unary_op("Expint", FLOAT)
FresnelCos = unary_op("FresnelCos", FLOAT)
FresnelSin = unary_op("FresnelSin", FLOAT)
Spence = unary_op("Spence", FLOAT)
BesselJ0 = unary_op("BesselJ0", FLOAT)
BesselJ1 = unary_op("BesselJ1", FLOAT)
BesselY0 = unary_op("BesselY0", FLOAT)
BesselY1 = unary_op("BesselY1", FLOAT)
BesselK0 = unary_op("BesselK0", FLOAT)
BesselK0e = unary_op("BesselK0e", FLOAT)
BesselK1 = unary_op("BesselK1", FLOAT)
BesselK1e = unary_op("BesselK1e", FLOAT)

dawsn = scoped_fn(Dawsn, "dawsn", "Computes Dawson's integral e^(-x^2) * integral of e^(t^2) "
                  "from 0 to x, element-wise.")
expint = scoped_fn(Expint, "expint", "Computes the exponential integral Ei(x), element-wise.")
fresnel_cos = scoped_fn(FresnelCos, "fresnel_cos", "Computes the Fresnel cosine integral, the "
                        "integral of cos(pi t^2 / 2) from 0 to x, element-wise.")
fresnel_sin = scoped_fn(FresnelSin, "fresnel_sin", "Computes the Fresnel sine integral, the "
                        "integral of sin(pi t^2 / 2) from 0 to x, element-wise.")
spence = scoped_fn(Spence, "spence", "Computes Spence's function, the integral of "
                   "log(t) / (1 - t) from 1 to x, element-wise (NaN below 0).")
bessel_j0 = scoped_fn(BesselJ0, "bessel_j0", "Computes J0(x), the Bessel function of the first "
                      "kind of order 0, element-wise.")
bessel_j1 = scoped_fn(BesselJ1, "bessel_j1", "Computes J1(x), the Bessel function of the first "
                      "kind of order 1, element-wise.")
bessel_y0 = scoped_fn(BesselY0, "bessel_y0", "Computes Y0(x), the Bessel function of the "
                      "second kind of order 0, element-wise.")
bessel_y1 = scoped_fn(BesselY1, "bessel_y1", "Computes Y1(x), the Bessel function of the "
                      "second kind of order 1, element-wise.")
bessel_k0 = scoped_fn(BesselK0, "bessel_k0", "Computes K0(x), the modified Bessel function of "
                      "the second kind of order 0, element-wise.")
bessel_k0e = scoped_fn(BesselK0e, "bessel_k0e", "Computes exp(x) * K0(x), element-wise.")
bessel_k1 = scoped_fn(BesselK1, "bessel_k1", "Computes K1(x), the modified Bessel function of "
                      "the second kind of order 1, element-wise.")
bessel_k1e = scoped_fn(BesselK1e, "bessel_k1e", "Computes exp(x) * K1(x), element-wise.")


def _gradient(op_def, derivative):
    """Registers grad * derivative(x, y) (x the input, y the output) as op_def's gradient."""
    @op_def.gradient
    def gradient(op, grad):
        with control_dependencies([grad]):
            return [grad * derivative(op.inputs[0], op.outputs[0])]
    return gradient


_HALF_PI = np.pi / 2
_gradient(Dawsn, lambda x, y: 1.0 - 2.0 * x * y)
_gradient(Expint, lambda x, y: exp(x) / x)
_gradient(FresnelCos, lambda x, y: cos(_HALF_PI * square(x)))
_gradient(FresnelSin, lambda x, y: sin(_HALF_PI * square(x)))
_gradient(Spence, lambda x, y: where_v2(equal(x, 1.0), -ones_like(x), log(x) / (1.0 - x)))
_gradient(BesselJ0, lambda x, y: -bessel_j1(x))
_gradient(BesselJ1, lambda x, y: where_v2(equal(x, 0.0), cast(0.5, x.dtype.base_dtype),
                                          bessel_j0(x) - y / x))
_gradient(BesselY0, lambda x, y: -bessel_y1(x))
_gradient(BesselY1, lambda x, y: bessel_y0(x) - y / x)
_gradient(BesselK0, lambda x, y: -bessel_k1(x))
_gradient(BesselK0e, lambda x, y: y - bessel_k1e(x))
_gradient(BesselK1, lambda x, y: -bessel_k0(x) - y / x)
_gradient(BesselK1e, lambda x, y: y * (1.0 - reciprocal(x)) - bessel_k0e(x))
