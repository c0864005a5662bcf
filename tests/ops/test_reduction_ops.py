"""Reductions, arg-reductions, scans and top-k: forward against NumPy, shape functions against
the kernels, gradients against central differences, construction-time and run-time errors,
default names and static values."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.static_value import static_value
from tensorweave.ops.reduction_ops import top_k
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
    check_gradient,
)

FLOATS = (tf.float32, tf.float64)
NUMBERS = (tf.float32, tf.float64, tf.int32, tf.int64)


def _randn(*shape):
    return lambda rng, dt: (rng.randn(*shape) * 3).astype(dt)


def _randint(*shape, low=-5, high=6):
    return lambda rng, dt: rng.randint(low, high, size=shape).astype(dt)


def _bools(*shape):
    return lambda rng, dt: rng.rand(*shape) > 0.5


def _int_mean(x, axis=None, keepdims=False):
    """TF's integer mean: the sum divided with truncation toward zero."""
    total = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
    n = x.size // max(np.size(total), 1) if x.size else 0
    return (np.trunc(total / n) if n else np.zeros_like(total)).astype(x.dtype)


def _top_k_ref(x, k):
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _exclusive(scan, identity, reverse=False):
    def ref(x):
        y = np.flip(x, -1) if reverse else x
        pad = np.full(y.shape[:-1] + (1,), identity, y.dtype)
        out = scan(np.concatenate([pad, y[..., :-1]], -1), axis=-1).astype(x.dtype)
        return np.flip(out, -1) if reverse else out
    return ref


