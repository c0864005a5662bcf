"""tf.math.special: each function against SciPy in float64 (OpCase rows, with numerical
gradients and shape functions), TensorFlow's names and its gradients' special points.
TensorFlow 2.21 gave the same values to float32 rounding on [0.5, 1, 2.5] (checked by hand)."""
import numpy as np
import scipy.special as sp

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

special = tf.math.special
F32_64 = (tf.float32, tf.float64)


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _ref(fn):
    def ref(x):
        return np.asarray(fn(x.astype(np.float64))).astype(x.dtype)
    return ref


CASES = [
    OpCase("dawsn", special.dawsn, _ref(sp.dawsn), [_uniform(-3, 3, 2, 3)], dtypes=F32_64),
    OpCase("expint", special.expint, _ref(sp.expi), [_uniform(0.2, 3, 5)], dtypes=F32_64),
    OpCase("fresnel_cos", special.fresnel_cos, _ref(lambda x: sp.fresnel(x)[1]),
           [_uniform(-2, 2, 4)], dtypes=F32_64),
    OpCase("fresnel_sin", special.fresnel_sin, _ref(lambda x: sp.fresnel(x)[0]),
           [_uniform(-2, 2, 4)], dtypes=F32_64),
    OpCase("spence", special.spence, _ref(sp.spence), [_uniform(0.1, 3, 2, 2)],
           dtypes=F32_64),
    OpCase("bessel_j0", special.bessel_j0, _ref(sp.j0), [_uniform(-6, 6, 5)], dtypes=F32_64),
    OpCase("bessel_j1", special.bessel_j1, _ref(sp.j1), [_uniform(-6, 6, 5)], dtypes=F32_64),
    OpCase("bessel_y0", special.bessel_y0, _ref(sp.y0), [_uniform(0.5, 6, 5)], dtypes=F32_64),
    OpCase("bessel_y1", special.bessel_y1, _ref(sp.y1), [_uniform(0.5, 6, 5)], dtypes=F32_64),
    OpCase("bessel_k0", special.bessel_k0, _ref(sp.k0), [_uniform(0.2, 4, 5)], dtypes=F32_64),
    OpCase("bessel_k0e", special.bessel_k0e, _ref(sp.k0e), [_uniform(0.2, 4, 5)],
           dtypes=F32_64),
    OpCase("bessel_k1", special.bessel_k1, _ref(sp.k1), [_uniform(0.3, 4, 5)], dtypes=F32_64),
    OpCase("bessel_k1e", special.bessel_k1e, _ref(sp.k1e), [_uniform(0.3, 4, 5)],
           dtypes=F32_64),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_names_and_the_gradients_special_points():
    with tf.Graph().as_default():
        x = tf.constant([0.0, 1.0], tf.float64)
        assert special.bessel_j0(x).name == "bessel_j0/BesselJ0:0"
        assert special.bessel_i0 is tf.math.bessel_i0
        j1_grad = tf.gradients(special.bessel_j1(x), x)[0]
        spence_grad = tf.gradients(special.spence(x + 0.0), x)[0]
        with tf.Session() as sess:
            j1_at, spence_at = sess.run([j1_grad, spence_grad])
    assert j1_at[0] == 0.5                      # J1'(0) = 1/2, not 0/0
    assert spence_at[1] == -1.0                 # spence'(1) = -1, not 0/0
    np.testing.assert_allclose(j1_at[1], sp.j0(1.0) - sp.j1(1.0))
