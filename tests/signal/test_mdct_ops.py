"""tf.signal.mdct and inverse_mdct against the MDCT's defining cosine sums in NumPy (forward,
static shapes, gradients by central differences), time-domain aliasing cancellation, and
TF's errors."""
import numpy as np
import pytest
import scipy.signal.windows

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
_TOL = {"rtol": 1e-4, "atol": 1e-4}


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _vorbis(length):
    n = np.arange(length)
    return np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / length) ** 2)


_WINDOWS = {
    "vorbis": (tf.signal.vorbis_window, _vorbis),
    "kbd": (tf.signal.kaiser_bessel_derived_window,
            lambda length: scipy.signal.windows.kaiser_bessel_derived(length, 12.0)),
    "none": (None, lambda length: np.full(length, np.sqrt(0.5))),
    "hann": (tf.signal.hann_window, lambda length: scipy.signal.get_window("hann", length)),
}


def _basis(half):
    """cos(pi / N (n + 1/2 + N/2)(k + 1/2)): [2N samples, N bins]."""
    n, k = np.arange(2 * half)[:, None], np.arange(half)[None, :]
    return np.cos(np.pi / half * (n + 0.5 + half / 2) * (k + 0.5))


def _mdct_ref(x, length, window="vorbis", norm=None, pad_end=False):
    """TF's unnormalized MDCT is twice the textbook sum (its DCT-IV is scipy's)."""
    half = length // 2
    if pad_end:
        frames = -(-x.shape[-1] // half)
        extra = max(0, length + half * (frames - 1) - x.shape[-1])
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)])
    frames = np.lib.stride_tricks.sliding_window_view(x, length, axis=-1)[..., ::half, :]
    scale = np.sqrt(2.0 / half) if norm == "ortho" else 2.0
    out = (frames * _WINDOWS[window][1](length)) @ _basis(half) * scale
    return out.astype(x.dtype)


def _inverse_mdct_ref(spectra, window="vorbis", norm=None):
    half = spectra.shape[-1]
    scale = np.sqrt(2.0 / half) if norm == "ortho" else 1.0 / half
    frames = spectra @ _basis(half).T * scale * _WINDOWS[window][1](2 * half)
    out = np.zeros(spectra.shape[:-2] + ((spectra.shape[-2] + 1) * half,))
    for f in range(spectra.shape[-2]):
        out[..., f * half:(f + 2) * half] += frames[..., f, :]
    return out.astype(spectra.dtype)


CASES = []
for _window in _WINDOWS:
    for _norm in (None, "ortho"):
        _fn = _WINDOWS[_window][0]
        CASES += [
            OpCase(f"mdct_{_window}_{_norm}",
                   lambda x, w=_fn, n=_norm: tf.signal.mdct(x, 8, window_fn=w, norm=n),
                   lambda x, w=_window, n=_norm: _mdct_ref(x, 8, w, n), [_randn(2, 29)],
                   dtypes=FLOAT, **_TOL),
            # The last dimension must be known (TF casts the static size to a tensor).
            OpCase(f"inverse_mdct_{_window}_{_norm}",
                   lambda x, w=_fn, n=_norm: tf.signal.inverse_mdct(x, window_fn=w, norm=n),
                   lambda x, w=_window, n=_norm: _inverse_mdct_ref(x, w, n),
                   [_randn(2, 5, 6)], dtypes=FLOAT, unknown_shapes=False, **_TOL),
        ]
CASES += [
    OpCase("mdct_pad_end", lambda x: tf.signal.mdct(x, 12, pad_end=True),
           lambda x: _mdct_ref(x, 12, pad_end=True), [_randn(31)], dtypes=FLOAT, **_TOL),
    OpCase("mdct_batch", lambda x: tf.signal.mdct(x, 4, norm="ortho"),
           lambda x: _mdct_ref(x, 4, norm="ortho"), [_randn(2, 3, 10)], dtypes=FLOAT, **_TOL),
]

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
test_shapes = case_tests([c for c in CASES if c.unknown_shapes])[1]


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("window", ["vorbis", "kbd", "none"])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_inverse_of_mdct_reconstructs_the_signal(window, norm):
    """TF's docstring example: with a power-complementary window the aliases cancel (TDAC)."""
    samples, length = 1000, 400
    x = np.random.RandomState(0).randn(samples).astype(np.float32)
    window_fn = _WINDOWS[window][0]
    spectra = tf.signal.mdct(tf.pad(x, [[length // 2, 0]]), length, window_fn=window_fn,
                             pad_end=True, norm=norm)
    y = tf.signal.inverse_mdct(spectra, window_fn=window_fn, norm=norm)
    np.testing.assert_allclose(_run(y)[length // 2:length // 2 + samples], x, rtol=1e-3,
                               atol=1e-4)


def test_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        spectra = tf.signal.mdct(x, 8)
        assert spectra.op.name == "mdct/dct/strided_slice"
        assert spectra.shape.as_list() == [None, None, 4]
        assert tf.signal.mdct(tf.zeros([2, 50]), 8).shape.as_list() == [2, 11, 4]
        assert tf.signal.mdct(tf.zeros([50]), 8, pad_end=True).shape.as_list() == [13, 4]
        assert tf.signal.inverse_mdct(tf.zeros([3, 5, 4])).shape.as_list() == [3, 24]
        assert tf.signal.inverse_mdct(spectra).shape.as_list() == [None, None]
        length = tf.placeholder(tf.int32, [])
        fed = tf.signal.mdct(x, length)
        assert fed.shape.as_list() == [None, None, None]
        signal = np.arange(40.0, dtype=np.float32).reshape(2, 20)
        np.testing.assert_allclose(_run(fed, {x: signal, length: 8}), _mdct_ref(signal, 8),
                                   rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.signal.mdct(tf.zeros([20]), 6), ValueError,
     "^The frame length must be a multiple of 4.$"),
    (lambda: tf.signal.mdct(tf.zeros([20]), [8]), ValueError, "must have rank 0"),
    (lambda: tf.signal.mdct(tf.constant(1.0), 8), ValueError, "must have rank at least 1"),
    (lambda: tf.signal.mdct(tf.zeros([20]), 8, norm="foo"), ValueError,
     "Unknown normalization. Expected None or 'ortho', got: foo"),
    (lambda: tf.signal.mdct(tf.zeros([20]), 8, window_fn=lambda n: tf.ones([n])), TypeError,
     "unexpected keyword argument 'dtype'"),
    (lambda: tf.signal.mdct(tf.zeros([20], tf.int32), 8), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.inverse_mdct(tf.zeros([4])), ValueError, "must have rank at least 2"),
    # TensorFlow fails here with an UnboundLocalError; we say why.
    (lambda: tf.signal.inverse_mdct(tf.zeros([3, 4]), norm="foo"), ValueError,
     "Unknown normalization. Expected None or 'ortho', got: foo"),
])
def test_build_errors(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        build()
