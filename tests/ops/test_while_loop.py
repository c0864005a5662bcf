"""tf.while_loop: results against Python loops, nesting, structures, invariants, side effects,
memory, and gradients against numerical differentiation."""
import collections
import tracemalloc

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor_kind")


def test_sums_match_python_for_many_counts():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        i, total = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + i), [0, 0])
        serial = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + i), [0, 0],
                               parallel_iterations=1)[1]
        with tf.Session() as sess:
            for m in (0, 1, 2, 17, 100):
                assert sess.run([i, total, serial], {n: m}) == [m, sum(range(m)), sum(range(m))]


def test_nested_loops_and_conds_inside_loops():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])

        def outer(i, acc):
            _, inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + i * j), [0, acc])
            return i + 1, inner
        nested = tf.while_loop(lambda i, a: i < n, outer, [0, 0])[1]

        def collatz(v, steps):
            return tf.cond(tf.equal(v % 2, 0), lambda: v // 2, lambda: 3 * v + 1), steps + 1
        steps = tf.while_loop(lambda v, s: v > 1, collatz, [n, 0])[1]
        with tf.Session() as sess:
            for m in (0, 1, 7, 12):
                assert sess.run(nested, {n: m}) == sum(i * j for i in range(m) for j in range(i))
            assert sess.run(steps, {n: 27}) == 111


def test_loop_inside_a_cond_runs_only_when_taken():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        v = tf.Variable(0)

        def loop():
            def body(i):
                with tf.control_dependencies([tf.assign_add(v, 1)]):
                    return i + 1
            return tf.while_loop(lambda i: i < 4, body, [0])
        r = tf.cond(p, loop, lambda: tf.constant(-1))
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(r, {p: False}) == -1 and sess.run(v) == 0
            assert sess.run(r, {p: True}) == 4 and sess.run(v) == 4


def test_structures_namedtuples_and_single_values():
    Fib = collections.namedtuple("Fib", "a b")
    with tf.Graph().as_default():
        k, fib = tf.while_loop(lambda k, f: k < 10, lambda k, f: (k + 1, Fib(f.b, f.a + f.b)),
                               (0, Fib(tf.constant(0, tf.int64), tf.constant(1, tf.int64))))
        assert isinstance(fib, Fib)
        single = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
        assert isinstance(single, tf.Tensor)
        same = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], return_same_structure=True)
        assert isinstance(same, list)
        with tf.Session() as sess:
            assert sess.run(fib).a == 55 and sess.run(single) == 3


def test_shape_invariants_and_their_errors():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        i0 = tf.constant(0)
        grow = tf.while_loop(lambda i, v: i < n,
                             lambda i, v: (i + 1, tf.concat([v, [tf.cast(i, tf.float32)]], 0)),
                             [i0, tf.zeros([0])],
                             shape_invariants=[i0.shape, tf.TensorShape([None])])[1]
        assert grow.shape.as_list() == [None]
        with pytest.raises(ValueError, match="shape_invariants"):
            tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.concat([v, [1.0]], 0)),
                          [i0, tf.zeros([0])])
        with pytest.raises(ValueError, match="not compatible"):
            tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i0],
                          shape_invariants=[tf.TensorShape([2])])
        with pytest.raises(ValueError, match="^The two structures don't have the same nested "
                                             "structure.\n\nFirst structure: type=list str="
                                             "\\[<tf.Tensor 'while_\\d+/Identity:0'"):
            tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1,), [i0, tf.zeros([2])])
        with pytest.raises(ValueError, match="float32"):
            tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [i0])
        with pytest.raises(TypeError, match="callable"):
            tf.while_loop(3, lambda i: i, [i0])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grow, {n: 3}), [0.0, 1.0, 2.0])


def test_maximum_iterations_caps_and_stops_endless_loops():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        forever = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1, [0],
                                maximum_iterations=7)
        capped = tf.while_loop(lambda i: i < n, lambda i: i + 1, [0], maximum_iterations=5)
        with tf.Session() as sess:
            assert sess.run(forever) == 7
            assert [sess.run(capped, {n: m}) for m in (0, 3, 9)] == [0, 3, 5]


def test_variables_assigned_in_the_body_and_external_control_dependencies():
    with tf.Graph().as_default():
        counter = tf.Variable(0)
        marker = tf.Variable(0)

        def body(i):
            with tf.control_dependencies([tf.assign_add(counter, i)]):
                return i + 1
        set_marker = tf.assign(marker, 42)
        with tf.control_dependencies([set_marker]):
            loop = tf.while_loop(lambda i: i < 5, body, [0])
        with tf.Session() as sess:
            sess.run([counter.initializer, marker.initializer])
            assert sess.run(loop) == 5
            assert sess.run(counter) == 0 + 1 + 2 + 3 + 4
            assert sess.run(marker) == 42


