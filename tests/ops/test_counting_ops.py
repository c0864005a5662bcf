"""Counting ops (DenseBincount via tf.bincount, UniqueWithCounts, ListDiff, HistogramFixedWidth)
and the moments tf.math.reduce_variance / reduce_std: forward against NumPy, shape functions,
gradients of the moments, TensorFlow 2.21's graph structure, run-time errors and messages."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import counting_ops
from tensorweave.testing.op_case import OpCase, case_tests

I32 = (tf.int32,)
INDEX = (tf.int32, tf.int64)
NUMBERS = (tf.float32, tf.float64, tf.int32, tf.int64)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _ints(low, high, *shape):
    return lambda rng, dt: rng.randint(low, high, shape).astype(dt)


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _bincount_ref(minlength=0, maxlength=None, dtype=np.int32):
    def ref(arr, weights=None):
        flat = arr.ravel().astype(np.int64)
        w = None if weights is None else weights.ravel()
        if maxlength is not None:
            keep = flat < maxlength
            flat, w = flat[keep], None if w is None else w[keep]
        out = np.bincount(flat, w, minlength=minlength)
        if maxlength is not None:
            out = out[:maxlength]
        return out.astype(dtype if weights is None else weights.dtype)
    return ref


def _dense_bincount(size, binary=False):
    def build(arr, weights):
        return apply_op(counting_ops.DenseBincount, [arr, tf.constant(size, arr.dtype), weights],
                        {"binary_output": binary})
    return build


def _dense_rows_ref(size, binary=False):
    def ref(arr, weights):
        out = np.zeros((arr.shape[0], size), weights.dtype)
        for r, (row, w) in enumerate(zip(arr, weights)):
            counts = np.bincount(row[row < size], w[row < size], minlength=size)
            out[r] = counts > 0 if binary else counts
        return out
    return ref


def _unique_with_counts_ref(x):
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.argsort(first)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return [x[np.sort(first)], rank[inverse].astype(np.int32), counts[order].astype(np.int32)]


def _bins_ref(lo, hi, nbins):
    """TensorFlow's arithmetic, in the values' dtype: floor(nbins * (v - lo) / (hi - lo))."""
    def ref(values):
        lo_, hi_, n = (np.asarray(x, values.dtype) for x in (lo, hi, nbins))
        scaled = (values - lo_) / (hi_ - lo_)
        return np.clip(np.floor(n * scaled), 0, n - 1).astype(np.int32)
    return ref


def _setdiff_ref(x, y):
    keep = np.flatnonzero(~np.isin(x, y))
    return [x[keep], keep.astype(np.int32)]


def _histogram_ref(lo, hi, nbins):
    def ref(values):
        edges = np.linspace(lo, hi, nbins + 1)
        counts, _ = np.histogram(np.clip(values, lo, hi), edges)
        return counts.astype(np.int32)
    return ref


_STRINGS = np.array([b"b", b"a", b"b", b"c", b"a", b"b"], dtype=object)

CASES = [
    OpCase("bincount", tf.bincount, _bincount_ref(), [_ints(0, 6, 3, 4)], dtypes=INDEX,
           grad=False),
    OpCase("bincount_weights", lambda a, w: tf.bincount(a, weights=w), _bincount_ref(),
           [_ints(0, 5, 7), _uniform(-2, 2, 7)], dtypes=(tf.float32, tf.float64),
           fixed_dtypes=(tf.int32,), grad=False),
    OpCase("bincount_int_weights", lambda a, w: tf.bincount(a, weights=w), _bincount_ref(),
           [_ints(0, 5, 2, 3), _ints(-9, 9, 2, 3)], dtypes=INDEX, fixed_dtypes=(tf.int32,),
           grad=False),
    OpCase("bincount_min_max", lambda a: tf.bincount(a, minlength=4, maxlength=5),
           _bincount_ref(minlength=4, maxlength=5), [_value([1, 2, 7, 4, 4])], dtypes=I32,
           grad=False),
    OpCase("bincount_minlength_pads", lambda a: tf.bincount(a, minlength=9, dtype=tf.float64),
           _bincount_ref(minlength=9, dtype=np.float64), [_value([1, 1, 3])], dtypes=I32,
           grad=False),
    OpCase("bincount_maxlength_cuts", lambda a: tf.bincount(a, maxlength=2),
           _bincount_ref(maxlength=2), [_value([1, 2, 7, 0])], dtypes=INDEX, grad=False),
    OpCase("bincount_empty", tf.bincount, _bincount_ref(), [np.zeros(0)], dtypes=I32,
           grad=False),
    OpCase("bincount_float_values", tf.bincount, lambda a: _bincount_ref()(a.astype(np.int32)),
           [_value([1.7, 2.2, 0.4])], dtypes=(tf.float32,), grad=False),
    OpCase("dense_bincount_rows", _dense_bincount(4), _dense_rows_ref(4),
           [_ints(0, 6, 3, 5), _uniform(0, 3, 3, 5)], dtypes=(tf.float32, tf.float64),
           fixed_dtypes=(tf.int64,), grad=False),
    OpCase("dense_bincount_binary", _dense_bincount(3, binary=True), _dense_rows_ref(3, True),
           [_value([[1, 2, 2], [0, 0, 4]]), _value([[5, 1, 1], [2, 2, 2]])], dtypes=INDEX,
           fixed_dtypes=(tf.int32,), grad=False),
    OpCase("unique_with_counts", tf.unique_with_counts, _unique_with_counts_ref,
           [_value([3, 1, 3, 2, 1, 3, 7])], dtypes=NUMBERS, grad=False),
    OpCase("unique_with_counts_strings", tf.unique_with_counts, _unique_with_counts_ref,
           [_STRINGS], dtypes=(tf.string,), grad=False),
    OpCase("unique_with_counts_int64", lambda x: tf.unique_with_counts(x, out_idx=tf.int64),
           lambda x: [a.astype(np.int64) if a.dtype == np.int32 else a
                      for a in _unique_with_counts_ref(x)],
           [_value([True, False, True])], dtypes=(tf.bool,), grad=False),
    OpCase("unique_with_counts_empty", tf.unique_with_counts, _unique_with_counts_ref,
           [np.zeros(0)], grad=False),
    OpCase("setdiff1d", tf.setdiff1d, _setdiff_ref,
           [_value([4, 1, 3, 4, 2, 5]), _value([4, 5, 9])], dtypes=NUMBERS + (tf.int8,),
           grad=False),
    OpCase("setdiff1d_strings", tf.setdiff1d, _setdiff_ref,
           [_STRINGS, np.array([b"b"], dtype=object)], dtypes=(tf.string,), grad=False),
    OpCase("setdiff1d_nan_stays", tf.setdiff1d, _setdiff_ref,
           [_value([np.nan, 1.0, 2.0]), _value([np.nan, 2.0])], grad=False),
    OpCase("setdiff1d_int64_idx", lambda x, y: tf.setdiff1d(x, y, index_dtype=tf.int64),
           lambda x, y: [_setdiff_ref(x, y)[0], _setdiff_ref(x, y)[1].astype(np.int64)],
           [_value([1, 2, 3]), np.zeros(0)], dtypes=I32, grad=False),
    OpCase("histogram", lambda v: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5),
           _histogram_ref(0.0, 5.0, 5),
           [_value([[-1.0, 0.0, 1.5], [2.0, 5.0, 100.0], [4.999, 0.99, 3.0]])],
           dtypes=(tf.float32, tf.float64), grad=False),
    OpCase("histogram_int", lambda v: tf.histogram_fixed_width(v, [3, 10], nbins=3,
                                                               dtype=tf.int64),
           lambda v: np.array([1, 1, 3], np.int64), [_value([3, 7, 9, 10, 11])], dtypes=INDEX,
           grad=False),
    OpCase("histogram_empty", lambda v: tf.histogram_fixed_width(v, [0.0, 1.0], nbins=2),
           lambda v: np.zeros(2, np.int32), [np.zeros((0, 2))], grad=False),
    OpCase("histogram_infinities", lambda v: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5),
           lambda v: np.array([1, 1, 0, 0, 1], np.int32), [_value([np.inf, -np.inf, 1.0])],
           grad=False),
    OpCase("histogram_bins", lambda v: tf.histogram_fixed_width_bins(v, [-2.0, 2.0], nbins=7),
           _bins_ref(-2.0, 2.0, 7), [_uniform(-3, 3, 3, 4)], grad=False),
    OpCase("histogram_bins_edges",
           lambda v: tf.histogram_fixed_width_bins(v, tf.constant([0.0, 5.0], v.dtype), nbins=5,
                                                   dtype=tf.int64),
           _bins_ref(0.0, 5.0, 5), [_value([-1.0, 0.0, 1.5, 2.0, 5.0, 15, np.inf, -np.inf])],
           dtypes=(tf.float16, tf.float32), grad=False),
    OpCase("histogram_bins_float64",
           lambda v: tf.histogram_fixed_width_bins(v, tf.constant([0.0, 1.0], tf.float64), 3),
           _bins_ref(0.0, 1.0, 3), [_uniform(-0.5, 1.5, 2, 2, 3)], dtypes=(tf.float64,),
           grad=False),
    OpCase("histogram_bins_scalar", lambda v: tf.histogram_fixed_width_bins(v, [0.0, 5.0], 5),
           _bins_ref(0.0, 5.0, 5), [_value(2.5)], grad=False),
    OpCase("histogram_bins_empty", lambda v: tf.histogram_fixed_width_bins(v, [0.0, 5.0], 5),
           _bins_ref(0.0, 5.0, 5), [np.zeros((0, 3))], grad=False),
    OpCase("reduce_variance", tf.math.reduce_variance, lambda x: np.var(x).astype(x.dtype),
           [_uniform(-3, 3, 3, 4)], dtypes=(tf.float16, tf.float32, tf.float64), rtol=1e-3),
    OpCase("reduce_variance_axis", lambda x: tf.math.reduce_variance(x, axis=-1, keepdims=True),
           lambda x: np.var(x, axis=-1, keepdims=True), [_uniform(-3, 3, 2, 5)]),
    OpCase("reduce_variance_complex", lambda x: tf.math.reduce_variance(x, axis=0),
           lambda x: np.var(x, axis=0),
           [lambda rng, dt: (rng.randn(4, 2) + 1j * rng.randn(4, 2)).astype(dt)],
           dtypes=(tf.complex64, tf.complex128), grad=False),
    OpCase("reduce_std", lambda x: tf.math.reduce_std(x, axis=[0, 1]),
           lambda x: np.std(x, axis=(0, 1)), [_uniform(-3, 3, 2, 3, 2)], dtypes=(tf.float64,)),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


# --- graph structure and static shapes, as TensorFlow builds them -------------------------------
def test_bincount_builds_like_tensorflow():
    with tf.Graph().as_default() as g:
        out = tf.bincount([1, 2], minlength=3, maxlength=5)
        assert out.name == "bincount/DenseBincount:0" and out.shape.as_list() == [3]
        assert [f"{op.name}:{op.type}" for op in g.get_operations()] == [
            "bincount/arr:Const", "bincount/Size:Const", "bincount/Greater/y:Const",
            "bincount/Greater:Greater", "bincount/Cast:Cast", "bincount/Const:Const",
            "bincount/Max:Max", "bincount/add/y:Const", "bincount/add:AddV2", "bincount/mul:Mul",
            "bincount/minlength:Const", "bincount/Maximum:Maximum", "bincount/maxlength:Const",
            "bincount/Minimum:Minimum", "bincount/Reshape/shape:Const", "bincount/Reshape:Reshape",
            "bincount/Const_1:Const", "bincount/DenseBincount:DenseBincount"]
        assert tf.bincount(tf.placeholder(tf.int32, [None, 2])).shape.as_list() == [None]
        assert tf.math.bincount is tf.bincount


def test_other_default_names_and_static_shapes():
    with tf.Graph().as_default():
        u = tf.unique_with_counts([1, 2, 1])
        assert [t.name for t in u] == ["UniqueWithCounts:0", "UniqueWithCounts:1",
                                       "UniqueWithCounts:2"]
        assert [t.shape.as_list() for t in u] == [[None], [3], [None]]
        d = tf.setdiff1d([1, 2], [1])
        assert type(d).__name__ == "ListDiff" and d.out.name == "ListDiff:0"
        h = tf.histogram_fixed_width([1.0], [0.0, 1.0])
        assert h.name == "histogram_fixed_width:0" and h.shape.as_list() == [100]
        nbins = tf.placeholder(tf.int32, [])
        assert tf.histogram_fixed_width([1.0], [0.0, 1.0], nbins).shape.as_list() == [None]
        std = tf.math.reduce_std([1.0, 2.0])
        assert std.name == "reduce_std/Sqrt:0" and std.op.inputs[0].op.type == "Mean"
        var = tf.math.reduce_variance([1.0, 2.0], name="v")
        assert var.name == "v/Mean_1:0"


def test_histogram_fixed_width_bins_builds_like_tensorflow():
    """TensorFlow 2.21's graph, but for the unused Const its tf.Assert leaves ("Assert/Const")."""
    with tf.Graph().as_default() as g:
        out = tf.histogram_fixed_width_bins([-1.0, 15.0], [0.0, 5.0], nbins=5)
        scope = "histogram_fixed_width_bins/"
        assert [f"{op.name[len(scope):]}:{op.type}" for op in g.get_operations()] == [
            "values:Const", "Shape:Const", "Reshape/shape:Const", "Reshape:Reshape",
            "value_range:Const", "nbins:Const", "Greater/y:Const", "Greater:Greater",
            "Assert/Assert/data_0:Const", "Assert/Assert:Assert",
            "control_dependency:Identity", "Cast:Cast", "strided_slice/stack:Const",
            "strided_slice/stack_1:Const", "strided_slice/stack_2:Const",
            "strided_slice:StridedSlice", "sub:Sub", "strided_slice_1/stack:Const",
            "strided_slice_1/stack_1:Const", "strided_slice_1/stack_2:Const",
            "strided_slice_1:StridedSlice", "strided_slice_2/stack:Const",
            "strided_slice_2/stack_1:Const", "strided_slice_2/stack_2:Const",
            "strided_slice_2:StridedSlice", "sub_1:Sub", "scaled_values:RealDiv", "mul:Mul",
            "indices:Floor", "sub_2/y:Const", "sub_2:Sub", "clip_by_value/Minimum:Minimum",
            "clip_by_value/y:Const", "clip_by_value:Maximum", "Cast_1:Cast",
            "Reshape_1:Reshape"]
        assert out.name == scope + "Reshape_1:0" and out.dtype == tf.int32
        assert tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], name="hb").name == "hb/Reshape_1:0"
        rows = tf.placeholder(tf.float32, [None, 3])
        assert tf.histogram_fixed_width_bins(rows, [0.0, 1.0]).shape.as_list() == [None, 3]
        assert tf.histogram_fixed_width_bins(tf.placeholder(tf.float32), [0.0, 1.0]).shape \
            .ndims is None


