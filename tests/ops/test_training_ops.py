"""Fused optimizer updates (Apply*/SparseApply*): every op and its resource twin against a NumPy
re-implementation of TensorFlow's formula (OpCase rows), then shape checks, runtime errors,
repeated sparse indices, locking and in-place updates."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops import training_ops as T
from tensorweave.testing.op_case import OpCase, case_tests
from tensorweave.testing.variable_builders import (
    ref_apply_updated,
    resource_apply_updated,
)

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _positive(*shape):
    return lambda rng, dt: rng.uniform(0.5, 1.5, shape).astype(dt)


def _scalar(value):
    return lambda rng, dt: np.array(value, dt)


# --- NumPy references (TensorFlow's formulas, in float64) -------------------------------------
def _gd(var, alpha, delta):
    return var - alpha * delta


def _pgd(var, alpha, l1, l2, delta):
    prox = var - alpha * delta
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - alpha * l1, 0) / (1 + alpha * l2)
    return prox / (1 + alpha * l2)


def _momentum(var, accum, lr, grad, momentum, nesterov=False):
    accum = accum * momentum + grad
    if nesterov:
        return [var - (grad * lr + accum * momentum * lr), accum]
    return [var - lr * accum, accum]


def _adam(var, m, v, b1p, b2p, lr, b1, b2, eps, grad, nesterov=False):
    alpha = lr * np.sqrt(1 - b2p) / (1 - b1p)
    m = m + (grad - m) * (1 - b1)
    v = v + (grad * grad - v) * (1 - b2)
    num = (grad * (1 - b1) + b1 * m) if nesterov else m
    return [var - alpha * num / (np.sqrt(v) + eps), m, v]


def _adagrad(var, accum, lr, grad, update_slots=True):
    if update_slots:
        accum = accum + grad * grad
    return [var - lr * grad / np.sqrt(accum), accum]


def _adadelta(var, accum, accum_update, lr, rho, eps, grad):
    accum = rho * accum + (1 - rho) * grad * grad
    update = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * grad
    return [var - lr * update, accum, rho * accum_update + (1 - rho) * update * update]


def _rms(var, ms, mom, lr, rho, momentum, eps, grad):
    ms = ms + (grad * grad - ms) * (1 - rho)
    mom = mom * momentum + lr * grad / np.sqrt(ms + eps)
    return [var - mom, ms, mom]


def _centered_rms(var, mg, ms, mom, lr, rho, momentum, eps, grad):
    ms = ms + (grad * grad - ms) * (1 - rho)
    mg = mg + (grad - mg) * (1 - rho)
    mom = mom * momentum + lr * grad / np.sqrt(ms - mg * mg + eps)
    return [var - mom, mg, ms, mom]


def _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, shrinkage=0.0, by_lr=False):
    new_accum = accum + grad * grad
    sigma = new_accum ** -lr_power - accum ** -lr_power
    g = grad + 2 * shrinkage * var
    if by_lr:
        linear = linear + g * lr - sigma * var
        x, y = l1 * lr * np.sign(linear) - linear, new_accum ** -lr_power + 2 * l2 * lr
        var = np.where(np.abs(linear) > l1 * lr, x / y, 0)
    else:
        linear = linear + g - sigma / lr * var
        x, y = l1 * np.sign(linear) - linear, new_accum ** -lr_power / lr + 2 * l2
        var = np.where(np.abs(linear) > l1, x / y, 0)
    return [var, new_accum, linear]


def _ftrl_v2(var, accum, linear, grad, lr, l1, l2, shrinkage, lr_power, by_lr=False):
    return _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, shrinkage, by_lr)


def _f64(fn, n_out, **kw):
    """Reference evaluated in float64 and cast back to the inputs' dtype."""
    def ref(*arrays):
        out = fn(*[a.astype(np.float64) for a in arrays], **kw)
        out = out if isinstance(out, list) else [out]
        return [np.asarray(o).astype(arrays[0].dtype) for o in out[:n_out]]
    return ref


