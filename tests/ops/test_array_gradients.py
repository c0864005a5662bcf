"""Gradients of the array, reduction and linear-algebra families where a numerical check says
too little: TensorFlow's values at ties, zeros and borders (checked against values TensorFlow
2.21 computes), which gradients are None or sparse, gradients built for unknown shapes, second
derivatives and Hessians. The central-difference check of every differentiable row is
`test_gradient` in each family's test file."""
import importlib.util
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradients import as_list
from tensorweave.framework.op_def import OpDef
from tensorweave.ops import (
    array_creation_ops,
    array_index_ops,
    array_join_ops,
    array_ops,
    array_slicing_ops,
    array_tile_pad_ops,
    linalg_ops,
    reduction_ops,
)
from tensorweave.testing.op_case import materialize_inputs

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_MODULES = (array_ops, array_creation_ops, array_join_ops, array_slicing_ops,
                  array_index_ops, array_tile_pad_ops, reduction_ops, linalg_ops)


def _f64(values):
    return tf.constant(values, tf.float64)


def _grads(y, xs, grad_ys=None):
    """The gradients of y with respect to xs, evaluated (sparse ones densified, None kept)."""
    grads = tf.gradients(y, xs, grad_ys=grad_ys)
    fetch = [tf.convert_to_tensor(g) for g in grads if g is not None]
    with tf.Session() as sess:
        values = iter(sess.run(fetch))
    return [None if g is None else next(values) for g in grads]


def test_every_op_of_these_families_has_a_gradient_or_is_not_differentiable():
    ops = {v.name: v for m in FAMILY_MODULES for v in vars(m).values() if isinstance(v, OpDef)}
    missing = [n for n, d in ops.items() if d.grad_fn is None and not d.not_differentiable]
    assert not missing, f"ops with neither a gradient nor not_differentiable: {missing}"
    blocked = {n for n, d in ops.items() if d.not_differentiable}
    assert blocked == {"StopGradient", "Shape", "ShapeN", "Size", "Rank", "ZerosLike",
                       "OnesLike", "Range", "LinSpace", "OneHot", "Where", "All", "Any",
                       "ArgMax", "ArgMin", "ConcatOffset"}


