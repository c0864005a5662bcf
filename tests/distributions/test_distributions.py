"""tf.distributions: Normal, Uniform, Bernoulli and Categorical against scipy.stats and against
TensorFlow 2.21's values (recorded with shared/programs/run_with_tf.py), sample shapes and
statistics, gradients through log_prob and reparameterized samples, KL divergences and the
registry's errors."""
import numpy as np
import pytest
import scipy.stats as st

import tensorweave as tf

D = tf.distributions


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        yield


def _run(*fetches):
    with tf.Session() as sess:
        return sess.run(list(fetches))


def test_normal_against_scipy_and_tensorflow():
    normal = D.Normal(loc=[0.0, 1.0], scale=[1.0, 2.0])
    assert (normal.name, normal.batch_shape, normal.event_shape, normal.dtype) == (
        "Normal/", tf.TensorShape([2]), tf.TensorShape([]), tf.float32)
    assert normal.reparameterization_type is D.FULLY_REPARAMETERIZED
    x = np.array([0.5, -0.7], np.float32)
    got = _run(normal.log_prob(x), normal.prob(x), normal.cdf(x), normal.log_cdf(x),
               normal.survival_function(x), normal.entropy(), normal.mean(), normal.stddev(),
               normal.variance(), normal.mode())
    ref = st.norm([0.0, 1.0], [1.0, 2.0])
    for g, r in zip(got, [ref.logpdf(x), ref.pdf(x), ref.cdf(x), ref.logcdf(x), ref.sf(x),
                          ref.entropy(), ref.mean(), ref.std(), ref.var(), [0.0, 1.0]]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    # TensorFlow's values at 0.5, for both members of the batch.
    np.testing.assert_allclose(_run(normal.log_prob(0.5))[0], [-1.0439385, -1.6433357],
                               rtol=1e-6)
    assert D.Normal(0.0, 1.0, name="N").log_prob(0.5).op.name == "N/log_prob/sub"


def test_samples_shape_statistics_and_reparameterized_gradients():
    loc, scale = tf.constant([0.0, 10.0]), tf.constant([1.0, 0.5])
    normal = D.Normal(loc, scale)
    samples = normal.sample([4000, 2], seed=3)
    assert samples.shape == tf.TensorShape([4000, 2, 2])
    assert samples.op.name == "Normal/sample/Reshape"
    d_loc, d_scale = tf.gradients(tf.reduce_sum(samples), [loc, scale])
    drawn, g_loc, g_scale = _run(samples, d_loc, d_scale)
    np.testing.assert_allclose(drawn.mean(axis=(0, 1)), [0.0, 10.0], atol=0.05)
    np.testing.assert_allclose(drawn.std(axis=(0, 1)), [1.0, 0.5], rtol=0.05)
    np.testing.assert_allclose(g_loc, [8000.0, 8000.0])          # d(loc + scale z)/d loc
    np.testing.assert_allclose(g_scale, ((drawn - [0.0, 10.0]) / [1.0, 0.5]).sum((0, 1)),
                               rtol=1e-3, atol=1e-2)              # = z
    assert normal.sample(seed=1).shape == tf.TensorShape([2])
    n = tf.placeholder(tf.int32, [])
    dynamic = normal.sample(n, seed=1)
    with tf.Session() as sess:
        assert sess.run(dynamic, {n: 5}).shape == (5, 2)


def test_log_prob_gradient_matches_finite_differences():
    loc, scale = tf.Variable(0.3), tf.Variable(1.7)
    log_prob = D.Normal(loc, scale).log_prob(tf.constant([0.9, -1.2]))
    total = tf.reduce_sum(log_prob)
    grads = tf.gradients(total, [loc, scale])

    def value(mu, sigma):
        return st.norm(mu, sigma).logpdf([0.9, -1.2]).sum()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g_loc, g_scale = sess.run(grads)
    h = 1e-4
    np.testing.assert_allclose(g_loc, (value(0.3 + h, 1.7) - value(0.3 - h, 1.7)) / (2 * h),
                               rtol=1e-3)
    np.testing.assert_allclose(g_scale, (value(0.3, 1.7 + h) - value(0.3, 1.7 - h)) / (2 * h),
                               rtol=1e-3)


def test_uniform():
    uniform = D.Uniform(low=0.0, high=[1.0, 4.0])
    got = _run(uniform.log_prob([0.5, 3.0]), uniform.prob([1.5, 4.0]), uniform.cdf(0.5),
               uniform.entropy(), uniform.mean(), uniform.variance(), uniform.stddev(),
               uniform.range())
    np.testing.assert_allclose(got[0], [0.0, -1.3862944], rtol=1e-6)   # TensorFlow's
    np.testing.assert_allclose(got[1], [0.0, 0.0])                     # [low, high)
    np.testing.assert_allclose(got[2], [0.5, 0.125])
    ref = st.uniform([0.0, 0.0], [1.0, 4.0])
    for g, r in zip(got[3:], [ref.entropy(), ref.mean(), ref.var(), ref.std(), [1.0, 4.0]]):
        np.testing.assert_allclose(g, r, rtol=1e-6)
    drawn = _run(uniform.sample(2000, seed=7))[0]
    assert drawn.shape == (2000, 2) and (drawn >= 0).all() and (drawn[:, 1] < 4).all()
    with pytest.raises(NotImplementedError, match="mode is not implemented: Uniform"):
        uniform.mode()


def test_bernoulli():
    coin = D.Bernoulli(logits=[0.0, 2.0])
    assert (coin.dtype, coin.reparameterization_type) == (tf.int32, D.NOT_REPARAMETERIZED)
    got = _run(coin.log_prob([1, 0]), coin.probs, coin.entropy(), coin.mean(),
               coin.variance(), coin.mode(), D.Bernoulli(probs=0.3).logits)
    p = 1 / (1 + np.exp(-np.array([0.0, 2.0])))
    np.testing.assert_allclose(got[0], [-0.6931472, -2.126928], rtol=1e-6)  # TensorFlow's
    np.testing.assert_allclose(got[1], p, rtol=1e-6)
    np.testing.assert_allclose(got[2], st.bernoulli(p).entropy(), rtol=1e-5)
    np.testing.assert_allclose(got[3], p, rtol=1e-6)
    np.testing.assert_allclose(got[4], p * (1 - p), rtol=1e-5)
    np.testing.assert_array_equal(got[5], [0, 1])
    np.testing.assert_allclose(got[6], np.log(0.3 / 0.7), rtol=1e-6)
    draws = _run(coin.sample(4000, seed=3))[0]
    assert draws.dtype == np.int32 and draws.shape == (4000, 2)
    np.testing.assert_allclose(draws.mean(0), p, atol=0.03)
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both."):
        D.Bernoulli(logits=0.0, probs=0.5)


def test_categorical():
    dice = D.Categorical(logits=[[1.0, 2.0, 3.0]])
    assert (dice.batch_shape, dice.event_shape, dice.dtype) == (
        tf.TensorShape([1]), tf.TensorShape([]), tf.int32)
    got = _run(dice.log_prob([2]), dice.entropy(), dice.probs, dice.mode(), dice.event_size,
               dice.log_prob(0))
    np.testing.assert_allclose(got[0], [-0.40760595], rtol=1e-6)             # TensorFlow's
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(got[1], [st.entropy(p)], rtol=1e-5)
    np.testing.assert_allclose(got[2], [p], rtol=1e-6)
    np.testing.assert_array_equal(got[3], [2])
    assert got[4] == 3
    np.testing.assert_allclose(got[5], [np.log(p[0])], rtol=1e-5)          # broadcast class
    draws = _run(dice.sample(6000, seed=5))[0]
    assert draws.shape == (6000, 1)
    np.testing.assert_allclose(np.bincount(draws.ravel(), minlength=3) / 6000, p, atol=0.03)
    by_probs = D.Categorical(probs=[0.2, 0.8])
    np.testing.assert_allclose(_run(by_probs.logits)[0], np.log([0.2, 0.8]), rtol=1e-6)


def test_kl_divergences_are_tensorflows():
    normal = D.Normal(loc=[0.0, 1.0], scale=[1.0, 2.0])
    kl = D.kl_divergence(normal, D.Normal(0.0, 1.0))
    assert kl.op.name == "KullbackLeibler/kl_normal_normal/add"
    coin, dice = D.Bernoulli(logits=[0.0, 2.0]), D.Categorical(logits=[[1.0, 2.0, 3.0]])
    got = _run(kl, D.kl_divergence(coin, D.Bernoulli(probs=0.5)),
               D.kl_divergence(dice, D.Categorical(logits=[[0.0, 0.0, 0.0]])),
               normal.kl_divergence(normal))
    np.testing.assert_allclose(got[0], [0.0, 1.3068528], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[1], [0.0, 0.32781336], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[2], [0.26621675], rtol=1e-5)
    np.testing.assert_allclose(got[3], [0.0, 0.0], atol=1e-7)


def test_kl_divergences_of_the_gamma_beta_and_dirichlet_families():
    got = _run(D.kl_divergence(D.Gamma([2.0, 0.5], [1.0, 3.0]), D.Gamma(1.5, 2.0)),
               D.kl_divergence(D.Beta([2.0, 0.7], [3.0, 1.5]), D.Beta(1.0, 1.0)),
               D.kl_divergence(D.Dirichlet([[1.5, 2.0, 3.0], [0.5, 1.0, 2.0]]),
                               D.Dirichlet([1.0, 1.0, 1.0])),
               D.kl_divergence(D.Exponential(2.0), D.Gamma(1.5, 2.0)))
    # TensorFlow 2.21's values.
    np.testing.assert_allclose(got[0], [1.050889, 1.7118946], rtol=1e-5)
    np.testing.assert_allclose(got[1], [0.23490667, 0.23225576], rtol=1e-5)
    np.testing.assert_allclose(got[2], [0.40845704, 0.7884227], rtol=1e-5)
    np.testing.assert_allclose(got[3], 0.1678257, rtol=1e-5)
    # KL(Beta || Uniform(0, 1)) is minus Beta's entropy.
    np.testing.assert_allclose(got[1], -_run(D.Beta([2.0, 0.7], [3.0, 1.5]).entropy())[0],
                               rtol=1e-5)


def test_kl_registry_errors():
    with pytest.raises(NotImplementedError) as info:
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(probs=0.5))
    assert str(info.value) == ("No KL(distribution_a || distribution_b) registered for "
                               "distribution_a type Normal and distribution_b type Bernoulli")
    with pytest.raises(ValueError, match=r"KL\(Normal \|\| Normal\) has already been "
                                         r"registered to"):
        D.RegisterKL(D.Normal, D.Normal)(lambda a, b, name=None: 0.0)
    with pytest.raises(TypeError, match="kl_fn must be callable"):
        D.RegisterKL(D.Uniform, D.Uniform)(3)

    class Wide(D.Normal):
        """A subclass finds its parent's KL through the MRO."""
    kl = D.kl_divergence(Wide(0.0, 2.0), D.Normal(0.0, 1.0))
    np.testing.assert_allclose(_run(kl)[0], 0.5 * (4.0 - 1.0 - np.log(4.0)), rtol=1e-6)


