"""tf.math, tf.linalg, tf.random, tf.dtypes, tf.debugging and tf.bitwise against TF 2.21.

TF_NAMESPACES lists, per namespace, every public name of TensorFlow 2.21's
`tf.compat.v1.<namespace>` (functions and classes, not submodules), in three groups: names
that are the same function as the top-level name, names that are the same function as another
top-level or tf.nn name (tf.math.top_k is tf.nn.top_k), and names with no top-level twin.
A namespace must expose exactly the names whose twin tensorweave implements, each as that very
callable, plus the twin-less names listed in NAMESPACE_ONLY; it exposes nothing TF lacks.
"""
import types

import pytest

import tensorweave as tf

# From `dir(tf.compat.v1.<ns>)` in TensorFlow 2.21; twins found by identity of the unwrapped
# function (so tf.math.abs's twin is tf.abs; tf.linalg.transpose's is tf.matrix_transpose).
TF_NAMESPACES = {
    "math": (
        [
            "abs", "accumulate_n", "acos", "acosh", "add", "add_n", "angle", "argmax",
            "argmin", "asin", "asinh", "atan", "atan2", "atanh", "betainc", "bincount",
            "ceil", "confusion_matrix", "conj", "cos", "cosh", "count_nonzero",
            "cumprod", "cumsum", "digamma", "divide", "equal", "erf", "erfc", "exp",
            "expm1", "floor", "floordiv", "floormod", "greater", "greater_equal",
            "igamma", "igammac", "imag", "invert_permutation", "is_finite", "is_inf",
            "is_nan", "is_non_decreasing", "is_strictly_increasing", "lbeta", "less",
            "less_equal", "lgamma", "log", "log1p", "log_sigmoid", "logical_and",
            "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod",
            "multiply", "negative", "not_equal", "polygamma", "pow", "real",
            "reciprocal", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max",
            "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "rint", "round",
            "rsqrt", "scalar_mul", "segment_max", "segment_mean", "segment_min",
            "segment_prod", "segment_sum", "sigmoid", "sign", "sin", "sinh", "sqrt",
            "square", "squared_difference", "subtract", "tan", "tanh", "truediv",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min",
            "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum",
            "zeta"
        ],
        {
            "approx_max_k": "nn.approx_max_k", "approx_min_k": "nn.approx_min_k",
            "divide_no_nan": "div_no_nan", "in_top_k": "nn.in_top_k", "l2_normalize":
            "nn.l2_normalize", "log_softmax": "nn.log_softmax", "softmax":
            "nn.softmax", "softplus": "nn.softplus", "softsign": "nn.softsign",
            "top_k": "nn.top_k", "zero_fraction": "nn.zero_fraction"
        },
        [
            "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e",
            "cumulative_logsumexp", "erfcinv", "erfinv", "multiply_no_nan", "ndtri",
            "nextafter", "polyval", "reciprocal_no_nan", "reduce_euclidean_norm",
            "reduce_std", "reduce_variance", "sobol_sample", "xdivy", "xlog1py",
            "xlogy"
        ],
    ),
    "linalg": (
        [
            "cholesky", "cholesky_solve", "cross", "einsum", "eye", "global_norm",
            "matmul", "matrix_transpose", "norm", "qr", "svd", "tensordot", "trace"
        ],
        {
            "band_part": "matrix_band_part", "det": "matrix_determinant", "diag":
            "matrix_diag", "diag_part": "matrix_diag_part", "eigh": "self_adjoint_eig",
            "eigvalsh": "self_adjoint_eigvals", "inv": "matrix_inverse",
            "l2_normalize": "nn.l2_normalize", "lstsq": "matrix_solve_ls", "set_diag":
            "matrix_set_diag", "solve": "matrix_solve", "sqrtm": "matrix_square_root",
            "tensor_diag": "diag", "tensor_diag_part": "diag_part", "transpose":
            "matrix_transpose", "triangular_solve": "matrix_triangular_solve"
        },
        [
            "LinearOperator", "LinearOperatorAdjoint", "LinearOperatorBlockDiag",
            "LinearOperatorBlockLowerTriangular", "LinearOperatorCirculant",
            "LinearOperatorCirculant2D", "LinearOperatorCirculant3D",
            "LinearOperatorComposition", "LinearOperatorDiag",
            "LinearOperatorFullMatrix", "LinearOperatorHouseholder",
            "LinearOperatorIdentity", "LinearOperatorInversion",
            "LinearOperatorKronecker", "LinearOperatorLowRankUpdate",
            "LinearOperatorLowerTriangular", "LinearOperatorPermutation",
            "LinearOperatorScaledIdentity", "LinearOperatorToeplitz",
            "LinearOperatorTridiag", "LinearOperatorZeros", "adjoint",
            "eigh_tridiagonal", "expm", "logdet", "logm", "lu", "lu_matrix_inverse",
            "lu_reconstruct", "lu_solve", "matrix_rank", "matvec", "normalize", "pinv",
            "slogdet", "tridiagonal_matmul", "tridiagonal_solve"
        ],
    ),
    "random": (
        [
            "get_seed", "multinomial", "set_random_seed", "truncated_normal"
        ],
        {
            "all_candidate_sampler": "nn.all_candidate_sampler",
            "fixed_unigram_candidate_sampler": "nn.fixed_unigram_candidate_sampler",
            "gamma": "random_gamma", "learned_unigram_candidate_sampler":
            "nn.learned_unigram_candidate_sampler", "log_uniform_candidate_sampler":
            "nn.log_uniform_candidate_sampler", "normal": "random_normal", "poisson":
            "random_poisson", "shuffle": "random_shuffle", "uniform": "random_uniform",
            "uniform_candidate_sampler": "nn.uniform_candidate_sampler"
        },
        [
            "Algorithm", "Generator", "categorical", "create_rng_state", "fold_in",
            "get_global_generator", "set_global_generator", "split",
            "stateless_binomial", "stateless_categorical", "stateless_gamma",
            "stateless_multinomial", "stateless_normal",
            "stateless_parameterized_truncated_normal", "stateless_poisson",
            "stateless_truncated_normal", "stateless_uniform"
        ],
    ),
    "dtypes": (
        [
            "DType", "QUANTIZED_DTYPES", "as_dtype", "as_string", "bfloat16", "bool",
            "cast", "complex", "complex128", "complex64", "double", "float16",
            "float32", "float64", "half", "int16", "int32", "int64", "int8", "qint16",
            "qint32", "qint8", "quint16", "quint8", "resource", "saturate_cast",
            "string", "uint16", "uint32", "uint64", "uint8", "variant"
        ],
        {

        },
        [

        ],
    ),
    "debugging": (
        [
            "Assert", "assert_equal", "assert_greater", "assert_greater_equal",
            "assert_integer", "assert_less", "assert_less_equal", "assert_near",
            "assert_negative", "assert_non_negative", "assert_non_positive",
            "assert_none_equal", "assert_positive", "assert_proper_iterable",
            "assert_rank", "assert_rank_at_least", "assert_rank_in",
            "assert_same_float_dtype", "assert_scalar", "assert_type",
            "check_numerics", "is_finite", "is_inf", "is_nan", "is_non_decreasing",
            "is_numeric_tensor", "is_strictly_increasing"
        ],
        {
            "assert_all_finite": "verify_tensor_all_finite"
        },
        [
            "assert_shapes", "disable_check_numerics", "disable_traceback_filtering",
            "enable_check_numerics", "enable_traceback_filtering",
            "get_log_device_placement", "is_traceback_filtering_enabled",
            "set_log_device_placement"
        ],
    ),
    "manip": (
        [
            "batch_to_space_nd", "gather_nd", "reshape", "reverse", "roll", "scatter_nd",
            "space_to_batch_nd", "tile"
        ],
        {

        },
        [

        ],
    ),
    "bitwise": (
        [

        ],
        {

        },
        [
            "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
            "right_shift"
        ],
    ),
}

