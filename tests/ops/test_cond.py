"""tf.cond and tf.case: only the taken branch runs; structures, dtypes, errors, gradients."""
import collections
import re

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
        # TF 2.21's classes and texts
        with pytest.raises(ValueError, match="^The two structures don't have the same nested "
                                             "structure.\n\nFirst structure: type=tuple"):
            tf.cond(p, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError, match="don't have the same sequence type"):
            tf.cond(p, lambda: [x, x], lambda: (x, x))
        with pytest.raises(ValueError, match="Second structure: type=Tensor"):
            tf.cond(p, lambda: [x, x], lambda: [x])    # a singleton is unpacked first
        tf.cond(p, lambda: [x], lambda: x)
        with pytest.raises(ValueError, match=re.escape(
                "Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                "int32 from 'true_fn' and float32 from 'false_fn'.")):
            tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))
        with pytest.raises(TypeError, match="^'pred' must not be a Python bool.$"):
            tf.cond(True, lambda: x, lambda: x)
        with pytest.raises(TypeError, match="^Input 'pred' of 'Switch' Op has type int32 that "
                                            "does not match expected type of bool.$"):
            tf.cond(tf.constant(1), lambda: x, lambda: x)
        with pytest.raises(TypeError, match="^'true_fn' must be callable.$"):
            tf.cond(p, x, lambda: x)
        with pytest.raises(ValueError, match="^'false_fn' must have a return value.$"):
            tf.cond(p, lambda: x, lambda: None)
        with pytest.raises(ValueError, match="^Shape must be rank 0 but is rank 1 for "
                                             "'{{node cond_\\d+/Switch}}"):
            tf.cond(tf.constant([True, False]), lambda: x, lambda: x)


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


def _const(v):
    return lambda: tf.constant(v)


def test_switch_case_selects_by_key_and_out_of_range_takes_default_or_the_last_branch():
    # Expected values from TensorFlow 2.21 (tf.compat.v1, v2 behaviour disabled).
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        as_list = tf.switch_case(i, [_const(10), _const(20), _const(30)])
        as_dict = tf.switch_case(i, {1: _const(20), 0: _const(10)}, default=_const(-1))
        as_pairs = tf.switch_case(i, [(1, _const(20)), (0, _const(10))])
        with tf.Session() as sess:
            got = [sess.run([as_list, as_dict, as_pairs], {i: v}) for v in (-3, 0, 1, 2, 100)]
        assert got == [[30, -1, 20], [10, 10, 10], [20, 20, 20], [30, -1, 20], [30, -1, 20]]


def test_switch_case_runs_only_the_selected_branch(capsys):
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        x = tf.placeholder(tf.float32, [])
        v = tf.Variable(0, use_resource=True)

        def bump(k):
            def fn():
                never = tf.Assert(tf.equal(i, k) | (k == 2), ["unselected branch", k, i])
                with tf.control_dependencies([never]):
                    return tf.assign_add(v, 10 ** k)
            return fn
        r = tf.switch_case(i, [bump(0), bump(1), bump(2)])
        printed = tf.switch_case(i, [lambda: tf.Print(x, [x], "BRANCH0 "),
                                     lambda: tf.Print(x * 2.0, [x], "BRANCH1 ")])
        # An Operation returned by a branch comes out as the index, after it ran (as in TF).
        w = tf.Variable(0, use_resource=True)
        op_out = tf.switch_case(i, [lambda: tf.assign_add(w, 1).op, tf.no_op])
        with tf.Session() as sess:
            sess.run([v.initializer, w.initializer])
            assert [(sess.run(r, {i: k}), sess.run(v)) for k in (0, 1, 2, 5, -1)] == [
                (1, 1), (11, 11), (111, 111), (211, 211), (311, 311)]
            capsys.readouterr()
            assert sess.run(printed, {i: 1, x: 3.0}) == 6.0
            assert capsys.readouterr().err == "BRANCH1 [3]\n"
            assert [sess.run(op_out, {i: k}) for k in (0, 0, 7)] == [0, 0, 7]
            assert sess.run(w) == 2


