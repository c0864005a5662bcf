"""AudioSpectrogram and Mfcc: forward against frame-by-frame NumPy references and TensorFlow
2.21's numbers, static shapes, TF's errors and its missing gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

RATE = 16000


def _spectrogram_ref(window_size, stride, squared):
    """One frame at a time: periodic Hann window, FFT padded to a power of two, float64."""
    def ref(audio):
        fft = 2 ** int(np.ceil(np.log2(window_size)))
        hann = np.array([0.5 - 0.5 * np.cos(2 * np.pi * n / window_size)
                         for n in range(window_size)])
        frames = []
        for start in range(0, audio.shape[0] - window_size + 1, stride):
            segment = audio[start:start + window_size].astype(np.float64).T * hann
            power = (np.abs(np.fft.fft(segment, fft)[:, :fft // 2 + 1]) ** 2).astype(np.float32)
            frames.append(power if squared else np.sqrt(power))
        if not frames:
            return np.zeros([audio.shape[1], 0, fft // 2 + 1], np.float32)
        return np.stack(frames, 1)
    return ref


def _mel(hz):
    return 1127.0 * np.log(1.0 + hz / 700.0)


def _mfcc_ref(lower=20.0, upper=4000.0, channels=40, coefficients=13, rate=RATE):
    """Triangular mel filters over the bins' square roots, log, then an orthonormal DCT-II."""
    def ref(spectrogram):
        bins = spectrogram.shape[-1]
        edges = np.linspace(_mel(lower), _mel(upper), channels + 2)   # feet and peaks
        hz = np.arange(bins) * 0.5 * rate / (bins - 1)
        first, last = int(1.5 + lower / (hz[1])), int(upper / hz[1])
        weights = np.zeros([bins, channels])
        for c in range(channels):
            low, peak, high = edges[c], edges[c + 1], edges[c + 2]
            for i in range(first, last + 1):
                m = _mel(hz[i])
                if low < m <= peak:
                    weights[i, c] = (m - low) / (peak - low)
                elif peak < m <= high:
                    weights[i, c] = (high - m) / (high - peak)
        log_mel = np.log(np.maximum(np.sqrt(spectrogram.astype(np.float64)) @ weights, 1e-12))
        n = np.arange(channels)
        dct = np.array([np.sqrt(2.0 / channels) * np.cos(np.pi * k * (n + 0.5) / channels)
                        for k in range(coefficients)])
        return (log_mel @ dct.T).astype(np.float32)
    return ref


def _tones(samples, channels):
    """Sine mixtures plus a little noise, one per channel."""
    def make(rng, dtype):
        t = np.arange(samples)[:, None] / RATE
        freqs = 300.0 + 700.0 * np.arange(channels)
        tones = 0.5 * np.sin(2 * np.pi * freqs * t) + 0.3 * np.sin(2 * np.pi * 3.7 * freqs * t)
        return (tones + 0.05 * rng.randn(samples, channels)).astype(dtype)
    return make


def _power(samples, bins):
    return lambda rng, dtype: (rng.uniform(0, 3, [2, samples, bins]) ** 2).astype(dtype)


def _spectrogram_case(name, audio, window_size, stride, squared=False, rtol=1e-5):
    def build(x):
        return tf.raw_ops.AudioSpectrogram(input=x, window_size=window_size, stride=stride,
                                           magnitude_squared=squared)
    return OpCase(name, build, _spectrogram_ref(window_size, stride, squared), [audio],
                  grad=False, rtol=rtol, atol=1e-5)


def _mfcc_case(name, spectrogram, **attrs):
    keys = {"lower_frequency_limit": "lower", "upper_frequency_limit": "upper",
            "filterbank_channel_count": "channels", "dct_coefficient_count": "coefficients"}
    return OpCase(name, lambda s: tf.raw_ops.Mfcc(spectrogram=s, sample_rate=RATE, **attrs),
                  _mfcc_ref(**{keys[k]: v for k, v in attrs.items()}), [spectrogram],
                  grad=False, rtol=1e-5, atol=1e-4)


