"""Sum-update fusion: SGD by an averaged AddN of gradients becomes one bit-identical kernel."""
import types

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.kernels import fused_update, training
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.registry import find_kernel
from tensorweave.ops.fused_ops import FusedAddNApplyGradientDescent, resource_twin
from tensorweave.ops.training_ops import apply_gradient_descent
from tensorweave.runtime.devices import DeviceMgr
from tensorweave.runtime.executor.values import VariableRef
from tensorweave.runtime.passes.sum_update_fusion import FUSED, fuse_sum_updates


def _data(*shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _update(form, n=3, dtype=tf.float32, c=None, **kwargs):
    """(feeds, train op, variable, sum, delta): var -= 0.1 * form(AddN(n fed gradients))."""
    grads = [tf.placeholder(dtype, [5, 4], name=f"g{k}") for k in range(n)]
    var = tf.Variable(_data(5, 4, seed=1, dtype=dtype.as_numpy_dtype), name="w")
    total = tf.add_n(grads, name="sum")
    c = tf.constant(3.0, dtype, name="c") if c is None else c
    delta = {"none": lambda: total, "mul": lambda: total * c, "rmul": lambda: c * total,
             "div": lambda: total / c}[form]()
    train = apply_gradient_descent(var, tf.constant(0.1, dtype), delta, **kwargs).op
    return grads, train, var, total, delta


def _feed(grads, steps=3):
    np_dtype = grads[0].dtype.as_numpy_dtype
    return [{g: _data(5, 4, seed=10 * i + k, dtype=np_dtype) for k, g in enumerate(grads)}
            for i in range(steps)]


def _train(train, var, feeds, cfg=None):
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        for feed in feeds:
            sess.run(train, feed)
        return sess.run(var)


# --- the pass ----------------------------------------------------------------------------------
@pytest.mark.parametrize("form,scale", [("none", "none"), ("mul", "mul"), ("rmul", "mul"),
                                        ("div", "div")])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_scaled_sum_update_fuses_bit_identically(pt, form, scale, dtype):
    grads, train, var, total, delta = _update(form, dtype=dtype)
    summed = pt.rgraph([], grads, [train]).nodes["sum"].inputs
    graph, opts = pt.apply(fuse_sum_updates, [], feeds=grads, targets=[train])
    (fused,) = [n for n in graph if n.op == FUSED]
    ops = pt.ops(graph)
    assert ops["AddN"] == ops["Mul"] == ops["RealDiv"] == ops["ApplyGradientDescent"] == 0
    assert fused.name == train.name                              # readers are unchanged
    assert fused.attrs["scale"] == scale and fused.attrs["N"] == 3
    factor = [("c", 0)] if scale != "none" else []
    assert fused.inputs[2:] == factor + summed          # (var, alpha, [c], g_0, g_1, g_2)
    assert opts.log.kinds().count("fuse_add_n_apply_gradient_descent") == 1
    feeds = _feed(grads)
    fused_value = _train(train, var, feeds)
    plain = _train(train, var, feeds, pt.config(remapping=pt.RewriterConfig.OFF))
    assert fused_value.tobytes() == plain.tobytes()
    assert not np.array_equal(fused_value, _data(5, 4, seed=1, dtype=fused_value.dtype))


@pytest.mark.parametrize("towers, use_resource", [(2, False), (4, False), (2, True)])
def test_towers_averaged_gradients_fuse_and_train_bit_identically(pt, towers, use_resource):
    """In-graph data parallelism as bench/workloads/multi_device.py builds it (with resource
    variables, the fused op is the resource twin)."""
    x = tf.placeholder(tf.float32, [8, 6])
    y = tf.placeholder(tf.float32, [8, 3])
    with tf.device("/cpu:0"):
        params = [tf.Variable(value, use_resource=use_resource) for value in (
            _data(6, 5, seed=1), np.zeros(5, np.float32), _data(5, 3, seed=2),
            np.zeros(3, np.float32))]
    grads = []
    for k, (xs, ys) in enumerate(zip(tf.split(x, towers), tf.split(y, towers))):
        with tf.device(f"/cpu:{k}"):
            h = tf.nn.relu(tf.matmul(xs, params[0]) + params[1])
            logits = tf.matmul(h, params[2]) + params[3]
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
                labels=ys, logits=logits))
            grads.append(tf.gradients(loss, params))
    with tf.device("/cpu:0"):
        averaged = [tf.add_n(list(g)) / towers for g in zip(*grads)]
        train = tf.train.GradientDescentOptimizer(0.5).apply_gradients(
            list(zip(averaged, params)))
    feed = {x: _data(8, 6, seed=3), y: np.eye(3, dtype=np.float32)[np.arange(8) % 3]}

    def run(**rewrite):
        cfg = pt.config(**rewrite)
        cfg.device_count["CPU"] = towers
        with tf.Session(config=cfg) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            _, graphs = pt.partition_graphs(sess, train, feed)
            return sess.run(params), [n.op for g in graphs for n in g.node]

    fused, fused_ops = run()
    plain, plain_ops = run(remapping=pt.RewriterConfig.OFF)
    op = resource_twin(FUSED) if use_resource else FUSED
    assert fused_ops.count(op) == 4 and "AddN" not in fused_ops
    assert plain_ops.count("AddN") == 4 and op not in plain_ops
    for a, b in zip(fused, plain):
        assert a.tobytes() == b.tobytes()