def test_switch_case_keeps_nested_structures_and_singletons():
    Pair = collections.namedtuple("Pair", "a b")
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        x = tf.placeholder(tf.float32, [])
        out = tf.switch_case(i, [lambda: Pair(x, {"k": [x * 2]}), lambda: Pair(-x, {"k": [x * 3]})])
        single = tf.switch_case(i, [lambda: [x], lambda: [x * 2]])
        python_value = tf.switch_case(i, [lambda: 1.5, lambda: x])
        assert isinstance(out, Pair) and isinstance(out.b["k"], list)
        assert isinstance(single, list) and len(single) == 1   # not unpacked, as in TF
        assert out.a.name == "switch_case/indexed_case/Identity:0"   # TF's output names
        assert out.b["k"][0].name == "switch_case/indexed_case/Identity_1:0"
        assert tf.switch_case(i, [lambda: None, lambda: None]) is None
        a = tf.placeholder(tf.float32, [2, 3])
        b = tf.placeholder(tf.float32, [2, None])
        assert tf.switch_case(i, [lambda: a, lambda: b]).shape.as_list() == [2, None]
        with tf.Session() as sess:
            got = [sess.run(out, {i: k, x: 2.0}) for k in (0, 1, 9)]
            assert [(p.a, p.b["k"][0]) for p in got] == [(2.0, 4.0), (-2.0, 6.0), (-2.0, 6.0)]
            assert sess.run(single, {i: 1, x: 2.0}) == [4.0]
            assert sess.run(python_value, {i: 0, x: 3.0}) == 1.5


def test_switch_case_differentiates_the_selected_branch():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        w = tf.Variable(2.0, dtype=tf.float64)
        x = tf.placeholder(tf.float64, [])
        y = tf.switch_case(i, [lambda: w * 3.0, lambda: w * w * x, lambda: tf.sin(w)],
                           default=lambda: x)
        gw, gx = tf.gradients(y, [w, x])
        (ggw,) = tf.gradients(gw, [w])
        with tf.Session() as sess:
            sess.run(w.initializer)
            got = {k: sess.run([y, gw, gx, ggw], {i: k, x: 5.0}) for k in (0, 1, 2, 3, -4)}
            err = tf.test.compute_gradient_error(x, [], y, [], x_init_value=np.array(0.5),
                                                 extra_feed_dict={i: 1})
        np.testing.assert_allclose(got[0], [6.0, 3.0, 0.0, 0.0])
        np.testing.assert_allclose(got[1], [20.0, 20.0, 4.0, 10.0])
        np.testing.assert_allclose(got[2], [np.sin(2.0), np.cos(2.0), 0.0, -np.sin(2.0)])
        assert got[3] == got[-4] == [5.0, 0.0, 1.0, 0.0]
        assert err < 1e-6


def test_switch_case_inside_a_while_loop_with_gradients():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])

        def body(k, acc):
            return k + 1, tf.switch_case(k % 3, {0: lambda: acc + 1.0, 1: lambda: acc * 2.0,
                                                 2: lambda: acc - 3.0})
        _, out = tf.while_loop(lambda k, acc: k < 7, body, [tf.constant(0), x])
        (g,) = tf.gradients(out, [x])
        with tf.Session() as sess:
            assert sess.run([out, g], {x: 1.0}) == [2.0, 4.0]   # ((x+1)*2-3) twice, then +1


def _branches(n):
    return [_const(k) for k in range(n)]


@pytest.mark.parametrize("index, branch_fns, error, message", [
    (1, _branches(2), TypeError, "'branch_index' must be a Tensor, got <class 'int'>"),
    ("float32", _branches(2), TypeError,
     "'branch_index' must be an integer Tensor, got <dtype: 'float32'>"),
    ("int32", [], ValueError, "Must provide at least one item in 'branch_fns'"),
    ("int32", {}, ValueError, "Must provide at least one item in 'branch_fns'"),
    ("int32", _const(1), TypeError, "'branch_fns' must be a list, tuple, or dict"),
    ("int32", [_const(1), (1, _const(2))], TypeError,
     "Each entry in 'branch_fns' must be a 2-tuple. Received <function"),
    ("int32", [_const(1), 3], TypeError, "Each entry in 'branch_fns' must be a 2-tuple"),
    ("int32", [[0, _const(1)]], TypeError, "Each entry in 'branch_fns' must be a 2-tuple"),
    ("int32", {"0": _const(1)}, TypeError, "key must be a Python `int`, got <class 'str'>"),
    ("int32", {0: _const(1), 1: 3}, TypeError, "fn for key 1 must be callable."),
    ("int32", {0: _const(1), 2: _const(2)}, ValueError,
     "branch indices (keys) must form contiguous range of [0 to 2) but found {0,2}"),
    ("int32", [(0, _const(1)), (0, _const(1))], ValueError,
     "branch indices (keys) must form contiguous range of [0 to 2) but found {0,0}"),
    ("int64", _branches(2), TypeError, "Input 'branch_index' of 'StatelessCase' Op has type "
     "int64 that does not match expected type of int32."),
    ("int64", [lambda: tf.Print(1, [1]), _const(2)], TypeError,
     "Input 'branch_index' of 'Case' Op has type int64"),
    ("int8", [lambda: tf.random_uniform([], 0, 2, tf.int32), _const(2)], TypeError,
     "Input 'branch_index' of 'StatelessCase' Op has type int8"),
    ("int32", [lambda: (tf.constant(1), tf.constant(2)), _const(1),
               lambda: [tf.constant(1)] * 3], AssertionError, "[2, 1, 3]"),
    ("int32", [_const(1), _const(2), _const(1.0)], TypeError,
     "branches[0] and branches[2] arguments to tf.switch_case must have the same number, "
     "type, and overall structure of return values."),
    ("int32", [lambda: (tf.constant(1),), lambda: [tf.constant(1)]], TypeError,
     "branches[0] and branches[1] arguments to tf.switch_case"),
])
def test_switch_case_argument_errors_as_tensorflow(index, branch_fns, error, message):
    with tf.Graph().as_default():
        if isinstance(index, str):
            index = tf.placeholder(getattr(tf, index), [])
        with pytest.raises(error) as info:
            tf.switch_case(index, branch_fns)
        assert str(info.value).startswith(message)
        with pytest.raises(TypeError, match="'int' object is not callable"):
            tf.switch_case(tf.constant(0), [_const(1)], default=3)