CASES = [
    OpCase("sum_all", lambda x: tf.reduce_sum(x), np.sum, [_randn(2, 3, 4)], NUMBERS),
    OpCase("sum_axis", lambda x: tf.reduce_sum(x, 1), lambda x: x.sum(1), [_randn(2, 3, 4)],
           NUMBERS + (tf.complex64, tf.float16), rtol=1e-2, atol=1e-2),
    OpCase("sum_neg_axes_keepdims", lambda x: tf.reduce_sum(x, [0, -1], keepdims=True),
           lambda x: x.sum((0, 2), keepdims=True), [_randn(2, 3, 4)], FLOATS),
    OpCase("sum_no_axes", lambda x: tf.reduce_sum(x, []), lambda x: x, [_randn(2, 3)]),
    OpCase("sum_empty", lambda x: tf.reduce_sum(x, 0), lambda x: x.sum(0),
           [np.zeros((0, 3))], NUMBERS),
    OpCase("sum_int8_wraps", lambda x: tf.reduce_sum(x), lambda x: np.int8(-56),
           [np.array([100, 100])], (tf.int8,)),
    OpCase("sum_reduction_indices", lambda x: tf.reduce_sum(x, reduction_indices=[1],
                                                             keep_dims=True),
           lambda x: x.sum(1, keepdims=True), [_randn(3, 2)]),
    OpCase("sum_int64_axis", lambda x: tf.reduce_sum(x, tf.constant([1], tf.int64)),
           lambda x: x.sum(1), [_randn(3, 2)]),
    OpCase("mean_float", lambda x: tf.reduce_mean(x, 0), lambda x: x.mean(0),
           [_randn(4, 3)], FLOATS + (tf.complex128,)),
    OpCase("mean_int_truncates", lambda x: tf.reduce_mean(x, 1),
           lambda x: _int_mean(x, 1), [_randint(5, 7)], (tf.int32, tf.int64, tf.int16)),
    OpCase("mean_int8_no_wrap", lambda x: tf.reduce_mean(x), lambda x: np.int8(100),
           [np.array([100, 100])], (tf.int8,)),
    OpCase("mean_uint8", lambda x: tf.reduce_mean(x, keepdims=True),
           lambda x: np.array([[254]], np.uint8), [np.array([[255, 254, 253]])], (tf.uint8,)),
    OpCase("mean_empty_float_is_nan", lambda x: tf.reduce_mean(x),
           lambda x: np.array(np.nan, x.dtype), [np.zeros((0,))], FLOATS),
    OpCase("mean_empty_int_is_zero", lambda x: tf.reduce_mean(x, 1),
           lambda x: np.zeros((2,), x.dtype), [np.zeros((2, 0))], (tf.int32,)),
    OpCase("prod", lambda x: tf.reduce_prod(x, -1), lambda x: x.prod(-1),
           [_randint(3, 4, low=-3, high=4)], NUMBERS),
    OpCase("prod_empty_is_one", lambda x: tf.reduce_prod(x), lambda x: np.array(1, x.dtype),
           [np.zeros((0, 2))], NUMBERS),
    OpCase("max", lambda x: tf.reduce_max(x, 1), lambda x: x.max(1), [_randn(3, 4, 2)],
           NUMBERS + (tf.uint8, tf.float16)),
    OpCase("min_keepdims", lambda x: tf.reduce_min(x, [1, 2], keepdims=True),
           lambda x: x.min((1, 2), keepdims=True), [_randn(3, 4, 2)], NUMBERS),
    OpCase("max_nan_propagates", lambda x: tf.reduce_max(x), lambda x: np.float32(np.nan),
           [np.array([1.0, np.nan, 3.0])], grad=False),  # no finite differences through NaN
    OpCase("max_empty", lambda x: tf.reduce_max(x, 0),
           lambda x: np.full((2,), -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min,
                             x.dtype), [np.zeros((0, 2))], NUMBERS),
    OpCase("min_empty", lambda x: tf.reduce_min(x),
           lambda x: np.array(np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max,
                              x.dtype), [np.zeros((0,))], NUMBERS + (tf.uint8,)),
    OpCase("all", lambda x: tf.reduce_all(x, 0), lambda x: x.all(0), [_bools(4, 3)],
           (tf.bool,), grad=False),
    OpCase("any_keepdims", lambda x: tf.reduce_any(x, -1, keepdims=True),
           lambda x: x.any(-1, keepdims=True), [_bools(4, 3)], (tf.bool,), grad=False),
    OpCase("all_empty", lambda x: tf.reduce_all(x), lambda x: np.True_,
           [np.zeros((0,), bool)], (tf.bool,), grad=False),
    OpCase("any_all_axes", lambda x: tf.reduce_any(x), lambda x: x.any(), [_bools(2, 2)],
           (tf.bool,), grad=False),
    OpCase("logsumexp", lambda x: tf.reduce_logsumexp(x, 1),
           lambda x: np.log(np.exp(x.astype(np.float64)).sum(1)), [_randn(3, 5)], FLOATS),
    OpCase("logsumexp_stable", lambda x: tf.reduce_logsumexp(x, keepdims=True),
           lambda x: np.array([[1000 + np.log(2)]], x.dtype),
           [np.array([[1000.0, 1000.0]])], FLOATS),
    OpCase("logsumexp_infinities", lambda x: tf.reduce_logsumexp(x, 1),
           lambda x: np.array([-np.inf, np.inf], x.dtype),
           [np.array([[-np.inf, -np.inf], [np.inf, 1.0]])], grad=False),
    OpCase("count_nonzero", lambda x: tf.count_nonzero(x, 1),
           lambda x: np.count_nonzero(x, 1).astype(np.int64),
           [_randint(4, 6, low=-1, high=2)], (tf.int32, tf.float32), grad=False),
    OpCase("count_nonzero_int32_out", lambda x: tf.count_nonzero(x, dtype=tf.int32),
           lambda x: np.int32(np.count_nonzero(x)), [_bools(3, 3)], (tf.bool,), grad=False),
    OpCase("argmax", lambda x: tf.argmax(x, 1), lambda x: x.argmax(1), [_randn(3, 5, 2)],
           NUMBERS + (tf.uint8,), grad=False),
    OpCase("argmin_neg_axis_int32", lambda x: tf.argmin(x, -1, output_type=tf.int32),
           lambda x: x.argmin(-1).astype(np.int32), [_randn(3, 5)], NUMBERS, grad=False),
    OpCase("argmax_ties_first", lambda x: tf.argmax(x), lambda x: np.int64(1),
           [np.array([1, 3, 3, 2])], (tf.int32, tf.float32), grad=False),
    OpCase("argmin_bool", lambda x: tf.argmin(x, 0), lambda x: x.argmin(0),
           [_bools(4, 2)], (tf.bool,), grad=False),
    OpCase("cumsum", lambda x: tf.cumsum(x, 1), lambda x: np.cumsum(x, 1).astype(x.dtype),
           [_randn(3, 4)], NUMBERS),
    OpCase("cumsum_exclusive_reverse", lambda x: tf.cumsum(x, -1, exclusive=True, reverse=True),
           _exclusive(np.cumsum, 0, reverse=True), [_randn(2, 5)], NUMBERS),
    OpCase("cumsum_reverse", lambda x: tf.cumsum(x, 0, reverse=True),
           lambda x: np.flip(np.cumsum(np.flip(x, 0), 0), 0).astype(x.dtype), [_randn(4, 2)]),
    OpCase("cumprod_exclusive", lambda x: tf.cumprod(x, 1, exclusive=True),
           _exclusive(np.cumprod, 1), [_randn(2, 4)], NUMBERS),
    OpCase("cumprod_empty", lambda x: tf.cumprod(x, 0, exclusive=True), lambda x: x,
           [np.zeros((0, 3))]),
    OpCase("top_k", lambda x: list(top_k(x, 3)), lambda x: list(_top_k_ref(x, 3)),
           [_randn(4, 7)], NUMBERS + (tf.uint8, tf.int8)),
    OpCase("top_k_ties_lower_index_first", lambda x: list(top_k(x, 4)),
           lambda x: [np.array([3, 3, 2, 2], x.dtype), np.array([1, 2, 0, 3], np.int32)],
           [np.array([2, 3, 3, 2, 1])], (tf.int32, tf.float32, tf.uint8),
           grad=False),  # at ties the sorted order (so the gradient) jumps
    OpCase("top_k_int64_indices_k0", lambda x: list(top_k(x, 0, index_type=tf.int64)),
           lambda x: [x[..., :0], np.zeros((2, 0), np.int64)], [_randn(2, 3)], grad=False),
]