def test_ten_thousand_iterations_keep_memory_flat():
    with tf.Graph().as_default():
        x0 = tf.zeros([20000])
        _, x = tf.while_loop(lambda i, x: i < 10000, lambda i, x: (i + 1, x * 0.99 + 1.0),
                             [0, x0])
        with tf.Session() as sess:
            sess.run(x)  # build the plan outside the measurement
            tracemalloc.start()
            out = sess.run(x)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    np.testing.assert_allclose(out[:3], (1 - 0.99 ** 10000) / 0.01, rtol=1e-3)
    assert peak < 20 * 20000 * 4, f"peak {peak} bytes: iterations were not freed"


def test_gradients_against_numerical_differentiation():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        w = tf.constant([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [0.0, 0.2, 0.6]], tf.float64)

        def body(i, h):
            return i + 1, tf.tanh(tf.reshape(tf.matmul(tf.reshape(h, [1, 3]), w), [3]) + x)
        y = tf.while_loop(lambda i, h: i < 4, body, [0, x])[1]
        xv = np.array([0.3, -0.7, 0.2])
        with tf.Session():
            err = tf.test.compute_gradient_error(x, [3], y, [3], x_init_value=xv)
        assert err < 1e-4


def test_gradients_of_nested_loops_and_captured_values():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        n = tf.placeholder(tf.int32, [])

        def outer(i, acc):
            inner = tf.while_loop(lambda j, a: j < 2, lambda j, a: (j + 1, a * x), [0, acc])[1]
            return i + 1, inner
        y = tf.while_loop(lambda i, a: i < n, outer, [0, tf.constant(1.0, tf.float64)])[1]
        (g,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            assert np.isclose(sess.run(g, {x: 1.3, n: 3}), 6 * 1.3 ** 5)  # d x^6
            assert sess.run(g, {x: 1.3, n: 0}) == 0.0


def test_gradient_loop_copies_body_constants_instead_of_saving_them():
    """A constant the body's gradient reads is rebuilt in the gradient loop: no stack."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float64, [])
        y = tf.while_loop(lambda i, v: i < 3,
                          lambda i, v: (i + 1, v * tf.constant(3.0, tf.float64, name="three")),
                          [0, x])[1]
        (dx,) = tf.gradients(y, [x])
        saved = [op.inputs[1].op.type for op in g.get_operations() if op.type == "StackPushV2"]
        assert "Const" not in saved and saved
        with tf.Session() as sess:
            assert sess.run(dx, {x: 2.0}) == 27.0


def _recurrent_layer(steps):
    """h <- tanh(bias_add(h @ w, b)) for `steps` iterations, batch 2: w's gradient term per
    iteration is h^T @ d (MatMul, transpose_a) and b's BiasAddGrad(d)."""
    rng = np.random.RandomState(3)
    h0 = tf.constant(rng.uniform(-1, 1, (2, 3)))
    w = tf.constant(rng.uniform(-0.8, 0.8, (3, 3)))
    b = tf.constant(rng.uniform(-0.5, 0.5, 3))
    y = tf.while_loop(lambda i, h: i < steps,
                      lambda i, h: (i + 1, tf.tanh(tf.nn.bias_add(tf.matmul(h, w), b))),
                      [0, h0])[1]
    return y, w, b


def test_weight_and_bias_gradients_are_summed_in_one_op_after_the_loop():
    with tf.Graph().as_default() as g:
        steps = tf.placeholder_with_default(4, [])
        y, w, b = _recurrent_layer(steps)
        dw, db = tf.gradients(tf.reduce_sum(y), [w, b])
        rows = [op for op in g.get_operations()
                if op.type == "TensorArrayV3" and "iteration_rows" in op.name]
        assert len(rows) == 2        # h of each iteration, and d (shared by w and b)
        with tf.Session() as sess:
            for x in (w, b):
                assert tf.test.compute_gradient_error(x, x.shape.as_list(), y, [2, 3]) < 1e-4
            zero_w, zero_b = sess.run([dw, db], {steps: 0})
            assert not zero_w.any() and not zero_b.any() and zero_w.shape == (3, 3)


def test_summed_gradients_equal_the_per_iteration_sums():
    with tf.Graph().as_default():
        y, w, b = _recurrent_layer(6)
        loss = tf.reduce_sum(y * y)
        with tf.Session() as sess:
            got = sess.run(tf.gradients(loss, [w, b]))
    with tf.Graph().as_default():     # the same loop unrolled: no while-loop gradient
        rng = np.random.RandomState(3)
        h = tf.constant(rng.uniform(-1, 1, (2, 3)))
        w = tf.constant(rng.uniform(-0.8, 0.8, (3, 3)))
        b = tf.constant(rng.uniform(-0.5, 0.5, 3))
        for _ in range(6):
            h = tf.tanh(tf.nn.bias_add(tf.matmul(h, w), b))
        with tf.Session() as sess:
            want = sess.run(tf.gradients(tf.reduce_sum(h * h), [w, b]))
    for g_loop, g_unrolled in zip(got, want):
        np.testing.assert_allclose(g_loop, g_unrolled, rtol=1e-12, atol=1e-12)


def test_gradient_through_cond_inside_loop_and_back_prop_false():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])

        def body(i, a):
            return i + 1, tf.cond(i < 2, lambda: a * x, lambda: a + x)
        y = tf.while_loop(lambda i, a: i < 4, body, [0, tf.constant(1.0, tf.float64)])[1]
        (g,) = tf.gradients(y, [x])
        frozen = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                               [0, tf.constant(1.0, tf.float64)], back_prop=False)[1]
        assert tf.gradients(frozen, [x]) == [None]
        with tf.Session() as sess:
            # y = x^2 + 2x  ->  dy/dx = 2x + 2
            assert np.isclose(sess.run(g, {x: 1.5}), 5.0)