def test_switch_case_index_must_be_a_scalar_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None])
        unknown = tf.placeholder(tf.int32)
        r = tf.switch_case(x, _branches(2))
        r_static = tf.switch_case(tf.constant([1, 0]), _branches(2))   # builds, as in TF
        r_unknown = tf.switch_case(unknown, _branches(2))
        one = tf.switch_case(x, [_const(5)])
        with tf.Session() as sess:
            assert sess.run(r_unknown, {unknown: 1}) == 1
            for fetch, feed in ((r, {x: [1]}), (r_static, None), (r_unknown, {unknown: [[1]]}),
                                (one, {x: [1, 2]})):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="The second input must be a scalar, but it has shape"):
                    sess.run(fetch, feed)


def test_switch_case_builds_nested_conds_on_the_index():
    with tf.Graph().as_default() as graph:
        i = tf.placeholder(tf.int32, [], name="i")
        tf.switch_case(i, _branches(3))
        types = {op.type for op in graph.get_operations()}
        merges = [op for op in graph.get_operations() if op.type == "Merge"]
        equals = [op for op in graph.get_operations() if op.type == "Equal"]
    assert types == {"Placeholder", "Const", "Equal", "Switch", "Identity", "Merge"}
    assert len(merges) == 2 and len(equals) == 2     # branch 2 is the innermost else


def test_a_fed_predicate_that_is_not_a_scalar_fails_in_its_switch():
    """The predicate's static shape is unknown; when it runs it must be a scalar, as
    TensorFlow's Switch kernel checks (here too inside a loop, whose test is a Switch's)."""
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool)
        picked = tf.cond(pred, lambda: tf.constant(1), lambda: tf.constant(2))
        count = tf.while_loop(lambda k: tf.logical_and(k < 5, pred), lambda k: k + 1, [0])
        with tf.Session() as sess:
            assert sess.run([picked, count], {pred: True}) == [1, 5]
            for fetch, node in ((picked, "cond/Switch"), (count, "while/Switch")):
                for value in ([True, False], [True]):
                    with pytest.raises(tf.errors.InvalidArgumentError) as info:
                        sess.run(fetch, {pred: value})
                    assert info.value.message.startswith(
                        "The second input must be a scalar, but it has shape "
                        f"[{len(value)}]")
                    assert info.value.op.name == node


def test_outside_values_come_in_through_switches_named_in_the_consuming_ops_scope():
    """TensorFlow 2.21's names: the Switch that brings `w` into a branch is made while its
    consumer is built, inside that op's name scope."""
    with tf.Graph().as_default() as g:
        w = tf.Variable(np.zeros(2, np.float32), name="w")
        p = tf.placeholder(tf.bool, [])
        tf.cond(p, lambda: tf.assign_add(w, [1.0, 1.0]), lambda: tf.identity(w))
        switches = {op.name: op.type for op in g.get_operations()
                    if op.type in ("Switch", "RefSwitch")}
    assert switches == {"cond/Switch": "Switch", "cond/AssignAdd/Switch": "RefSwitch",
                        "cond/Identity/Switch": "Switch"}