@pytest.mark.parametrize("make, reference, points", [
    (lambda: D.Laplace([0.0, 1.0], [1.0, 2.0]),
     lambda: st.laplace([0.0, 1.0], [1.0, 2.0]), [0.3, 1.7]),
    (lambda: D.Gamma([2.0, 0.5], [1.0, 3.0]),
     lambda: st.gamma([2.0, 0.5], scale=[1.0, 1 / 3.0]), [0.3, 1.7]),
    (lambda: D.Exponential([1.0, 2.5]), lambda: st.expon(scale=[1.0, 0.4]), [0.3, 1.7]),
    (lambda: D.Beta([2.0, 0.7], [3.0, 1.5]), lambda: st.beta([2.0, 0.7], [3.0, 1.5]),
     [0.3, 0.9]),
], ids=["laplace", "gamma", "exponential", "beta"])
def test_more_families_against_scipy(make, reference, points):
    dist, ref = make(), reference()
    x = np.array(points, np.float32)
    got = _run(dist.log_prob(x), dist.cdf(x), dist.entropy(), dist.mean(), dist.variance(),
               dist.stddev(), dist.sample([500], seed=4))
    for g, r in zip(got, [ref.logpdf(x), ref.cdf(x), ref.entropy(), ref.mean(), ref.var(),
                          ref.std()]):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)
    assert got[-1].shape == (500, 2)
    np.testing.assert_allclose(got[-1].mean(0), ref.mean(), atol=0.3 * ref.std().max())
    assert dist.reparameterization_type is D.FULLY_REPARAMETERIZED