def _sparse_ref(fn, n_refs, order, **kw):
    """Reference of a SparseApply op whose inputs after the refs are in `order` ("g" grad,
    "i" indices, "s" scalar); the dense formula runs on the indexed rows with the grad placed
    where the dense op takes it."""
    def ref(*arrays):
        arrays = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
        refs, rest = arrays[:n_refs], arrays[n_refs:]
        indices = rest[order.index("i")]
        args = [a for a, kind in zip(rest, order) if kind != "i"]
        new_rows = fn(*[r[indices] for r in refs], *args, **kw)
        new_rows = new_rows if isinstance(new_rows, list) else [new_rows]
        out = [r.copy() for r in refs]
        for o, rows in zip(out, new_rows):
            o[indices] = rows
        return out
    return ref


def _cast_like_first(ref):
    def wrapped(*arrays):
        return [np.asarray(o).astype(arrays[0].dtype) for o in ref(*arrays)]
    return wrapped


SHAPE = (4, 3)
IDX = lambda rng, dt: np.array([3, 0, 2], np.int32)  # noqa: E731 - a generator
G_ROWS = _randn(3, 3)
I32 = tf.int32


_KINDS = (("", ref_apply_updated), ("resource_", resource_apply_updated))   # op, twin


def _dense_case(name, apply_fn, ref, inputs, n_refs, **kw):
    return [OpCase(prefix + name, updated(apply_fn, n_refs), _f64(ref, n_refs, **kw), inputs,
                   dtypes=F32_64, grad=False) for prefix, updated in _KINDS]


def _sparse_case(name, apply_fn, ref, inputs, n_refs, order, **kw):
    fixed = [None] * n_refs + [I32 if k == "i" else None for k in order]
    return [OpCase(prefix + name, updated(apply_fn, n_refs),
                   _cast_like_first(_sparse_ref(ref, n_refs, order, **kw)), inputs,
                   dtypes=F32_64, grad=False, fixed_dtypes=fixed) for prefix, updated in _KINDS]


S = _scalar
V = _randn(*SHAPE)
P = _positive(*SHAPE)
G = _randn(*SHAPE)