def _fuses(pt, graph_args, edit=None):
    """Whether the pass fuses the update of (feeds, train op, extra fetches or target ops)."""
    grads, train, extra = graph_args
    fetches = [t for t in extra if isinstance(t, tf.Tensor)]
    targets = [train] + [op for op in extra if not isinstance(op, tf.Tensor)]
    graph = pt.rgraph(fetches, grads, targets)
    if edit is not None:
        edit(graph)
    return FUSED in pt.ops(fuse_sum_updates(graph))


def test_fetched_or_shared_intermediates_are_not_fused(pt):
    grads, train, _, total, delta = _update("mul")
    assert _fuses(pt, (grads, train, []))                           # the control: it fuses
    assert not _fuses(pt, (grads, train, [total]))                  # the sum fetched
    assert not _fuses(pt, (grads, train, [delta]))                  # the scaled sum fetched
    assert not _fuses(pt, (grads, train, [tf.reduce_sum(total)]))   # the sum read twice
    assert not _fuses(pt, (grads, train, [tf.reduce_sum(delta)]))   # the delta read twice


def test_intermediate_on_another_device_is_not_fused(pt):
    grads, train, _, total, delta = _update("mul")

    def move(name):
        def edit(graph):
            graph.nodes[name].device = graph.nodes[name].device.replace("CPU:0", "CPU:1")
        return edit

    assert not _fuses(pt, (grads, train, []), move(total.op.name))
    assert not _fuses(pt, (grads, train, []), move(delta.op.name))


def test_control_dependents_and_control_inputs(pt):
    grads, train, _, total, _ = _update("div")
    with tf.control_dependencies([total]):
        after = tf.no_op(name="after_sum")
    assert not _fuses(pt, (grads, train, [after]))
    with tf.Graph().as_default():
        grads = [tf.placeholder(tf.float32, [5, 4]) for _ in range(2)]
        var = tf.Variable(_data(5, 4))
        marker = tf.no_op(name="marker")
        with tf.control_dependencies([marker]):
            total = tf.add_n(grads)
        train = apply_gradient_descent(var, 0.1, total).op
        peek = tf.reduce_sum(var, name="peek")     # unordered with the update: runs first
        graph, _ = pt.apply(fuse_sum_updates, [peek], feeds=grads, targets=[train])
        (fused,) = [n for n in graph if n.op == FUSED]
        assert fused.control_inputs == ["marker", "peek"] and fused.attrs["scale"] == "none"