def test_modes_that_do_not_exist():
    gamma_mode, beta_mode, exp_mode = _run(D.Gamma([2.0, 0.5], [1.0, 3.0]).mode(),
                                           D.Beta([2.0, 0.7], [3.0, 1.5]).mode(),
                                           D.Exponential([1.0]).mode())
    np.testing.assert_allclose(gamma_mode, [1.0, np.nan])
    np.testing.assert_allclose(beta_mode, [1 / 3, np.nan], rtol=1e-6)
    np.testing.assert_array_equal(exp_mode, [np.nan])    # TensorFlow's (Gamma's with a = 1)
    with pytest.raises(tf.errors.InvalidArgumentError,    # constants: checked when built
                       match="mode not defined when any concentration <= 1"):
        D.Gamma(0.5, 1.0, allow_nan_stats=False).mode()
    concentration = tf.placeholder(tf.float32, [])
    strict = D.Beta(concentration, 2.0, allow_nan_stats=False).mode()
    with tf.Session() as sess:
        assert sess.run(strict, {concentration: 3.0}) == pytest.approx(2 / 3)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Mode undefined for concentration1 <= 1."):
            sess.run(strict, {concentration: 0.5})
    np.testing.assert_allclose(_run(D.Laplace(1.5, 2.0).mode())[0], 1.5)


