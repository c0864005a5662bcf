"""ApplyProximalAdagrad, ApplyAdagradDA and their sparse forms: each op and its resource twin
against a NumPy re-implementation of TensorFlow's formula (OpCase rows), then TensorFlow's
graph-build and run-time errors (messages checked against TensorFlow 2.21), repeated sparse
indices and names.
Multi-step results against recorded TensorFlow values: tests/train/test_proximal_optimizers.py.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops import training_proximal_ops as P
from tensorweave.testing.op_case import OpCase, case_tests
from tensorweave.testing.variable_builders import ref_apply_updated, resource_apply_updated


# --- NumPy references: TensorFlow's formulas in float64 ----------------------------------------
def _proximal_adagrad(var, accum, lr, l1, l2, grad):
    accum = accum + grad * grad
    rate = lr / np.sqrt(accum)
    prox = var - rate * grad
    shrunk = np.maximum(np.abs(prox) - rate * l1, 0) if l1 > 0 else np.abs(prox)
    return [np.sign(prox) * shrunk / (1 + rate * l2), accum]


def _adagrad_da(var, g_acc, gg_acc, grad, lr, l1, l2, step):
    g_acc, gg_acc = g_acc + grad, gg_acc + grad * grad
    top = np.sign(g_acc) * np.maximum(np.abs(g_acc) - l1 * step, 0) if l1 > 0 else g_acc
    return [-lr * top / (l2 * step * lr + np.sqrt(gg_acc)), g_acc, gg_acc]


def _in_float64(formula, indices_at=None, n_refs=None):
    """The formula on float64 copies, cast back to the variable's dtype; with `indices_at`,
    only on the rows of the refs that input names (the dense formula on those rows)."""
    def ref(*arrays):
        dtype = arrays[0].dtype
        wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
        if indices_at is None:
            out = formula(*wide)
        else:
            rows = wide[indices_at]
            rest = wide[n_refs:indices_at] + wide[indices_at + 1:]
            out = [a.copy() for a in wide[:n_refs]]
            for whole, part in zip(out, formula(*[a[rows] for a in wide[:n_refs]], *rest)):
                whole[rows] = part
        return [np.asarray(o).astype(dtype) for o in out]
    return ref


def _sample(*shape, positive=False):
    """Input generator: normal samples, or (accumulators) uniform ones in [0.5, 1.5)."""
    def make(rng, dt):
        return (rng.uniform(0.5, 1.5, shape) if positive else rng.randn(*shape)).astype(dt)
    return make


def S(value, dtype=None):  # noqa: N802 - short, as the rows use it
    """Input generator of a scalar (of the row's dtype unless `dtype` is given)."""
    return lambda rng, dt: np.array(value, dtype or dt)


FLOATS = (tf.float32, tf.float64)
ROWS = lambda rng, dt: np.array([3, 0, 2], np.int32)  # noqa: E731 - an input generator
V, A, G, G_ROWS = _sample(4, 3), _sample(4, 3, positive=True), _sample(4, 3), _sample(3, 3)
STEP = S(3, np.int64)


_KINDS = (("", ref_apply_updated), ("resource_", resource_apply_updated))  # op, twin


def _dense(name, apply_fn, formula, inputs, n_refs, fixed=()):
    return [OpCase(prefix + name, build(apply_fn, n_refs), _in_float64(formula), inputs,
                   dtypes=FLOATS, grad=False, fixed_dtypes=fixed) for prefix, build in _KINDS]


def _sparse(name, apply_fn, formula, inputs, n_refs, indices_at, fixed=()):
    fixed = tuple(fixed) or (None,) * len(inputs)
    fixed = fixed[:indices_at] + (tf.int32,) + fixed[indices_at + 1:]
    return [OpCase(prefix + name, build(apply_fn, n_refs),
                   _in_float64(formula, indices_at, n_refs), inputs, dtypes=FLOATS, grad=False,
                   fixed_dtypes=fixed) for prefix, build in _KINDS]


_DA_FIXED = (None,) * 7 + (tf.int64,)
_SPARSE_DA_FIXED = (None,) * 8 + (tf.int64,)

CASES = [case for cases in [
    _dense("apply_proximal_adagrad", P.apply_proximal_adagrad, _proximal_adagrad,
           [V, A, S(0.3), S(0.05), S(0.1), G], 2),
    _dense("apply_proximal_adagrad_no_l1", P.apply_proximal_adagrad, _proximal_adagrad,
           [V, A, S(0.3), S(0.0), S(0.1), G], 2),
    _dense("apply_proximal_adagrad_scalar_var", P.apply_proximal_adagrad, _proximal_adagrad,
           [S(0.7), S(0.2), S(0.3), S(0.05), S(0.1), S(-1.5)], 2),
    _dense("apply_proximal_adagrad_empty", P.apply_proximal_adagrad, _proximal_adagrad,
           [_sample(0, 3), _sample(0, 3, positive=True), S(0.3), S(0.05), S(0.1),
            _sample(0, 3)], 2),
    _sparse("sparse_apply_proximal_adagrad", P.sparse_apply_proximal_adagrad,
            _proximal_adagrad, [V, A, S(0.3), S(0.05), S(0.1), G_ROWS, ROWS], 2, 6),
    _sparse("sparse_apply_proximal_adagrad_1d", P.sparse_apply_proximal_adagrad,
            _proximal_adagrad, [_sample(5), _sample(5, positive=True), S(0.3), S(0.0), S(0.1),
                                _sample(3), ROWS], 2, 6),
    _dense("apply_adagrad_da", P.apply_adagrad_da, _adagrad_da,
           [V, G, A, G, S(0.3), S(0.05), S(0.1), STEP], 3, _DA_FIXED),
    _dense("apply_adagrad_da_no_l1", P.apply_adagrad_da, _adagrad_da,
           [V, G, A, G, S(0.3), S(0.0), S(0.1), STEP], 3, _DA_FIXED),
    _sparse("sparse_apply_adagrad_da", P.sparse_apply_adagrad_da, _adagrad_da,
            [V, G, A, G_ROWS, ROWS, S(0.3), S(0.05), S(0.1), STEP], 3, 4, _SPARSE_DA_FIXED),
    _sparse("sparse_apply_adagrad_da_1d", P.sparse_apply_adagrad_da, _adagrad_da,
            [_sample(5), _sample(5), _sample(5, positive=True), _sample(3), ROWS, S(0.3),
             S(0.0), S(0.1), STEP], 3, 4, _SPARSE_DA_FIXED),
] for case in cases]

test_forward, test_shapes = case_tests(CASES)


# --- graph construction -----------------------------------------------------------------------
def test_default_names_attrs_and_ref_output():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        acc = tf.Variable(np.ones((2, 3), np.float32), name="acc")
        out = P.apply_proximal_adagrad(v, acc, 0.1, 0.0, 0.0, tf.ones([2, 3]))
        assert (out.op.name, out.op.type) == ("ApplyProximalAdagrad", "ApplyProximalAdagrad")
        assert out.dtype == tf.float32_ref and out.shape.as_list() == [2, 3]
        assert out.op.inputs[2].op.name == "ApplyProximalAdagrad/lr"
        sparse = P.sparse_apply_adagrad_da(v, acc, acc, tf.ones([2, 3]), [0, 1], 0.1, 0.0, 0.0,
                                           tf.constant(1, tf.int64), use_locking=True)
        assert sparse.op.type == "SparseApplyAdagradDA"
        assert sparse.op.get_attr("Tindices") == tf.int32
        assert sparse.op.get_attr("use_locking") is True
        assert tf.gradients(tf.identity(out), acc) == [None]


@pytest.mark.parametrize("build,message", [
    (lambda v: P.apply_proximal_adagrad(v, v, [0.1, 0.2], 0.0, 0.0, tf.ones([2, 3])),
     "Shape must be rank 0 but is rank 1"),
    (lambda v: P.apply_proximal_adagrad(v, v, 0.1, 0.0, 0.0, tf.ones([2, 4])),
     "Dimension 1 in both shapes must be equal, but are 3 and 4"),
    (lambda v: P.apply_adagrad_da(v, v, v, tf.ones([2, 3]), 0.1, 0.0, 0.0,
                                  tf.constant([1, 2], tf.int64)),
     "Shape must be rank 0 but is rank 1"),
    (lambda v: P.sparse_apply_adagrad_da(v, v, v, tf.ones([3, 3]), [0, 1], 0.1, 0.0, 0.0,
                                         tf.constant(1, tf.int64)),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda v: P.sparse_apply_proximal_adagrad(v, v, 0.1, 0.0, 0.0, tf.ones([2, 3]), [[0, 1]]),
     "Shape must be rank 1 but is rank 2"),
])
def test_static_shape_errors(build, message):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        with pytest.raises(ValueError, match="with input shapes") as info:
            build(v)
        assert message in str(info.value)


def test_global_step_must_be_int64_and_hyperparameters_of_var_dtype():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float64))
        with pytest.raises(TypeError):
            P.apply_adagrad_da(v, v, v, tf.ones([3], tf.float64), 0.1, 0.0, 0.0,
                               tf.constant(1, tf.int32))
        with pytest.raises(TypeError, match="Input 'lr' of 'ApplyProximalAdagrad' Op has type "
                                            "float32 that does not match type float64"):
            P.apply_proximal_adagrad(v, v, tf.constant(0.1), 0.0, 0.0, tf.ones([3], tf.float64))