def test_histogram_fixed_width_bins_unchecked_range_and_nan_as_tensorflow():
    """TensorFlow checks neither lo < hi nor NaN here: its results, recorded from 2.21."""
    with tf.Graph().as_default():
        reversed_range = tf.histogram_fixed_width_bins([1.0], [5.0, 0.0], nbins=3)
        empty_range = tf.histogram_fixed_width_bins([1.0, 2.0], [1.0, 1.0], nbins=3)
        nan = tf.histogram_fixed_width_bins([np.nan, np.inf, -np.inf, 1.0], [0.0, 5.0], 5)
        assert [v.tolist() for v in _run([reversed_range, empty_range, nan])] == [
            [2], [-2**31, 2], [-2**31, 4, 0, 1]]


def test_histogram_fixed_width_bins_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Input 'y' of 'Sub' Op has type float32 that does "
                           "not match type float64 of argument 'x'."):
            tf.histogram_fixed_width_bins(tf.constant([1.0], tf.float64), [0.0, 1.0])
        with pytest.raises(TypeError, match="Input 'y' of 'Mul' Op has type float64 that does "
                           "not match type int32 of argument 'x'."):
            tf.histogram_fixed_width_bins([1, 2, 3], [0, 5], nbins=5)
    with tf.Graph().as_default():
        out = tf.histogram_fixed_width_bins([1.0], [0.0, 5.0], nbins=0)
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out)
        assert 'assertion failed: [nbins Tensor(\\"histogram_fixed_width_bins/nbins:0\\", ' \
            'shape=(), dtype=int32) must > 0]' in str(info.value)


