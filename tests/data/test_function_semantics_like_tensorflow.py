"""tf.data functions run as TensorFlow 2.21 runs them (tf.compat.v1, graph mode).

TensorFlow traces a map/filter/flat_map/interleave function with tf.function, whose automatic
control dependencies make every stateful op of it run on each call, returned or not (an
assertion, a print, a variable update; not an unused legacy random op). A variable read inside
the function is read when the function runs; creating one there is refused, and a one-shot
iterator refuses a dataset computed from a variable or a random op. Every expected value below
is what TensorFlow 2.21 printed for the same program (with tf.data's injected prefetch turned
off where a variable changes while the iterator runs: a prefetched element was read earlier).
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")

ERROR = "InvalidArgumentError"


def drain(dataset, limit=20):
    """The elements of a one-shot iterator over `dataset`, then "EOF" or the error's name."""
    nxt = tf.data.make_one_shot_iterator(dataset).get_next()
    out = []
    with tf.Session() as sess:
        while len(out) < limit:
            try:
                out.append(np.asarray(sess.run(nxt)).tolist())
            except tf.errors.OutOfRangeError:
                return out + ["EOF"]
            except tf.errors.OpError as error:
                return out + [type(error).__name__]
    return out


def below_two(x):
    """An assertion whose op nothing uses, then x."""
    tf.debugging.assert_less(x, tf.constant(2, tf.int64))
    return x


def tf_assert_below_two(x):
    tf.Assert(x < 2, [x])
    return x


def assert_inside(fn):
    return lambda x: fn(below_two(x) * 0 + x)


# name: (the dataset, TensorFlow's elements)
SIDE_EFFECT_CASES = {
    "map_assert_less": (lambda: D.range(4).map(below_two), [0, 1, ERROR]),
    "map_tf_Assert": (lambda: D.range(4).map(tf_assert_below_two), [0, 1, ERROR]),
    "map_assert_in_tuple": (lambda: D.range(4).map(
        lambda x: (tf.debugging.assert_less(x, tf.constant(2, tf.int64)), x)[1]),
        [0, 1, ERROR]),
    "map_assert_fails_first": (lambda: D.range(3).map(
        lambda x: (tf.debugging.assert_non_negative(x - 1), x)[1]), [ERROR]),
    "map_parallel_calls": (lambda: D.range(4).map(below_two, num_parallel_calls=2),
                           [0, 1, ERROR]),
    "filter_predicate": (lambda: D.range(4).filter(lambda x: below_two(x) < 10),
                         [0, 1, ERROR]),
    "flat_map": (lambda: D.range(4).flat_map(lambda x: D.from_tensors(below_two(x))),
                 [0, 1, ERROR]),
    "flat_map_inner_reads_nothing": (lambda: D.range(4).flat_map(
        lambda x: (tf.Assert(x < 2, [x]), D.range(1))[1]), [0, 0, ERROR]),
    "interleave": (lambda: D.range(4).interleave(lambda x: D.from_tensors(below_two(x)),
                                                 cycle_length=1), [0, 1, ERROR]),
    "interleave_cycle_2": (lambda: D.range(4).interleave(
        lambda x: D.from_tensors(below_two(x)), cycle_length=2), [0, 1, ERROR]),
    "map_then_batch": (lambda: D.range(4).map(below_two).batch(2), [[0, 1], ERROR]),
    "batch_then_map": (lambda: D.range(4).batch(2).map(below_two), [[0, 1], ERROR]),
    "map_and_batch": (lambda: D.range(4).apply(E.map_and_batch(below_two, 2)),
                      [[0, 1], ERROR]),
    "scan": (lambda: D.range(4).apply(E.scan(
        tf.constant(0, tf.int64), lambda s, x: (s + x, below_two(x)))), [0, 1, ERROR]),
    "assert_in_cond_branch": (lambda: D.range(4).map(lambda x: tf.cond(
        x > 0, lambda: tf_assert_below_two(x), lambda: x * 10)), [0, 1, ERROR]),
    "unused_random_op": (lambda: D.range(2).map(lambda x: (tf.random_uniform([]), x)[1]),
                         [0, 1, "EOF"]),
}


@pytest.mark.parametrize("name", sorted(SIDE_EFFECT_CASES))
def test_stateful_ops_run_like_tensorflow(name):
    build, expected = SIDE_EFFECT_CASES[name]
    assert drain(build()) == expected


def test_the_assertion_message_names_the_failed_condition():
    nxt = tf.data.make_one_shot_iterator(D.range(4).map(below_two)).get_next()
    with tf.Session() as sess:
        assert [sess.run(nxt), sess.run(nxt)] == [0, 1]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Condition x < y did not hold element-wise:\] .* \[2\] "
                                 r"\[y \(Const:0\) = \] \[2\]"):
            sess.run(nxt)


def test_reduce_runs_the_assertion():
    total = D.range(4).reduce(tf.constant(0, tf.int64),
                              lambda s, x: s + below_two(x))
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(total)


