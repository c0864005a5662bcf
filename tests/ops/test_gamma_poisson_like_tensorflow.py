"""Gamma and Poisson samples against TensorFlow 2.21's own, bit for bit: RandomGamma and
RandomPoissonV2 (tf.random_gamma / tf.random_poisson, and legacy RandomPoisson) run after run
and session after session, StatelessRandomGammaV3 and StatelessRandomGetKeyCounter
(tf.random.stateless_gamma) and StatelessRandomPoisson (tf.random.stateless_poisson), with
TF's errors and shape functions. The expected numbers were printed by TF 2.21 for the same
graphs (its RealDiv by a constant beta is left out: TF's grappler turns x / c into x * (1 / c),
which rounds differently)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import legacy_math_ops
from tensorweave.testing.op_case import OpCase, case_tests

NAN, INF = np.nan, np.inf
ALPHAS = [0.5, 1.0, 2.0, 10.0]
ODD = [0.0, -0.3, -0.7, -1.0, 1e-30, 1e-5, 1e10, INF, NAN]     # alpha
RATES = [0.0, -1.0, -INF, 0.3, 5.0, 9.99, 10.0, 30.0, 1000.0, 1e6, INF]

# TF's values, flattened: the first and second run of the graph in a session.
STATEFUL_TF = {
    'gamma_f32': (
        [0.842505156993866, 0.19565719366073608, 1.736432671546936, 6.220707416534424,
         1.4153525829315186, 0.06483662873506546, 5.417099952697754, 7.473881244659424,
         0.5619751811027527, 2.2761521339416504, 3.992220401763916, 10.625511169433594],
        [1.1913331747055054, 5.0979156494140625, 3.572481870651245, 6.454973220825195,
         0.3088447153568268, 0.14348933100700378, 0.11615226417779922, 12.591156005859375,
         0.06538030505180359, 0.40830758213996887, 1.9357926845550537, 8.174493789672852]),
    'gamma_f64': (
        [0.8425051488138098, 0.3347716322814259, 2.3975332906872664, 9.833343115919872,
         1.4153525562413112, 0.19565718821059244, 6.357629196514137, 16.697476570295954],
        [0.09980341887973145, 0.8076683990073658, 2.7200506490331633, 6.48411686710588,
         0.04759348640095684, 0.2243491708922581, 4.943269743761491, 11.72031094906061]),
    'gamma_f16': (
        [0.84228515625, 0.334716796875, 2.3984375, 9.8359375, 1.4150390625, 0.1956787109375,
         6.359375, 16.703125],
        [0.09979248046875, 0.8076171875, 2.720703125, 6.484375, 0.047607421875, 0.224365234375,
         4.94140625, 11.71875]),
    'gamma_odd_f64': (
        [2.2250738585072014e-308, 82.5119368057352, NAN, NAN, 2.2250738585072014e-308,
         2.2250738585072014e-308, 9999920996.79355, INF, NAN, 2.2250738585072014e-308,
         0.49955938686099793, NAN, NAN, 2.2250738585072014e-308, 2.2250738585072014e-308,
         10000078629.455544, INF, NAN],
        [2.2250738585072014e-308, 2.430182367364228e-05, NAN, NAN, 2.2250738585072014e-308,
         2.2250738585072014e-308, 10000006547.302896, INF, NAN, 2.2250738585072014e-308,
         0.8812720538986399, NAN, NAN, 2.2250738585072014e-308, 2.2250738585072014e-308,
         9999948332.16391, INF, NAN]),
    'gamma_op_seed_only': (
        [0.05776656046509743, 1.1629935503005981, 0.1584150642156601, 1.1107356548309326],
        [0.1601392924785614, 1.2092429399490356, 0.39277753233909607, 4.323025226593018]),
    'gamma_graph_seed_only': (
        [1.5503584146499634, 1.758209228515625, 1.9716070890426636, 2.1799190044403076],
        [0.7236922383308411, 0.8564751744270325, 2.7166786193847656, 2.240917921066284]),
    'gamma_2d_alpha': (
        [0.5072051882743835, 0.04377162083983421, 4.62803316116333, 1.4694671630859375,
         0.05899578332901001, 3.4111533164978027, 7.233280181884766, 0.48018696904182434],
        [0.054259564727544785, 0.10018125176429749, 2.005056142807007, 0.5726452469825745,
         0.02353774756193161, 0.8947973251342773, 4.526174068450928, 0.4444138705730438]),
    'poisson_i64': (
        [0, 0, 0, 2, 9, 5, 16, 27, 1012, 999010, 0, 0, 0, 0, 1, 5, 9, 8, 27, 1037, 998983, 0],
        [0, 0, 0, 0, 9, 8, 11, 29, 1037, 1000235, 0, 0, 0, 0, 0, 1, 9, 14, 18, 1024, 1000450, 0]),
    'poisson_f32': (
        [0.0, 0.0, 0.0, 2.0, 9.0, 5.0, 16.0, 27.0, 1012.0, 999010.0, INF, 0.0, 0.0, 0.0, 1.0, 5.0,
         9.0, 8.0, 27.0, 1037.0, 998983.0, INF],
        [0.0, 0.0, 0.0, 0.0, 9.0, 8.0, 11.0, 29.0, 1037.0, 1000235.0, INF, 0.0, 0.0, 0.0, 0.0, 1.0,
         9.0, 14.0, 18.0, 1024.0, 1000450.0, INF]),
    'poisson_i32': (
        [0, 0, 0, 2, 9, 5, 16, 27, 1012, 999010, 0, 0, 0, 0, 1, 5, 9, 8, 27, 1037, 998983, 0],
        [0, 0, 0, 0, 9, 8, 11, 29, 1037, 1000235, 0, 0, 0, 0, 0, 1, 9, 14, 18, 1024, 1000450, 0]),
    'poisson_f16': (
        [0.0, 0.0, 0.0, 2.0, 9.0, 5.0, 16.0, 27.0, 1012.0, INF, 0.0, 0.0, 0.0, 1.0, 5.0, 9.0, 8.0,
         27.0, 1037.0, INF],
        [0.0, 0.0, 0.0, 1.0, 4.0, 12.0, 10.0, 32.0, 997.0, INF, 0.0, 0.0, 0.0, 0.0, 9.0, 7.0, 10.0,
         37.0, 928.0, INF]),
    'poisson_int_rate': (
        [0.0, 3.0, 13.0, 533.0, 0.0, 4.0, 10.0, 479.0],
        [0.0, 2.0, 19.0, 487.0, 0.0, 2.0, 10.0, 490.0]),
    'poisson_huge_f64': (
        [1000000029318664.0, 9.999999975021801e+17, 3.999999997218213e+18, 999999963026691.0,
         1.0000000029593162e+18, 3.9999999962261386e+18],
        [1000000026695687.0, 1.000000002487898e+18, 3.9999999968856387e+18, 1000000019120079.0,
         1.0000000004714702e+18, 4.0000000005181676e+18]),
    'poisson_graph_seed_only': (
        [7.0, 43.0, 6.0, 38.0],
        [2.0, 42.0, 2.0, 44.0]),
    'poisson_f32_rate_seeds_4_9': (
        [2.0, 28.0, 5.0, 24.0],
        [2.0, 28.0, 4.0, 33.0]),}

# TF's values of the stateless graphs, flattened.
STATELESS_TF = {
    'sgamma_f32':
        [0.0669536143541336, 1.8935091495513916, 3.1218414306640625, 10.155170440673828,
         0.6282354593276978, 0.22994834184646606, 1.954573154449463, 9.050134658813477,
         0.18136732280254364, 1.1978732347488403, 2.847431182861328, 6.443700790405273],
    'sgamma_f64_int64_seed':
        [0.014968224374684685, 0.34693247955755857, 1.148888386828534, 9.831764545894304,
         0.0027526725572571357, 0.251928688912291, 0.5640189394841022, 12.857040057649014],
    'sgamma_f16':
        [0.043609619140625, 0.079345703125, 8.8984375, 9.5859375, 0.255615234375, 0.79345703125,
         2.615234375, 8.8359375],
    'sgamma_odd_f64':
        [2.2250738585072014e-308, 1.9035854791400804, NAN, NAN, 2.2250738585072014e-308,
         2.2250738585072014e-308, 9999943794.985048, INF, NAN, 2.2250738585072014e-308,
         5.794418859196968, NAN, NAN, 2.2250738585072014e-308, 2.2250738585072014e-308,
         10000035265.511951, INF, NAN],
    'sgamma_beta_fed':
        [0.003295229049399495, 0.6740582585334778, 0.08350206166505814, 6.953199863433838,
         0.11252172291278839, 1.2661582231521606, 0.00018956624262500554, 0.48809814453125,
         0.41056689620018005, 1.149951457977295, 0.9663223624229431, 1.6980746984481812],
    'sgamma_scalar':
        [0.009885687381029129],
    'spoisson_i32':
        [0, 0, 0, 0, 2, 12, 8, 23, 940, 999921, 0, 0, 0, 0, 0, 6, 6, 7, 28, 942, 1000564, 0],
    'spoisson_f64':
        [0.0, 0.0, 0.0, 0.0, 2.0, 12.0, 8.0, 23.0, 940.0, 999921.0, INF, 0.0, 0.0, 0.0, 0.0, 6.0,
         6.0, 7.0, 28.0, 942.0, 1000564.0, INF],
    'spoisson_int64_rate':
        [4, 88, 3, 76, 5, 72],
    'spoisson_f16_rate':
        [4.0, 88.0, 3.0, 76.0, 5.0, 72.0],
    'key_counter':
        [12061634333429103293, 0, 11657112851970742703],
    'key_counter_int32':
        [16308324488578348816, 0, 9701668974586119775],}

STATEFUL = [   # name, builder, graph seed (None: none set), output dtype
    ("gamma_f32", lambda: tf.random_gamma([3], ALPHAS, seed=7), 1, np.float32),
    ("gamma_f64", lambda: tf.random_gamma([2], ALPHAS, dtype=tf.float64, seed=7), 1, np.float64),
    ("gamma_f16", lambda: tf.random_gamma([2], ALPHAS, dtype=tf.float16, seed=7), 1, np.float16),
    ("gamma_odd_f64", lambda: tf.random_gamma([2], ODD, dtype=tf.float64, seed=8), 1,
     np.float64),
    ("gamma_op_seed_only", lambda: tf.random_gamma([2], [0.7, 3.0], seed=5), None, np.float32),
    ("gamma_graph_seed_only", lambda: tf.random_gamma([2], [0.7, 3.0]), 42, np.float32),
    ("gamma_2d_alpha", lambda: tf.random_gamma([2], [[0.2, 1.0], [4.0, 0.9]], seed=3), 1,
     np.float32),
    ("poisson_i64", lambda: tf.random_poisson(RATES, [2], dtype=tf.int64, seed=5), 1, np.int64),
    ("poisson_f32", lambda: tf.random_poisson(RATES, [2], dtype=tf.float32, seed=5), 1,
     np.float32),
    ("poisson_i32", lambda: tf.random_poisson(RATES, [2], dtype=tf.int32, seed=5), 1, np.int32),
    ("poisson_f16", lambda: tf.random_poisson(RATES[:-2] + [INF], [2], dtype=tf.float16, seed=5),
     1, np.float16),
    ("poisson_int_rate", lambda: tf.random_poisson(tf.constant([0, 3, 12, 500], tf.int32), [2],
                                                   dtype=tf.float64, seed=5), 1, np.float64),
    ("poisson_huge_f64", lambda: tf.random_poisson(tf.constant([1e15, 1e18, 4e18], tf.float64),
                                                   [2], dtype=tf.float64, seed=3), 1, np.float64),
    ("poisson_graph_seed_only", lambda: tf.random_poisson([2.0, 40.0], [2]), 42, np.float32),
    ("poisson_f32_rate_seeds_4_9", lambda: tf.random_poisson(tf.constant([3.0, 25.0]), [2],
                                                             dtype=tf.float32, seed=9), 4,
     np.float32),
]


def _runs(build, graph_seed, sessions=2, runs=2):
    """results[session][run] of the graph `build` makes."""
    with tf.Graph().as_default() as g:
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        out = build()
    results = []
    for _ in range(sessions):
        with tf.Session(graph=g) as sess:
            results.append([sess.run(out) for _ in range(runs)])
    return results


def _assert_bits(got, expected, dtype):
    """`got` is TF's flattened `expected`, value for value (NaN for NaN), in `dtype`."""
    got = np.asarray(got)
    assert got.dtype == dtype
    # the float literals are float64s, the 16- and 32-bit values exactly
    want = np.array(expected, np.float64).astype(dtype) if np.dtype(dtype).kind == "f" else \
        np.array(expected, dtype)
    np.testing.assert_array_equal(got.reshape(-1), want)