CASES = [case for cases in [
    _dense_case("apply_gradient_descent", T.apply_gradient_descent, _gd, [V, S(0.1), G], 1),
    _dense_case("apply_proximal_gd", T.apply_proximal_gradient_descent, _pgd,
                [V, S(0.1), S(0.05), S(0.2), G], 1),
    _dense_case("apply_proximal_gd_l2", T.apply_proximal_gradient_descent, _pgd,
                [V, S(0.1), S(0.0), S(0.2), G], 1),
    _dense_case("apply_momentum", T.apply_momentum, _momentum, [V, V, S(0.1), G, S(0.9)], 2),
    _dense_case("apply_momentum_nesterov",
                lambda *a: T.apply_momentum(*a, use_nesterov=True),
                _momentum, [V, V, S(0.1), G, S(0.9)], 2, nesterov=True),
    _dense_case("apply_adam", T.apply_adam, _adam,
                [V, V, P, S(0.81), S(0.998), S(0.01), S(0.9), S(0.999), S(1e-7), G], 3),
    _dense_case("apply_adam_nesterov", lambda *a: T.apply_adam(*a, use_nesterov=True), _adam,
                [V, V, P, S(0.81), S(0.998), S(0.01), S(0.9), S(0.999), S(1e-7), G], 3,
                nesterov=True),
    _dense_case("apply_adagrad", T.apply_adagrad, _adagrad, [V, P, S(0.1), G], 2),
    _dense_case("apply_adagrad_no_update", lambda *a: T.apply_adagrad(*a, update_slots=False),
                _adagrad, [V, P, S(0.1), G], 2, update_slots=False),
    _dense_case("apply_adadelta", T.apply_adadelta, _adadelta,
                [V, P, P, S(1.0), S(0.95), S(1e-6), G], 3),
    _dense_case("apply_rms_prop", T.apply_rms_prop, _rms,
                [V, P, V, S(0.01), S(0.9), S(0.5), S(1e-6), G], 3),
    _dense_case("apply_centered_rms_prop", T.apply_centered_rms_prop, _centered_rms,
                [V, _positive(*SHAPE), lambda rng, dt: rng.uniform(2, 3, SHAPE).astype(dt), V,
                 S(0.01), S(0.9), S(0.5), S(1e-1), G], 4),
    _dense_case("apply_ftrl", T.apply_ftrl, _ftrl,
                [V, P, V, G, S(0.1), S(0.01), S(0.02), S(-0.5)], 3),
    _dense_case("apply_ftrl_power", T.apply_ftrl, _ftrl,
                [V, P, V, G, S(0.1), S(0.01), S(0.02), S(-0.7)], 3),
    _dense_case("apply_ftrl_by_lr", lambda *a: T.apply_ftrl(*a, multiply_linear_by_lr=True),
                _ftrl, [V, P, V, G, S(0.1), S(0.01), S(0.02), S(-0.5)], 3, by_lr=True),
    _dense_case("apply_ftrl_v2", T.apply_ftrl_v2, _ftrl_v2,
                [V, P, V, G, S(0.1), S(0.01), S(0.02), S(0.3), S(-0.5)], 3),
    _dense_case("apply_ftrl_v2_by_lr",
                lambda *a: T.apply_ftrl_v2(*a, multiply_linear_by_lr=True), _ftrl_v2,
                [V, P, V, G, S(0.1), S(0.01), S(0.02), S(0.3), S(-0.6)], 3, by_lr=True),
    _dense_case("apply_gd_scalar_var", T.apply_gradient_descent, _gd,
                [S(2.0), S(0.5), S(4.0)], 1),
    _sparse_case("sparse_apply_proximal_gd", T.sparse_apply_proximal_gradient_descent, _pgd,
                 [V, S(0.1), S(0.05), S(0.2), G_ROWS, IDX], 1, "sssgi"),
    _sparse_case("sparse_apply_momentum", T.sparse_apply_momentum, _momentum,
                 [V, V, S(0.1), G_ROWS, IDX, S(0.9)], 2, "sgis"),
    _sparse_case("sparse_apply_momentum_nesterov",
                 lambda *a: T.sparse_apply_momentum(*a, use_nesterov=True), _momentum,
                 [V, V, S(0.1), G_ROWS, IDX, S(0.9)], 2, "sgis", nesterov=True),
    _sparse_case("sparse_apply_adagrad", T.sparse_apply_adagrad, _adagrad,
                 [V, P, S(0.1), G_ROWS, IDX], 2, "sgi"),
    _sparse_case("sparse_apply_adadelta", T.sparse_apply_adadelta, _adadelta,
                 [V, P, P, S(1.0), S(0.95), S(1e-6), G_ROWS, IDX], 3, "sssgi"),
    _sparse_case("sparse_apply_rms_prop", T.sparse_apply_rms_prop, _rms,
                 [V, P, V, S(0.01), S(0.9), S(0.5), S(1e-6), G_ROWS, IDX], 3, "ssssgi"),
    _sparse_case("sparse_apply_centered_rms_prop", T.sparse_apply_centered_rms_prop,
                 _centered_rms,
                 [V, P, lambda rng, dt: rng.uniform(2, 3, SHAPE).astype(dt), V, S(0.01),
                  S(0.9), S(0.5), S(1e-1), G_ROWS, IDX], 4, "ssssgi"),
    _sparse_case("sparse_apply_ftrl", T.sparse_apply_ftrl, _ftrl,
                 [V, P, V, G_ROWS, IDX, S(0.1), S(0.01), S(0.02), S(-0.5)], 3, "gissss"),
    _sparse_case("sparse_apply_ftrl_v2", T.sparse_apply_ftrl_v2, _ftrl_v2,
                 [V, P, V, G_ROWS, IDX, S(0.1), S(0.01), S(0.02), S(0.3), S(-0.5)], 3,
                 "gisssss"),
    _sparse_case("sparse_apply_ftrl_1d", T.sparse_apply_ftrl, _ftrl,
                 [_randn(5), _positive(5), _randn(5), _randn(3), IDX, S(0.1), S(0.01),
                  S(0.02), S(-0.5)], 3, "gissss"),
] for case in cases]


