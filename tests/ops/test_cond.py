"""tf.cond and tf.case: only the taken branch runs; structures, dtypes, errors, gradients."""
import collections

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor_kind")


def test_only_the_taken_branch_has_side_effects():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        v = tf.Variable(0)
        r = tf.cond(pred, lambda: tf.assign_add(v, 1), lambda: tf.assign_add(v, 10))
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(r, {pred: True}) == 1
            assert sess.run(r, {pred: False}) == 11
            assert sess.run(v) == 11


def test_print_and_assert_inside_an_untaken_branch_do_not_run():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])

        def checked():
            with tf.control_dependencies([tf.Assert(x > 0.0, [x])]):
                return tf.sqrt(x)
        y = tf.cond(x > 0.0, checked, lambda: tf.constant(0.0))
        with tf.Session() as sess:
            assert sess.run(y, {x: 4.0}) == 2.0
            assert sess.run(y, {x: -1.0}) == 0.0


def test_nested_structures_and_namedtuples():
    Pair = collections.namedtuple("Pair", "a b")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        out = tf.cond(x > 0, lambda: Pair(x, {"k": [x * 2]}), lambda: Pair(-x, {"k": [x * 3]}))
        assert isinstance(out, Pair) and isinstance(out.b["k"], list)
        with tf.Session() as sess:
            got = sess.run(out, {x: 2.0})
            assert (got.a, got.b["k"][0]) == (2.0, 4.0)
            got = sess.run(out, {x: -1.0})
            assert (got.a, got.b["k"][0]) == (1.0, -3.0)


def test_singleton_lists_are_unpacked_unless_strict():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        assert isinstance(tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)]),
                          tf.Tensor)
        strict = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
        assert isinstance(strict, list) and len(strict) == 1


def test_errors_name_both_branches():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.constant(1.0)
        with pytest.raises(ValueError, match="same structure"):
            tf.cond(p, lambda: (x, x), lambda: x)
        with pytest.raises(ValueError, match="int32.*float32"):
            tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))
        with pytest.raises(TypeError, match="Python bool"):
            tf.cond(True, lambda: x, lambda: x)
        with pytest.raises(TypeError, match="bool tensor"):
            tf.cond(tf.constant(1), lambda: x, lambda: x)
        with pytest.raises(TypeError, match="callable"):
            tf.cond(p, x, lambda: x)


def test_values_from_outside_are_switched_and_outside_ops_always_run():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        outside = tf.Variable(0)
        bump = tf.assign_add(outside, 1)
        r = tf.cond(p, lambda: bump * 100, lambda: tf.constant(-1))
        with tf.Session() as sess:
            sess.run(outside.initializer)
            assert sess.run(r, {p: False}) == -1
            assert sess.run(outside) == 1
            assert sess.run(r, {p: True}) == 200


def test_gradients_flow_through_the_taken_branch_only():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        w = tf.constant([1.0, -2.0, 0.5], tf.float64)
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_sum(tf.square(x) * w),
                    lambda: tf.reduce_sum(tf.sin(x)))
        (g,) = tf.gradients(y, [x])
        xv_pos = np.array([1.0, 2.0, 3.0])
        xv_neg = -xv_pos
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g, {x: xv_pos}), 2 * xv_pos * [1, -2, 0.5])
            np.testing.assert_allclose(sess.run(g, {x: xv_neg}), np.cos(xv_neg))
            err = tf.test.compute_gradient_error(x, [3], y, [], x_init_value=xv_pos)
            assert err < 1e-6


def test_second_derivative_through_cond():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        y = tf.cond(x > 0, lambda: x ** 3, lambda: x * 2.0)
        (g,) = tf.gradients(y, [x])
        (gg,) = tf.gradients(g, [x])
        with tf.Session() as sess:
            assert np.isclose(sess.run(gg, {x: 2.0}), 12.0)
            assert sess.run(gg, {x: -2.0}) == 0.0


def test_case_first_true_default_and_exclusive():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        pairs = [(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1))]
        first = tf.case(pairs, default=lambda: tf.constant(100))
        exclusive = tf.case(pairs, default=lambda: tf.constant(100), exclusive=True)
        no_default = tf.case(pairs)
        with tf.Session() as sess:
            assert [sess.run(first, {x: v}) for v in (-5, 5, 50)] == [-1, 1, 100]
            assert sess.run(exclusive, {x: 50}) == 100
            with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
                sess.run(exclusive, {x: -5})
            assert sess.run(no_default, {x: 5}) == 1  # the last callable is the default
        with pytest.raises(TypeError, match="callable"):
            tf.case([(x < 0, 3)])


def test_a_variable_returned_by_a_branch_leaves_as_its_value_and_gets_gradients():
    with tf.Graph().as_default():
        x = tf.Variable(2.0, name="x")
        p = tf.placeholder(tf.bool, [])
        r = tf.cond(p, lambda: x * 3.0, lambda: x)
        same = tf.cond(p, lambda: x, lambda: x)
        assert r.dtype == tf.float32 and same.dtype == tf.float32   # not float32_ref
        (g,) = tf.gradients(r, x)
        (g_same,) = tf.gradients(same, x)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(same))
        with tf.Session() as sess:
            sess.run(x.initializer)
            assert sess.run([g, g_same], {p: True}) == [3.0, 1.0]
            assert sess.run([g, g_same], {p: False}) == [1.0, 1.0]
            sess.run(step, {p: True})
            assert np.isclose(sess.run(x), 2.0 - 0.1 * 2 * 2.0)


@pytest.mark.parametrize("exclusive", [False, True])
def test_case_without_default_checks_at_run_time_that_a_predicate_holds(exclusive):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        r = tf.case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1))],
                    exclusive=exclusive)
        with tf.Session() as sess:
            assert sess.run(r, {x: 5}) == 1
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="None of conditions evaluated as True"):
                sess.run(r, {x: 50})


def test_case_names_arguments_and_errors_as_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        one = tf.case([(x < 0, lambda: tf.constant(-1))])
        assert one.name == "case/Const_1:0"   # no cond: the guarded default itself
        b = tf.placeholder(tf.bool, [], name="b")
        a = tf.placeholder(tf.bool, [], name="a")
        # A dict's pairs are tried in the order of the predicates' names: "a" first.
        r = tf.case({b: lambda: tf.constant(2), a: lambda: tf.constant(1)},
                    default=lambda: tf.constant(0))
        with tf.Session() as sess:
            assert sess.run(one, {x: -3}) == -1
            assert sess.run(r, {a: True, b: True}) == 1
        with pytest.raises(ValueError):
            tf.case([], default=lambda: tf.constant(1))
        with pytest.raises(TypeError, match="must be a Tensor"):
            tf.case([(True, lambda: tf.constant(1))])


def test_fetching_a_dead_tensor_is_an_error():
    from tensorweave.ops.control_flow_primitives import switch
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.constant(1.0)
        f, _ = switch(x, p)
        y = f * 2.0

        def branch(v):
            def fn():
                tf.summary.scalar("s", v)
                return tf.constant(v)
            return fn
        r = tf.cond(p, branch(1.0), branch(2.0))
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            assert sess.run(y, {p: False}) == 2.0
            for fetches in ([y], [x, y], [r, merged]):
                with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
                    sess.run(fetches, {p: True})