@pytest.mark.parametrize("name,build,graph_seed,dtype", STATEFUL, ids=[c[0] for c in STATEFUL])
def test_stateful_ops_draw_tensorflows_numbers(name, build, graph_seed, dtype):
    """The second run goes on with the stream, a new session starts it over."""
    (first, second), (again, _) = _runs(build, graph_seed)
    _assert_bits(first, STATEFUL_TF[name][0], dtype)
    _assert_bits(second, STATEFUL_TF[name][1], dtype)
    _assert_bits(again, STATEFUL_TF[name][0], dtype)


def test_legacy_random_poisson_is_random_poisson_v2():
    """TF 2.21 no longer builds RandomPoisson; its kernel is RandomPoissonV2's with the rate's
    type: TF's numbers for RandomPoissonV2 of float32 rates as float32, with its seeds."""
    build = lambda: apply_op(legacy_math_ops.RandomPoisson,   # noqa: E731
                             [[2], tf.constant([3.0, 25.0])], {"seed": 4, "seed2": 9})
    ((first, second),) = _runs(build, None, sessions=1)
    _assert_bits(first, STATEFUL_TF["poisson_f32_rate_seeds_4_9"][0], np.float32)
    _assert_bits(second, STATEFUL_TF["poisson_f32_rate_seeds_4_9"][1], np.float32)