test_forward, test_shapes = case_tests(CASES)


# --- graph construction -----------------------------------------------------------------------
def test_default_names_types_and_ref_output():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        out = T.apply_gradient_descent(v, 0.1, tf.ones([2, 3]))
        assert out.op.name == "ApplyGradientDescent" and out.op.type == "ApplyGradientDescent"
        assert out.dtype == tf.float32_ref and out.shape.as_list() == [2, 3]
        assert out.op.inputs[1].op.name == "ApplyGradientDescent/alpha"
        acc = tf.Variable(np.ones((2, 3), np.float32), name="acc")
        sparse = T.sparse_apply_adagrad(v, acc, 0.1, tf.ones([2, 3]), [0, 1])
        assert sparse.op.type == "SparseApplyAdagrad"
        assert sparse.op.get_attr("Tindices") == tf.int32
        assert sparse.op.get_attr("use_locking") is False
        assert sparse.op.get_attr("update_slots") is True


@pytest.mark.parametrize("build,message", [
    (lambda v: T.apply_gradient_descent(v, 0.1, tf.ones([3])),
     "Shapes must be equal rank, but are 2 and 1"),
    (lambda v: T.apply_gradient_descent(v, [0.1, 0.2], tf.ones([2, 3])),
     "Shape must be rank 0 but is rank 1"),
    (lambda v: T.apply_gradient_descent(v, 0.1, tf.ones([2, 4])),
     "Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes are [2,3] and [2,4]."),
    (lambda v: T.sparse_apply_adagrad(v, v, 0.1, tf.ones([2, 4]), [0, 1]),
     "Dimension 1 in both shapes must be equal, but are 3 and 4"),
    (lambda v: T.sparse_apply_adagrad(v, v, 0.1, tf.ones([3, 3]), [0, 1]),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda v: T.sparse_apply_adagrad(v, v, 0.1, tf.ones([2, 3]), [[0, 1]]),
     "Shape must be rank 1 but is rank 2"),
    (lambda v: T.apply_adam(tf.Variable(tf.zeros([2])), v, v, .9, .9, .9, .9, .9, .9,
                            tf.ones([2])), "Shapes must be equal rank, but are 1 and 2"),
])
def test_static_shape_errors(build, message):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        with pytest.raises(ValueError) as info:
            build(v)
        assert message in str(info.value)
        assert "with input shapes" in str(info.value)


def test_dtype_mismatch_is_a_type_error():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32))
        with pytest.raises(TypeError):
            T.apply_gradient_descent(v, 0.1, tf.ones([3], tf.float64))


def test_needs_a_variable():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="mutable"):
            T.apply_gradient_descent(tf.ones([3]), 0.1, tf.ones([3]))


def test_not_differentiable():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32))
        g = tf.placeholder(tf.float32, [3])
        out = T.apply_gradient_descent(v, 0.1, g)
        assert tf.gradients(tf.identity(out), g) == [None]


# --- run time ---------------------------------------------------------------------------------
def _run_error(build, feed_values):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        ph = tf.placeholder(tf.float32)
        idx = tf.placeholder(tf.int32)
        op = build(v, ph, idx)
        with tf.Session() as sess:
            sess.run(v.initializer)
            feed = {ph: feed_values[0]}
            if len(feed_values) > 1:
                feed[idx] = feed_values[1]
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(op, feed)
    return str(info.value)