def test_other_dtypes_vector_factors_and_control_flow_are_left_alone(pt):
    grads, train, *_ = _update("mul", dtype=tf.float16)     # integer updates have no kernel
    assert not _fuses(pt, (grads, train, []))
    with tf.Graph().as_default():
        grads, train, *_ = _update("mul", c=tf.constant(np.full(4, 0.5, np.float32)))
        assert not _fuses(pt, (grads, train, []))   # c broadcasts: not scalar
    with tf.Graph().as_default():
        grads, train, *_ = _update("mul", c=tf.constant([0.5]))
        assert not _fuses(pt, (grads, train, []))   # shape [1], not []
    with tf.Graph().as_default():
        grads, train, var, total, _ = _update("mul")
        flag = tf.cond(tf.reduce_sum(grads[0]) > 0, lambda: tf.constant(1.0),
                       lambda: tf.constant(2.0))
        assert not _fuses(pt, (grads, train, [flag]))


def test_disabled_by_the_remapping_switch(pt):
    grads, train, *_ = _update("mul")
    cfg = pt.config(remapping=pt.RewriterConfig.OFF)
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        _, graphs = pt.partition_graphs(sess, train, _feed(grads, 1)[0])
    assert FUSED not in {n.op for g in graphs for n in g.node}


# --- the op and its kernel ---------------------------------------------------------------------
def _reference(var, alpha, factor, scale, grads):
    """The unfused kernels' arithmetic, op by op in the dtype (NumPy)."""
    with np.errstate(invalid="ignore"):
        total = grads[0] + grads[1]
        for g in grads[2:]:
            total = total + g
        delta = total if scale == "none" else total * factor if scale == "mul" else \
            total / factor
        return var - delta * alpha