STATELESS = [   # name, builder, output dtype
    ("sgamma_f32", lambda: tf.random.stateless_gamma([3, 4], seed=[1, 2], alpha=ALPHAS),
     np.float32),
    ("sgamma_f64_int64_seed", lambda: tf.random.stateless_gamma(
        [2, 4], seed=tf.constant([-1, 2**40], tf.int64), alpha=ALPHAS, dtype=tf.float64),
     np.float64),
    ("sgamma_f16", lambda: tf.random.stateless_gamma([2, 4], seed=[3, 4], alpha=ALPHAS,
                                                     dtype=tf.float16), np.float16),
    ("sgamma_odd_f64", lambda: tf.random.stateless_gamma([2, 9], seed=[3, 4], alpha=ODD,
                                                         dtype=tf.float64), np.float64),
    ("sgamma_beta_fed", lambda: tf.random.stateless_gamma(
        [2, 3, 2], seed=[5, 6], alpha=[0.4, 2.0],
        beta=tf.placeholder_with_default(tf.constant([[3.0], [0.7], [1.0]]), [3, 1])),
     np.float32),
    ("sgamma_scalar", lambda: tf.random.stateless_gamma([], seed=[5, 6], alpha=0.4), np.float32),
    ("spoisson_i32", lambda: tf.random.stateless_poisson([2, 11], seed=[7, 8], lam=RATES),
     np.int32),
    ("spoisson_f64", lambda: tf.random.stateless_poisson([2, 11], seed=[7, 8], lam=RATES,
                                                         dtype=tf.float64), np.float64),
    ("spoisson_int64_rate", lambda: tf.random.stateless_poisson(
        [3, 2], seed=[7, 8], lam=tf.constant([4, 77], tf.int64), dtype=tf.int64), np.int64),
    ("spoisson_f16_rate", lambda: tf.random.stateless_poisson(
        [3, 2], seed=[7, 8], lam=tf.constant([4, 77], tf.float16), dtype=tf.float16),
     np.float16),
    ("key_counter_int32", lambda: tf.concat([*tf.raw_ops.StatelessRandomGetKeyCounter(
        seed=tf.constant([7, -1], tf.int32))], 0), np.uint64),
]


