"""tf.sort, tf.argsort (TopKV2 composites) and tf.searchsorted (LowerBound / UpperBound):
forward against NumPy, shape functions against the kernels, sort's gradient against central
differences, the graphs TensorFlow builds, and TensorFlow 2.21's results where `<` is not an
order (NaN, unsorted rows) and its errors (all checked with run_with_tf)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
SORTABLE = (tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.int8, tf.float16)
INDEX = (tf.int32, tf.int64)


def _shuffled(*shape):
    """Distinct values (so sort's gradient is defined) in random order."""
    def make(rng, dt):
        return (rng.permutation(int(np.prod(shape))).reshape(shape) * 1.5 - 7).astype(dt)
    return make


def _ties(rng, dt):
    return np.array([[2, 1, 2, 1, 2, 1], [0, 0, 3, 3, 0, 3]]).astype(dt)


def _extremes(rng, dt):
    info = np.iinfo(dt)
    return np.array([0, info.min, info.max, 3, info.min, info.max]).astype(dt)


def _sort_ref(axis, descending=False):
    def ref(x):
        out = np.sort(x, axis, kind="stable")
        return np.flip(out, axis) if descending else out
    return ref


def _argsort_ref(axis, descending=False):
    """Stable in both directions: equal values keep their order (lower index first)."""
    def ref(x):
        key = -x.astype(np.float64) if descending else x
        return np.argsort(key, axis, kind="stable").astype(np.int32)
    return ref


def _searchsorted_ref(side):
    def ref(seq, values):
        flat_seq = seq.reshape(int(np.prod(seq.shape[:-1])), seq.shape[-1])
        flat_values = values.reshape(int(np.prod(values.shape[:-1])), values.shape[-1])
        out = [np.searchsorted(s, v, side) for s, v in zip(flat_seq, flat_values)]
        return np.array(out, np.int32).reshape(values.shape)
    return ref


_SEQ = lambda rng, dt: np.array([[0, 3, 9, 10, 10], [1, 2, 3, 4, 5]]).astype(dt)  # noqa: E731
_VALUES = lambda rng, dt: np.array([[0, 4, 10], [6, 0, 5]]).astype(dt)  # noqa: E731

CASES = [
    # --- sort
    OpCase("sort", tf.sort, _sort_ref(-1), [_shuffled(3, 5)], dtypes=SORTABLE),
    OpCase("sort_descending", lambda x: tf.sort(x, direction="DESCENDING"),
           _sort_ref(-1, True), [_shuffled(3, 5)], dtypes=SORTABLE),
    OpCase("sort_axis0", lambda x: tf.sort(x, axis=0), _sort_ref(0), [_shuffled(4, 3)],
           dtypes=SORTABLE),
    OpCase("sort_middle_axis_descending", lambda x: tf.sort(x, -2, "DESCENDING"),
           _sort_ref(1, True), [_shuffled(2, 3, 4)]),
    OpCase("sort_extremes", tf.sort, _sort_ref(-1), [_extremes],
           dtypes=(tf.int32, tf.int64, tf.uint8, tf.int8), grad=False),
    OpCase("sort_extremes_descending", lambda x: tf.sort(x, direction="DESCENDING"),
           _sort_ref(-1, True), [_extremes], dtypes=(tf.int32, tf.int64, tf.uint8), grad=False),
    # Sorting an empty axis has no gradient in TensorFlow either (TopKV2's gradient asks for
    # a Range with step 0); sorting the non-empty axis of an empty tensor has.
    OpCase("sort_empty_axis", lambda x: tf.sort(x, axis=0), _sort_ref(0), [np.zeros((0, 3))],
           grad=False),
    OpCase("sort_empty_rows", tf.sort, _sort_ref(-1), [np.zeros((0, 3))]),
    OpCase("sort_constant_axis", lambda x: tf.sort(x, axis=tf.constant(1)), _sort_ref(1),
           [_shuffled(2, 4)]),
    # --- argsort
    OpCase("argsort", tf.argsort, _argsort_ref(-1), [_shuffled(3, 5)], dtypes=SORTABLE,
           grad=False),
    OpCase("argsort_descending_axis0", lambda x: tf.argsort(x, 0, "DESCENDING"),
           _argsort_ref(0, True), [_shuffled(4, 3)], dtypes=SORTABLE, grad=False),
    OpCase("argsort_ties", lambda x: tf.argsort(x, stable=True), _argsort_ref(-1), [_ties],
           dtypes=SORTABLE, grad=False),
    OpCase("argsort_ties_descending", lambda x: tf.argsort(x, direction="DESCENDING"),
           _argsort_ref(-1, True), [_ties], dtypes=SORTABLE, grad=False),
    OpCase("argsort_extremes", tf.argsort, _argsort_ref(-1), [_extremes],
           dtypes=(tf.int32, tf.int64, tf.uint8), grad=False),
    # --- searchsorted
    OpCase("searchsorted_left", tf.searchsorted, _searchsorted_ref("left"), [_SEQ, _VALUES],
           dtypes=SORTABLE, grad=False),
    OpCase("searchsorted_right", lambda s, v: tf.searchsorted(s, v, side="right"),
           _searchsorted_ref("right"), [_SEQ, _VALUES], dtypes=SORTABLE, grad=False),
    OpCase("searchsorted_1d_int64", lambda s, v: tf.searchsorted(s, v, out_type=tf.int64),
           lambda s, v: np.searchsorted(s, v).astype(np.int64),
           [lambda rng, dt: np.sort(rng.randn(20)).astype(dt), _shuffled(7)], grad=False),
    OpCase("searchsorted_3d", tf.searchsorted, _searchsorted_ref("left"),
           [lambda rng, dt: np.sort(rng.randn(2, 3, 6), -1).astype(dt), _shuffled(2, 3, 4)],
           dtypes=FLOAT, grad=False),
    OpCase("searchsorted_empty_sequence", tf.searchsorted, _searchsorted_ref("left"),
           [np.zeros((2, 0)), _shuffled(2, 3)], grad=False),
    OpCase("searchsorted_no_values", lambda s, v: tf.searchsorted(s, v, "right"),
           _searchsorted_ref("right"), [_SEQ, np.zeros((2, 0))], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _op_types(graph):
    return [op.type for op in graph.get_operations()]


def test_sort_is_built_from_top_k_as_in_tensorflow():
    """TensorFlow's graph, less the Rank constant it makes and never uses."""
    with tf.Graph().as_default() as g:
        tf.sort(np.float32([[3, 1], [2, 0]]), axis=0)
        names = [op.name for op in g.get_operations()]
        assert _op_types(g) == ["Const", "Const", "Neg", "Const", "Const", "Const", "Const",
                                "StridedSlice", "Const", "Transpose", "TopKV2", "Transpose",
                                "Neg"]
        assert names[:3] == ["sort/axis", "sort/values", "sort/Neg"]
        assert "sort/transposition" in names and names[-1] == "sort/Neg_1"
    with tf.Graph().as_default() as g:
        tf.argsort(np.uint8([3, 1]), name="order")
        assert _op_types(g)[-1] == "TopKV2" and "Sub" in _op_types(g)
        assert g.get_operations()[-1].name == "order/TopKV2"
    with tf.Graph().as_default() as g:
        tf.argsort(np.int32([3, 1]), direction="DESCENDING")
        assert "Neg" not in _op_types(g) and _op_types(g)[-1] == "TopKV2"


def test_sort_of_unknown_rank_swaps_axes_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        first, middle = tf.sort(x, axis=0), tf.argsort(x, axis=-2, direction="DESCENDING")
        assert first.shape.ndims is None
        values = np.array([[[3.0, 1.0], [2.0, 0.0]], [[5.0, 7.0], [6.0, 4.0]]], np.float32)
        with tf.Session() as sess:
            got_first, got_middle = sess.run([first, middle], {x: values})
            np.testing.assert_array_equal(got_first, np.sort(values, 0))
            np.testing.assert_array_equal(got_middle, [[[0, 0], [1, 1]], [[1, 0], [0, 1]]])
            np.testing.assert_array_equal(sess.run(first, {x: [2.0, 1.0]}), [1.0, 2.0])


def test_sort_static_shapes():
    with tf.Graph().as_default():
        assert tf.sort(tf.placeholder(tf.float32, [None, 3]), axis=0).shape.as_list() == \
            [None, 3]
        assert tf.sort(tf.placeholder(tf.float32, [None, 3])).shape.as_list() == [None, 3]
        assert tf.argsort(tf.placeholder(tf.float32, [2, None])).shape.as_list() == [2, None]
        assert tf.argsort(tf.placeholder(tf.float64, [2])).dtype == tf.int32


def test_sort_gradient_routes_to_the_original_positions():
    with tf.Graph().as_default():
        x = tf.constant(np.float32([[3, 1], [2, 0]]))
        grad = tf.gradients(tf.sort(x, axis=0) * [[1.0, 10.0], [100.0, 1000.0]], x)[0]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grad), [[100, 1000], [1, 10]])


def test_searchsorted_follows_tensorflow_where_less_than_is_not_an_order():
    """NaN queries and entries, and unsorted rows: TF's std::lower_bound / upper_bound
    results (np.searchsorted orders NaN last and differs)."""
    seq = np.float32([[5, 1, 4, 2, 8, 3, 9], [np.nan, 1, 2, np.nan, 3, 4, np.nan]])
    values = np.float32([[0, 2, 4.5, 9, 10, np.nan], [np.nan, 0, 1.5, 3, 4, 5]])
    with tf.Graph().as_default():
        left = tf.searchsorted(seq, values)
        right = tf.searchsorted(seq, values, side="right", out_type=tf.int64)
        nan_left = tf.searchsorted(np.float32([1, 2, np.nan]), np.float32([np.nan, 3, 0]))
        nan_right = tf.searchsorted(np.float32([1, 2, np.nan]), np.float32([np.nan, 3, 0]),
                                    side="right")
        with tf.Session() as sess:
            got = sess.run([left, right, nan_left, nan_right])
    assert got[0].tolist() == [[0, 2, 6, 6, 7, 0], [0, 0, 2, 3, 3, 3]]
    assert got[1].tolist() == [[0, 4, 6, 7, 7, 7], [7, 4, 4, 5, 7, 7]]
    assert got[1].dtype == np.int64
    assert got[2].tolist() == [0, 2, 0] and got[3].tolist() == [3, 3, 0]


def test_searchsorted_graph_and_shapes():
    with tf.Graph().as_default() as g:
        out = tf.searchsorted(tf.placeholder(tf.float32, [None, None]),
                              tf.placeholder(tf.float32, [None, 3]), name="bins")
        assert out.shape.as_list() == [None, 3] and out.op.type == "Reshape"
        bound = [op for op in g.get_operations() if op.type == "LowerBound"]
        assert [op.name for op in bound] == ["bins"]
        right = tf.searchsorted([1.0, 2.0], [1.5], side="right")
        assert right.op.inputs[0].op.type == "UpperBound"
        assert right.op.inputs[0].op.name == "UpperBound"
        unknown = tf.searchsorted(tf.placeholder(tf.float32), tf.placeholder(tf.float32))
        assert unknown.shape.ndims is None
        assert tf.gradients(out, g.get_operations()[0].outputs[0]) == [None]


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.sort(np.zeros((2, 3), np.float32), direction="ascending"), ValueError,
     "Argument `direction` should be one of ASCENDING, DESCENDING. Received: "
     "direction=ascending"),
    (lambda: tf.sort(np.zeros((2, 3), np.float32), axis=tf.placeholder(tf.int32, [])),
     ValueError, "Argument `axis` must be a constant scalar"),
    (lambda: tf.argsort(np.zeros((2, 3), np.float32), axis=[0]), ValueError,
     "Argument `axis` must be a constant scalar"),
    (lambda: tf.sort(np.zeros((2, 3), np.float32), axis=2), ValueError,
     "slice index 2 of dimension 0 out of bounds"),
    (lambda: tf.sort(np.zeros((2, 3), np.float32), axis=-3), ValueError,
     "slice index -1 of dimension 0 out of bounds"),
    (lambda: tf.sort(np.float32(1)), ValueError, "slice index -1 of dimension 0 out of bounds"),
    (lambda: tf.sort(np.array([True, False])), TypeError,
     "Value passed to parameter 'x' has DataType bool not in list of allowed values"),
    (lambda: tf.sort(np.array([1j, 2])), TypeError,
     "Value passed to parameter 'input' has DataType complex128 not in list of allowed"),
    (lambda: tf.searchsorted([1.0], [1.0], side="middle"), ValueError,
     "Argument `side` must be either 'right' or 'left'. Received: `side` = 'middle'."),
    (lambda: tf.searchsorted([1.0, 2.0], 1.0), ValueError,
     "slice index -1 of dimension 0 out of bounds"),
    (lambda: tf.searchsorted([1, 2], [2], out_type=tf.float32), TypeError,
     "not in list of allowed values: int32, int64"),
    (lambda: tf.searchsorted(np.int32([1, 2]), np.float32([2])), TypeError, "float32"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("seq,values", [
    (np.zeros((2, 5), np.float32), np.zeros((3, 2), np.float32)),
    (np.zeros((2, 5), np.float32), np.zeros(2, np.float32)),
])
def test_searchsorted_leading_dimensions_must_match(seq, values):
    with tf.Graph().as_default():
        s, v = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        out = tf.searchsorted(s, v)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Leading dim_size of both tensors must match."):
                sess.run(out, {s: seq, v: values})


def test_sort_of_a_fed_scalar_fails_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="slice index -1 of dimension 0 out of bounds"):
                sess.run(tf.sort(x), {x: 1.0})
