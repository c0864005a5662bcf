"""FFT ops: forward against numpy.fft (batch dims, fft_length crops and pads, empty inputs),
shape functions against the kernels, gradients against central differences (through
tf.complex / tf.real / tf.imag, since the harness differentiates real tensors), TF's errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import fft_ops
from tensorweave.testing.op_case import OpCase, case_tests

REAL = (tf.float32, tf.float64)
COMPLEX = (tf.complex64, tf.complex128)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _crandn(*shape):
    return lambda rng, dt: (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dt)


def _cast_ref(fn, complex_out):
    """numpy.fft computes in double precision: cast back to the TF output dtype."""
    def ref(x, *rest):
        out = fn(x, *rest)
        if complex_out:
            return out.astype(np.complex64 if x.dtype in (np.float32, np.complex64)
                              else np.complex128)
        return out.astype(np.float32 if x.dtype == np.complex64 else np.float64)
    return ref


def _parts(y):
    """[Re y, Im y]: real outputs the gradient harness can weigh."""
    return [tf.real(y), tf.imag(y)]


def _complex_in(fn):
    """fn applied to complex(a, b): the harness feeds real a and b."""
    return lambda a, b: fn(tf.complex(a, b))


_TOL = {"rtol": 1e-4, "atol": 1e-4}

CASES = [
    # --- complex to complex
    OpCase("fft", tf.signal.fft, _cast_ref(np.fft.fft, True), [_crandn(3, 8)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("ifft_batch", tf.signal.ifft, _cast_ref(np.fft.ifft, True), [_crandn(2, 3, 5)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("fft_empty", tf.signal.fft, lambda x: x, [_crandn(0, 4)], dtypes=COMPLEX,
           grad=False),
    OpCase("fft2d", tf.signal.fft2d, _cast_ref(np.fft.fft2, True), [_crandn(2, 4, 6)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("ifft2d", tf.signal.ifft2d, _cast_ref(np.fft.ifft2, True), [_crandn(3, 5)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("fft3d", tf.signal.fft3d, _cast_ref(np.fft.fftn, True), [_crandn(2, 3, 4)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("ifft3d_batch", tf.signal.ifft3d,
           _cast_ref(lambda x: np.fft.ifftn(x, axes=(1, 2, 3)), True), [_crandn(2, 2, 3, 4)],
           dtypes=COMPLEX, grad=False, **_TOL),
    # --- real to half spectrum and back
    OpCase("rfft", tf.signal.rfft, _cast_ref(np.fft.rfft, True), [_randn(3, 8)], dtypes=REAL,
           grad=False, **_TOL),
    OpCase("rfft_crop", lambda x: tf.signal.rfft(x, [5]),
           _cast_ref(lambda x: np.fft.rfft(x, 5), True), [_randn(2, 8)], dtypes=REAL,
           grad=False, **_TOL),
    OpCase("rfft_pad", lambda x: tf.signal.rfft(x, [11]),
           _cast_ref(lambda x: np.fft.rfft(x, 11), True), [_randn(2, 8)], dtypes=REAL,
           grad=False, **_TOL),
    OpCase("rfft_empty_batch", tf.signal.rfft,
           lambda x: np.zeros((0, 4), np.complex64 if x.dtype == np.float32 else np.complex128),
           [_randn(0, 6)], dtypes=REAL, grad=False),
    OpCase("irfft", tf.signal.irfft, _cast_ref(np.fft.irfft, False), [_crandn(3, 5)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("irfft_odd", lambda x: tf.signal.irfft(x, [7]),
           _cast_ref(lambda x: np.fft.irfft(x, 7), False), [_crandn(2, 4)], dtypes=COMPLEX,
           grad=False, **_TOL),
    OpCase("irfft_fed_length", lambda x, n: tf.signal.irfft(x, n),
           _cast_ref(lambda x, n: np.fft.irfft(x, int(n[0])), False),
           [_crandn(2, 5), lambda rng, dt: np.array([6])], fixed_dtypes=(None, tf.int32),
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("rfft2d", tf.signal.rfft2d, _cast_ref(np.fft.rfft2, True), [_randn(2, 4, 6)],
           dtypes=REAL, grad=False, **_TOL),
    OpCase("irfft2d", lambda x: tf.signal.irfft2d(x, [4, 7]),
           _cast_ref(lambda x: np.fft.irfft2(x, (4, 7)), False), [_crandn(4, 4)],
           dtypes=COMPLEX, grad=False, **_TOL),
    OpCase("rfft3d", tf.signal.rfft3d, _cast_ref(np.fft.rfftn, True), [_randn(2, 3, 4)],
           dtypes=REAL, grad=False, **_TOL),
    OpCase("irfft3d", tf.signal.irfft3d,
           _cast_ref(lambda x: np.fft.irfftn(x, axes=(1, 2, 3)), False),
           [_crandn(2, 2, 3, 3)], dtypes=COMPLEX, grad=False, **_TOL),
    # --- gradients (float64, against central differences)
    OpCase("fft_grad", _complex_in(lambda z: _parts(tf.signal.fft(z))),
           lambda a, b: [np.fft.fft(a + 1j * b).real, np.fft.fft(a + 1j * b).imag],
           [_randn(2, 5), _randn(2, 5)], dtypes=(tf.float64,)),
    OpCase("ifft2d_grad", _complex_in(lambda z: _parts(tf.signal.ifft2d(z))),
           lambda a, b: [np.fft.ifft2(a + 1j * b).real, np.fft.ifft2(a + 1j * b).imag],
           [_randn(3, 4), _randn(3, 4)], dtypes=(tf.float64,)),
    OpCase("fft3d_grad", _complex_in(lambda z: _parts(tf.signal.fft3d(z))),
           lambda a, b: [np.fft.fftn(a + 1j * b).real, np.fft.fftn(a + 1j * b).imag],
           [_randn(2, 2, 3), _randn(2, 2, 3)], dtypes=(tf.float64,)),
    OpCase("rfft_grad_even", lambda x: _parts(tf.signal.rfft(x)),
           lambda x: [np.fft.rfft(x).real, np.fft.rfft(x).imag], [_randn(2, 6)],
           dtypes=(tf.float64,)),
    OpCase("rfft_grad_odd_padded", lambda x: _parts(tf.signal.rfft(x, [7])),
           lambda x: [np.fft.rfft(x, 7).real, np.fft.rfft(x, 7).imag], [_randn(5)],
           dtypes=(tf.float64,)),
    OpCase("rfft2d_grad", lambda x: _parts(tf.signal.rfft2d(x)),
           lambda x: [np.fft.rfft2(x).real, np.fft.rfft2(x).imag], [_randn(2, 3, 4)],
           dtypes=(tf.float64,)),
    OpCase("irfft_grad", _complex_in(lambda z: tf.signal.irfft(z)),
           lambda a, b: np.fft.irfft(a + 1j * b), [_randn(2, 5), _randn(2, 5)],
           dtypes=(tf.float64,)),
    OpCase("irfft_grad_odd", _complex_in(lambda z: tf.signal.irfft(z, [7])),
           lambda a, b: np.fft.irfft(a + 1j * b, 7), [_randn(4), _randn(4)],
           dtypes=(tf.float64,)),
    OpCase("irfft2d_grad", _complex_in(lambda z: tf.signal.irfft2d(z)),
           lambda a, b: np.fft.irfft2(a + 1j * b), [_randn(3, 4), _randn(3, 4)],
           dtypes=(tf.float64,)),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def test_names_and_namespaces():
    x = tf.zeros([2, 8])
    assert tf.signal.rfft(x).op.name == "rfft" and tf.signal.rfft(x).op.type == "RFFT"
    assert tf.signal.irfft2d(tf.zeros([2, 3], tf.complex64)).op.type == "IRFFT2D"
    assert tf.fft(tf.zeros([3], tf.complex64)).op.name.startswith("FFT")
    assert tf.spectral.rfft3d is tf.signal.rfft3d and tf.ifft3d is tf.signal.ifft3d


def test_static_shapes():
    assert tf.signal.rfft(tf.zeros([2, 6]), [4]).shape.as_list() == [2, 3]
    assert tf.signal.rfft(tf.placeholder(tf.float32, [2, None]), [4]).shape.as_list() == [None, 3]
    assert tf.signal.irfft2d(tf.placeholder(tf.complex64, [2, 4, 5])).shape.as_list() == \
        [2, 4, 8]
    unknown = tf.placeholder(tf.int32, [None])
    assert tf.signal.rfft(tf.placeholder(tf.float32, [2, 5]), unknown).shape.as_list() == \
        [None, None]
    assert tf.signal.rfft(tf.placeholder(tf.float32)).shape.ndims is None


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.signal.fft(tf.zeros([3])), TypeError, "not in list of allowed values"),
    (lambda: tf.signal.fft(tf.constant(1j, tf.complex64)), ValueError,
     "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.signal.rfft(tf.constant([1, 2])), ValueError,
     "RFFT requires tf.float32 or tf.float64 inputs"),
    (lambda: tf.signal.irfft(tf.zeros([4])), ValueError,
     "IRFFT requires tf.complex64 or tf.complex128 inputs"),
    (lambda: tf.signal.rfft(tf.zeros([8]), [4, 4]), ValueError, "Dimension must be 1 but is 2"),
    (lambda: tf.signal.rfft2d(tf.zeros([8])), ValueError, "rank"),
])
def test_build_errors(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        build()


def test_run_time_errors():
    lengths = tf.placeholder(tf.int32, [1])
    x = tf.zeros([8])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"fft_length\[0\] must >= 0, "
                       "but got: -1"):
        _run(tf.signal.rfft(x, lengths), {lengths: [-1]})
    short = apply_op(fft_ops.RFFT, [tf.zeros([3, 4]), [6]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input dimension 1 must have length of at least 6 but got: 4"):
        _run(short)
    any_rank = tf.placeholder(tf.complex64)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input must have rank of at least 2 but got: \[3\]"):
        _run(tf.signal.fft2d(any_rank), {any_rank: np.ones(3, np.complex64)})


def test_empty_inner_dimension_gives_zeros():
    out = _run(tf.signal.irfft(tf.zeros([3, 0], tf.complex64), [6]))
    np.testing.assert_array_equal(out, np.zeros((3, 6), np.float32))


def test_no_gradient_for_3d_real_transforms():
    """As in TensorFlow, RFFT3D and IRFFT3D have no registered gradient."""
    x = tf.placeholder(tf.float32, [2, 2, 2])
    with pytest.raises(LookupError, match="RFFT3D"):
        tf.gradients(tf.reduce_sum(tf.abs(tf.signal.rfft3d(x))), x)