def test_prints_run_in_creation_order_until_the_assertion_fails(capfd):
    def fn(x):
        tf.print("before", x)
        tf.debugging.assert_less(x, tf.constant(2, tf.int64))
        tf.print("after", x)
        return x
    assert drain(D.range(4).map(fn)) == [0, 1, ERROR]
    assert capfd.readouterr().err.splitlines() == [
        "before 0", "after 0", "before 1", "after 1", "before 2"]


def test_unused_print_and_print_in_taken_branch(capfd):
    def fn(x):
        tf.Print(x, [x], "PR ")
        return tf.cond(x > 1, lambda: (tf.print("T", x), x)[1],
                       lambda: (tf.print("F", x), x)[1])
    assert drain(D.range(3).map(fn)) == [0, 1, 2, "EOF"]
    assert capfd.readouterr().err.splitlines() == [
        "PR [0]", "F 0", "PR [1]", "F 1", "PR [2]", "T 2"]


def test_filter_prints_every_element(capfd):
    assert drain(D.range(3).filter(lambda x: (tf.print("F", x), x > 0)[1])) == [1, 2, "EOF"]
    assert capfd.readouterr().err.splitlines() == ["F 0", "F 1", "F 2"]


def test_an_unused_random_op_does_not_change_the_used_one():
    tf.set_random_seed(1)
    values = drain(D.range(2).map(lambda x: (tf.random_uniform([], seed=3),
                                             tf.random_uniform([], seed=4))[1]))
    np.testing.assert_allclose(values[:2], [0.3853874206542969, 0.7942407131195068])


def test_a_pure_function_is_traced_without_targets_and_stays_vectorizable():
    from tensorweave.data import function as _function
    from tensorweave.data.dataset_ops import TensorSpec
    from tensorweave.kernels.dataset_functions import FunctionRunner
    from tensorweave.runtime.devices import Device
    cpu = Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", np)
    traced = _function.trace(lambda x: x * 2 + 1, TensorSpec([], tf.int64),
                             tf.get_default_graph(), "Dataset.map()")
    record = traced.record([traced.result])
    assert "targets" not in record
    assert FunctionRunner(record, cpu).vectorizable
    checked = _function.trace(below_two, TensorSpec([], tf.int64), tf.get_default_graph(),
                              "Dataset.map()")
    assert [op.type for op in checked.targets] == ["Assert"]
    assert not FunctionRunner(checked.record([checked.result]), cpu).vectorizable


def _run_with_update(resource, n_after=5, before=None):
    """map(x + v) over range(20): one element, v.assign(100), then `n_after` elements."""
    v = tf.Variable(10, dtype=tf.int64, use_resource=resource)
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    dataset = D.range(20).map(lambda x: x + v).with_options(options)
    it = tf.data.make_initializable_iterator(dataset)
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if before is not None:
            sess.run(v.assign(before))
        sess.run(it.initializer)
        out = [sess.run(nxt)]
        sess.run(v.assign(100))
        out += [sess.run(nxt) for _ in range(n_after)]
        sess.run(it.initializer)
        return out + [sess.run(nxt)]


def test_a_resource_variable_is_read_when_the_function_runs():
    assert _run_with_update(True) == [10, 101, 102, 103, 104, 105, 100]
    assert _run_with_update(True, 1, before=50) == [50, 101, 100]


def test_a_reference_variable_is_read_at_initialization():
    # TensorFlow yields [10, 101, ...] here: its captured tensor shares the variable's buffer,
    # which its Assign overwrites in place; tensorweave's Assign stores a new array, so the
    # value captured when the iterator was initialized stays (an in-place update shows).
    assert _run_with_update(False, 1, before=50)[::2] == [50, 100]


def test_a_reference_variable_updated_in_place_is_seen():
    v = tf.Variable(10, dtype=tf.int64, use_resource=False)
    it = tf.data.make_initializable_iterator(D.range(3).map(lambda x: x + v))
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer)
        first = sess.run(nxt)
        sess.run(tf.assign_add(v, 5))
        assert [first, sess.run(nxt)] == [10, 16]


def test_an_uninitialized_variable():
    ref = tf.Variable(10, dtype=tf.int64, use_resource=False)
    res = tf.Variable(10, dtype=tf.int64, use_resource=True)
    it_ref = tf.data.make_initializable_iterator(D.range(3).map(lambda x: x + ref))
    it_res = tf.data.make_initializable_iterator(D.range(3).map(lambda x: x + res))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value Variable"):
            sess.run(it_ref.initializer)
        sess.run(it_res.initializer)   # the handle is captured, not the value
        with pytest.raises(tf.errors.FailedPreconditionError, match="Could not find variable"):
            sess.run(it_res.get_next())


def _elements(dataset, n):
    it = tf.data.make_initializable_iterator(dataset)
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer)
        return [sess.run(nxt).tolist() for _ in range(n)]