@pytest.mark.parametrize("build,feed,message", [
    (lambda v, g, i: T.apply_gradient_descent(v, 0.1, g), [np.ones(3)],
     "var and delta do not have the same shape[2,3] [3]"),
    (lambda v, g, i: T.apply_gradient_descent(v, g, tf.ones([2, 3])), [np.ones(3)],
     "alpha is not a scalar: [3]"),
    (lambda v, g, i: T.sparse_apply_adagrad(v, v, 0.1, g, i), [np.ones((2, 3)), [0, 5]],
     "Index 5 at offset 1 in indices is out of range"),
    (lambda v, g, i: T.sparse_apply_momentum(v, v, 0.1, g, i, 0.9), [np.ones((2, 3)), [-1, 0]],
     "Index -1 at offset 0 in indices is out of range"),
    (lambda v, g, i: T.sparse_apply_adagrad(v, v, 0.1, g, i), [np.ones((2, 4)), [0, 1]],
     "var and grad must match in dimension 1"),
    (lambda v, g, i: T.sparse_apply_adagrad(v, v, 0.1, g, i), [np.ones((3, 3)), [0, 1]],
     "grad must be the same size as indices in the first dimension."),
    (lambda v, g, i: T.sparse_apply_adagrad(v, v, 0.1, g, i), [np.ones((2, 3)), [[0, 1]]],
     "indices must be one-dimensional"),
])
def test_runtime_errors(build, feed, message):
    assert message in _run_error(build, feed)


def test_uninitialized_slot_is_a_failed_precondition():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32), name="v")
        acc = tf.Variable(np.ones(3, np.float32), name="acc")
        op = T.apply_adagrad(v, acc, 0.1, tf.ones([3]))
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(errors.FailedPreconditionError, match="acc"):
                sess.run(op)


def _run_steps(build, init, grads, indices=None):
    """Runs `build(refs, grad, indices)` once per grad; returns the final values."""
    with tf.Graph().as_default():
        refs = [tf.Variable(a) for a in init]
        g = tf.placeholder(init[0].dtype, grads[0].shape)
        i = tf.placeholder(tf.int32) if indices is not None else None
        op = build(refs, g, i)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for grad in grads:
                feed = {g: grad}
                if i is not None:
                    feed[i] = indices
                sess.run(op, feed)
            return sess.run(refs)


def test_repeated_sparse_indices_update_row_by_row():
    """TensorFlow's sparse kernels loop over indices: a repeated row is updated twice."""
    rng = np.random.RandomState(0)
    var, acc = rng.randn(4, 2), rng.uniform(0.5, 1, (4, 2))
    grad = rng.randn(3, 2)
    indices = [1, 3, 1]
    got = _run_steps(lambda r, g, i: T.sparse_apply_adagrad(r[0], r[1], 0.1, g, i),
                     [var, acc], [grad], indices)
    want_var, want_acc = var.copy(), acc.copy()
    for row, g in zip(indices, grad):
        want_var[row], want_acc[row] = _adagrad(want_var[row], want_acc[row], 0.1, g)
    np.testing.assert_allclose(got[0], want_var, rtol=1e-12)
    np.testing.assert_allclose(got[1], want_acc, rtol=1e-12)


def test_several_steps_match_the_formula():
    rng = np.random.RandomState(1)
    init = [rng.randn(5, 2).astype(np.float32), np.zeros((5, 2), np.float32),
            np.zeros((5, 2), np.float32)]
    grads = [rng.randn(5, 2).astype(np.float32) for _ in range(4)]
    got = _run_steps(lambda r, g, i: T.apply_adam(r[0], r[1], r[2], 0.9 ** 2, 0.999 ** 2, 0.01,
                                                  0.9, 0.999, 1e-7, g), init, grads)
    want = [a.astype(np.float64) for a in init]
    for g in grads:
        want = _adam(*want, 0.9 ** 2, 0.999 ** 2, 0.01, 0.9, 0.999, 1e-7, g.astype(np.float64))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def test_use_locking_gives_the_same_result():
    rng = np.random.RandomState(2)
    init = [rng.randn(3), rng.randn(3)]
    grads = [rng.randn(3)]
    plain = _run_steps(lambda r, g, i: T.apply_momentum(r[0], r[1], 0.1, g, 0.9), init, grads)
    locked = _run_steps(lambda r, g, i: T.apply_momentum(r[0], r[1], 0.1, g, 0.9,
                                                         use_locking=True), init, grads)
    for a, b in zip(plain, locked):
        np.testing.assert_array_equal(a, b)