# --- run time (messages as TensorFlow 2.21's) --------------------------------------------------
_STEP = np.int64(1)


@pytest.mark.parametrize("build,fed,message", [
    (lambda v, a, p: P.apply_proximal_adagrad(v, a, p, 0.0, 0.0, tf.ones([2, 3])), 0.0,
     "lr is not a positive scalar: []"),
    (lambda v, a, p: P.apply_proximal_adagrad(v, a, p, 0.0, 0.0, tf.ones([2, 3])), [0.1, 0.2],
     "lr is not a positive scalar: [2]"),
    (lambda v, a, p: P.sparse_apply_proximal_adagrad(v, a, 0.1, p, 0.0, tf.ones([1, 3]), [0]),
     -1.0, "l1 regularization strength is not a non-negative scalar: []"),
    (lambda v, a, p: P.apply_proximal_adagrad(v, a, 0.1, 0.0, p, tf.ones([2, 3])), [1.0],
     "l2 regularization strength is not a non-negative scalar: [1]"),
    (lambda v, a, p: P.apply_adagrad_da(v, a, a, tf.ones([2, 3]), p, 0.0, 0.0, _STEP),
     [0.1, 0.2], "lr is not a scalar: [2]"),
    (lambda v, a, p: P.sparse_apply_adagrad_da(v, a, a, tf.ones([1, 3]), [0], 0.1, p, 0.0,
                                               _STEP), [0.1, 0.2],
     "l1 regularization strength is not a scalar: [2]"),
    (lambda v, a, p: P.apply_adagrad_da(v, a, a, tf.ones([2, 3]), 0.1, 0.0, p, _STEP), [0.1],
     "l2 regularization strength is not a scalar: [1]"),
    (lambda v, a, p: P.apply_adagrad_da(v, a, a, p, 0.1, 0.0, 0.0, _STEP), np.ones(3),
     "var and grad do not have the same shape[2,3] [3]"),
    (lambda v, a, p: P.sparse_apply_proximal_adagrad(v, a, 0.1, 0.0, 0.0, p, [0, 5]),
     np.ones((2, 3)), "Index 5 at offset 1 in indices is out of range"),
])
def test_runtime_errors(build, fed, message):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        acc = tf.Variable(np.ones((2, 3), np.float32), name="acc")
        p = tf.placeholder(tf.float32)
        op = build(v, acc, p)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(op, {p: fed})
    assert message in str(info.value)