def test_variables_read_by_other_functions():
    v = tf.Variable(1, dtype=tf.int64)
    w = tf.Variable(7, dtype=tf.int64)
    assert _elements(D.range(4).filter(lambda x: x > v), 2) == [2, 3]
    assert _elements(D.range(2).flat_map(lambda x: D.from_tensors(x + w)), 2) == [7, 8]
    assert _elements(D.range(2).interleave(
        lambda x: D.range(w).map(lambda y: y + x * 10), cycle_length=2), 4) == [0, 10, 1, 11]
    u = tf.Variable(10, dtype=tf.int64)
    assert _elements(D.range(2).flat_map(lambda x: D.range(2).map(lambda y: y + u + x)),
                     4) == [10, 11, 11, 12]


def test_resource_updates_run_in_program_order():
    v = tf.Variable(0, dtype=tf.int64, use_resource=True)

    def add_then_read(x):
        v.assign_add(x)
        return v.read_value()
    assert _elements(D.range(4).map(add_then_read), 4) == [0, 1, 3, 6]
    w = tf.Variable(0, dtype=tf.int64, use_resource=True)

    def read_then_assign(x):
        before = w.read_value()
        w.assign(x * 10)
        return before
    assert _elements(D.range(4).map(read_then_assign), 4) == [0, 0, 10, 20]
    u = tf.Variable(0, dtype=tf.int64, use_resource=True)
    assert _elements(D.range(3).map(lambda x: x + u.assign_add(1)), 3) == [1, 3, 5]


def test_the_static_shape_of_a_variable_read():
    v = tf.Variable([1, 2], dtype=tf.int64, use_resource=True)
    w = tf.Variable([1, 2, 3], dtype=tf.int64, use_resource=False)
    shapes = tf.data.get_output_shapes(D.range(3).map(lambda x: (x + v, x + w)))
    assert [s.as_list() for s in shapes] == [[2], [3]]


@pytest.mark.parametrize("make", [
    lambda: tf.Variable(1, dtype=tf.int64, use_resource=False),
    lambda: tf.Variable(1, dtype=tf.int64, use_resource=True),
    lambda: tf.get_variable("w", [], tf.int64, initializer=tf.zeros_initializer()),
])
def test_creating_a_variable_in_a_function_is_refused(make):
    with pytest.raises(ValueError, match="tf.function only supports singleton tf.Variables"):
        D.range(3).map(lambda x: x + make())


STATEFUL = "Cannot capture a stateful node (name:{}, type:{}) by value.: A likely cause"


def _one_shot_variable(resource):
    v = tf.Variable(10, dtype=tf.int64, use_resource=resource)
    return D.range(3).map(lambda x: x + v)


def _one_shot_outer(make):
    def build():
        y = make()
        return D.range(3).map(lambda x: x + y)
    return build


# name: (the dataset, TensorFlow's ValueError message start, or None: an Iterator)
ONE_SHOT_CASES = {
    "ref_variable": (lambda: _one_shot_variable(False), STATEFUL.format("Variable",
                                                                       "VariableV2")),
    "resource_variable": (lambda: _one_shot_variable(True), STATEFUL.format("Variable",
                                                                            "VarHandleOp")),
    "outer_tensor_of_variable": (_one_shot_outer(
        lambda: tf.Variable(5, dtype=tf.int64) * 2), STATEFUL.format("Variable", "VariableV2")),
    "range_of_variable": (lambda: D.range(tf.Variable(5, dtype=tf.int64)),
                          STATEFUL.format("Variable", "VariableV2")),
    "outer_random_op": (lambda: D.from_tensor_slices(tf.random_uniform([3])),
                        STATEFUL.format("random_uniform/RandomUniform", "RandomUniform")),
    "random_op_inside_map": (lambda: D.range(3).map(lambda x: tf.random_uniform([])), None),
    "variable_then_placeholder": (_one_shot_outer(
        lambda: tf.Variable(10, dtype=tf.int64) + tf.placeholder(tf.int64, [])),
        STATEFUL.format("Variable", "VariableV2")),
    "placeholder_then_random": (_one_shot_outer(
        lambda: tf.placeholder(tf.int64, []) + tf.random_uniform([], maxval=3,
                                                                 dtype=tf.int64)),
        "Cannot capture a placeholder (name:Placeholder, type:Placeholder) by value."),
    "placeholder_with_default": (_one_shot_outer(
        lambda: tf.placeholder_with_default(tf.constant(3, tf.int64), [])), None),
    "control_dependency_on_initializer": (_one_shot_outer(lambda: _after_initializer()),
                                          None),
}


def _after_initializer():
    v = tf.Variable(10, dtype=tf.int64)
    with tf.control_dependencies([v.initializer]):
        return tf.constant(1, tf.int64)


@pytest.mark.parametrize("name", sorted(ONE_SHOT_CASES))
def test_one_shot_iterator_captures_by_value(name):
    build, message = ONE_SHOT_CASES[name]
    dataset = build()
    if message is None:
        assert isinstance(tf.data.make_one_shot_iterator(dataset), tf.data.Iterator)
        return
    with pytest.raises(ValueError) as raised:
        tf.data.make_one_shot_iterator(dataset)
    assert str(raised.value).startswith(message)
