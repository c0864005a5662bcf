"""TF 1.x's replaced array and state ops (ops/legacy_array_ops.py): Reverse, TileGrad, Copy,
DeepCopy, Empty, UniqueV2 and UniqueWithCountsV2 against NumPy (the Unique values, shapes and errors
as TF 2.21 gave them for the same nodes); Variable and PlaceholderV2 in graphs as an imported
GraphDef brings them (their values were checked against TF 2.21 running a version-1 GraphDef);
MatrixDiagV2, MatrixDiagPartV2 and MatrixSetDiagV2 against a NumPy reference of TF's LEFT_LEFT
packing, with TF's gradients (which read bands back RIGHT_LEFT)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import legacy_array_ops as ops
from tensorweave.testing.op_case import OpCase, case_tests


def _randn(*shape):
    return lambda rng, dt: rng.standard_normal(shape).astype(dt)


def _tile_grad_ref(x):
    return x.reshape(2, 2, 3, 1, 3, 2).sum(axis=(0, 2, 4))


def _unique_rows_ref(x, axis=0):
    """Distinct slices along axis in order of first occurrence, positions, counts."""
    slices = [tuple(np.take(x, i, axis=axis).ravel()) for i in range(x.shape[axis])]
    distinct = list(dict.fromkeys(slices))
    idx = np.int32([distinct.index(s) for s in slices])
    first = [slices.index(s) for s in distinct]
    return [np.take(x, first, axis=axis), idx, np.bincount(idx).astype(np.int32)]


def _repeated_rows(rng, dt):
    return rng.randint(0, 3, (3, 2))[rng.randint(0, 3, 6)].astype(dt)


def _band(rows, cols, lower, upper):
    """Each diagonal's (row, col) cells, diagonal `upper` first, each from its top-left."""
    return [[(i, i + d) for i in range(max(0, -d), min(rows, cols - d))]
            for d in range(upper, lower - 1, -1)]


def _diag_v2_ref(rows, cols, k, pad):
    """MatrixDiagV2: the packed diagonals [..., num_diags, L], each from slot 0 (LEFT_LEFT)."""
    def ref(diag):
        out = np.full(diag.shape[:-2] + (rows, cols), pad, diag.dtype)
        for j, cells in enumerate(_band(rows, cols, *k)):
            for t, (r, c) in enumerate(cells):
                out[..., r, c] = diag[..., j, t]
        return out
    return ref


def _diag_part_v2_ref(k, pad):
    def ref(x):
        cells = _band(*x.shape[-2:], *k)
        out = np.full(x.shape[:-2] + (len(cells), max(map(len, cells))), pad, x.dtype)
        for j, diagonal in enumerate(cells):
            for t, (r, c) in enumerate(diagonal):
                out[..., j, t] = x[..., r, c]
        return out if k[0] < k[1] else out[..., 0, :]
    return ref


def _set_diag_v2_ref(k):
    def ref(x, diag):
        out = x.copy()
        packed = diag if k[0] < k[1] else diag[..., None, :]
        for j, cells in enumerate(_band(*x.shape[-2:], *k)):
            for t, (r, c) in enumerate(cells):
                out[..., r, c] = packed[..., j, t]
        return out
    return ref


def _diag_v2(k, rows, cols, pad):
    return lambda d: apply_op(ops.MatrixDiagV2, [d, k, rows, cols, tf.cast(pad, d.dtype)])


def _diag_part_v2(k, pad):
    return lambda x: apply_op(ops.MatrixDiagPartV2, [x, k, tf.cast(pad, x.dtype)])


def _set_diag_v2(k):
    return lambda x, d: apply_op(ops.MatrixSetDiagV2, [x, d, k])