def _op(var, grads, scale, factor=0.25, alpha=0.1, **attrs):
    dtype = var.dtype.base_dtype
    factors = [tf.constant(factor, dtype)] if scale != "none" else []
    return apply_op(FusedAddNApplyGradientDescent,
                    [var, tf.constant(alpha, dtype), factors, grads],
                    {"scale": scale, **attrs})


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("scale", ["none", "mul", "div"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_matches_the_unfused_arithmetic_bitwise(pt, n, scale, dtype):
    init = _data(6, 7, seed=1, dtype=dtype)
    grads = [tf.placeholder(dtype, [None, 7]) for _ in range(n)]
    var = tf.Variable(init)
    out = _op(var, grads, scale, factor=0.3)
    assert out.shape.as_list() == [6, 7]            # the shape function merges var and grads
    feed = {g: _data(6, 7, seed=5 + k, dtype=dtype) for k, g in enumerate(grads)}
    feed[grads[0]][0, :4] = [np.nan, np.inf, -0.0, np.inf]     # NaN, inf - inf, -0.0 + -0.0
    feed[grads[1]][0, 2:4] = [-0.0, -np.inf]
    with tf.Session(config=pt.OFF) as sess:
        sess.run(var.initializer)
        value = sess.run(out, feed)
    expected = _reference(init, dtype(0.1), dtype(0.3), scale, [feed[g] for g in grads])
    assert value.shape == tuple(out.shape.as_list()) and value.dtype == dtype
    assert value.tobytes() == expected.tobytes() and np.isnan(value).sum() == 2


def test_shape_function_checks_like_apply_gradient_descent():
    with tf.Graph().as_default():
        var = tf.Variable(_data(5, 4))
        with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
            _op(var, [tf.zeros([5, 4]), tf.zeros([5, 3])], "mul")
        with pytest.raises(ValueError, match="must be rank 0"):
            apply_op(FusedAddNApplyGradientDescent,
                     [var, tf.constant(0.1), [tf.zeros([2])], [tf.zeros([5, 4])] * 2],
                     {"scale": "mul"})


def _kernel(scale, n=2, dtype=np.float32, use_locking=False, monkeypatch=None):
    t = tf.as_dtype(dtype)
    attrs = {"T": t, "N": n, "num_factors": int(scale != "none"), "scale": scale,
             "use_locking": use_locking}
    node = types.SimpleNamespace(name="w_update", op=FUSED, attrs=attrs, input_dtypes=[t] * 5,
                                 output_dtypes=[t], creation_site=None)
    ctx = KernelContext(node, DeviceMgr.local().devices[0])
    return ctx, find_kernel(FUSED, "CPU", attrs).impl(ctx)


def _ref(value):
    ref = VariableRef("w")
    ref.value = value
    return ref


def test_kernel_falls_back_to_the_unfused_kernels_with_the_same_bits(monkeypatch):
    ctx, k = _kernel("div", n=3)
    init = _data(8, 6, seed=1)
    grads = [_data(6, 8, seed=2).T, _data(8, 6, seed=3), _data(8, 12, seed=4)[:, ::2]]
    assert not all(g.flags.c_contiguous for g in grads)
    expected = _reference(init, np.float32(0.1), np.float32(3.0), "div", grads)
    ref = _ref(init.copy())
    assert k.compute(ctx, ref, np.float32(0.1), np.float32(3.0), *grads) is ref
    assert ref.value.tobytes() == expected.tobytes()
    ref = _ref(init.copy())                          # contiguous again: the loop, same bits
    k.compute(ctx, ref, np.float32(0.1), np.float32(3.0), *[np.ascontiguousarray(g)
                                                             for g in grads])
    assert ref.value.tobytes() == expected.tobytes()


def test_large_variables_run_in_chunks_with_the_same_bits(monkeypatch):
    ctx, k = _kernel("mul", n=2)
    init, grads = _data(301), [_data(301, seed=2), _data(301, seed=3)]
    expected = _reference(init, np.float32(0.1), np.float32(0.5), "mul", grads)
    chunks = []
    monkeypatch.setattr(training, "PARALLEL_SIZE", 100)
    monkeypatch.setattr(fused_update.intra_op, "threads", lambda: 3)
    monkeypatch.setattr(fused_update.intra_op, "parallel_for",
                        lambda n, task: [chunks.append(n)] + [task(i) for i in range(n)])
    ref = _ref(init.copy())
    k.compute(ctx, ref, np.float32(0.1), np.float32(0.5), *grads)
    assert chunks == [3] and ref.value.tobytes() == expected.tobytes()


def test_use_locking_holds_the_variable_lock_during_the_loop(monkeypatch):
    held = []
    loop = fused_update.compiled(fused_update._add_n_update_loop)
    ref = _ref(_data(4, 3))

    def recording_loop(*args):
        held.append(ref.lock.locked())
        return loop(*args)

    monkeypatch.setattr(fused_update, "compiled", lambda fn: recording_loop)
    grads = [_data(4, 3, seed=2), _data(4, 3, seed=3)]
    expected = _reference(ref.value, np.float32(0.5), None, "none", grads)
    for locking in (True, False):
        ctx, k = _kernel("none", use_locking=locking)
        k.compute(ctx, ref, np.float32(0.5), *grads)
    assert held == [True, False] and not ref.lock.locked()
    expected = _reference(expected, np.float32(0.5), None, "none", grads)
    assert ref.value.tobytes() == expected.tobytes()


def test_kernel_errors_are_the_unfused_kernels():
    ctx, k = _kernel("mul")
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized value w"):
        k.compute(ctx, VariableRef("w"), np.float32(0.1), np.float32(0.5),
                  _data(4, 3), _data(4, 3))
    ref = _ref(_data(4, 3))
    with pytest.raises(errors.InvalidArgumentError, match="Inputs to operation AddN must"):
        k.compute(ctx, ref, np.float32(0.1), np.float32(0.5), _data(4, 3), _data(3, 4))
    with pytest.raises(errors.InvalidArgumentError, match="var and delta do not have the same"):
        k.compute(ctx, ref, np.float32(0.1), np.float32(0.5), _data(3, 4), _data(3, 4))
    with pytest.raises(errors.InvalidArgumentError, match="alpha is not a scalar"):
        k.compute(ctx, ref, np.ones(2, np.float32), np.float32(0.5), _data(4, 3), _data(4, 3))
    with pytest.raises(errors.InvalidArgumentError, match="scale 'mul' with 0 factors"):
        attrs = dict(ctx.attrs, num_factors=0)
        find_kernel(FUSED, "CPU", attrs).impl(
            KernelContext(types.SimpleNamespace(name="u", op=FUSED, attrs=attrs,
                                                input_dtypes=[], output_dtypes=[],
                                                creation_site=None), ctx.device))