def test_update_is_in_place_and_reads_are_snapshots():
    """The variable's storage is updated in place; a value read earlier is not changed."""
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(3, np.float32))
        read = v.read_value()
        step = T.apply_gradient_descent(v, 1.0, tf.ones([3]))
        with tf.Session() as sess:
            sess.run(v.initializer)
            before = sess.run(read)
            sess.run(step)
            sess.run(step)
            np.testing.assert_array_equal(before, [0, 0, 0])
            np.testing.assert_array_equal(sess.run(v), [-2, -2, -2])


@pytest.mark.parametrize("name,apply_fn,n_slots,scalars,positive", [
    ("adam", T.apply_adam, 2, (0.81, 0.998, 0.01, 0.9, 0.999, 1e-7), False),
    ("momentum_nesterov", lambda v, a, lr, g, m: T.apply_momentum(v, a, lr, g, m,
                                                                  use_nesterov=True), 1, None,
     False),
    ("adadelta", T.apply_adadelta, 2, (1.0, 0.95, 1e-6), True),
    ("centered_rms_prop", T.apply_centered_rms_prop, 3, (0.01, 0.9, 0.5, 1e-1), True),
    ("ftrl_v2", T.apply_ftrl_v2, 2, None, True),
])
def test_large_variables_update_blockwise_like_whole_arrays(name, apply_fn, n_slots, scalars,
                                                            positive):
    """Variables larger than two blocks are updated block by block: same bits as one pass."""
    from tensorweave.kernels import training as kernels
    rng = np.random.RandomState(3)
    shape = (301, 250)  # not a multiple of the block size
    assert np.prod(shape) > 2 * kernels.BLOCK
    init = [rng.randn(*shape).astype(np.float32)]
    init += [(rng.uniform(2, 3, shape) if positive else rng.randn(*shape)).astype(np.float32)
             for _ in range(n_slots)]
    grad = rng.randn(*shape).astype(np.float32)

    def build(refs, g, i):
        if name == "momentum_nesterov":
            return apply_fn(refs[0], refs[1], 0.1, g, 0.9)
        if name == "ftrl_v2":
            return apply_fn(*refs, g, 0.1, 0.01, 0.02, 0.3, -0.5)
        return apply_fn(*refs, *[np.float32(s) for s in scalars], g)

    got = _run_steps(build, init, [grad, grad * 0.5])
    kernels_block, kernels.BLOCK = kernels.BLOCK, 10 ** 9  # one whole-array pass instead
    try:
        want = _run_steps(build, init, [grad, grad * 0.5])
    finally:
        kernels.BLOCK = kernels_block
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("nesterov", [False, True])
def test_large_compiled_updates_in_thread_chunks_match_one_pass(monkeypatch, nesterov):
    """A compiled Adam update of a variable of PARALLEL_SIZE or more runs as one chunk per
    intra-op thread (an odd size: uneven chunks): the same bits as one pass."""
    from tensorweave.kernels import intra_op
    from tensorweave.kernels import training as kernels
    rng = np.random.RandomState(4)
    shape = (97, 31)
    init = [rng.randn(*shape).astype(np.float32) for _ in range(3)]
    grad = rng.randn(*shape).astype(np.float32)

    def build(refs, g, i):
        return T.apply_adam(*refs, *[np.float32(s) for s in (0.81, 0.998, 0.01, 0.9, 0.999,
                                                              1e-7)], g, use_nesterov=nesterov)

    want = _run_steps(build, init, [grad, grad * 0.5])
    monkeypatch.setattr(kernels, "PARALLEL_SIZE", 1000)
    monkeypatch.setattr(intra_op, "threads", lambda: 3)
    chunks = []
    parallel_for = intra_op.parallel_for
    monkeypatch.setattr(intra_op, "parallel_for",
                        lambda n, task, gemm=False: (chunks.append(n), parallel_for(n, task)))
    got = _run_steps(build, init, [grad, grad * 0.5])
    assert chunks == [3, 3]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