@pytest.mark.parametrize("name,build,dtype", STATELESS, ids=[c[0] for c in STATELESS])
def test_stateless_ops_draw_tensorflows_numbers(name, build, dtype):
    ((first, second), (again, _)) = _runs(build, None)
    for got in (first, second, again):
        _assert_bits(got, STATELESS_TF[name], dtype)


CASES = [
    OpCase("stateless_gamma", lambda a: tf.random.stateless_gamma([3, 4], seed=[1, 2], alpha=a),
           lambda a: np.float32(STATELESS_TF["sgamma_f32"]).reshape(3, 4), [np.array(ALPHAS)],
           rtol=0, atol=0, grad=False),
    OpCase("stateless_poisson", lambda lam: tf.random.stateless_poisson([2, 11], seed=[7, 8],
                                                                        lam=lam),
           lambda lam: np.int32(STATELESS_TF["spoisson_i32"]).reshape(2, 11), [np.array(RATES)],
           grad=False),
    OpCase("stateless_get_key_counter",
           lambda seed: list(tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)),
           lambda seed: [np.uint64([12061634333429103293]),
                         np.uint64([0, 11657112851970742703])],
           [np.array([-3, 99])], dtypes=(tf.int32, tf.int64), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


# --- errors ---------------------------------------------------------------------------------
def _key_counter(seed=(1, 2)):
    return tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf.constant(seed, tf.int64))