def test_counting_ops_have_no_gradient():
    with tf.Graph().as_default():
        w = tf.constant([1.0, 2.0])
        assert tf.gradients(tf.bincount([0, 1], weights=w), w) == [None]
        assert tf.gradients(tf.unique_with_counts(w).y, w) == [None]
        assert tf.gradients(tf.setdiff1d(w, [1.0]).out, w) == [None]


# --- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("build,match", [
    (lambda: tf.bincount([1, 2], maxlength=-1), r"size \(-1\) must be non-negative"),
    (lambda: apply_op(counting_ops.DenseBincount, [[1, 2], [3], tf.constant([], tf.float32)]),
     "Shape must be rank 0 but is rank 1"),
    (lambda: apply_op(counting_ops.DenseBincount, [tf.ones([1, 1, 1], tf.int32), 3,
                                                   tf.constant([], tf.float32)]),
     "Shape must be at most rank 2 but is rank 3"),
    (lambda: tf.setdiff1d([[1, 2]], [1]), "Shape must be rank 1 but is rank 2"),
    (lambda: tf.setdiff1d([1, 2], [[1]]), "Shape must be rank 1 but is rank 2"),
    (lambda: tf.histogram_fixed_width([1.0], [0.0, 5.0], nbins=0), "Requires nbins > 0: 0"),
    (lambda: tf.histogram_fixed_width([1.0], [5.0, 5.0, 6.0]), "Dimension must be 2 but is 3"),
    (lambda: tf.histogram_fixed_width([1.0], [0.0, 5.0], nbins=[2]),
     "Shape must be rank 0 but is rank 1"),
])
def test_value_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build()


