"""tf.TensorArray: pipelines against NumPy (OpCase rows, forward, shapes, numerical gradients),
TF1 op names and attrs, TensorFlow's runtime errors and messages, per-step state, gradients
accumulating over repeated reads, and the TensorArray checks of p05 that need no while_loop."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

TA = tf.TensorArray
FLOATS = (tf.float32, tf.float64)


def _rows(*shape):
    return lambda rng, dt: rng.uniform(-2, 2, shape).astype(dt)


def _unstack_stack(x):
    return TA(x.dtype, size=0, dynamic_size=True).unstack(x).stack()


def _write_read(x):
    """Rows written in reverse order with a scale each, read back and stacked."""
    ta = TA(x.dtype, size=3)
    for i in range(3):
        ta = ta.write(2 - i, x[i] * float(i + 1))
    return [ta.read(0), ta.read(1), ta.read(2)]


def _scatter_gather(x):
    return TA(x.dtype, size=4).scatter([3, 0, 2, 1], x).gather([1, 0, 3])


def _split_concat(x):
    ta = TA(x.dtype, size=2, infer_shape=False).split(x, [1, 3])
    return [ta.concat(), ta.size()]


def _split_read(x):
    ta = TA(x.dtype, size=3, infer_shape=False).split(x, tf.constant([2, 0, 2]))
    return [ta.read(0), ta.read(1), ta.read(2)]


def _reverse_rows(x):
    return x[[2, 1, 0]] * np.array([3, 2, 1], x.dtype).reshape((3,) + (1,) * (x.ndim - 1))


CASES = [
    OpCase("tensor_array_unstack_stack", _unstack_stack, lambda x: x, [_rows(4, 3)], FLOATS),
    OpCase("tensor_array_unstack_stack_int", _unstack_stack, lambda x: x,
           [lambda rng, dt: rng.randint(-5, 5, (3, 2)).astype(dt)], (tf.int32,), grad=False),
    OpCase("tensor_array_write_read", _write_read, lambda x: list(_reverse_rows(x)),
           [_rows(3, 2)], FLOATS),
    OpCase("tensor_array_scatter_gather", _scatter_gather, lambda x: x[[3, 1, 0]],
           [_rows(4, 2, 2)], FLOATS),
    OpCase("tensor_array_split_concat", _split_concat,
           lambda x: [x, np.int32(2)], [_rows(4, 3)], FLOATS),
    OpCase("tensor_array_split_read_empty_piece", _split_read,
           lambda x: [x[:2], x[2:2], x[2:]], [_rows(4)], FLOATS),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _op_summary(g):
    return [(op.name, op.type) for op in g.get_operations() if op.type.startswith("TensorArr")]


def test_op_names_types_attrs_and_static_shapes_match_tf():
    with tf.Graph().as_default() as g:
        ta = TA(tf.float32, size=3)
        assert ta.handle.name == "TensorArray:0" and ta.handle.dtype == tf.resource
        assert ta.handle.shape.as_list() == [2] and ta.flow.dtype == tf.float32
        w = ta.write(0, [1.0, 2.0])
        r = w.read(0)
        s = w.stack()
        c = w.concat()
        gr = w.grad("gradients")
        u = TA(tf.float32, size=4, element_shape=[3]).unstack(tf.zeros([4, 3]))
        sp = TA(tf.float32, size=2).split(tf.zeros([5]), [2, 3])
        d = TA(tf.float32, size=0, dynamic_size=True)
        closed = d.close()
        assert r.shape.as_list() == [2] and s.shape.as_list() == [3, 2]
        assert c.shape.as_list() == [6] and w.element_shape.as_list() == [2]
        assert gr.flow.name == "TensorArrayGrad/gradient_flow:0"
        assert u.flow.name == "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3:0"
        assert sp.flow.name == "TensorArraySplit/TensorArraySplitV3:0"
        assert sp.flow.op.inputs[2].dtype == tf.int64
        assert d.size().op.type == "TensorArraySizeV3" and ta.size().op.type == "Const"
        assert closed.type == "TensorArrayCloseV3"
        assert _op_summary(g)[:6] == [
            ("TensorArray", "TensorArrayV3"),
            ("TensorArrayWrite/TensorArrayWriteV3", "TensorArrayWriteV3"),
            ("TensorArrayReadV3", "TensorArrayReadV3"),
            ("TensorArrayStack/TensorArrayGatherV3", "TensorArrayGatherV3"),
            ("TensorArrayConcatV3", "TensorArrayConcatV3"),
            ("TensorArrayGrad/TensorArrayGradV3", "TensorArrayGradV3")]
        node = ta.handle.op
        assert node.get_attr("identical_element_shapes") is True
        assert node.get_attr("clear_after_read") is True
        assert node.get_attr("dynamic_size") is False
        assert node.get_attr("element_shape").ndims is None
        assert gr.handle.op.get_attr("source") == b"gradients"
        assert c.op.get_attr("element_shape_except0").as_list() == []
        empty = TA(tf.float32, size=0, dynamic_size=True, element_shape=[2]).stack()
        assert empty.shape.as_list() == [None, 2]
        partial = TA(tf.float32, size=2, element_shape=[None, 3]).concat()
        assert partial.shape.as_list() == [None, 3]


def test_static_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Size must be provided"):
            TA(tf.float32)
        ta = TA(tf.float32, size=2)
        with pytest.raises(ValueError, match="Cannot provide both a handle and size"):
            TA(tf.float32, size=2, handle=ta.handle, flow=ta.flow)
        with pytest.raises(ValueError, match="flow must not be None"):
            TA(tf.float32, handle=ta.handle)
        w = ta.write(0, [1.0, 2.0])
        with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected"):
            w.write(1, [1.0, 2.0, 3.0])
        with pytest.raises(errors.InvalidArgumentError, match="TensorArray dtype is float32 but "
                           "Op is trying to write dtype int32"):
            ta.write(0, tf.constant(1))


def _run(fetch_fn):
    with tf.Graph().as_default():
        fetch = fetch_fn()
        with tf.Session() as sess:
            return sess.run(fetch)


def _twice(ta):
    return [ta.read(0), ta.read(0)]


ERRORS = [
    ("write_twice", lambda: TA(tf.float32, size=2).write(0, 1.0).write(0, 2.0).stack(),
     errors.InvalidArgumentError, r"TensorArray TensorArray_\d+: Could not write to "
     "TensorArray index 0 because it has already been written to."),
    ("read_twice", lambda: _twice(TA(tf.float32, size=1).write(0, 1.0)),
     errors.InvalidArgumentError, r"Could not read index 0 twice because it was cleared after a"
     r" previous read \(perhaps try setting clear_after_read = false\?\)"),
    ("read_out_of_range", lambda: TA(tf.float32, size=1).write(0, 1.0).read(3),
     errors.InvalidArgumentError, "Tried to read from index 3 but array size is: 1"),
    ("write_out_of_range", lambda: TA(tf.float32, size=1).write(3, 1.0).flow,
     errors.InvalidArgumentError, "Tried to write to index 3 but array is not resizeable and "
     "size is: 1"),
    ("write_negative", lambda: TA(tf.float32, size=1, dynamic_size=True).write(-1, 1.0).flow,
     errors.InvalidArgumentError, "Tried to write to index -1"),
    ("read_unwritten_unknown_shape",
     lambda: TA(tf.float32, size=2, infer_shape=False).write(0, 1.0).read(1),
     errors.InvalidArgumentError, "Could not read from TensorArray index 1.  Furthermore, the "
     "element shape is not fully defined: <unknown>."),
    ("inconsistent_stack", lambda: TA(tf.float32, size=2, infer_shape=False)
     .write(0, [1.0]).write(1, [1.0, 2.0]).stack(), errors.InvalidArgumentError,
     r"TensorArray has inconsistent shapes.  Index 0 has shape: \[1\] but index 1 has shape: "
     r"\[2\]"),
    ("incompatible_with_element_shape", lambda: TA(tf.float32, size=2, element_shape=[3])
     .write(0, tf.placeholder_with_default([1.0, 2.0], [None])).flow,
     errors.InvalidArgumentError, r"because the value shape is \[2\] which is incompatible with"
     r" the TensorArray's inferred element shape: \[3\] \(consider setting infer_shape=False\)"),
    ("runtime_inferred_shape", lambda: TA(tf.float32, size=2)
     .write(0, tf.placeholder_with_default([1.0], [None]))
     .write(1, tf.placeholder_with_default([1.0, 2.0], [None])).flow,
     errors.InvalidArgumentError, r"value shape is \[2\] which is incompatible with the "
     r"TensorArray's inferred element shape: \[1\]"),
    ("empty_stack_unknown_shape", lambda: TA(tf.float32, size=0, element_shape=[None, 3])
     .stack(), errors.UnimplementedError, r"TensorArray has size zero, but element shape "
     r"\[\?,3\] is not fully defined."),
    ("empty_concat_unknown_shape", lambda: TA(tf.float32, size=0).concat(),
     errors.UnimplementedError, "but element_shape_except0 <unknown> is not fully defined"),
    ("concat_scalars", lambda: TA(tf.float32, size=1, infer_shape=False).write(0, 1.0)
     .concat(), errors.InvalidArgumentError, "Concat saw a scalar shape at index 0"),
    ("split_bad_lengths", lambda: TA(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 1]).flow,
     errors.InvalidArgumentError, r"Expected sum of lengths to be equal to values.shape\[0\], but "
     r"sum of lengths is 2 and value's shape is: \[3\]"),
    ("split_wrong_count", lambda: TA(tf.float32, size=2).split([1.0, 2.0, 3.0], [3]).flow,
     errors.InvalidArgumentError, r"TensorArray's size is not equal to the size of lengths "
     r"\(2 vs. 1\), and the TensorArray is not marked as dynamically resizeable"),
    ("scatter_out_of_range", lambda: TA(tf.float32, size=2).scatter([0, 5], [1.0, 2.0]).flow,
     errors.InvalidArgumentError, r"Max scatter index must be < array size \(5 vs. 2\)"),
    ("unstack_too_many", lambda: TA(tf.float32, size=2).unstack([1.0, 2.0, 3.0]).flow,
     errors.InvalidArgumentError, r"Max scatter index must be < array size \(2 vs. 2\)"),
    ("gather_twice", lambda: TA(tf.float32, size=2).unstack([1.0, 2.0]).gather([0, 0]),
     errors.InvalidArgumentError, "Could not read index 0 twice"),
]


@pytest.mark.parametrize("build,error,message", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_runtime_errors_match_tf(build, error, message):
    with pytest.raises(error, match=message):
        _run(build)


def test_closed_array_cannot_be_used():
    def build():
        ta = TA(tf.float32, size=1).write(0, 1.0)
        with tf.control_dependencies([ta.close()]):
            return ta.read(0)
    with pytest.raises(errors.InvalidArgumentError, match="has already been closed"):
        _run(build)


def test_semantics_match_tf():
    def build():
        return {
            "zeros_known_shape": TA(tf.float32, size=2, element_shape=[2]).read(1),
            "zeros_inferred_shape": TA(tf.float32, size=2).write(0, [1.0, 2.0]).read(1),
            "stack_partial": TA(tf.float32, size=3).write(1, [1.0, 2.0]).stack(),
            "empty_stack": TA(tf.float32, size=0, element_shape=[2, 3]).stack(),
            "empty_concat": TA(tf.float32, size=0, element_shape=[None, 3]).concat(),
            "grown": (lambda t: [t.size(), t.read(3)])(
                TA(tf.float32, size=1, dynamic_size=True).write(3, 1.0)),
            "concat": (lambda c: [c, c.op.outputs[1]])(
                TA(tf.float32, size=2, infer_shape=False).write(0, [[1.0, 2.0]])
                .write(1, [[3.0, 4.0], [5.0, 6.0]]).concat()),
            "identity": TA(tf.float32, size=1).write(0, 3.0).identity().read(0),
        }
    got = _run(build)
    np.testing.assert_array_equal(got["zeros_known_shape"], [0.0, 0.0])
    np.testing.assert_array_equal(got["zeros_inferred_shape"], [0.0, 0.0])
    np.testing.assert_array_equal(got["stack_partial"], [[0, 0], [1, 2], [0, 0]])
    assert got["empty_stack"].shape == (0, 2, 3) and got["empty_stack"].dtype == np.float32
    assert got["empty_concat"].shape == (0, 3)
    assert got["grown"][0] == 4 and got["grown"][1] == 1.0
    np.testing.assert_array_equal(got["concat"][0], [[1, 2], [3, 4], [5, 6]])
    assert got["concat"][1].tolist() == [1, 2] and got["concat"][1].dtype == np.int64
    assert got["identity"] == 3.0


def test_state_is_per_step():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        out = TA(tf.float32, size=1).write(0, x).read(0)
        with tf.Session() as sess:
            assert [sess.run(out, {x: v}) for v in (1.0, 2.0, 3.0)] == [1.0, 2.0, 3.0]


def test_p05_checks_without_while_loop():
    mat = np.arange(12, dtype=np.float32).reshape(4, 3)
    with tf.Graph().as_default():
        rows = TA(tf.float32, size=4).unstack(tf.constant(mat))
        row2, picked, joined = rows.read(2), rows.gather([3, 0]), rows.concat()
        keep = TA(tf.float32, size=1, clear_after_read=False).write(0, 4.0)
        reread_ok = [keep.read(0), keep.read(0)]
        grow = TA(tf.int32, size=0, dynamic_size=True)
        for i in range(3):
            grow = grow.write(i, [i, -i])
        x = tf.placeholder(tf.float32, [4])
        xs = TA(tf.float32, size=4).unstack(x)
        ys = TA(tf.float32, size=4)
        for i in range(4):
            ys = ys.write(i, xs.read(i) * float(i))
        (d_ta,) = tf.gradients(tf.reduce_sum(ys.stack()), [x])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(row2), mat[2])
            np.testing.assert_array_equal(sess.run(picked), mat[[3, 0]])
            np.testing.assert_array_equal(sess.run(joined), mat.reshape(-1))
            assert sess.run(reread_ok) == [4.0, 4.0]
            values, size = sess.run([grow.stack(), grow.size()])
            assert size == 3 and values.tolist() == [[0, 0], [1, -1], [2, -2]]
            xv = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
            np.testing.assert_array_equal(sess.run(d_ta, {x: xv}), [0.0, 1.0, 2.0, 3.0])


def test_gradients_of_repeated_reads_add_up():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        ta = TA(tf.float32, size=3, clear_after_read=False).unstack(x)
        y = ta.read(0) * 2.0 + ta.read(0) * 3.0 + ta.read(2)
        (dx,) = tf.gradients(y, x)
        (dx_again,) = tf.gradients(y * 2.0, x)  # another source: another gradient array
        grad_ops = {op.get_attr("source") for op in x.graph.get_operations()
                    if op.type == "TensorArrayGradV3"}
        assert grad_ops == {b"gradients", b"gradients_1"}
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(dx), [[5, 5], [0, 0], [1, 1]])
            np.testing.assert_array_equal(sess.run(dx_again), [[10, 10], [0, 0], [2, 2]])


@pytest.mark.parametrize("pipeline", [
    lambda x: TA(tf.float64, size=3).unstack(x).stack() ** 2,
    lambda x: TA(tf.float64, size=0, dynamic_size=True, infer_shape=False)
    .split(x, [1, 2]).concat() * x,
    lambda x: tf.stack([TA(tf.float64, size=3, clear_after_read=False).unstack(x).read(i) *
                        float(i + 1) for i in (0, 2, 0)]),
    lambda x: (lambda ta: ta.write(0, ta.read(1) * 3.0).stack())(
        TA(tf.float64, size=3, clear_after_read=False).scatter([1, 2], x[1:])),
], ids=["unstack_stack", "split_concat", "repeated_reads", "read_then_write"])
def test_numerical_gradients_through_pipelines(pipeline):
    value = np.random.RandomState(0).uniform(-1, 1, (3, 2))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 2])
        y = pipeline(x)
        with tf.Session() as sess:
            shape = sess.run(y, {x: value}).shape
        with tf.Session():
            err = tf.test.compute_gradient_error(x, [3, 2], y, list(shape), x_init_value=value)
    assert err < 1e-6
