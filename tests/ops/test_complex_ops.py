"""Complex, Real, Imag, Angle: forward against NumPy, shape functions against the kernels,
gradients (through real-valued compositions, since the checker differentiates float outputs),
and TensorFlow's wrapper behaviour on real inputs and bad dtypes."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
COMPLEX = (tf.complex64, tf.complex128)


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 2).astype(dt)


def _crandn(*shape):
    return lambda rng, dt: (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dt)


def _np_complex(re, im):
    return (re + 1j * im).astype(np.complex64 if re.dtype == np.float32 else np.complex128)


def _square_parts(x, y):
    """Re and Im of (x + yj)^2 + angle(x + yj): exercises all four gradients."""
    z = tf.complex(x, y)
    return [tf.real(z * z), tf.imag(z * z), tf.angle(z)]


def _square_parts_ref(x, y):
    z = x + 1j * y
    return [np.real(z * z), np.imag(z * z), np.angle(z)]


CASES = [
    OpCase("complex", tf.complex, _np_complex, [_randn(2, 3), _randn(2, 3)], dtypes=FLOAT,
           grad=False),
    OpCase("complex_broadcast", tf.complex, _np_complex, [_randn(4, 1), _randn(3)],
           dtypes=FLOAT, grad=False),
    OpCase("complex_empty", tf.complex, _np_complex, [_randn(0, 2), _randn(2)], dtypes=FLOAT,
           grad=False),
    OpCase("real", tf.real, np.real, [_crandn(3, 2)], dtypes=COMPLEX, grad=False),
    OpCase("imag", tf.imag, np.imag, [_crandn(3, 2)], dtypes=COMPLEX, grad=False),
    OpCase("angle", tf.angle, np.angle, [_crandn(5)], dtypes=COMPLEX, grad=False),
    OpCase("angle_empty", tf.math.angle, np.angle, [_crandn(0, 2)], dtypes=COMPLEX,
           grad=False),
    OpCase("parts_of_square", _square_parts, _square_parts_ref,
           [_randn(2, 3), _randn(2, 3)], dtypes=FLOAT),
    OpCase("parts_broadcast", _square_parts, _square_parts_ref, [_randn(3, 1), _randn(2)],
           dtypes=FLOAT),
    # Real inputs: no Real/Imag/Angle op; real(x) is x, imag zeros, angle pi below zero.
    OpCase("real_of_real", tf.real, lambda x: x, [_randn(4)], dtypes=(tf.float32, tf.int32),
           grad=False),
    OpCase("imag_of_real", tf.imag, np.zeros_like, [_randn(4)], dtypes=FLOAT, grad=False),
    OpCase("angle_of_real", tf.angle, np.angle, [np.array([-1.5, 0.0, 2.0])], dtypes=FLOAT,
           grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_op_types_dtypes_and_names():
    with tf.Graph().as_default():
        z = tf.complex(tf.zeros([2], tf.float64), tf.ones([2], tf.float64))
        assert (z.op.type, z.op.name, z.dtype) == ("Complex", "Complex", tf.complex128)
        parts = [tf.real(z), tf.imag(z), tf.angle(z)]
        assert [p.op.type for p in parts] == ["Real", "Imag", "Angle"]
        assert all(p.dtype == tf.float64 for p in parts)
        assert tf.math.real(tf.constant([1j], tf.complex64)).dtype == tf.float32
        x = tf.constant([1.0])
        assert tf.real(x) is x
        assert tf.imag(x).op.name == "Imag_1/zeros_like"
        assert tf.angle(x).op.type == "Select"
    with tf.Graph().as_default():
        # Python numbers become Consts named "real" and "imag", outside the op's scope.
        c = tf.complex(1.0, 2.0, name="c")
        assert [t.op.name for t in c.op.inputs] == ["real", "imag"]


@pytest.mark.parametrize("re,im,message", [
    (1, 2, "incorrect types: int32 int32"),
    (tf.constant(1.0), tf.constant(1.0, tf.float64), "incorrect types: float32 float64"),
])
def test_complex_rejects_bad_dtypes(re, im, message):
    with pytest.raises(TypeError, match=message):
        tf.complex(re, im)


def test_build_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.complex(tf.zeros([2]), tf.zeros([3]))
        with pytest.raises(TypeError, match="must be a numeric tensor"):
            tf.real(tf.constant("s"))


def test_real_gradient_is_complex():
    """d/dz of Re(z) * w is w + 0j; of Im(z) * w is 0 + wj (TensorFlow's convention)."""
    with tf.Graph().as_default():
        z = tf.constant([1 + 2j, -3j], tf.complex64)
        w = tf.constant([2.0, 5.0])
        g_re, g_im = (tf.gradients(tf.reduce_sum(f(z) * w), z)[0] for f in (tf.real, tf.imag))
        with tf.Session() as sess:
            re, im = sess.run([g_re, g_im])
    np.testing.assert_array_equal(re, [2, 5])
    np.testing.assert_array_equal(im, [2j, 5j])