@pytest.mark.parametrize("build,match", [
    (lambda: tf.bincount(tf.constant([1, 1], tf.int8)),
     "int8 not in list of allowed values: int32, int64"),
    (lambda: tf.bincount([1, 1], weights=tf.constant([1, 1], tf.float16)),
     "float16 not in list of allowed values"),
    (lambda: tf.setdiff1d(tf.constant([4, 1]), tf.constant([4.0])),
     "Input 'y' of 'ListDiff' Op has type float32 that does not match type int32"),
    (lambda: tf.histogram_fixed_width(tf.constant([1], tf.int8), [0, 5]), "int8"),
    (lambda: tf.math.reduce_variance(tf.constant([1, 2])),
     r"Input must be either real or complex. Received integer type <dtype: 'int32'>."),
])
def test_type_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=match):
            build()


def _fed(value, dtype):
    return tf.placeholder_with_default(tf.constant(value, dtype), None)


@pytest.mark.parametrize("build,match", [
    (lambda: tf.bincount([1, -1, 2]), "Input arr must be non-negative!"),
    (lambda: tf.bincount([1, -1], maxlength=1), "Input arr must be non-negative!"),
    (lambda: tf.bincount([1, 2, 2], weights=[1.0, 2.0]),
     r"`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it "
     r"acts as all weights equal to 1. Received \[2\]"),
    (lambda: apply_op(counting_ops.DenseBincount, [[[1, -2]], 3, tf.constant([], tf.float32)]),
     "Input 'in' must be non-negative! Negative input value found: -2"),
    (lambda: apply_op(counting_ops.DenseBincount, [_fed(np.ones((1, 1, 1)), tf.int32), 3,
                                                   tf.constant([], tf.float32)]),
     "Shape must be at most rank 2 but is rank 3"),
    (lambda: apply_op(counting_ops.DenseBincount, [[1], _fed(-1, tf.int32),
                                                   tf.constant([], tf.float32)]),
     r"size \(-1\) must be non-negative"),
    (lambda: tf.unique_with_counts([[3, 1]]).y, "unique expects a 1D vector."),
    (lambda: tf.setdiff1d(_fed([[4, 1]], tf.int32), [4]).out, "x should be a 1D vector."),
    (lambda: tf.setdiff1d([4, 1], _fed([[4]], tf.int32)).out, "y should be a 1D vector."),
    (lambda: tf.histogram_fixed_width([1.0], [5.0, 5.0], nbins=2),
     r"value_range should satisfy value_range\[0\] < value_range\[1\], but got '\[5, 5\]'"),
    (lambda: tf.histogram_fixed_width([1.0], _fed([1.5, 0.25], tf.float32), nbins=2),
     r"but got '\[1.5, 0.25\]'"),
    (lambda: tf.histogram_fixed_width([1.0], _fed([5.0, 5.0, 6.0], tf.float32), nbins=2),
     "value_range should be a vector of 2 elements."),
    (lambda: tf.histogram_fixed_width([1.0], [0.0, 5.0], nbins=_fed(-3, tf.int32)),
     "nbins should be a positive number, but got '-3'"),
    (lambda: tf.histogram_fixed_width([1.0], [0.0, 5.0], nbins=_fed([2], tf.int32)),
     "nbins should be a scalar."),
    (lambda: tf.histogram_fixed_width([np.nan, 1.0], [0.0, 5.0]),
     "Histogram values must not contain NaN"),
])
def test_run_time_errors(build, match):
    with tf.Graph().as_default():
        out = build()
        with pytest.raises(errors.InvalidArgumentError, match=match):
            _run(out)


@pytest.mark.parametrize("build", [
    lambda: tf.setdiff1d(tf.constant([True, False]), tf.constant([True])).out,
    lambda: tf.unique_with_counts(tf.constant([1j, 1j])).y,
])
def test_no_kernel_for_the_dtypes_tensorflow_lacks(build):
    with tf.Graph().as_default():
        out = build()
        with pytest.raises(errors.InvalidArgumentError):
            _run(out)
