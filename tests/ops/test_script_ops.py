"""tf.py_func / tf.numpy_function (PyFunc, PyFuncStateless): results, conversions, errors as
TensorFlow 2.21 maps them, gradients, tf.data, threads and GraphDef round trips."""
import gc
import re
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

CASES = [
    OpCase("py_func_sin", lambda x: tf.py_func(np.sin, [x], tf.float32), np.sin,
           [lambda rng, dt: rng.randn(2, 3).astype(dt)], grad=False),
    OpCase("numpy_function_two_outputs_stateless",
           lambda x, y: tf.numpy_function(lambda a, b: (a + b, a * b), [x, y],
                                          [tf.float64, tf.float64], stateful=False),
           lambda x, y: [x + y, x * y],
           [lambda rng, dt: rng.randn(3).astype(dt), lambda rng, dt: rng.randn(3).astype(dt)],
           dtypes=(tf.float64,), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_graph_structure_matches_tensorflow():
    with tf.Graph().as_default():
        y = tf.py_func(lambda a: a * 2, [tf.constant([1.0, 2.0])], tf.float32)
        assert y.op.type == "PyFunc" and y.name == "PyFunc:0" and y.shape.ndims is None
        assert re.fullmatch(rb"pyfunc_\d+", y.op.get_attr("token"))
        assert y.op.get_attr("Tin") == [tf.float32] and y.op.get_attr("Tout") == [tf.float32]
        two = tf.py_func(lambda a: [a, a], [y], [tf.float32, tf.float32], stateful=False,
                         name="two")
        assert [t.name for t in two] == ["two:0", "two:1"]
        assert two[0].op.type == "PyFuncStateless"
        op = tf.py_func(lambda: None, [], [])
        assert isinstance(op, tf.Operation) and op.name == "PyFunc_1"
        assert tf.numpy_function(np.abs, [y], tf.float32).op.type == "PyFunc"
        assert op.get_attr("token") != y.op.get_attr("token")
        np.testing.assert_array_equal(_run(two), [[2.0, 4.0], [2.0, 4.0]])
        assert _run(op) is None


def test_arguments_and_result_conversions():
    seen = []

    def record(*args):
        seen.extend(args)
        return np.float32(0)
    with tf.Graph().as_default():
        run = tf.py_func(record, [tf.constant(1.5), tf.constant(["a", "bé"]), tf.constant("s"),
                                  tf.constant([[1, 2]], tf.int64), tf.constant(True)],
                         tf.float32)
        results = [tf.py_func(lambda: 3, [], tf.int64), tf.py_func(lambda: b"hi", [], tf.string),
                   tf.py_func(lambda: "héllo", [], tf.string),
                   tf.py_func(lambda: 2.5, [], tf.float64), tf.py_func(lambda: True, [], tf.bool),
                   tf.py_func(lambda: np.array([b"a", b"b"]), [], tf.string),
                   tf.py_func(lambda: [b"x", "é"], [], [tf.string, tf.string])]
        _run(run)
        got = _run(results)
    assert isinstance(seen[0], np.float32) and seen[0] == 1.5
    assert seen[1].dtype == object and seen[1].tolist() == [b"a", "bé".encode()]
    assert seen[2] == b"s" and seen[3].dtype == np.int64 and seen[3].shape == (1, 2)
    assert isinstance(seen[4], np.bool_)
    assert got[:5] == [3, b"hi", "héllo".encode(), 2.5, True]
    assert got[5].tolist() == [b"a", b"b"] and got[6] == [b"x", "é".encode()]


# Messages and error classes printed by TensorFlow 2.21 for the same functions.
@pytest.mark.parametrize("tout,fn,error,message", [
    (tf.float32, lambda: np.array([1, 2], np.float64), tf.errors.InvalidArgumentError,
     "0-th value returned by {token} is double, but expects float"),
    (tf.float32, lambda: 1, tf.errors.InvalidArgumentError,
     "0-th value returned by {token} is int64, but expects float"),
    (tf.int32, lambda: "a", tf.errors.InvalidArgumentError,
     "0-th value returned by {token} is string, but expects int32"),
    (tf.float32, lambda: None, tf.errors.InvalidArgumentError,
     "{token} returns 0 values, but expects to see 1 values."),
    (tf.int32, lambda: [1, 2, 3], tf.errors.InvalidArgumentError,
     "{token} returns 3 values, but expects to see 1 values."),
    ([], lambda: 5, tf.errors.InvalidArgumentError,
     "{token} returns 1 values, but expects to see 0 values."),
    (tf.float32, lambda: 1 / 0, tf.errors.UnknownError, "ZeroDivisionError: division by zero"),
    (tf.float32, lambda: int("x"), tf.errors.InvalidArgumentError, "ValueError: invalid"),
    (tf.float32, lambda: len(3), tf.errors.InvalidArgumentError, "TypeError: "),
    (tf.float32, lambda: [][1], tf.errors.UnknownError, "IndexError: "),
    (tf.float32, lambda: {}["k"], tf.errors.UnknownError, "KeyError: 'k'"),
    (tf.float32, lambda: next(iter([])), tf.errors.OutOfRangeError, "StopIteration"),
    (tf.string, lambda: np.array(["é"]), tf.errors.InvalidArgumentError,
     "UnicodeEncodeError: 'ascii' codec"),
])
def test_errors_match_tensorflow(tout, fn, error, message):
    with tf.Graph().as_default():
        t = tf.py_func(fn, [], tout, name="err")
        token = (t if isinstance(t, tf.Operation) else t.op).get_attr("token").decode()
        with pytest.raises(error) as info:
            _run(t)
    assert message.format(token=token) in info.value.message
    assert "err" in info.value.message   # the op is named


def test_no_gradient_through_py_func():
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        y = tf.py_func(lambda a: a * a, [x], tf.float32)
        assert tf.gradients(y, x) == [None]
        assert _run(tf.gradients(y + x, x)) == [1.0]


def test_inside_dataset_map():
    calls = []

    def times_ten(x):
        calls.append(int(x))
        return np.int64(x * 10)
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(5).map(lambda x: tf.py_func(times_ten, [x], tf.int64))
        pairs = tf.data.Dataset.range(4).map(
            lambda x: tf.numpy_function(lambda v: (v + 1, str(v).encode()), [x],
                                        [tf.int64, tf.string]), num_parallel_calls=2)
        first = tf.data.make_one_shot_iterator(ds).get_next()
        second = tf.data.make_one_shot_iterator(pairs).get_next()
        assert first.shape.ndims is None
        with tf.Session() as sess:
            assert [sess.run(first) for _ in range(5)] == [0, 10, 20, 30, 40]
            assert [tuple(sess.run(second)) for _ in range(4)] == [
                (1, b"0"), (2, b"1"), (3, b"2"), (4, b"3")]
    assert sorted(calls) == [0, 1, 2, 3, 4]


def test_concurrent_runs_from_threads():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.py_func(lambda a: a * a, [x], tf.float32)
        results, errors = {}, []
        with tf.Session() as sess:
            def work(i):
                try:
                    results[i] = [float(sess.run(y, {x: float(i)})) for _ in range(30)]
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)
            threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
    assert not errors and not any(t.is_alive() for t in threads)
    assert results == {i: [float(i * i)] * 30 for i in range(8)}


def test_graph_def_round_trip_and_lifetime():
    graph = tf.Graph()
    with graph.as_default():
        tf.py_func(lambda a: a * a, [tf.constant(3.0)], tf.float32, name="square")
    graph_def = graph.as_graph_def()
    node = next(n for n in graph_def.node if n.name == "square")
    token = node.attr["token"].s.decode()
    assert node.op == "PyFunc" and token.startswith("pyfunc_")
    with tf.Graph().as_default() as fresh:   # the registering graph is alive: it runs
        tf.import_graph_def(graph_def, name="")
        assert _run(fresh.get_tensor_by_name("square:0")) == 9.0
    del graph
    gc.collect()
    with tf.Graph().as_default() as fresh:
        tf.import_graph_def(graph_def, name="")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"ValueError: Could not find callback with key={token} in "
                                 "the registry."):
            _run(fresh.get_tensor_by_name("square:0"))


def test_the_function_may_write_into_its_arguments_without_changing_the_graphs_values():
    """TF 2.21: a constant and a fed array are unchanged by an in-place write in the function
    (TF 1.x would change a ref variable through it; here the variable never changes)."""
    def add_one(x):
        x += 1
        return x
    with tf.Graph().as_default():
        const = tf.constant(np.arange(4, dtype=np.float32))
        fed = tf.placeholder(tf.float32, [4])
        var = tf.Variable(np.zeros(4, np.float32))
        outs = [tf.py_func(add_one, [t], tf.float32) for t in (const, fed, var)]
        user = np.zeros(4, np.float32)
        with tf.Session() as sess:
            sess.run(var.initializer)
            got = sess.run(outs, {fed: user})
            assert [g.tolist() for g in got] == [[1, 2, 3, 4], [1, 1, 1, 1], [1, 1, 1, 1]]
            assert sess.run(const).tolist() == [0, 1, 2, 3] and user.tolist() == [0] * 4
            assert sess.run(var).tolist() == [0] * 4
