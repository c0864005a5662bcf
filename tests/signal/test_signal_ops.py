"""tf.signal's framing, shifts, windows and STFTs against NumPy/SciPy references (forward,
static shapes with unknown dimensions, gradients by central differences) and TF's errors."""
import numpy as np
import pytest
import scipy.signal
import scipy.signal.windows

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _frame_ref(x, length, step, pad_end=False, pad_value=0):
    """Frames of the last axis."""
    if pad_end:
        frames = -(-x.shape[-1] // step)
        extra = max(0, length + step * (frames - 1) - x.shape[-1])
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)], constant_values=pad_value)
    if x.shape[-1] < length:
        return np.zeros(x.shape[:-1] + (0, length), x.dtype)
    return np.lib.stride_tricks.sliding_window_view(x, length, axis=-1)[..., ::step, :]


def _overlap_add_ref(frames, step):
    count, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + (length + step * (count - 1),), frames.dtype)
    for f in range(count):
        out[..., f * step:f * step + length] += frames[..., f, :]
    return out


def _window(name, length, periodic=True, dtype=np.float32):
    return scipy.signal.get_window(name, length, fftbins=periodic).astype(dtype)


def _stft_ref(x, length, step, fft_length, pad_end=False):
    frames = _frame_ref(x, length, step, pad_end=pad_end) * _window("hann", length, True,
                                                                     x.dtype)
    out = np.fft.rfft(frames, fft_length)
    return out.astype(np.complex64 if x.dtype == np.float32 else np.complex128)


def _inverse_stft_ref(spectra, length, step, fft_length):
    frames = np.fft.irfft(spectra, fft_length)[..., :length]
    frames = np.pad(frames, [(0, 0)] * (frames.ndim - 1) + [(0, length - frames.shape[-1])])
    return _overlap_add_ref(frames * _window("hann", length, True, np.float64), step)


def _beta(rng, dt):
    return np.asarray(2.0 + 3.0 * rng.rand(), dt)


def _vorbis_ref(length):
    n = np.arange(length)
    return np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / length) ** 2)


def _parts(y):
    return [tf.real(y), tf.imag(y)]


_TOL = {"rtol": 1e-4, "atol": 1e-4}