CASES = [
    # Bands with a shorter superdiagonal, where LEFT_LEFT differs from V3's RIGHT_LEFT default;
    # TF's gradients read them back RIGHT_LEFT, so no numerical check (see the test below).
    OpCase("matrix_diag_v2_band", _diag_v2([-1, 1], 3, 3, 9), _diag_v2_ref(3, 3, (-1, 1), 9),
           [_randn(2, 3, 3)], dtypes=(tf.float32, tf.int32), grad=False),
    OpCase("matrix_diag_part_v2_band", _diag_part_v2([-1, 1], 9),
           _diag_part_v2_ref((-1, 1), 9), [_randn(2, 3, 3)], dtypes=(tf.float32, tf.int64),
           grad=False),
    OpCase("matrix_set_diag_v2_band", _set_diag_v2([-1, 1]), _set_diag_v2_ref((-1, 1)),
           [_randn(2, 3, 3), _randn(2, 3, 3)], dtypes=(tf.float32, tf.int32), grad=False),
    # Subdiagonals and single diagonals: both alignments agree, so TF's gradients are exact.
    OpCase("matrix_diag_v2_subdiagonals", _diag_v2([-1, 0], 3, 4, 0),
           _diag_v2_ref(3, 4, (-1, 0), 0), [_randn(2, 2, 3)], dtypes=(tf.float64,)),
    OpCase("matrix_diag_part_v2_subdiagonals", _diag_part_v2([-2, 0], -1),
           _diag_part_v2_ref((-2, 0), -1), [_randn(2, 4, 3)], dtypes=(tf.float64,)),
    OpCase("matrix_set_diag_v2_single", _set_diag_v2(1), _set_diag_v2_ref((1, 1)),
           [_randn(2, 3, 4), _randn(2, 3)], dtypes=(tf.float64,)),
    OpCase("reverse_v1", lambda x: apply_op(ops.Reverse, [x, [True, False, True]]),
           lambda x: x[::-1, :, ::-1], [_randn(2, 3, 4)], dtypes=(tf.float32, tf.int64)),
    OpCase("tile_grad", lambda x: apply_op(ops.TileGrad, [x, [2, 3, 3]]), _tile_grad_ref,
           [_randn(4, 3, 6)], dtypes=(tf.float32, tf.float64), grad=False),
    OpCase("copy", lambda x: apply_op(ops.Copy, [x], {"tensor_name": "x:0"}), lambda x: x,
           [_randn(2, 3)], dtypes=(tf.float32, tf.int32), grad=False),
    OpCase("deep_copy", lambda x: apply_op(ops.DeepCopy, [x]), lambda x: x, [_randn(2, 3)],
           grad=False),
    OpCase("empty", lambda s: apply_op(ops.Empty, [s], {"dtype": tf.float32, "init": True}),
           lambda s: np.zeros(s, np.float32), [np.int32([2, 3])], fixed_dtypes=(tf.int32,),
           grad=False),
    OpCase("unique_v2_rows", lambda x: apply_op(ops.UniqueV2, [x, np.int64([0])]),
           lambda x: _unique_rows_ref(x)[:2], [_repeated_rows], dtypes=(tf.float32, tf.int64),
           grad=False),
    OpCase("unique_with_counts_v2_columns",
           lambda x: apply_op(ops.UniqueWithCountsV2, [x, np.int32([-1])]),
           lambda x: _unique_rows_ref(x, 1), [lambda rng, dt: _repeated_rows(rng, dt).T],
           dtypes=(tf.float32, tf.int32), grad=False),
    OpCase("unique_with_counts_v2_vector",
           lambda x: apply_op(ops.UniqueWithCountsV2, [x, np.int64([])]),
           lambda x: _unique_rows_ref(x), [np.float32([3, 1, 3, 2, 1])], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_copies_own_their_buffer_and_no_gradient_is_registered():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        for op_def in (ops.Copy, ops.DeepCopy):
            with pytest.raises(LookupError, match=op_def.name):
                tf.gradients(apply_op(op_def, [x]), x)
        with pytest.raises(ValueError, match="Invalid value in tensor used for shape: -2"):
            apply_op(ops.Empty, [[2, -2]], {"dtype": tf.float32})
        shape = tf.placeholder(tf.int32, [2])
        empty = apply_op(ops.Empty, [shape], {"dtype": tf.string})
        with tf.Session() as sess:
            assert sess.run(empty, {shape: [1, 2]}).tolist() == [[b"", b""]]
            with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -2 must be >= 0"):
                sess.run(empty, {shape: [2, -2]})


def test_reverse_checks_dims_length():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        y = apply_op(ops.Reverse, [x, [True]])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="'dims' must have the same"):
                sess.run(y, {x: np.zeros((2, 2))})


def test_variable_and_placeholder_v2_in_an_imported_graph():
    """A TF 1.0-era GraphDef: a Variable initialized by Assign, and a PlaceholderV2 to feed."""
    with tf.Graph().as_default() as g:
        var = apply_op(ops.Variable, [], {"shape": tf.TensorShape([2]), "dtype": tf.float32},
                       name="old_var")
        tf.assign(var, [1.0, 2.0], name="init")
        fed = apply_op(ops.PlaceholderV2, [], {"dtype": tf.float32,
                                               "shape": tf.TensorShape([2])}, name="input")
        tf.add(var, fed * 2.0, name="out")
        graph_def = g.as_graph_def()
    assert {n.op for n in graph_def.node} >= {"Variable", "PlaceholderV2"}
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        out = g.get_tensor_by_name("out:0")
        assert out.shape.as_list() == [2]
        with tf.Session() as sess:
            sess.run("init")
            np.testing.assert_array_equal(sess.run(out, {"input:0": [1.5, -2.0]}), [4.0, -2.0])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="You must feed a value for placeholder tensor 'input'"):
                sess.run(out)