def test_gamma_samples_differentiate_in_their_parameters():
    concentration = tf.constant(3.0)
    samples = D.Gamma(concentration, 2.0).sample(200, seed=9)
    (grad,) = tf.gradients(tf.reduce_mean(samples), [concentration])
    value = _run(grad)[0]
    assert np.isfinite(value) and 0.2 < value < 0.8      # d E[x] / d a = 1 / rate = 0.5


def test_student_t():
    dist = D.StudentT(df=[0.8, 1.5, 5.0], loc=[0.0, 1.0, -1.0], scale=[1.0, 2.0, 0.5])
    x = np.array([0.3, 1.7, -2.0], np.float32)
    ref = st.t([0.8, 1.5, 5.0], [0.0, 1.0, -1.0], [1.0, 2.0, 0.5])
    got = _run(dist.log_prob(x), dist.cdf(x), dist.entropy(), dist.mean(), dist.variance(),
               dist.mode(), dist.sample(3000, seed=2))
    for g, r in zip(got[:3], [ref.logpdf(x), ref.cdf(x), ref.entropy()]):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)
    # TensorFlow's: no mean for df <= 1, an infinite variance for 1 < df <= 2.
    np.testing.assert_array_equal(got[3], [np.nan, 1.0, -1.0])
    np.testing.assert_allclose(got[4], [np.nan, np.inf, 0.25 * 5 / 3], rtol=1e-6)
    np.testing.assert_array_equal(got[5], [0.0, 1.0, -1.0])
    np.testing.assert_allclose(np.median(got[6], 0), [0.0, 1.0, -1.0], atol=0.15)
    strict = D.StudentT(df=tf.placeholder_with_default(0.5, []), loc=0.0, scale=1.0,
                        allow_nan_stats=False).mean()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="mean not defined for components of df <= 1"):
        _run(strict)