CASES = [
    # --- fftshift / ifftshift
    # Shifting every axis needs a known rank (as in TensorFlow).
    OpCase("fftshift", tf.signal.fftshift, np.fft.fftshift, [_randn(3, 5)], dtypes=FLOAT,
           unknown_shapes=False),
    OpCase("fftshift_axes", lambda x: tf.signal.fftshift(x, axes=[-1]),
           lambda x: np.fft.fftshift(x, axes=[-1]), [_randn(3, 4)], dtypes=FLOAT),
    OpCase("ifftshift_int_axis", lambda x: tf.signal.ifftshift(x, axes=0),
           lambda x: np.fft.ifftshift(x, axes=0), [_randn(5, 2)], dtypes=FLOAT),
    # --- frame
    OpCase("frame", lambda x: tf.signal.frame(x, 8, 3), lambda x: _frame_ref(x, 8, 3),
           [_randn(2, 37)], dtypes=(tf.float32, tf.float64, tf.int32)),
    OpCase("frame_pad_end", lambda x: tf.signal.frame(x, 8, 5, pad_end=True, pad_value=2),
           lambda x: _frame_ref(x, 8, 5, pad_end=True, pad_value=2), [_randn(2, 37)]),
    OpCase("frame_axis0", lambda x: tf.signal.frame(x, 4, 2, axis=0),
           lambda x: np.stack([x[f * 2:f * 2 + 4] for f in range(4)]), [_randn(10, 3)]),
    OpCase("frame_too_short", lambda x: tf.signal.frame(x, 40, 3),
           lambda x: _frame_ref(x, 40, 3), [_randn(2, 37)]),
    # --- overlap_and_add
    OpCase("overlap_and_add", lambda x: tf.signal.overlap_and_add(x, 3),
           lambda x: _overlap_add_ref(x, 3), [_randn(2, 5, 7)], dtypes=FLOAT),
    OpCase("overlap_and_add_step_is_length", lambda x: tf.signal.overlap_and_add(x, 3),
           lambda x: _overlap_add_ref(x, 3), [_randn(4, 3)], dtypes=FLOAT),
    OpCase("overlap_and_add_step_above_length", lambda x: tf.signal.overlap_and_add(x, 5),
           lambda x: _overlap_add_ref(x, 5), [_randn(3, 4, 2)], dtypes=FLOAT),
    # --- stft / inverse_stft
    OpCase("stft", lambda x: tf.signal.stft(x, 16, 4), lambda x: _stft_ref(x, 16, 4, 16),
           [_randn(2, 37)], dtypes=FLOAT, grad=False, **_TOL),
    OpCase("stft_pad_end", lambda x: tf.signal.stft(x, 10, 4, fft_length=12, pad_end=True),
           lambda x: _stft_ref(x, 10, 4, 12, pad_end=True), [_randn(37)], dtypes=FLOAT,
           grad=False, **_TOL),
    OpCase("stft_grad", lambda x: _parts(tf.signal.stft(x, 6, 3)),
           lambda x: [_stft_ref(x, 6, 3, 8).real, _stft_ref(x, 6, 3, 8).imag], [_randn(2, 14)],
           dtypes=(tf.float64,)),
    OpCase("inverse_stft", lambda a, b: tf.signal.inverse_stft(tf.complex(a, b), 12, 5),
           lambda a, b: _inverse_stft_ref(a + 1j * b, 12, 5, 16), [_randn(2, 4, 9),
                                                                    _randn(2, 4, 9)],
           dtypes=(tf.float64,)),
    OpCase("inverse_stft_short_fft",
           lambda a, b: tf.signal.inverse_stft(tf.complex(a, b), 12, 5, fft_length=10),
           lambda a, b: _inverse_stft_ref(a + 1j * b, 12, 5, 10), [_randn(3, 6), _randn(3, 6)],
           dtypes=(tf.float64,)),
    # --- Kaiser windows as functions of a tensor beta
    OpCase("kaiser_window_beta", lambda b: tf.signal.kaiser_window(9, beta=b, dtype=b.dtype),
           lambda b: np.kaiser(9, b).astype(b.dtype), [_beta], dtypes=FLOAT),
    OpCase("kaiser_bessel_derived_window_beta",
           lambda b: tf.signal.kaiser_bessel_derived_window(10, beta=b, dtype=b.dtype),
           lambda b: scipy.signal.windows.kaiser_bessel_derived(10, b).astype(b.dtype),
           [_beta], dtypes=FLOAT),
]

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
test_shapes = case_tests([c for c in CASES if c.unknown_shapes])[1]


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("fn,name", [(tf.signal.hann_window, "hann"),
                                     (tf.signal.hamming_window, "hamming")])
@pytest.mark.parametrize("length", [1, 2, 9, 10])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(fn, name, length, periodic):
    for dtype in FLOAT:
        got = _run(fn(length, periodic=periodic, dtype=dtype))
        # TensorFlow's periodic flag only changes even lengths.
        want = _window(name, length, periodic and length % 2 == 0, dtype.as_numpy_dtype)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("length", [1, 2, 7, 8, 64])
