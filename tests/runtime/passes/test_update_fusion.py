"""Update fusion: ApplyGradientDescent of a MatMul gradient becomes one accumulating GEMM."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import blas, fused_update
from tensorweave.ops import training_ops
from tensorweave.runtime import cost_model
from tensorweave.runtime.passes.update_fusion import fuse_matmul_updates

FUSED = "_FusedMatMulApplyGradientDescent"
RESOURCE_FUSED = "_FusedMatMulResourceApplyGradientDescent"


def _data(*shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _dense_sgd(dtype=tf.float32, lr=0.1, use_resource=False):
    """A two-layer net trained by SGD: (x, train op, variables)."""
    np_dtype = dtype.as_numpy_dtype
    x = tf.placeholder(dtype, [8, 6])
    w0 = tf.Variable(_data(6, 5, seed=1, dtype=np_dtype), name="w0", use_resource=use_resource)
    w1 = tf.Variable(_data(5, 3, seed=2, dtype=np_dtype), name="w1", use_resource=use_resource)
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w0)), w1)))
    # Without TF's gradient gates: the passes run alone here, and in a session the
    # dependency passes remove the gates before this one runs.
    return x, tf.train.GradientDescentOptimizer(lr).minimize(
        loss, gate_gradients=tf.train.Optimizer.GATE_NONE), [w0, w1]


def _ancestors(graph, node) -> set:
    """The names of the nodes `node` depends on, through data and control edges."""
    seen, stack = set(), [node.name]
    while stack:
        current = graph.nodes[stack.pop()]
        for name in [s for s, _ in current.inputs] + list(current.control_inputs):
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return seen


def _train(x, train, variables, cfg, steps=3):
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            sess.run(train, {x: _data(8, 6, seed=10 + i, dtype=x.dtype.as_numpy_dtype)})
        return sess.run(variables)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_sgd_weight_updates_fuse_and_match_the_unfused_steps(pt, dtype, use_resource):
    x, train, variables = _dense_sgd(dtype, use_resource=use_resource)
    graph, _ = pt.apply(fuse_matmul_updates, [], feeds=[x], targets=[train])
    fused = [n for n in graph if n.op == (RESOURCE_FUSED if use_resource else FUSED)]
    assert sorted(n.inputs[0][0] for n in fused) == ["w0", "w1"]
    assert all(n.attrs["transpose_a"] and not n.attrs["transpose_b"] for n in fused)
    assert all(n.name.endswith("ApplyGradientDescent") for n in fused)   # the update's name
    # The input-gradient GEMM of layer 1 reads w1 and must see it before the update: the GEMM
    # reads a ref variable's storage, so the update waits for it; a resource variable's read
    # (a copy) is already upstream of the update.
    (w1_update,) = [n for n in fused if n.inputs[0][0] == "w1"]
    # The cost model sees the product's work: [5, 8] @ [8, 3] multiply-adds.
    assert cost_model.estimate_flops(w1_update) == 5 * 8 * 3
    if use_resource:
        reads = {n.name for n in graph if n.op == "ReadVariableOp" and n.inputs[0][0] == "w1"}
        assert reads and reads <= _ancestors(graph, w1_update)
    else:
        assert any("MatMul_1_grad/MatMul" in c for c in w1_update.control_inputs)
    fused_weights = _train(x, train, variables, None)
    plain_weights = _train(x, train, variables, pt.OFF)
    for a, b in zip(fused_weights, plain_weights):
        # One rounding of the weights per step (BLAS's multiply-add) separates the two.
        np.testing.assert_allclose(a, b, rtol=8 * np.finfo(a.dtype).eps, atol=0)


def test_gradient_that_is_fetched_or_read_twice_is_not_fused(pt):
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(_data(3, 2, seed=1))
    grad = tf.matmul(x, tf.ones([4, 2]), transpose_a=True, name="grad")
    update = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(grad, w)])
    graph, _ = pt.apply(fuse_matmul_updates, [grad], feeds=[x], targets=[update])
    assert FUSED not in pt.ops(graph)
    norm = tf.reduce_sum(grad)
    graph, _ = pt.apply(fuse_matmul_updates, [norm], feeds=[x], targets=[update])
    assert FUSED not in pt.ops(graph)


def test_graph_with_control_flow_is_left_alone(pt):
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(_data(3, 2, seed=1))
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.matmul(x, w), lambda: tf.matmul(x, w) * 2.0)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(y))
    graph, _ = pt.apply(fuse_matmul_updates, [], feeds=[x], targets=[train])
    assert FUSED not in pt.ops(graph)


def test_disabled_by_the_remapping_switch(pt):
    x, train, variables = _dense_sgd()
    cfg = pt.config(remapping=pt.RewriterConfig.OFF)
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        _, graphs = pt.partition_graphs(sess, train, {x: _data(8, 6)})
    assert FUSED not in {n.op for g in graphs for n in g.node}


def test_kernel_falls_back_to_matmul_and_update_without_blas(pt, monkeypatch):
    x, train, variables = _dense_sgd()
    expected = _train(x, train, variables, None)
    monkeypatch.setattr(fused_update, "gemm_accumulate", None)
    fallback = _train(x, train, variables, None)
    plain = _train(x, train, variables, pt.OFF)
    for a, b, c in zip(expected, fallback, plain):
        np.testing.assert_array_equal(b, c)          # the unfused kernels, bit for bit
        np.testing.assert_allclose(a, b, rtol=8 * np.finfo(a.dtype).eps)


@pytest.mark.skipif(blas.gemm_accumulate is None, reason="NumPy's BLAS has no CBLAS gemm here")
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_accumulate_matches_numpy(transpose_a, transpose_b, dtype):
    a = _data(*((7, 5) if transpose_a else (5, 7)), seed=1, dtype=dtype)
    b = _data(*((4, 7) if transpose_b else (7, 4)), seed=2, dtype=dtype)
    c = _data(5, 4, seed=3, dtype=dtype)
    expected = c + 0.25 * ((a.T if transpose_a else a) @ (b.T if transpose_b else b))
    assert blas.gemm_accumulate(c, a, b, 0.25, transpose_a, transpose_b)
    np.testing.assert_allclose(c, expected, rtol=4 * np.finfo(dtype).eps, atol=0)


@pytest.mark.skipif(blas.gemm_accumulate is None, reason="NumPy's BLAS has no CBLAS gemm here")
def test_gemm_accumulate_declines_what_blas_cannot_take():
    c = np.zeros((3, 2), np.float32)
    a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
    assert not blas.gemm_accumulate(c, a.astype(np.float64), b, 1.0, False, False)  # dtype
    assert not blas.gemm_accumulate(c, a, np.ones((5, 2), np.float32), 1.0, False, False)
    assert not blas.gemm_accumulate(np.zeros((2, 3), np.float32).T, a, b, 1.0, False, False)
    assert not blas.gemm_accumulate(c.astype(np.int32), a, b, 1.0, False, False)
    assert not c.any()
    strided = _data(4, 4, seed=5)[:, ::2]                # a non-contiguous operand is copied
    assert blas.gemm_accumulate(c, a, strided, 1.0, False, False)
    np.testing.assert_allclose(c, a @ strided, rtol=1e-6)


@pytest.mark.skipif(blas.gemm_accumulate is None, reason="NumPy's BLAS has no CBLAS gemm here")
@pytest.mark.parametrize("transpose_a", [False, True])
def test_gemm_accumulate_in_row_blocks_is_the_single_call(transpose_a):
    """Row blocks give the single call's values up to float32 rounding: no inner sum is split,
    but OpenBLAS's edge tiles may order a sum's terms differently (seen with its Haswell
    kernels on an AMD Zen 5)."""
    a = _data(*((64, 600) if transpose_a else (600, 64)), seed=1)
    b, c = _data(64, 300, seed=2), _data(600, 300, seed=3)
    whole, blocked = c.copy(), c.copy()
    assert blas.gemm_accumulate(whole, a, b, -0.5, transpose_a, False)

    def in_blocks(m, n, k, rows):
        assert (m, n, k) == (600, 300, 64)
        for i0 in range(0, m, 128):
            rows(i0, min(m, i0 + 128))

    assert blas.gemm_accumulate(blocked, a, b, -0.5, transpose_a, False, in_blocks)
    np.testing.assert_allclose(blocked, whole, rtol=1e-5, atol=1e-4)


def _check_one_large_sgd_step():
    """One SGD step of a 784x512 layer (large enough to thread) gives the unfused update."""
    x = tf.placeholder(tf.float32, [128, 784])
    w = tf.Variable(_data(784, 512, seed=1))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(
        tf.reduce_sum(tf.square(tf.matmul(x, w))))
    xs = _data(128, 784, seed=4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(w)
        sess.run(train, {x: xs})
        after = sess.run(w)
    expected = before - 0.1 * (xs.T @ (2 * (xs @ before)))
    np.testing.assert_allclose(after, expected, rtol=1e-4, atol=1e-4)


def test_large_fused_update_runs_in_parallel_row_blocks(monkeypatch):
    monkeypatch.setattr(fused_update.intra_op, "threads", lambda: 2)
    monkeypatch.setattr(fused_update.intra_op, "gemm_on_blas_threads", lambda: False)
    seen = []
    monkeypatch.setattr(fused_update.intra_op, "parallel_for",
                        lambda n, task, gemm: [seen.append((n, gemm))] +
                        [task(i) for i in range(n)])
    _check_one_large_sgd_step()
    assert seen == [(2, True), (2, True)]   # the forward MatMul, then the fused update


def test_large_fused_update_is_one_blas_threaded_call_when_no_region_runs(monkeypatch):
    monkeypatch.setattr(fused_update.intra_op, "threads", lambda: 2)
    monkeypatch.setattr(fused_update.intra_op, "gemm_on_blas_threads", lambda: True)
    calls = []
    monkeypatch.setattr(fused_update.intra_op, "parallel_for",
                        lambda *args, **kwargs: calls.append(args))
    _check_one_large_sgd_step()
    assert calls == []


# --- Adam ---------------------------------------------------------------------------------------
ADAM = "_FusedMatMulApplyAdam"
RESOURCE_ADAM = "_FusedMatMulResourceApplyAdam"


def _dense_adam(use_resource=False, dtype=tf.float32, rows=1024, **adam):
    """A two-layer net trained by Adam whose first weights (rows x 1024) are large enough to
    fuse and second (1024 x 3) are not: (x, train op, variables); the loss is named "loss"."""
    np_dtype = dtype.as_numpy_dtype
    x = tf.placeholder(dtype, [8, rows])
    w0 = tf.Variable(_data(rows, 1024, seed=1, dtype=np_dtype) * 0.05, name="w0",
                     use_resource=use_resource)
    w1 = tf.Variable(_data(1024, 3, seed=2, dtype=np_dtype), name="w1",
                     use_resource=use_resource)
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w0)), w1)), name="loss")
    return x, tf.train.AdamOptimizer(0.01, **adam).minimize(
        loss, gate_gradients=tf.train.Optimizer.GATE_NONE), [w0, w1]   # as _dense_sgd


def _train_adam(x, train, variables, cfg, steps=2):
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            sess.run(train, {x: _data(*x.shape.as_list(), seed=10 + i,
                                      dtype=x.dtype.as_numpy_dtype)})
        return sess.run(variables)


@pytest.fixture
def one_thread(monkeypatch):
    """Products on the calling thread alone, so the unfused MatMul is one oneDNN (or BLAS)
    call and the fused kernel's row blocks run in turn: the same dot products either way."""
    monkeypatch.setattr(fused_update.intra_op, "threads", lambda: 1)


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_large_adam_update_fuses_and_matches_the_unfused_steps(pt, one_thread, use_resource):
    x, train, variables = _dense_adam(use_resource)
    graph, _ = pt.apply(fuse_matmul_updates, [], feeds=[x], targets=[train])
    (fused,) = [n for n in graph if n.op in (ADAM, RESOURCE_ADAM)]
    assert fused.op == (RESOURCE_ADAM if use_resource else ADAM)
    assert fused.inputs[0][0] == "w0" and fused.name.endswith("ApplyAdam")
    assert fused.attrs["transpose_a"] and not fused.attrs["transpose_b"]
    assert [n.inputs[0][0] for n in graph if n.op in ("ApplyAdam", "ResourceApplyAdam")] == \
        ["w1"]
    assert cost_model.estimate_flops(fused) == 1024 * 1024 * 8
    for a, b in zip(_train_adam(x, train, variables, None),
                    _train_adam(x, train, variables, pt.OFF)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("nesterov", [False, True])
def test_fused_adam_kernel_is_matmul_then_apply_adam(pt, one_thread, dtype, nesterov):
    """The op itself, with 1100 rows (a short last block of 1100 - 4 * 256) and
    use_nesterov, against the unfused pair: the same operations on the same dot products,
    which a BLAS may round apart in row blocks (OpenBLAS's float64 edge tiles do)."""
    np_dtype = dtype.as_numpy_dtype
    a = tf.constant(_data(8, 1100, seed=1, dtype=np_dtype))
    b = tf.constant(_data(8, 1024, seed=2, dtype=np_dtype))
    state = [tf.Variable(_data(1100, 1024, seed=3 + i, dtype=np_dtype) ** 2 * 0.1)
             for i in range(3)]
    scalars = [tf.constant(c, dtype) for c in (0.81, 0.998, 0.01, 0.9, 0.999, 1e-8)]
    update = training_ops.apply_adam(*state, *scalars, tf.matmul(a, b, transpose_a=True),
                                     use_nesterov=nesterov)
    graph, _ = pt.apply(fuse_matmul_updates, [], targets=[update.op])
    assert pt.ops(graph)[ADAM] == 1
    results = []
    for cfg in (None, pt.OFF):
        with tf.Session(config=cfg) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(update)
            results.append(sess.run(state))
    for fused, plain in zip(*results):
        eps = np.finfo(np_dtype).eps
        np.testing.assert_allclose(fused, plain, rtol=0, atol=16 * eps * np.abs(plain).max())


def test_fused_adam_runs_its_row_blocks_on_the_intra_op_threads(monkeypatch):
    monkeypatch.setattr(fused_update.intra_op, "threads", lambda: 2)
    seen = []
    real = fused_update.intra_op.parallel_for
    monkeypatch.setattr(fused_update.intra_op, "parallel_for",
                        lambda n, task, gemm=False: [seen.append((n, gemm)), real(n, task, gemm)])
    x, train, variables = _dense_adam(use_locking=True)
    _train_adam(x, train, variables, None, steps=1)
    assert (4, False) in seen   # 1024 rows in blocks of 256: Adam's loop marks a region


def test_small_adam_update_is_not_fused(pt):
    x, train, _ = _dense_adam(rows=512)      # 512 x 1024: below PARALLEL_SIZE elements
    graph, _ = pt.apply(fuse_matmul_updates, [], feeds=[x], targets=[train])
    assert ADAM not in pt.ops(graph)


def test_fused_adam_falls_back_to_the_unfused_kernels_on_bad_state(pt):
    """A slot whose shape no longer matches (assigned with validate_shape=False) makes the
    kernel run MatMul then ApplyAdam, which reports it as the unfused update does."""
    x, train, _ = _dense_adam()
    (m,) = [v for v in tf.global_variables() if v.op.name == "w0/Adam"]   # w0's m slot
    shrink = tf.assign(m, tf.zeros([2, 2]), validate_shape=False)
    for cfg in (None, pt.OFF):
        with tf.Session(config=cfg) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(shrink)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"var and m do not have the same shape\[1024,1024\] \[2,2\]"):
                sess.run(train, {x: _data(8, 1024, seed=3)})