def _gamma_v3(shape=(3, 2), alpha=(1.0, 2.0), alg=3, key=None, counter=None):
    k, c = _key_counter()
    return tf.raw_ops.StatelessRandomGammaV3(
        shape=list(shape) if isinstance(shape, tuple) else shape, key=k if key is None else key,
        counter=c if counter is None else counter, alg=alg, alpha=tf.constant(alpha))


def _fed(value, dtype=None):
    """`value` through a placeholder of unknown shape, so only the kernel sees its shape."""
    return tf.placeholder_with_default(tf.constant(value, dtype), None)


def _poisson(shape=(3, 2), seed=(1, 2), lam=(1.0, 20.0), dtype=tf.int32):
    return tf.raw_ops.StatelessRandomPoisson(
        shape=list(shape) if isinstance(shape, tuple) else shape,
        seed=list(seed) if isinstance(seed, tuple) else seed, lam=list(lam), dtype=dtype)


@pytest.mark.parametrize("build,message", [
    (lambda: _gamma_v3(alg=2), "Unsupported algorithm id: 2"),
    (lambda: _gamma_v3(alg=0), "Unsupported algorithm id: 0"),
    (lambda: _gamma_v3(alg=2, alpha=(1.0, 2.0, 3.0)),
     "Shape passed in must end with broadcasted shape."),
    (lambda: _gamma_v3(alg=7), "counter must be a vector with length at least 7; got shape: "
                               "[2]. (Note that batched counters are not supported yet.)"),
    (lambda: _gamma_v3(alg=_fed([3, 3])), "input 3 (0-based) must have shape [], not [2]"),
    (lambda: _gamma_v3(key=_fed([1, 2], tf.uint64)),
     "key must have shape [1], not [2]. (Note that batched keys are not supported yet.)"),
    (lambda: _gamma_v3(counter=_fed(np.zeros(0, np.uint64))),
     "counter must be a vector with length at least 1; got shape: [0]."),
    (lambda: _gamma_v3(alpha=(1.0, 2.0, 3.0)), "Shape passed in must end with broadcasted shape."),
    (lambda: _gamma_v3(shape=[2], alpha=[[1.0, 2.0]]),
     "Shape passed in must end with broadcasted shape."),
    (lambda: _gamma_v3(shape=_fed([-1, 2])), "Dimension -1 must be >= 0"),
    (lambda: _gamma_v3(shape=_fed([[3, 2]])),
     "shape must be a vector of {int32,int64}, got shape [1,2]"),
    (lambda: _poisson(lam=(1.0, 20.0, 3.0)), "Shape passed in must end with broadcasted shape."),
    (lambda: _poisson(seed=_fed([1, 2, 3])), "seed must have shape [2], not [3]"),
    (lambda: _poisson(shape=_fed([-1, 2])), "Dimension -1 must be >= 0"),
    (lambda: tf.raw_ops.StatelessRandomGetKeyCounter(seed=_fed([[1, 2]], tf.int64)),
     "seed must have shape [2], not [1,2]"),
    # Where TF's samplers never return, the kernel fails instead.
    (lambda: tf.random_poisson([2.0, NAN], [3]),
     "Cannot draw a Poisson sample of rate nan as float32: TensorFlow's sampler never returns"),
    (lambda: tf.random.stateless_poisson([3, 2], seed=[1, 2], lam=[2.0, 1e10]),
     "Cannot draw a Poisson sample of rate 10000000000.0 as int32"),
    (lambda: tf.random_poisson([1e5], [3], dtype=tf.float16),
     "Cannot draw a Poisson sample of rate 100000.0 as float16"),
])
def test_run_time_errors_are_tensorflows(build, message):
    with tf.Graph().as_default():
        out = build()
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(out)
    assert message in info.value.message