test_forward, test_shapes = case_tests(CASES)


# Rows of floating dtypes whose op is differentiable: central differences in float64.
@pytest.mark.parametrize("case", [c for c in CASES if c.grad and
                                  any(d.is_floating for d in c.dtypes)], ids=str)
def test_gradient(case):
    check_gradient(case)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_top_k_min_int_and_nan():
    with tf.Graph().as_default():
        values, indices = top_k(tf.constant([-128, 5, 127, -128], tf.int8), 4)
        fvalues, findices = top_k([1.0, np.nan, 3.0], 3)
        got = _run([values, indices, fvalues, findices])
    np.testing.assert_array_equal(got[0], [127, 5, -128, -128])
    np.testing.assert_array_equal(got[1], [2, 1, 0, 3])
    np.testing.assert_array_equal(got[2], [np.nan, 3.0, 1.0])   # TF ranks NaN first
    np.testing.assert_array_equal(got[3], [1, 2, 0])


def test_default_names_and_types():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3), np.float32))
        assert tf.reduce_sum(x).op.name == "Sum"
        assert tf.reduce_sum(x).op.name == "Sum_1"
        assert tf.reduce_mean(x, name="m").op.name == "m"
        for fn, op_type in [(tf.reduce_mean, "Mean"), (tf.reduce_max, "Max"),
                            (tf.reduce_min, "Min"), (tf.reduce_prod, "Prod"),
                            (tf.argmax, "ArgMax"), (tf.argmin, "ArgMin"),
                            (tf.cumsum, "Cumsum"), (tf.cumprod, "Cumprod"),
                            (top_k, "TopKV2")]:
            out = fn(x)
            op = out[0].op if isinstance(out, tuple) else out.op
            assert (op.name, op.type) == (op_type, op_type)
        b = tf.constant([True])
        assert tf.reduce_all(b).op.type == "All" and tf.reduce_any(b).op.type == "Any"
        lse = tf.reduce_logsumexp(x)
        assert (lse.op.name, lse.op.type) == ("ReduceLogSumExp", "AddV2")
        assert {op.type for op in x.graph.get_operations()
                if op.name.startswith("ReduceLogSumExp/")} >= {
            "Max", "IsFinite", "SelectV2", "StopGradient", "Sub", "Exp", "Sum", "Log", "Shape",
            "Reshape"}
        assert tf.count_nonzero(x).op.name == "count_nonzero/Sum"
        assert tf.cumsum([1, 2]).op.inputs[0].op.name == "Cumsum_1/x"
        assert tf.reduce_sum(x, keepdims=True).op.get_attr("keep_dims") is True
        assert tf.reduce_sum(x).op.get_attr("Tidx") == tf.int32
        assert tf.argmax(x).dtype == tf.int64
        assert tf.argmax(x, output_type=tf.int32).dtype == tf.int32
        assert tf.count_nonzero(x).dtype == tf.int64
        assert top_k(x, 2).indices.dtype == tf.int32
        assert tf.arg_max(x, 1).op.type == "ArgMax" and tf.arg_min(x, 0).op.type == "ArgMin"
        assert "top_k" not in dir(tf)