def test_kernel_error_inside_a_loop_names_the_node_and_its_line():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        total = tf.while_loop(lambda i, t: i < 5,
                              lambda i, t: (i + 1, t + tf.gather(x, i, name="pick")),
                              [0, 0.0])[1]
        with tf.Session() as sess:
            assert sess.run(total, {x: np.arange(5, dtype=np.float32)}) == 10.0
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(total, {x: np.arange(3, dtype=np.float32)})
    assert "pick" in str(info.value) and "test_while_loop.py" in str(info.value)


def test_structured_loops_compile_to_generated_code(executor_kind):
    from tensorweave.runtime.executor.executor import Executor
    built = []
    original = Executor.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self)
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        out = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 0.99 + 1.0), [0, 0.0])
        Executor.__init__ = record
        try:
            with tf.Session() as sess:
                sess.run(out, {n: 3})
        finally:
            Executor.__init__ = original
    assert (built[0]._fn is not None) == (executor_kind == "compiled")


def test_gradient_through_a_loop_capped_by_maximum_iterations():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        y = tf.while_loop(lambda i, a: tf.constant(True), lambda i, a: (i + 1, a * x),
                          [0, tf.constant(1.0, tf.float64)], maximum_iterations=4)[1]
        (g,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            assert np.isclose(sess.run(g, {x: 1.1}), 4 * 1.1 ** 3)


def test_results_take_the_structure_the_body_returns():
    with tf.Graph().as_default():
        i, x = tf.constant(0), tf.constant(1.0)
        cond = lambda i, a: i < 3   # noqa: E731
        pair = tf.while_loop(cond, lambda i, a: (i + 1, a * 2), [i, x])
        assert isinstance(pair, tuple) and pair[1].name == "while/Exit_1:0"
        assert isinstance(tf.while_loop(cond, lambda i, a: [i + 1, a * 2], (i, x)), list)
        capped = tf.while_loop(cond, lambda i, a: [i + 1, a * 2], [i, x], maximum_iterations=2)
        assert isinstance(capped, list) and capped[1].name == "while_2/Exit_2:0"
        same = tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), [i],
                             return_same_structure=True)
        assert isinstance(same, tuple) and len(same) == 1
        wrapped = tf.while_loop(lambda i: i < 3, lambda i: i + 1, (i,),
                                return_same_structure=True)
        assert isinstance(wrapped, list) and len(wrapped) == 1
        single = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [i])
        assert isinstance(single, tf.Tensor)
        with tf.Session() as sess:
            assert sess.run(list(pair)) == [3, 8.0]
            assert sess.run(capped) == [2, 4.0]


def test_cond_must_return_a_scalar_bool():
    with tf.Graph().as_default():
        body = lambda i: i + 1   # noqa: E731
        with pytest.raises(TypeError, match="LoopCond.*int32.*bool"):
            tf.while_loop(lambda i: 1, body, [tf.constant(0)])
        with pytest.raises(TypeError, match="float32"):
            tf.while_loop(lambda i: tf.cast(i, tf.float32), body, [tf.constant(0)])
        with pytest.raises(ValueError, match="rank 0"):
            tf.while_loop(lambda i: tf.stack([i < 3, i < 2]), body, [tf.constant(0)])
        capped = tf.while_loop(lambda i: True, body, [tf.constant(0)], maximum_iterations=3)
        with tf.Session() as sess:
            assert sess.run(capped) == 3


def test_a_body_op_reading_only_captured_values_runs_once_per_iteration():
    # A dequeue whose only input is the captured queue handle is tied to the iteration by the
    # pivot, as TensorFlow ties it: 4 iterations take 4 elements (without it, the body's
    # dequeue also ran in the iteration whose condition failed and took a fifth).
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
        fill = q.enqueue_many([[1, 2, 3, 4, 5]])
        _, total = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a + q.dequeue()),
                                 [0, 0])
        dequeue = [op for op in tf.get_default_graph().get_operations()
                   if op.type == "QueueDequeueV2"][0]
        assert [c.name for c in dequeue.control_inputs] == ["while/Identity"]
        with tf.Session() as sess:
            sess.run(fill)
            assert sess.run(total) == 10
            assert sess.run(q.size()) == 1