def test_empty_outputs_check_nothing_else():
    """As in TF: no draw, no algorithm check, no shape match for an empty output."""
    with tf.Graph().as_default():
        outs = [_gamma_v3(shape=(0, 5), alg=0), _poisson(shape=(0, 2), lam=(1.0, 2.0, 3.0)),
                tf.raw_ops.StatelessRandomPoisson(shape=[3, 0], seed=[1, 2], lam=tf.zeros([0]),
                                                  dtype=tf.int32)]
        with tf.Session() as sess:
            got = sess.run(outs)
    assert [g.shape for g in got] == [(0, 5), (0, 2), (3, 0)]


@pytest.mark.parametrize("build,error,message", [
    (lambda: _gamma_v3(alg=[3, 3]), ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: _gamma_v3(key=tf.constant([1, 2], tf.uint64)), ValueError,
     "Dimension must be 1 but is 2"),
    (lambda: _gamma_v3(counter=tf.constant([[5, 6]], tf.uint64)), ValueError,
     "Shape must be rank 1 but is rank 2"),
    (lambda: _gamma_v3(shape=[[3, 2]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: _gamma_v3(shape=(-3, 2)), ValueError, "Invalid value in tensor used for shape: -3"),
    (lambda: _key_counter((1, 2, 3)), ValueError, "Dimension must be 2 but is 3"),
    (lambda: _poisson(seed=(1, 2, 3)), ValueError, "Dimension must be 2 but is 3"),
    (lambda: tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[1, 2], dtype=tf.int32),
     TypeError, "Value passed to parameter 'alpha' has DataType int32 not in list of allowed "
                "values: float16, float32, float64"),
    (lambda: tf.random.stateless_poisson([3, 2], seed=[1, 2], lam=[1, 2], dtype=tf.bfloat16),
     TypeError, "Value passed to parameter 'dtype' has DataType bfloat16 not in list of allowed "
                "values: float16, float32, float64, int32, int64"),
    (lambda: tf.random.stateless_poisson([3, 2], seed=[1.0, 2.0], lam=[1.0, 2.0]), TypeError,
     "Value passed to parameter 'seed' has DataType float32 not in list of allowed values: "
     "int32, int64"),
])
def test_graph_construction_errors_are_tensorflows(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
    assert message in str(info.value)


def test_stateless_graphs_are_tensorflows():
    """The ops and names TF 2.21's compat.v1 wrappers build, and the static shapes."""
    with tf.Graph().as_default() as g:
        gamma = tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[1.0, 2.0])
        ops = {op.name: op.type for op in g.get_operations()}
        assert ops == {
            "stateless_random_gamma/shape": "Const", "stateless_random_gamma/alpha": "Const",
            "stateless_random_gamma/beta": "Const", "stateless_random_gamma/Shape_1": "Const",
            "stateless_random_gamma/Shape_2": "Const",
            "stateless_random_gamma/BroadcastArgs": "BroadcastArgs",
            "stateless_random_gamma/BroadcastTo": "BroadcastTo",
            "stateless_random_gamma/StatelessRandomGetKeyCounter/seed": "Const",
            "stateless_random_gamma/StatelessRandomGetKeyCounter":
                "StatelessRandomGetKeyCounter",
            "stateless_random_gamma/StatelessRandomGammaV3/alg": "Const",
            "stateless_random_gamma/StatelessRandomGammaV3": "StatelessRandomGammaV3",
            "stateless_random_gamma/truediv": "RealDiv",
            "stateless_random_gamma/Maximum/x": "Const",
            "stateless_random_gamma/Maximum": "Maximum"}
        assert gamma.shape.as_list() == [3, 2]
        v3 = g.get_operation_by_name("stateless_random_gamma/StatelessRandomGammaV3")
        assert v3.get_attr("shape_dtype") == tf.int32 and v3.get_attr("dtype") == tf.float32
        poisson = tf.random.stateless_poisson([4, 2], seed=[1, 2], lam=[1.0, 2.0])
        assert poisson.name == "stateless_random_poisson/StatelessRandomPoisson:0"
        assert [i.name for i in poisson.op.inputs] == [
            "stateless_random_poisson/shape:0",
            "stateless_random_poisson/StatelessRandomPoisson/seed:0",
            "stateless_random_poisson/StatelessRandomPoisson/lam:0"]
        assert {a: poisson.op.get_attr(a) for a in ("Rtype", "dtype", "T", "Tseed")} == {
            "Rtype": tf.float32, "dtype": tf.int32, "T": tf.int32, "Tseed": tf.int32}
        assert poisson.shape.as_list() == [4, 2]
        unknown = tf.random.stateless_poisson(tf.placeholder(tf.int32, [3]), [1, 2], [1.0])
        assert unknown.shape.as_list() == [None, None, None]


def test_random_gamma_with_beta_is_tensorflows():
    """The division by beta rounds as TF's folded reciprocal multiplication (the arithmetic
    pass's x / c -> x * (1 / c), on by default as in TF), so scaled samples are TF's too."""
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        scalar = tf.random_gamma([5], alpha=[0.5, 2.0], beta=3.0, seed=1)
        half = tf.random_gamma([5], alpha=[0.5, 2.0], beta=3.0, dtype=tf.float16, seed=2)
        vector = tf.random_gamma([3], alpha=[0.5, 2.0], beta=[3.0, 7.0], seed=3)
        with tf.Session() as sess:
            got = sess.run([scalar, half, vector])
    expected = [
        ([[0.005197804421186447, 0.17646196484565735], [0.05503670498728752, 0.7350112199783325],
          [0.4086258113384247, 1.3343870639801025], [0.8779588937759399, 0.385506272315979],
          [0.007293410133570433, 0.3195340037345886]], np.float32),
        ([[0.00481414794921875, 0.1884765625], [0.06365966796875, 0.53857421875],
          [0.06390380859375, 0.9970703125], [0.00682830810546875, 0.326171875],
          [0.38525390625, 0.151123046875]], np.float16),
        ([[0.3923856019973755, 0.5028252005577087], [0.16062486171722412, 0.3342462182044983],
          [0.18023669719696045, 0.6216423511505127]], np.float32),
    ]
    for value, (want, dtype) in zip(got, expected):
        np.testing.assert_array_equal(value, np.array(want, dtype))
