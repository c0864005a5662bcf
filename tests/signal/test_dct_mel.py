"""tf.signal's DCTs, MFCCs and mel filterbank against scipy.fft and a NumPy mel reference
(forward, static shapes, gradients by central differences) and TF's argument errors."""
import numpy as np
import pytest
import scipy.fft

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
_INVERSE = {1: 1, 2: 3, 3: 2, 4: 4}


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _dct_ref(dct_type, n=None, norm=None):
    """scipy's DCT (TF's unnormalized DCT is scipy's; TF's idct is the unscaled inverse type)."""
    return lambda x: scipy.fft.dct(x, type=dct_type, n=n, norm=norm).astype(x.dtype)


def _mfcc_ref(x):
    return (scipy.fft.dct(x, type=2) / np.sqrt(2.0 * x.shape[-1])).astype(x.dtype)


def _mel_ref(bins, spectrogram_bins, rate, low, high):
    def mel(f):
        return 1127.0 * np.log(1.0 + f / 700.0)
    freqs = mel(np.linspace(0.0, rate / 2.0, spectrogram_bins)[1:, None])
    edges = np.linspace(mel(low), mel(high), bins + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((freqs - lower) / (center - lower),
                                         (upper - freqs) / (upper - center)))
    return np.pad(weights, [[1, 0], [0, 0]])


_TOL = {"rtol": 1e-4, "atol": 1e-4}

CASES = []
for _type in (1, 2, 3, 4):
    CASES += [
        OpCase(f"dct{_type}", lambda x, t=_type: tf.signal.dct(x, type=t), _dct_ref(_type),
               [_randn(2, 6)], dtypes=FLOAT, **_TOL),
        OpCase(f"idct{_type}", lambda x, t=_type: tf.signal.idct(x, type=t),
               _dct_ref(_INVERSE[_type]), [_randn(3, 5)], dtypes=FLOAT, **_TOL),
    ]
    if _type > 1:
        CASES += [OpCase(f"dct{_type}_ortho",
                         lambda x, t=_type: tf.signal.dct(x, type=t, norm="ortho"),
                         _dct_ref(_type, norm="ortho"), [_randn(2, 7)], dtypes=FLOAT, **_TOL),
                  OpCase(f"idct{_type}_ortho",
                         lambda x, t=_type: tf.signal.idct(x, type=t, norm="ortho"),
                         _dct_ref(_INVERSE[_type], norm="ortho"), [_randn(4)], dtypes=FLOAT,
                         **_TOL)]
CASES += [
    OpCase("dct_truncated", lambda x: tf.signal.dct(x, n=4), _dct_ref(2, n=4), [_randn(2, 6)],
           dtypes=FLOAT, **_TOL),
    OpCase("dct_padded", lambda x: tf.signal.dct(x, n=9), _dct_ref(2, n=9), [_randn(2, 6)],
           dtypes=FLOAT, **_TOL),
    OpCase("dct3_padded", lambda x: tf.signal.dct(x, type=3, n=8), _dct_ref(3, n=8),
           [_randn(5)], dtypes=FLOAT, **_TOL),
    OpCase("spectral_dct", tf.spectral.dct, _dct_ref(2), [_randn(3, 4)], dtypes=FLOAT, **_TOL),
    OpCase("mfccs", tf.signal.mfccs_from_log_mel_spectrograms, _mfcc_ref, [_randn(2, 3, 13)],
           dtypes=FLOAT, **_TOL),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("args,dtype", [
    ((), tf.float32),
    ((8, 33, 16000, 20.0, 8000.0), tf.float64),
    ((40, 257, 22050.0, 0.0, 11025.0), tf.float64),
])
def test_linear_to_mel_weight_matrix(args, dtype):
    with tf.Graph().as_default():
        got = _run(tf.signal.linear_to_mel_weight_matrix(*args, dtype=dtype))
    defaults = (20, 129, 8000, 125.0, 3800.0)
    want = _mel_ref(*(args + defaults[len(args):]))
    assert got.dtype == dtype.as_numpy_dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_mel_matrix_of_a_sample_rate_tensor():
    with tf.Graph().as_default():
        rate = tf.placeholder(tf.float32, [])
        matrix = tf.signal.linear_to_mel_weight_matrix(10, 65, rate, 100.0, 4000.0)
        with tf.Session() as sess:
            got = sess.run(matrix, {rate: 16000.0})
    np.testing.assert_allclose(got, _mel_ref(10, 65, 16000.0, 100.0, 4000.0), atol=1e-5)


def test_mfcc_of_unknown_width():
    x = np.random.RandomState(0).randn(4, 6)
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.float64, [4, None])
        with tf.Session() as sess:
            got = sess.run(tf.signal.mfccs_from_log_mel_spectrograms(holder), {holder: x})
    np.testing.assert_allclose(got, _mfcc_ref(x), atol=1e-10)


def test_dct_of_unknown_width_with_n():
    x = np.random.RandomState(1).randn(2, 5)
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.float64, [2, None])
        with tf.Session() as sess:
            padded, cut = sess.run([tf.signal.dct(holder, n=8), tf.signal.dct(holder, n=3)],
                                   {holder: x})
    np.testing.assert_allclose(padded, scipy.fft.dct(x, n=8), atol=1e-10)
    np.testing.assert_allclose(cut, scipy.fft.dct(x, n=3), atol=1e-10)


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.signal.dct(tf.zeros([4]), axis=0), NotImplementedError, "axis must be -1"),
    (lambda: tf.signal.dct(tf.zeros([4]), n=0), ValueError, "n should be a positive integer"),
    (lambda: tf.signal.idct(tf.zeros([4]), type=5), ValueError,
     "Types I, II, III and IV"),
    (lambda: tf.signal.dct(tf.zeros([4]), type=1, norm="ortho"), ValueError,
     "Normalization is not supported for the Type-I DCT"),
    (lambda: tf.signal.dct(tf.zeros([1]), type=1), ValueError,
     "Type-I DCT requires the dimension to be greater than one"),
    (lambda: tf.signal.dct(tf.zeros([4]), norm="forward"), ValueError,
     "Unknown normalization"),
    (lambda: tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([3, 0])), ValueError,
     "num_mel_bins must be positive"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(0), ValueError,
     "num_mel_bins must be positive"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=-1.0), ValueError,
     "lower_edge_hertz must be non-negative"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=500.0,
                                                   upper_edge_hertz=400.0), ValueError,
     "lower_edge_hertz 500.0 >= upper_edge_hertz 400.0"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(sample_rate=0), ValueError,
     "sample_rate must be positive"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0), ValueError,
     "must not be larger than the Nyquist frequency"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(dtype=tf.int32), ValueError,
     "dtype must be a floating point type"),
])
def test_argument_errors(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        build()