# Names with no top-level twin that tensorweave implements in the namespace itself.
NAMESPACE_ONLY = {
    "random": {"categorical", "stateless_categorical", "stateless_gamma", "stateless_multinomial",
               "stateless_normal", "stateless_poisson", "stateless_truncated_normal",
               "stateless_uniform"},
    "linalg": {"adjoint", "expm", "logdet", "logm", "lu", "lu_matrix_inverse", "lu_reconstruct",
               "lu_solve", "matrix_rank", "matvec", "normalize", "pinv", "slogdet",
               "tridiagonal_matmul", "tridiagonal_solve"},
    "math": {"bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "cumulative_logsumexp",
             "erfcinv", "erfinv", "multiply_no_nan", "ndtri", "nextafter", "polyval",
             "reciprocal_no_nan", "reduce_euclidean_norm", "reduce_std", "reduce_variance",
             "xdivy", "xlog1py", "xlogy"},
    "bitwise": {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                "right_shift"},
    "debugging": {"assert_shapes", "disable_check_numerics", "enable_check_numerics",
                  "get_log_device_placement", "set_log_device_placement"},
}


def _resolve(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _twins(namespace):
    same, other, _ = TF_NAMESPACES[namespace]
    return {**{n: n for n in same}, **other}


def _public(module):
    return {n for n in vars(module) if not n.startswith("_")
            and not isinstance(getattr(module, n), types.ModuleType)}


NAMESPACES = sorted(TF_NAMESPACES)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_namespace_has_every_implemented_name_and_no_other(namespace):
    module = getattr(tf, namespace)
    expected = {n for n, twin in _twins(namespace).items() if _resolve(twin) is not None}
    expected |= NAMESPACE_ONLY.get(namespace, set())
    same, other, alone = TF_NAMESPACES[namespace]
    assert _public(module) <= set(same) | set(other) | set(alone), \
        f"tf.{namespace} has names TF lacks: {sorted(_public(module) - expected)}"
    assert _public(module) == expected, (
        f"tf.{namespace}: missing {sorted(expected - _public(module))}, "
        f"extra {sorted(_public(module) - expected)}")


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_namespace_names_are_the_top_level_callables(namespace):
    module = getattr(tf, namespace)
    for name, twin in _twins(namespace).items():
        target = _resolve(twin)
        if target is not None:
            assert getattr(module, name) is target, f"tf.{namespace}.{name} is not tf.{twin}"


def test_namespaces_work_in_a_graph():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 4.0], [9.0, 16.0]])
        values, _ = tf.math.top_k(tf.math.sqrt(x), k=1)
        product = tf.linalg.matmul(x, x)
        bits = tf.bitwise.bitwise_xor(tf.constant([5, 3]), tf.constant([1, 1]))
        flipped = tf.bitwise.invert(tf.constant([0], tf.uint8))
        cast = tf.dtypes.cast(x, tf.dtypes.int32)
        tf.random.set_random_seed(1)
        draws = tf.random.categorical(tf.math.log([[0.0, 1.0]]), 5, dtype=tf.int32)
        with tf.Session() as sess:
            got = sess.run([values, product, bits, flipped, cast, draws])
    assert got[0].tolist() == [[2.0], [4.0]]
    assert got[1].tolist() == [[37.0, 68.0], [153.0, 292.0]]
    assert got[2].tolist() == [4, 2]
    assert got[3].tolist() == [255]
    assert got[4].dtype.name == "int32" and got[4].tolist() == [[1, 4], [9, 16]]
    assert got[5].dtype.name == "int32" and got[5].tolist() == [[1] * 5]


def test_version_strings():
    assert isinstance(tf.VERSION, str) and tf.VERSION == tf.__version__
    assert tf.VERSION.count(".") >= 2