def test_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        assert tf.reduce_sum(x, 1).shape.as_list() == [None, 4]
        assert tf.reduce_sum(x, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
        assert tf.reduce_sum(x).shape.as_list() == []
        assert tf.reduce_sum(tf.placeholder(tf.float32)).shape.as_list() == []
        assert tf.reduce_sum(tf.placeholder(tf.float32), 0).shape.ndims is None
        fed_axis = tf.placeholder(tf.int32, [])
        assert tf.reduce_sum(x, fed_axis).shape.as_list() == [None, None]
        assert tf.reduce_sum(x, fed_axis, keepdims=True).shape.as_list() == [None] * 3
        assert tf.reduce_sum(x, tf.placeholder(tf.int32, [None])).shape.ndims is None
        assert tf.argmax(x, 2).shape.as_list() == [None, 3]
        assert tf.argmax(x, fed_axis).shape.as_list() == [None, None]
        assert tf.argmax(tf.placeholder(tf.float32, [None]), 5).shape.as_list() == []
        assert tf.cumsum(x, 2).shape.as_list() == [None, 3, 4]
        assert [t.shape.as_list() for t in top_k(x, 2)] == [[None, 3, 2]] * 2
        k = tf.placeholder(tf.int32, [])
        assert top_k(x, k).values.shape.as_list() == [None, 3, None]
        assert tf.reduce_logsumexp(x, 2).shape.as_list() == [None, 3]


def test_fed_axes_and_runtime_errors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        t = tf.constant(x)
        axes = tf.placeholder(tf.int32)
        total = tf.reduce_sum(t, axes)
        arg = tf.argmax(t, axes)
        scan = tf.cumsum(t, axes)
        k = tf.placeholder(tf.int32, [])
        values = top_k(t, k).values
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(total, {axes: [1]}), x.sum(1))
            np.testing.assert_array_equal(sess.run(total, {axes: -2}), x.sum(0))
            np.testing.assert_array_equal(sess.run(arg, {axes: 0}), [1, 1, 1])
            for bad, match in [(2, "Invalid reduction dimension"),
                               ([1, -1], "duplicate dimension: 1")]:
                with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                    sess.run(total, {axes: bad})
            with pytest.raises(tf.errors.InvalidArgumentError, match="range \\[-2, 2\\)"):
                sess.run(arg, {axes: 2})
            with pytest.raises(tf.errors.InvalidArgumentError, match="ScanOp"):
                sess.run(scan, {axes: 3})
            with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns"):
                sess.run(values, {k: 4})
            with pytest.raises(tf.errors.InvalidArgumentError, match="k >= 0"):
                sess.run(values, {k: -1})
        with pytest.raises(tf.errors.InvalidArgumentError, match="is empty in shape \\[0\\]"):
            _run(tf.argmax(tf.constant(np.zeros(0, np.float32))))


def test_construction_errors():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2"):
            tf.reduce_sum(x, 2)
        with pytest.raises(ValueError, match="Invalid reduction dimension -3"):
            tf.reduce_max(x, [0, -3])
        with pytest.raises(ValueError, match="at most rank 1"):
            tf.reduce_sum(x, [[0], [1]])
        with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and"):
            tf.reduce_sum(x, axis=0, reduction_indices=0)
        with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
            tf.reduce_sum(x, keepdims=True, keep_dims=True)
        with pytest.raises(ValueError, match="Cannot specify both 'dimension' and 'axis'"):
            tf.argmax(x, 1, dimension=1)
        with pytest.raises(ValueError, match="must be in the range \\[-2, 2\\)"):
            tf.argmax(x, 2)
        with pytest.raises(TypeError, match="axis must be int"):
            tf.argmax(x, [1])
        with pytest.raises(TypeError, match="allowed values"):
            tf.reduce_sum(tf.constant([True]))
        with pytest.raises(TypeError):
            tf.reduce_all(x)
        with pytest.raises(TypeError, match="reduction_indices"):
            tf.reduce_sum(x, 0.0)
        with pytest.raises(TypeError):
            tf.reduce_logsumexp(tf.constant([1, 2]))
        with pytest.raises(ValueError, match="last dimension >= k = 4 but is 3"):
            top_k(x, 4)
        with pytest.raises(ValueError, match="non-negative"):
            top_k(x, -1)
        with pytest.raises(ValueError, match="at least rank 1"):
            top_k(tf.constant(1.0), 1)


def test_out_of_range_axis_reason_matches_tf():
    with tf.Graph().as_default():
        for axis, bad in ((5, 5), (-3, -3), ([0, 5], 5)):
            with pytest.raises(ValueError) as info:
                tf.reduce_sum(tf.zeros([2, 3]), axis)
            assert str(info.value).startswith(
                f"Invalid reduction dimension {bad} for input with 2 dimensions. for '{{{{node ")


def test_static_values_of_reductions():
    with tf.Graph().as_default():
        c = tf.constant([[2, 3], [4, 5]])
        assert static_value(tf.reduce_prod(c)) == 120
        np.testing.assert_array_equal(static_value(tf.reduce_sum(c, 0)), [6, 8])
        np.testing.assert_array_equal(static_value(tf.reduce_max(c, 1, keepdims=True)),
                                      [[3], [5]])
        assert static_value(tf.reduce_sum(tf.placeholder(tf.int32, [2]))) is None


def test_string_count_nonzero():
    with tf.Graph().as_default():
        n = tf.count_nonzero(tf.constant(["", "a", "bc"]))
        assert _run(n) == 2