def test_dirichlet():
    alpha = np.array([[1.5, 2.0, 3.0], [0.5, 1.0, 2.0]], np.float32)
    dist = D.Dirichlet(alpha)
    assert (dist.batch_shape, dist.event_shape) == (tf.TensorShape([2]), tf.TensorShape([3]))
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32)
    got = _run(dist.log_prob(x), dist.entropy(), dist.mean(), dist.variance(), dist.mode(),
               dist.total_concentration, dist.sample(2000, seed=1))
    np.testing.assert_allclose(got[0], [1.6952109, 1.5567577], rtol=1e-5)   # TensorFlow's
    for i, a in enumerate(alpha):
        ref = st.dirichlet(a)
        np.testing.assert_allclose(got[0][i], ref.logpdf(x[i]), rtol=1e-5)
        np.testing.assert_allclose(got[1][i], ref.entropy(), rtol=1e-5)
        np.testing.assert_allclose(got[2][i], ref.mean(), rtol=1e-6)
        np.testing.assert_allclose(got[3][i], ref.var(), rtol=1e-5)
    np.testing.assert_allclose(got[4][0], (alpha[0] - 1) / (alpha[0].sum() - 3), rtol=1e-6)
    assert np.isnan(got[4][1]).all()          # a concentration <= 1: no mode
    np.testing.assert_allclose(got[5], alpha.sum(1))
    samples = got[6]
    assert samples.shape == (2000, 2, 3)
    np.testing.assert_allclose(samples.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(samples.mean(0), got[2], atol=0.02)


def test_multinomial():
    logits = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]], np.float32)
    dist = D.Multinomial(total_count=[4.0, 6.0], logits=logits)
    assert (dist.batch_shape, dist.event_shape, dist.dtype) == (
        tf.TensorShape([2]), tf.TensorShape([3]), tf.float32)
    counts = np.array([[1.0, 1.0, 2.0], [2.0, 2.0, 2.0]], np.float32)
    got = _run(dist.log_prob(counts), dist.mean(), dist.variance(),
               dist.sample(3000, seed=3))
    np.testing.assert_allclose(got[0], [-2.1455169, -2.091864], rtol=1e-5)     # TensorFlow's
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    for i, n in enumerate([4, 6]):
        np.testing.assert_allclose(got[0][i], st.multinomial(n, p[i]).logpmf(counts[i]),
                                   rtol=1e-5)
    np.testing.assert_allclose(got[1], np.array([[4.0], [6.0]]) * p, rtol=1e-5)
    np.testing.assert_allclose(got[2], got[1] * (1 - p), rtol=1e-5)
    samples = got[3]
    assert samples.shape == (3000, 2, 3)
    np.testing.assert_array_equal(samples.sum(-1), np.broadcast_to([4.0, 6.0], (3000, 2)))
    np.testing.assert_allclose(samples.mean(0), got[1], atol=0.1)


def test_dirichlet_multinomial():
    alpha = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]], np.float32)
    dist = D.DirichletMultinomial(total_count=5.0, concentration=alpha)
    counts = np.array([[1.0, 1.0, 3.0], [0.0, 2.0, 3.0]], np.float32)
    got = _run(dist.log_prob(counts), dist.mean(), dist.variance(),
               dist.sample(3000, seed=2))
    np.testing.assert_allclose(got[0], [-2.5336967, -2.8213782], rtol=1e-5)    # TensorFlow's
    for i in range(2):
        ref = st.dirichlet_multinomial(alpha[i], 5)
        np.testing.assert_allclose(got[0][i], ref.logpmf(counts[i]), rtol=1e-5)
        np.testing.assert_allclose(got[1][i], ref.mean(), rtol=1e-5)
        np.testing.assert_allclose(got[2][i], ref.var(), rtol=1e-5)
    samples = got[3]
    np.testing.assert_array_equal(samples.sum(-1), 5.0)
    np.testing.assert_allclose(samples.mean(0), got[1], atol=0.15)
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both."):
        D.Multinomial(3.0)


@pytest.mark.parametrize("make, message", [
    (lambda p: D.Normal(0.0, p, validate_args=True).mean(), "x > 0"),
    (lambda p: D.Gamma(p, 1.0, validate_args=True).mean(), "x > 0"),
    (lambda p: D.Dirichlet(tf.stack([p, p]), validate_args=True).mean(), "x > 0"),
    (lambda p: D.Uniform(1.0, p, validate_args=True).mean(),
     "uniform not defined when low >= high."),
    (lambda p: D.Bernoulli(probs=p / 4.0, validate_args=True).mean(),
     "probs has components less than 0."),
    (lambda p: D.Categorical(probs=tf.stack([p / 4.0, 1.0 - p / 4.0]),
                             validate_args=True).entropy(),
     "probs has components (less than 0|greater than 1)."),
], ids=["normal", "gamma", "dirichlet", "uniform", "bernoulli", "categorical"])
def test_validate_args_checks_the_parameters_when_run(make, message):
    parameter = tf.placeholder(tf.float32, [])
    statistic = make(parameter)
    with tf.Session() as sess:
        sess.run(statistic, {parameter: 2.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(statistic, {parameter: -1.0})
    assert D.Normal(0.0, -1.0).mean() is not None     # unchecked without validate_args


def test_categorical_validate_args_checks_the_simplex():
    probs = tf.placeholder(tf.float32, [2])
    entropy = D.Categorical(probs=probs, validate_args=True).entropy()
    with tf.Session() as sess:
        sess.run(entropy, {probs: [0.25, 0.75]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="probs does not sum to 1."):
            sess.run(entropy, {probs: [0.25, 0.25]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="probs has components greater than 1."):
            sess.run(D.Bernoulli(probs=probs, validate_args=True).mean(), {probs: [0.5, 1.5]})