# --- values TensorFlow defines at ties, zeros and borders -------------------------------------
def test_max_and_min_split_the_gradient_among_ties():
    with tf.Graph().as_default():
        x = _f64([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
        (g_max,) = _grads(tf.reduce_max(x, 1), [x])
        (g_min,) = _grads(tf.reduce_min(x), [x])
        (g_keep,) = _grads(tf.reduce_max(x, [0, 1], keepdims=True), [x])
    np.testing.assert_array_equal(g_max, [[0, 0.5, 0.5], [0.5, 0, 0.5]])
    np.testing.assert_array_equal(g_min, [[0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(g_keep, [[0, 0.5, 0.5], [0, 0, 0]])


def test_prod_gradient_is_exact_at_zeros():
    with tf.Graph().as_default():
        p = _f64([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 3.0]])
        (rows,) = _grads(tf.reduce_prod(p, 1), [p])
        (cols,) = _grads(tf.reduce_prod(p, 0, keepdims=True), [p])
        (total,) = _grads(tf.reduce_prod(p[2]), [p])
    np.testing.assert_array_equal(rows, [[0, 6, 0], [0, 0, 0], [6, 3, 2]])
    np.testing.assert_array_equal(cols, [[0, 0, 15], [2, 0, 9], [0, 0, 15]])
    np.testing.assert_array_equal(total, [[0, 0, 0], [0, 0, 0], [6, 3, 2]])


def test_scans_and_top_k():
    with tf.Graph().as_default():
        c = _f64([1.0, 2.0, 0.5, 4.0])
        (g_prod,) = _grads(tf.cumprod(c, exclusive=True, reverse=True), [c])
        (g_sum,) = _grads(tf.cumsum(c, exclusive=True), [c])
        t = _f64([2.0, 3.0, 3.0, 2.0, 1.0])
        (g_top,) = _grads(tf.nn.top_k(t, 4).values, [t], grad_ys=_f64([1.0, 2.0, 3.0, 4.0]))
        assert tf.gradients(tf.cast(tf.nn.top_k(t, 2).indices, tf.float64), t) == [None]
    np.testing.assert_array_equal(g_prod, [0, 2, 12, 2.5])
    np.testing.assert_array_equal(g_sum, [3, 2, 1, 0])
    np.testing.assert_array_equal(g_top, [3, 1, 2, 4, 0])  # by sorted position, ties included


def test_pads_fill_and_mirror_pads():
    with tf.Graph().as_default():
        a = tf.constant(np.arange(6.0).reshape(2, 3))
        value = _f64(2.0)
        g_a, g_value = tf.gradients(tf.pad(a, [[1, 0], [0, 1]], constant_values=value),
                                    [a, value])
        assert g_value is None  # as in TensorFlow: constant_values gets no gradient
        v = _f64(1.5)
        (g_fill,) = _grads(tf.fill([2, 3], v), [v])
        (g_reflect,) = _grads(tf.pad(a, [[1, 1], [2, 2]], "REFLECT"), [a])
        (g_symmetric,) = _grads(tf.pad(a, [[1, 1], [2, 2]], "SYMMETRIC"), [a])
        w = _f64(np.arange(35.0).reshape(5, 7))
        (g_weighted,) = _grads(tf.pad(a, [[1, 2], [2, 2]], "SYMMETRIC"), [a], grad_ys=w)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(g_a), np.ones((2, 3)))
    assert g_fill == 6.0
    np.testing.assert_array_equal(g_reflect, [[4, 6, 4], [4, 6, 4]])
    np.testing.assert_array_equal(g_symmetric, [[4, 6, 4], [4, 6, 4]])
    source = np.pad(np.arange(6).reshape(2, 3), [[1, 2], [2, 2]], mode="symmetric")
    expected = np.bincount(source.ravel(), weights=np.arange(35.0), minlength=6)
    np.testing.assert_array_equal(g_weighted, expected.reshape(2, 3))


def test_gather_gradient_is_sparse_along_axis_0_and_dense_otherwise():
    with tf.Graph().as_default():
        a = tf.constant(np.arange(6.0).reshape(3, 2))
        (sparse,) = tf.gradients(tf.gather(a, [[2, 0], [2, 2]]), a)
        assert isinstance(sparse, tf.IndexedSlices)
        assert sparse.values.shape.as_list() == [4, 2] and sparse.indices.shape.as_list() == [4]
        (dense,) = tf.gradients(tf.gather(a, [1, 1, 0], axis=1), a)
        assert isinstance(dense, tf.Tensor) and dense.shape.as_list() == [3, 2]
        (batched,) = tf.gradients(tf.gather(a, [[1, 1], [0, 0], [1, 0]], axis=1,
                                            batch_dims=1), a)
        with tf.Session() as sess:
            values, indices, shape = sess.run([sparse.values, sparse.indices,
                                               sparse.dense_shape])
            dense_sum, dense_v, batched_v = sess.run([tf.convert_to_tensor(sparse), dense,
                                                      batched])
    np.testing.assert_array_equal(values, np.ones((4, 2)))
    np.testing.assert_array_equal(indices, [2, 0, 2, 2])
    np.testing.assert_array_equal(shape, [3, 2])
    np.testing.assert_array_equal(dense_sum, [[1, 1], [0, 0], [3, 3]])
    np.testing.assert_array_equal(dense_v, [[1, 2]] * 3)
    np.testing.assert_array_equal(batched_v, [[0, 2], [2, 0], [1, 1]])


def test_sparse_gradient_through_a_variable_read_stays_sparse():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((4, 3)))
        (g,) = tf.gradients(tf.reduce_sum(tf.gather(tf.identity(v), [3, 1])), v)
        assert isinstance(g, tf.IndexedSlices)


def test_select_and_select_v2():
    with tf.Graph().as_default():
        a = tf.constant(np.arange(6.0).reshape(2, 3))
        e = _f64([[1.0], [2.0]])
        (g_rows,) = _grads(tf.where([True, False], a, -a), [a])
        g_t, g_e = _grads(tf.where_v2([[True, False, True]], a, e), [a, e])
        cond = tf.constant([True, False])
        assert tf.gradients(tf.where(cond, a, a), cond) == [None]
    np.testing.assert_array_equal(g_rows, [[1, 1, 1], [-1, -1, -1]])
    np.testing.assert_array_equal(g_t, [[1, 0, 1], [1, 0, 1]])
    np.testing.assert_array_equal(g_e, [[1], [1]])


def test_einsum_traces_diagonals_and_slices():
    with tf.Graph().as_default():
        m = tf.constant(np.arange(9.0).reshape(3, 3))
        (trace,) = _grads(tf.einsum("ii", m), [m])
        (diag,) = _grads(tf.einsum("ii->i", m), [m], grad_ys=_f64([1.0, 2.0, 3.0]))
        a = tf.constant(np.arange(6.0).reshape(2, 3))
        (strided,) = _grads(a[::-1, 1:], [a])
        (indexed,) = _grads(a[1, -1], [a])
    np.testing.assert_array_equal(trace, np.eye(3))
    np.testing.assert_array_equal(diag, np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(strided, [[0, 1, 1], [0, 1, 1]])
    np.testing.assert_array_equal(indexed, [[0, 0, 0], [0, 0, 1]])


def test_unique_splits_a_value_gradient_among_its_copies():
    with tf.Graph().as_default():
        x = _f64([3.0, 1.0, 3.0, 2.0, 3.0])
        y, idx = tf.unique(x)
        (g,) = _grads(y, [x], grad_ys=_f64([6.0, 4.0, 2.0]))
        assert tf.gradients(tf.cast(idx, tf.float64), x) == [None]
    np.testing.assert_array_equal(g, [2, 4, 2, 2, 2])


def test_not_differentiable_ops_give_none():
    with tf.Graph().as_default():
        x = _f64([[1.0, 2.0], [3.0, 0.5]])
        assert tf.gradients(tf.stop_gradient(x), x) == [None]
        (g,) = _grads(tf.stop_gradient(x) * x, [x])
        for y in (tf.zeros_like(x), tf.ones_like(x), tf.cast(tf.argmax(x), tf.float64),
                  tf.cast(tf.shape(x), tf.float64), tf.one_hot(tf.argmin(x, 1), 2)):
            assert tf.gradients(y, x) == [None]
    np.testing.assert_array_equal(g, [[1, 2], [3, 0.5]])


def test_complex_gradients_match_tensorflow():
    """Values TensorFlow 2.21 computes (grad_ys complex): conjugated operands for products,
    ConjugateTranspose back, and Cumprod's unconjugated div_no_nan."""
    a0 = np.array([[1 + 2j, -0.5 + 1j], [2 - 1j, 0.5 + 0.25j]])
    b0 = np.array([[0.5 - 1j, 1 + 1j], [-1 + 0.5j, 2 + 0j]])
    g0 = np.array([[1 - 1j, 0.5 + 2j], [-1j, 1.5]])
    with tf.Graph().as_default():
        a, b, g = tf.constant(a0), tf.constant(b0), tf.constant(g0)
        adj_a, adj_b = _grads(tf.matmul(a, b, adjoint_a=True), [a, b], grad_ys=g)
        batch_a, batch_b = _grads(tf.matmul(tf.stack([a, a]), b, adjoint_b=True), [a, b],
                                  grad_ys=tf.stack([g, 2 * g]))
        (conj_t,) = _grads(tf.transpose(a, conjugate=True), [a], grad_ys=g)
        (prod,) = _grads(tf.reduce_prod(a, 1), [a], grad_ys=g[0])
        (cumprod,) = _grads(tf.cumprod(a, 1), [a], grad_ys=g)
    np.testing.assert_allclose(adj_a, [[4 - 2j, 2.5 + 2j], [-0.5 - 4.5j, 2.5 - 1j]])
    np.testing.assert_allclose(adj_b, [[4 + 1.5j, -4.25 + 4.5j], [1.25 - 3.5j, 3.75 + 3.875j]])
    np.testing.assert_allclose(batch_a, [[-6 - 9.75j, 9 + 12j], [-7.5 + 0.75j, 12 - 3j]])
    np.testing.assert_allclose(batch_b, [[15j, -5.25 + 3j], [22.5 - 7.5j, 7.5 + 5.625j]])
    np.testing.assert_allclose(conj_t, [[1 + 1j, 1j], [0.5 - 2j, 1.5]])
    np.testing.assert_allclose(prod, [[-1.5 - 0.5j, -1 - 3j], [0.75 + 0.875j, -1 + 4.5j]])
    np.testing.assert_allclose(cumprod, [[-1.25 - 1.5j, -3.5 + 3j], [0.75 - 0.625j, 3 - 1.5j]])


# --- gradients built for unknown dimensions and unknown rank ------------------------------------
def _family_cases():
    cases = []
    for name in ("test_array_ops", "test_array_slicing_ops", "test_reduction_ops",
                 "test_linalg_ops"):
        spec = importlib.util.spec_from_file_location(f"_grad_{name}",
                                                      os.path.join(HERE, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += module.CASES + getattr(module, "CREATION_CASES", [])
    return [c for c in cases if c.grad and c.unknown_shapes and
            any(d.is_floating for d in c.dtypes)]


# These graphs are built to be run once: the graph rewrites would cost more than the step.
_NO_GRAPH_REWRITES = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
    rewrite_options={"disable_meta_optimizer": True}))


def _weighted_sum(t):
    """sum(w * t) with weights 1.5 + cos(k) over t's flattened positions: a linear objective
    that needs no static shape."""
    k = tf.cast(tf.range(tf.size(t)), t.dtype)
    return tf.reduce_sum(t * tf.reshape(1.5 + tf.cos(k), tf.shape(t)))


def _gradients_by_mode(case, arrays):
    """{mode: gradient values} of the weighted outputs with placeholders of known shape,
    unknown dimensions and unknown rank, all built in one graph and run in one step."""
    with tf.Graph().as_default():
        feed, fetches = {}, {}
        for mode in ("known", "dims", "rank"):
            holders = []
            for a in arrays:
                shape = {"known": a.shape, "dims": [None] * a.ndim, "rank": None}[mode]
                holders.append(tf.placeholder(tf.as_dtype(a.dtype), shape))
            feed.update(zip(holders, arrays))
            outs = [o for o in as_list(case.build(*holders)) if o.dtype.is_floating]
            objective = tf.add_n([_weighted_sum(o) for o in outs])
            xs = [h for h in holders if h.dtype.is_floating]
            fetches[mode] = [tf.zeros_like(x) if g is None else tf.convert_to_tensor(g)
                             for g, x in zip(tf.gradients(objective, xs), xs)]
        with tf.Session(config=_NO_GRAPH_REWRITES) as sess:
            return sess.run(fetches, feed)


@pytest.mark.parametrize("case", _family_cases(), ids=str)
def test_gradients_with_unknown_shapes_match_the_static_ones(case):
    got = _gradients_by_mode(case, materialize_inputs(case, tf.float64))
    for mode in ("dims", "rank"):
        for known, g in zip(got["known"], got[mode]):
            np.testing.assert_allclose(g, known, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{case.name} with unknown {mode}")


# --- second derivatives and Hessians -------------------------------------------------------------
# tf.gradients of a gradient differentiates the sum of its entries: the Hessian's row sums.
def _prod_hessian(x):
    """d2 prod(x) / dx_i dx_j: the product of the other entries off the diagonal, 0 on it."""
    n = len(x)
    return np.array([[0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(n)]
                     for i in range(n)])


def _cumprod_sum_hessian(x):
    """d2 sum_k prod(x[:k + 1]) / dx_i dx_j."""
    n = len(x)
    return np.array([[0 if i == j else sum(np.prod(x[:k + 1]) / (x[i] * x[j])
                                           for k in range(max(i, j), n))
                      for j in range(n)] for i in range(n)])


def test_second_derivatives_through_shape_ops():
    """d2/dx2 of expressions whose first derivative is built from these families' gradient
    ops (StridedSliceGrad, Pad, Tile, SplitV, MirrorPadGrad, ScatterNd...), against calculus."""
    x0 = np.array([0.5, -1.0, 2.0, 1.5])
    cases = [
        (lambda x: tf.reduce_sum(x[1:] ** 3), lambda x: np.r_[0, 6 * x[1:]]),
        (lambda x: tf.reduce_sum(tf.tile(x, [3]) ** 2), lambda x: np.full(4, 6.0)),
        (lambda x: tf.reduce_sum(tf.concat([x, x * x], 0) ** 2),
         lambda x: 2 + 12 * x ** 2),
        (lambda x: tf.reduce_sum(tf.pad(x, [[2, 1]], "REFLECT") ** 3),  # x2 x1 x0 x1 x2 x3 x2
         lambda x: 6 * x * np.array([1, 2, 3, 1])),
        (lambda x: tf.reduce_sum(tf.gather(x, [3, 0, 3], axis=0) ** 3),
         lambda x: 6 * x * np.array([1, 0, 0, 2])),
        (lambda x: tf.reduce_sum(tf.gather_nd(tf.reshape(x, [2, 2]), [[1, 1]]) ** 3),
         lambda x: np.r_[0, 0, 0, 6 * x[3]]),
        (lambda x: tf.reduce_prod(x), lambda x: _prod_hessian(x).sum(0)),
        (lambda x: tf.reduce_max(x) ** 2, lambda x: np.array([0, 0, 2.0, 0])),
        (lambda x: tf.reduce_sum(tf.cumprod(x)), lambda x: _cumprod_sum_hessian(x).sum(0)),
        (lambda x: tf.einsum("i,i->", x, x * x), lambda x: 6 * x),
    ]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4])
        seconds = []
        for build, _ in cases:
            (g,) = tf.gradients(build(x), x)
            (gg,) = tf.gradients(tf.convert_to_tensor(g), x)
            seconds.append(tf.convert_to_tensor(gg))
        with tf.Session() as sess:
            got = sess.run(seconds, {x: x0})
    for (_, second), g in zip(cases, got):
        np.testing.assert_allclose(g, second(x0), rtol=1e-12, atol=1e-12)


def test_second_derivatives_of_matmuls():
    """tf.gradients of tf.gradients of sum((A B)^2) with respect to A, in every transpose
    combination and batched: d/dA of 2 (A B) B^T summed over A's entries."""
    rng = np.random.RandomState(0)
    a0, b0 = rng.randn(3, 4), rng.randn(4, 2)
    expected = np.tile((2 * (b0 @ b0.T)).sum(0), (3, 1))
    with tf.Graph().as_default():
        a, b = tf.constant(a0), tf.constant(b0)
        seconds = []
        for ta, tb in ((False, False), (False, True), (True, False), (True, True)):
            aa = tf.transpose(a) if ta else a
            bb = tf.transpose(b) if tb else b
            y = tf.reduce_sum(tf.matmul(aa, bb, transpose_a=ta, transpose_b=tb) ** 2)
            (g,) = tf.gradients(y, a)
            seconds.append(tf.gradients(g, a)[0])
        y = tf.reduce_sum(tf.matmul(tf.stack([a, a]), b) ** 2) / 2
        (g,) = tf.gradients(y, a)
        seconds.append(tf.gradients(g, a)[0])
        with tf.Session() as sess:
            got = sess.run(seconds)
    for g in got:
        np.testing.assert_allclose(g, expected, rtol=1e-10)


def test_hessians_of_a_small_expression():
    """H of f(x) = sum((M x)^2) / 2 + prod(x) is M^T M plus prod's Hessian."""
    m0 = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])
    x0 = np.array([1.5, -2.0, 0.5])
    with tf.Graph().as_default():
        m = tf.constant(m0)
        x = tf.placeholder(tf.float64, [3])
        y = tf.reduce_sum(tf.squeeze(tf.matmul(m, tf.expand_dims(x, 1))) ** 2) / 2
        y += tf.reduce_prod(x)
        (h,) = tf.hessians(y, x)
        assert h.shape.as_list() == [3, 3]
        with tf.Session() as sess:
            got = sess.run(h, {x: x0})
    np.testing.assert_allclose(got, m0.T @ m0 + _prod_hessian(x0), rtol=1e-12)