CASES = [
    _spectrogram_case("spectrogram_speech_commands", _tones(1600, 1), 480, 160, squared=True,
                      rtol=1e-4),
    _spectrogram_case("spectrogram_magnitude_stereo", _tones(900, 2), 256, 100),
    _spectrogram_case("spectrogram_odd_window", _tones(500, 3), 100, 37),
    _spectrogram_case("spectrogram_stride_past_window", _tones(60, 1), 5, 9, squared=True),
    _spectrogram_case("spectrogram_window_of_two", _tones(7, 2), 2, 1),
    _spectrogram_case("spectrogram_shorter_than_window", _tones(50, 2), 64, 8),
    _spectrogram_case("spectrogram_no_channels", np.zeros([40, 0], np.float32), 16, 4),
    _mfcc_case("mfcc_defaults", _power(3, 257)),
    _mfcc_case("mfcc_all_coefficients", _power(2, 129), filterbank_channel_count=20,
               dct_coefficient_count=20, lower_frequency_limit=0.0,
               upper_frequency_limit=7999.0),
    _mfcc_case("mfcc_narrow_band", _power(4, 513), filterbank_channel_count=12,
               dct_coefficient_count=5, lower_frequency_limit=300.0,
               upper_frequency_limit=3400.0),
    _mfcc_case("mfcc_no_frames", _power(0, 257)),
    OpCase("mfcc_of_a_spectrogram", lambda x: tf.raw_ops.Mfcc(
        spectrogram=tf.raw_ops.AudioSpectrogram(input=x, window_size=400, stride=160,
                                                magnitude_squared=True), sample_rate=RATE),
        lambda x: _mfcc_ref()(_spectrogram_ref(400, 160, True)(x)), [_tones(2000, 2)],
        grad=False, rtol=1e-5, atol=1e-4),
]
test_forward, test_shapes = case_tests(CASES)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_values_match_tensorflow():
    """TF 2.21's numbers for a tone pair and white noise (a window of 300 pads the FFT to
    512); its FFT differs from NumPy's by at most one float32 rounding."""
    rng = np.random.RandomState(7)
    t = np.arange(4000) / RATE
    audio = np.stack([0.6 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 2500 * t),
                      rng.uniform(-1, 1, 4000)], 1).astype(np.float32)
    with tf.Graph().as_default():
        power = tf.raw_ops.AudioSpectrogram(input=audio, window_size=300, stride=128,
                                            magnitude_squared=True)
        magnitude = tf.raw_ops.AudioSpectrogram(input=audio, window_size=300, stride=128)
        mfcc = tf.raw_ops.Mfcc(spectrogram=power, sample_rate=RATE)
        power, magnitude, mfcc = _run([power, magnitude, mfcc])
    assert power.shape == (2, 29, 257) and mfcc.shape == (2, 29, 13)
    np.testing.assert_allclose(power[:, 3, 26:30], [
        [2.2436570361605845e-06, 0.0010655971709638834, 0.0001750936353346333,
         0.00023473764304071665],
        [24.172529220581055, 19.123689651489258, 5.384232997894287, 4.646349906921387]],
        rtol=2e-7)
    np.testing.assert_allclose(magnitude[:, 10, 155:159], [
        [1.5120562238735147e-05, 4.908785558654927e-05, 3.242089951527305e-05,
         3.155638842144981e-05],
        [9.567329406738281, 10.063056945800781, 7.3577728271484375, 4.870593070983887]],
        rtol=2e-7)
    np.testing.assert_allclose(power.sum(axis=(1, 2)), [167040.015625, 278331.875], rtol=1e-6)
    np.testing.assert_allclose(mfcc[:, 3], [
        [-21.237852096557617, 7.338150501251221, 2.958847761154175, -4.576333999633789,
         -13.33401107788086, 2.294203758239746, -6.13070011138916, 3.262333631515503,
         3.3804028034210205, -0.5756906867027283, 3.262970209121704, -2.7786996364593506,
         -0.49715450406074524],
        [24.765777587890625, -3.143207550048828, -0.05530316010117531, 0.2855679988861084,
         -0.06742371618747711, -1.0998857021331787, -0.5317680239677429, -0.22475038468837738,
         0.37220829725265503, -0.6527332067489624, -0.5644716024398804, -0.11968347430229187,
         -0.15707197785377502]], rtol=1e-6, atol=1e-6)


def test_mfcc_edge_cases_match_tensorflow():
    """Silence floors at log(1e-12); negative power gives NaN; an upper limit past the last
    bin, or a filterbank too fine for the bins (TF only logs it), as TensorFlow 2.21 gives."""
    with tf.Graph().as_default():
        silence = tf.raw_ops.Mfcc(spectrogram=np.zeros([1, 1, 257], np.float32),
                                  sample_rate=RATE)
        negative = tf.raw_ops.Mfcc(spectrogram=-np.ones([1, 1, 257], np.float32),
                                   sample_rate=RATE)
        beyond = tf.raw_ops.Mfcc(spectrogram=np.ones([2, 3, 257], np.float32), sample_rate=RATE,
                                 upper_frequency_limit=9000.0)
        coarse = tf.raw_ops.Mfcc(spectrogram=np.full([1, 1, 5], 2.0, np.float32),
                                 sample_rate=RATE)
        silence, negative, beyond, coarse = _run([silence, negative, beyond, coarse])
    np.testing.assert_allclose(silence[0, 0, 0], -247.13936, rtol=1e-6)
    np.testing.assert_allclose(silence[0, 0, 1:], 0.0, atol=1e-5)
    assert np.isnan(negative).all()
    np.testing.assert_array_equal(beyond, np.zeros([2, 3, 13], np.float32))
    np.testing.assert_allclose(coarse[0, 0], _mfcc_ref()(np.full([1, 5], 2.0))[0], rtol=1e-6)