def test_unique_v2_values_shapes_and_errors_match_tf():
    """TF 2.21's results for these nodes: values along each axis, static idx shapes, and the
    errors of a static and a fed bad axis."""
    x = np.float32([[1, 0, 1], [1, 0, 1], [2, 0, 2], [1, 0, 1]])
    with tf.Graph().as_default():
        assert [t.shape.as_list() for t in apply_op(ops.UniqueV2, [x, [1]])] == [[None, None], [3]]
        fed = tf.placeholder(tf.float32, [None, 3])
        assert apply_op(ops.UniqueWithCountsV2, [fed, [0]])[1].shape.as_list() == [None]
        assert apply_op(ops.UniqueV2, [tf.placeholder(tf.float32, [5]), np.int64([])])[1] \
            .shape.as_list() == [5]
        for axis, message in (([2], r"axis expects to be in the range \[-2, 2\)"),
                              ([[0]], "axis expects a 1D vector."),
                              ([0, 1], "axis does not support input tensors larger than 1"),
                              (np.int32([]), "x expects a 1D vector.")):
            with pytest.raises(ValueError, match=message):
                apply_op(ops.UniqueV2, [tf.placeholder(tf.float32, [4, 5]), axis])
        value, axis = tf.placeholder(tf.float32), tf.placeholder(tf.int64)
        counted = apply_op(ops.UniqueWithCountsV2, [value, axis])
        with tf.Session() as sess:
            y, idx, count = sess.run(counted, {value: x, axis: [0]})
            np.testing.assert_array_equal(y, [[1, 0, 1], [2, 0, 2]])
            assert idx.tolist() == [0, 0, 1, 0] and count.tolist() == [3, 1]
            y, idx, count = sess.run(counted, {value: x, axis: [-1]})
            np.testing.assert_array_equal(y, x[:, :2])
            assert idx.tolist() == [0, 1, 0] and count.tolist() == [2, 1]
            y, idx, count = sess.run(counted, {value: np.zeros((2, 0)), axis: [0]})
            assert y.shape == (1, 0) and idx.tolist() == [0, 0] and count.tolist() == [2]
            for bad, feed, message in (
                    (x, [2], r"axis has to be between \[0, 2\)"),
                    (x, [-3], r"axis has to be between \[0, 2\)"),
                    (x, [], "unique expects a 1D vector."),
                    (x, [[0]], "axis expects a 1D vector."),
                    (x, [0, 1], "axis does not support input tensors larger than 1 elements"),
                    (np.float32(3), [0], r"axis has to be between \[0, 0\)")):
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(counted, {value: bad, axis: feed})


def test_matrix_diag_v2_gradients_are_tfs():
    """TF's _MatrixDiagV2Grad, _MatrixDiagPartV2Grad and _MatrixSetDiagGradV2 build the V3 ops
    with the wrappers' RIGHT_LEFT: a band's shorter superdiagonal comes back shifted right."""
    g = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    with tf.Graph().as_default():
        diag = tf.constant(np.zeros((3, 3), np.float32))
        x = tf.constant(np.zeros((3, 3), np.float32))
        d_diag = tf.gradients(apply_op(ops.MatrixDiagV2, [diag, [-1, 1], 3, 3, 0.0]), diag, g)[0]
        d_part = tf.gradients(apply_op(ops.MatrixDiagPartV2, [x, [0, 1], 0.0]), x,
                              np.float32([[1, 2, 3], [4, 5, 6]]))[0]
        d_x, d_set = tf.gradients(apply_op(ops.MatrixSetDiagV2, [x, diag, [-1, 1]]), [x, diag], g)
        assert d_diag.op.type == "MatrixDiagPartV3" and d_part.op.type == "MatrixDiagV3"
        assert d_diag.op.get_attr("align") == b"RIGHT_LEFT"
        with tf.Session() as sess:
            got_diag, got_part, got_x, got_set = sess.run([d_diag, d_part, d_x, d_set])
    np.testing.assert_array_equal(got_diag, [[0, 2, 6], [1, 5, 9], [4, 8, 0]])
    np.testing.assert_array_equal(got_set, got_diag)
    np.testing.assert_array_equal(got_part, [[4, 2, 0], [0, 5, 3], [0, 0, 6]])
    np.testing.assert_array_equal(got_x, [[0, 0, 3], [0, 0, 0], [7, 0, 0]])


def test_matrix_diag_v2_shapes_and_errors():
    """V3's shape rules and kernel checks, with V2's op type and no align attr."""
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.float32, [None, 2, 3])
        assert apply_op(ops.MatrixDiagV2, [fed, [-1, 0], -1, -1, 0.0]).shape.as_list() == \
            [None, 3, 3]
        assert apply_op(ops.MatrixDiagPartV2, [tf.placeholder(tf.float32, [5, 3, 4]), 1, 0.0]) \
            .shape.as_list() == [5, 3]
        with pytest.raises(ValueError, match="lower_diag_index is out of bound"):
            apply_op(ops.MatrixDiagPartV2, [tf.zeros([3, 4]), [-3, 0], 0.0])
        node = apply_op(ops.MatrixSetDiagV2, [tf.zeros([3, 3]), tf.zeros([3]), 0]).op.node_def
        assert "align" not in node.attr
        diag = tf.placeholder(tf.float32)
        y = apply_op(ops.MatrixDiagV2, [diag, [-1, 1], -1, -1, 0.0])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="number of diagonals"):
                sess.run(y, {diag: np.zeros((2, 3))})