@pytest.mark.parametrize("beta", [0.0, 3.5, 12.0])
def test_kaiser_windows(length, beta):
    for dtype in FLOAT:
        np_dtype = dtype.as_numpy_dtype
        got = _run(tf.signal.kaiser_window(length, beta, dtype=dtype))
        assert got.dtype == np_dtype
        np.testing.assert_allclose(got, np.kaiser(length, beta), rtol=1e-5, atol=1e-6)
        # TF's KBD window of odd length N is that of length N - 1 (it uses N // 2).
        got = _run(tf.signal.kaiser_bessel_derived_window(length, beta, dtype=dtype))
        want = scipy.signal.windows.kaiser_bessel_derived(length // 2 * 2, beta)
        assert got.dtype == np_dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("length", [1, 2, 7, 8, 64])
def test_vorbis_window(length):
    for dtype in FLOAT:
        got = _run(tf.signal.vorbis_window(length, dtype=dtype))
        assert got.dtype == dtype.as_numpy_dtype
        np.testing.assert_allclose(got, _vorbis_ref(length), rtol=1e-6, atol=1e-6)


def test_mdct_windows_are_power_complementary_and_of_fed_length():
    length = tf.placeholder(tf.int32, [])
    windows = [tf.signal.vorbis_window(length, dtype=tf.float64),
               tf.signal.kaiser_bessel_derived_window(length, dtype=tf.float64)]
    kaiser = tf.signal.kaiser_window(length)
    assert [w.shape.as_list() for w in windows + [kaiser]] == [[None]] * 3
    with tf.Session() as sess:
        for w in sess.run(windows, {length: 12}):
            np.testing.assert_allclose(w[:6] ** 2 + w[6:] ** 2, np.ones(6), atol=1e-12)
            np.testing.assert_allclose(w, w[::-1], atol=1e-12)
        np.testing.assert_allclose(sess.run(kaiser, {length: 10}), np.kaiser(10, 12.0),
                                   rtol=1e-5, atol=1e-6)
        # As in TF 2.21 (values captured from it): only a static length of 1 gives [1.0]; a
        # fed 1 divides 0 by 0.
        np.testing.assert_array_equal(sess.run(kaiser, {length: 1}), [np.nan])


def test_window_of_fed_length():
    length = tf.placeholder(tf.int32, [])
    window = tf.signal.hann_window(length)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(window, {length: 6}), _window("hann", 6), atol=1e-6)
        np.testing.assert_array_equal(sess.run(window, {length: 1}), [1.0])


def test_inverse_stft_with_inverse_window_reconstructs():
    x = np.random.RandomState(0).randn(64)
    window_fn = tf.signal.inverse_stft_window_fn(4)
    y = tf.signal.inverse_stft(tf.signal.stft(tf.constant(x), 16, 4), 16, 4,
                               window_fn=window_fn)
    np.testing.assert_allclose(_run(y)[12:-12], x[12:-12], atol=1e-10)


def test_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, None])
        assert tf.signal.stft(x, 16, 4).op.name == "stft/rfft"
        assert tf.signal.frame(tf.zeros([2, 37]), 8, 3).shape.as_list() == [2, 10, 8]
        assert tf.signal.frame(x, 8, 3).shape.as_list() == [2, None, 8]
        assert tf.signal.frame(tf.zeros([37]), 8, 5, pad_end=True).shape.as_list() == [8, 8]
        assert tf.signal.overlap_and_add(tf.zeros([5, 7]), 3).shape.as_list() == [19]
        assert tf.signal.kaiser_window(9).op.name == "kaiser_window/mul_1"
        assert tf.signal.vorbis_window(8, name="v").op.name == "v/Sin_1"
        assert tf.signal.kaiser_window(9).shape.as_list() == [9]
        assert tf.signal.kaiser_bessel_derived_window(9).shape.as_list() == [8]
        assert tf.signal.vorbis_window(8).shape.as_list() == [8]


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.signal.frame(tf.constant(1.0), 2, 1), ValueError, "rank"),
    (lambda: tf.signal.frame(tf.zeros([5]), [2], 1), ValueError, "rank"),
    (lambda: tf.signal.overlap_and_add(tf.zeros([5]), 1), ValueError, "rank"),
    (lambda: tf.signal.overlap_and_add(tf.zeros([5, 3]), 1.0), ValueError,
     "frame_step must be an integer"),
    (lambda: tf.signal.hann_window(4, dtype=tf.int32), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.kaiser_window(4, dtype=tf.int32), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.kaiser_bessel_derived_window(4, dtype=tf.int32), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.vorbis_window(4, dtype=tf.int32), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.kaiser_window([4, 5]), ValueError, "must have rank 0"),
    (lambda: tf.signal.vorbis_window([4, 5]), ValueError, "must have rank 0"),
    (lambda: tf.signal.stft(tf.constant(1.0), 4, 2), ValueError, "rank"),
    (lambda: tf.signal.inverse_stft(tf.zeros([3], tf.complex64), 4, 2), ValueError, "rank"),
])
def test_build_errors(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        build()