def test_static_shapes_names_and_no_gradient():
    with tf.Graph().as_default():
        audio = tf.placeholder(tf.float32, [None, 2])
        spectrogram = tf.raw_ops.AudioSpectrogram(input=audio, window_size=10, stride=3)
        assert spectrogram.op.type == "AudioSpectrogram" and spectrogram.name == \
            "AudioSpectrogram:0"
        assert spectrogram.shape.as_list() == [2, None, 9]
        assert spectrogram.op.get_attr("magnitude_squared") is False
        short = tf.raw_ops.AudioSpectrogram(input=tf.zeros([5, 2]), window_size=10, stride=3)
        assert short.shape.as_list() == [2, 0, 9]
        fitted = tf.raw_ops.AudioSpectrogram(input=tf.zeros([100, 2]), window_size=10, stride=3)
        assert fitted.shape.as_list() == [2, 31, 9]
        mfcc = tf.raw_ops.Mfcc(spectrogram=spectrogram, sample_rate=8000,
                               dct_coefficient_count=7)
        assert mfcc.op.type == "Mfcc" and mfcc.shape.as_list() == [2, None, 7]
        assert mfcc.op.get_attr("upper_frequency_limit") == 4000.0
        assert mfcc.op.get_attr("filterbank_channel_count") == 40
        unknown = tf.raw_ops.Mfcc(spectrogram=tf.placeholder(tf.float32), sample_rate=RATE)
        assert unknown.shape.as_list() == [None, None, 13]
        for op_type in ("AudioSpectrogram", "Mfcc"):
            with pytest.raises(LookupError, match=f"No gradient defined for operation "
                                                  f"'{op_type}' \\(op type: {op_type}\\)"):
                tf.gradients(mfcc if op_type == "Mfcc" else spectrogram,
                             spectrogram if op_type == "Mfcc" else audio)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.raw_ops.AudioSpectrogram(input=tf.zeros([100]), window_size=10, stride=3),
     r"Shape must be rank 2 but is rank 1 for '{{node AudioSpectrogram}} = AudioSpectrogram"
     r"\[magnitude_squared=false, stride=3, window_size=10\]"),
    (lambda: tf.raw_ops.AudioSpectrogram(input=tf.zeros([100, 2]), window_size=1, stride=3),
     "window size must be > 1, got 1"),
    (lambda: tf.raw_ops.AudioSpectrogram(input=tf.zeros([100, 2]), window_size=0, stride=0),
     "window size must be > 1, got 0"),
    (lambda: tf.raw_ops.AudioSpectrogram(input=tf.zeros([100, 2]), window_size=2, stride=-1),
     "stride must be strictly positive, got -1"),
    (lambda: tf.raw_ops.Mfcc(spectrogram=tf.zeros([5, 9]), sample_rate=RATE),
     "Shape must be rank 3 but is rank 2 for '{{node Mfcc}} = Mfcc"),
    (lambda: tf.raw_ops.Mfcc(spectrogram=tf.zeros([2, 5, 9]), sample_rate=[RATE]),
     "Shape must be rank 0 but is rank 1"),
])
def test_construction_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            build()


_INIT_FAILED = "Mfcc initialization failed for channel count {}, sample rate {} and " \
    "filterbank_channel_count {}"


@pytest.mark.parametrize("spectrogram,rate,attrs,message", [
    ([2, 3, 257], 0, {}, _INIT_FAILED.format(257, 0, 40)),
    ([2, 3, 257], -5, {}, _INIT_FAILED.format(257, -5, 40)),
    ([2, 3, 257], RATE, {"upper_frequency_limit": 20.0}, _INIT_FAILED.format(257, RATE, 40)),
    ([2, 3, 257], RATE, {"lower_frequency_limit": -1.0}, _INIT_FAILED.format(257, RATE, 40)),
    ([2, 3, 257], RATE, {"filterbank_channel_count": 0}, _INIT_FAILED.format(257, RATE, 0)),
    ([2, 3, 257], RATE, {"dct_coefficient_count": 0}, _INIT_FAILED.format(257, RATE, 40)),
    ([2, 3, 257], RATE, {"dct_coefficient_count": 41}, _INIT_FAILED.format(257, RATE, 40)),
    ([2, 3, 1], RATE, {}, _INIT_FAILED.format(1, RATE, 40)),
    ([3, 257], RATE, {}, r"spectrogram must be 3-dimensional\[3,257\]"),
    ([2, 3, 257], [RATE], {}, r"Input sample_rate should be a scalar tensor, got \[1\] instead."),
])
def test_mfcc_runtime_errors(spectrogram, rate, attrs, message):
    with tf.Graph().as_default():
        s, r = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        mfcc = tf.raw_ops.Mfcc(spectrogram=s, sample_rate=r, **attrs)
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            _run(mfcc, {s: np.ones(spectrogram, np.float32), r: rate})


@pytest.mark.parametrize("shape", [[100], [2, 3, 4]])
def test_spectrogram_rank_error_when_run(shape):
    with tf.Graph().as_default():
        audio = tf.placeholder(tf.float32)
        spectrogram = tf.raw_ops.AudioSpectrogram(input=audio, window_size=4, stride=2)
        expected = r"input must be 2-dimensional\[" + ",".join(map(str, shape)) + r"\]"
        with pytest.raises(tf.errors.InvalidArgumentError, match=expected):
            _run(spectrogram, {audio: np.zeros(shape, np.float32)})