def _run_on_variables(build, values, feed_value):
    """Runs `build(refs, placeholder)` once with the placeholder fed; the refs' values after."""
    with tf.Graph().as_default():
        refs = [tf.Variable(v, validate_shape=False) for v in values]
        p = tf.placeholder(tf.as_dtype(np.asarray(feed_value).dtype))
        op = build(refs, p)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op, {p: feed_value})
            return sess.run(refs)


@pytest.mark.parametrize("sparse_op", [
    lambda r, g: P.sparse_apply_proximal_adagrad(r[0], r[1], 0.1, 0.0, 0.0, g, [0]),
    lambda r, g: P.sparse_apply_adagrad_da(r[0], r[1], r[1], g, [0], 0.1, 0.0, 0.0, _STEP),
])
def test_rows_without_elements_are_an_error(sparse_op):
    with pytest.raises(errors.InvalidArgumentError,
                       match="Inner dimension should be greater than zero."):
        _run_on_variables(sparse_op, [np.ones((2, 0)), np.ones((2, 0))], np.ones((1, 0)))


def test_mismatched_slot_is_called_accum_as_in_tensorflow():
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"var and accum do not have the same shape\[2\] \[3\]"):
        _run_on_variables(lambda r, g: P.apply_adagrad_da(r[0], r[0], r[1], g, 0.1, 0.0, 0.0,
                                                          _STEP),
                          [np.ones(2), np.ones(3)], np.ones(2))


def test_repeated_sparse_indices_update_row_by_row():
    """TensorFlow's sparse kernels loop over the indices: a repeated row is updated twice."""
    rng = np.random.RandomState(0)
    var, g_acc, gg_acc = rng.randn(4, 2), rng.randn(4, 2), rng.uniform(0.5, 1, (4, 2))
    grad = rng.randn(3, 2)
    rows = [1, 3, 1]
    got = _run_on_variables(
        lambda r, g: P.sparse_apply_adagrad_da(r[0], r[1], r[2], g, rows, 0.3, 0.05, 0.1,
                                               np.int64(2)), [var, g_acc, gg_acc], grad)
    want = [var.copy(), g_acc.copy(), gg_acc.copy()]
    for row, g in zip(rows, grad):
        new = _adagrad_da(*(w[row] for w in want), g, 0.3, 0.05, 0.1, 2)
        for w, n in zip(want, new):
            w[row] = n
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_large_variables_update_blockwise_like_whole_arrays():
    """Past two blocks the dense kernel updates block by block: the same bits as one pass."""
    from tensorweave.kernels import training as kernels
    rng = np.random.RandomState(3)
    shape = (301, 250)
    assert np.prod(shape) > 2 * kernels.BLOCK
    values = [rng.randn(*shape).astype(np.float32), rng.uniform(1, 2, shape).astype(np.float32)]
    grad = rng.randn(*shape).astype(np.float32)

    def update(r, g):
        return P.apply_proximal_adagrad(r[0], r[1], np.float32(0.3), np.float32(0.05),
                                        np.float32(0.1), g)

    blockwise = _run_on_variables(update, values, grad)
    block, kernels.BLOCK = kernels.BLOCK, 10 ** 9
    try:
        whole = _run_on_variables(update, values, grad)
    finally:
        kernels.BLOCK = block
    for a, b in zip(blockwise, whole):
        np.testing.assert_array_equal(a, b)
