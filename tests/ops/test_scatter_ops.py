"""Scatter updates of variables: every op against NumPy (OpCase rows through a fresh variable,
and through a resource variable for the ResourceScatter* twins), repeated indices, scalar
updates, TF1 names and the errors TensorFlow raises."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests
from tensorweave.testing.variable_builders import on_resource_variable, ref_updated, run_update

NUMERIC = (tf.float32, tf.float64, tf.int32, tf.int64)
I32 = tf.int32


def _ref(ufunc):
    def ref(params, indices, updates):
        out = params.copy()
        rows = np.broadcast_to(updates, indices.shape + params.shape[1:])
        for i, row in zip(indices.reshape(-1), rows.reshape((-1,) + params.shape[1:])):
            out[i] = row if ufunc is None else ufunc(out[i], row)
        return out
    return ref


def _int_div(x, y):
    return (np.abs(x) // np.abs(y)) * np.sign(x) * np.sign(y)


def _div(x, y):
    return _int_div(x, y) if x.dtype.kind in "iu" else x / y


def _params(*shape):
    return lambda rng, dt: (rng.randint(1, 9, shape) * rng.choice([-1, 1], shape)).astype(dt)


def _idx(*values):
    return lambda rng, dt: np.array(values, np.int32)


REPEATED = _idx(3, 0, 3)
OPS = [("update", tf.scatter_update, None), ("add", tf.scatter_add, np.add),
       ("sub", tf.scatter_sub, np.subtract), ("mul", tf.scatter_mul, np.multiply),
       ("div", tf.scatter_div, _div), ("min", tf.scatter_min, np.minimum),
       ("max", tf.scatter_max, np.maximum)]

CASES = []
for _name, _fn, _ufunc in OPS:
    CASES += [
        OpCase(f"scatter_{_name}", ref_updated(_fn), _ref(_ufunc),
               [_params(5, 3), REPEATED, _params(3, 3)], NUMERIC, grad=False,
               fixed_dtypes=[None, I32, None]),
        OpCase(f"scatter_{_name}_1d", ref_updated(_fn), _ref(_ufunc),
               [_params(6), _idx(5, 1), _params(2)], (tf.float32, tf.int32), grad=False,
               fixed_dtypes=[None, I32, None]),
        OpCase(f"scatter_{_name}_2d_indices", ref_updated(_fn), _ref(_ufunc),
               [_params(4, 2), lambda rng, dt: np.array([[1, 2], [0, 1]], np.int32),
                _params(2, 2, 2)], (tf.float64,), grad=False, fixed_dtypes=[None, I32, None]),
        OpCase(f"scatter_{_name}_scalar_update", ref_updated(_fn), _ref(_ufunc),
               [_params(4, 2), _idx(2, 0), lambda rng, dt: np.array(3, dt)], (tf.float32,),
               grad=False, fixed_dtypes=[None, I32, None]),
        OpCase(f"resource_scatter_{_name}", on_resource_variable(_fn), _ref(_ufunc),
               [_params(5, 3), REPEATED, _params(3, 3)], NUMERIC, grad=False,
               fixed_dtypes=[None, I32, None]),
        OpCase(f"resource_scatter_{_name}_scalar_update", on_resource_variable(_fn),
               _ref(_ufunc), [_params(4, 2), _idx(2, 0), lambda rng, dt: np.array(3, dt)],
               (tf.float32,), grad=False, fixed_dtypes=[None, I32, None]),
    ]


test_forward, test_shapes = case_tests(CASES)


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("update", [
    tf.scatter_update, tf.compat.v1.scatter_update,
    lambda v, indices, updates: v.scatter_update(
        tf.IndexedSlices(tf.constant(updates), tf.constant(indices))),
], ids=["tf", "compat_v1", "method"])
@pytest.mark.parametrize("init,indices,updates,expected", [
    ([0] * 4, [1, 1, 1], [1, 2, 3], [0, 3, 0, 0]),
    (np.zeros([3, 2]), [1, 0, 1], [[1, 2], [3, 4], [5, 6]], [[3, 4], [5, 6], [0, 0]]),
    ([0] * 4, [[2, 2], [2, 1]], [[1, 2], [3, 4]], [0, 4, 3, 0]),
    ([0] * 5, [i % 3 for i in range(40)], list(range(40)), [39, 37, 38, 0, 0]),
    (np.zeros([3, 4]), [i % 3 for i in range(40)], np.arange(160).reshape(40, 4),
     [[156, 157, 158, 159], [148, 149, 150, 151], [152, 153, 154, 155]]),
], ids=["thrice", "rows", "2d_indices", "many", "many_rows"])
def test_scatter_update_applies_repeated_indices_in_order(update, use_resource, init, indices,
                                                          updates, expected):
    """As TensorFlow's CPU kernel: the last of repeated indices wins (values from TF 2.21),
    through tf.scatter_update and Variable.scatter_update, on both kinds of variable."""
    assert run_update(update, np.asarray(init, np.float32), indices,
                      np.asarray(updates, np.float32), use_resource=use_resource) == \
        (expected, expected)


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_variable_scatter_methods(use_resource):
    """Variable.scatter_* take an IndexedSlices, scatter_nd_* indices and updates (holding the
    lock); values and messages from TF 2.21."""
    rows = [("scatter_update", [20, 2, 3, 0.5]), ("scatter_add", [31, 2, 3, 4.5]),
            ("scatter_sub", [-29, 2, 3, 3.5]), ("scatter_mul", [200, 2, 3, 2]),
            ("scatter_div", [0.005, 2, 3, 8]), ("scatter_min", [1, 2, 3, 0.5]),
            ("scatter_max", [20, 2, 3, 4])]
    slices = [("scatter_nd_update", [[1, 0.5], [20, 4]]), ("scatter_nd_add", [[1, 2.5], [33, 4]]),
              ("scatter_nd_sub", [[1, 1.5], [-27, 4]])]
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0, 4.0], use_resource=use_resource)
        m = tf.Variable([[1.0, 2.0], [3.0, 4.0]], use_resource=use_resource)
        delta = tf.IndexedSlices(tf.constant([10.0, 20.0, 0.5]), tf.constant([0, 0, 3]))
        nd = ([[1, 0], [1, 0], [0, 1]], [10.0, 20.0, 0.5])
        batch = tf.IndexedSlices(tf.constant([[10.0], [20.0]]), tf.constant([[1], [0]]))
        with tf.Session() as sess:
            for method, expected in rows:
                sess.run(v.initializer)
                got = sess.run(getattr(v, method)(delta))
                np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=method)
            for method, expected in slices:
                sess.run(m.initializer)
                result = getattr(m, method)(*nd)
                update = result.op.control_inputs[0] if use_resource else result.op
                assert update.get_attr("use_locking") is True
                assert sess.run(result).tolist() == expected
            sess.run(m.initializer)
            assert sess.run(m.batch_scatter_update(batch)).tolist() == [[1, 10], [20, 4]]
        message = "Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: [1.0]" \
            if use_resource else "sparse_delta is not IndexedSlices: [1.0]"
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            v.scatter_add([1.0])


def test_names_attrs_and_result():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((3, 2), np.float32), name="v")
        up = tf.scatter_update(v, [0], [[1.0, 2.0]])
        add = tf.scatter_add(v, [2, 2], [[1.0, 1.0], [1.0, 1.0]])
        assert up.op.name == "ScatterUpdate" and up.dtype == tf.float32_ref
        assert up.op.get_attr("use_locking") is True
        assert add.op.name == "ScatterAdd" and add.op.get_attr("use_locking") is False
        assert tf.scatter_sub(v, [1], [[1.0, 1.0]], name="s").op.name == "s"
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(up), [[1, 2], [0, 0], [0, 0]])
            np.testing.assert_array_equal(sess.run(add), [[1, 2], [0, 0], [2, 2]])
            np.testing.assert_array_equal(sess.run(v), [[1, 2], [0, 0], [2, 2]])


def test_repeated_indices_accumulate_and_the_last_update_wins():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32))
        add = tf.scatter_add(v, [1, 1, 1], [1.0, 2.0, 3.0])
        up = tf.scatter_update(v, [0, 0], [5.0, 7.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(add), [1, 7, 1])
            np.testing.assert_array_equal(sess.run(up), [7, 7, 1])


@pytest.mark.parametrize("build,message", [
    (lambda v: tf.scatter_update(v, [0, 1], tf.ones([3, 3])),
     "Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are [3,3] and [2,3]."),
    (lambda v: tf.scatter_update(v, [0, 1], tf.ones([2, 4])),
     "Dimension 1 in both shapes must be equal, but are 4 and 3"),
])
def test_static_shape_errors(build, message):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError) as info:
            build(v)
        assert message in str(info.value)


@pytest.mark.parametrize("build,indices,updates,message", [
    (tf.scatter_update, [0, 7], np.ones((2, 3)), "indices[1] = 7 is not in [0, 2)"),
    (tf.scatter_add, [0, -1], np.ones((2, 3)), "indices[1] = -1 is not in [0, 2)"),
    (tf.scatter_update, [0, 1], np.ones((2, 4)),
     "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got "
     "updates.shape [2,4], indices.shape [2], params.shape [2,3]"),
])
def test_runtime_errors(build, indices, updates, message):
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((2, 3), np.float32))
        i, u = tf.placeholder(tf.int32), tf.placeholder(tf.float32)
        op = build(v, i, u)
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(op, {i: indices, u: updates})
    assert message in str(info.value)


def test_uninitialized_variable():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32), name="fresh")
        op = tf.scatter_add(v, [0], [1.0])
        with tf.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError, match="fresh"):
                sess.run(op)


def test_not_differentiable():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32))
        u = tf.placeholder(tf.float32, [1])
        out = tf.identity(tf.scatter_add(v, [0], u))
        assert tf.gradients(out, u) == [None]


def _batch_scatter_update_ref(params, indices, updates):
    """out[b..., indices[b..., j], ...] = updates[b..., j, ...], in order within each batch."""
    out = params.copy()
    for batch in np.ndindex(*indices.shape[:-1]):
        for j, i in enumerate(indices[batch]):
            out[batch + (i,)] = updates[batch + (j,)]
    return out


# tf.batch_scatter_update needs indices of known rank, as in TensorFlow: forward checks only.
BATCH_CASES = [
    OpCase("batch_scatter_update", ref_updated(tf.batch_scatter_update),
           _batch_scatter_update_ref,
           [_params(2, 3, 4), lambda rng, dt: np.array([[2, 0], [1, 1]], np.int32),
            _params(2, 2, 4)], NUMERIC, grad=False, fixed_dtypes=[None, I32, None]),
    OpCase("batch_scatter_update_two_batch_dims", ref_updated(tf.batch_scatter_update),
           _batch_scatter_update_ref,
           [_params(2, 3, 4), lambda rng, dt: np.array(
               [[[1, 1], [0, 3], [2, 2]], [[3, 0], [1, 2], [0, 0]]], np.int64),
            _params(2, 3, 2)], (tf.float32,), grad=False, fixed_dtypes=[None, tf.int64, None]),
    OpCase("batch_scatter_update_1d", ref_updated(tf.batch_scatter_update),
           _batch_scatter_update_ref, [_params(6), _idx(5, 1, 5), _params(3)], (tf.float64,),
           grad=False, fixed_dtypes=[None, I32, None]),
]
test_batch_scatter_update_forward, _ = case_tests(BATCH_CASES)


def test_batch_scatter_update_graph_values_and_errors():
    """Names, attrs and values as TensorFlow 2.21 builds and computes them."""
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        out = tf.batch_scatter_update(v, [[[1, 1], [0, 3], [2, 2]], [[3, 0], [1, 2], [0, 0]]],
                                      -np.arange(12, dtype=np.float32).reshape(2, 3, 2))
        assert (out.op.type, out.op.name, out.dtype, out.shape.as_list()) == \
            ("ScatterNdUpdate", "ScatterNdUpdate", tf.float32_ref, [2, 3, 4])
        assert out.op.get_attr("use_locking") is True
        assert out.op.inputs[1].op.name == "concat"
        w = tf.Variable(np.zeros((2, 4), np.float32))
        named = tf.batch_scatter_update(w, tf.constant([[0, 3], [1, 1]], tf.int64),
                                        np.ones((2, 2), np.float32), use_locking=False,
                                        name="bsu")
        assert (named.op.name, named.op.get_attr("use_locking")) == ("bsu/ScatterNdUpdate",
                                                                     False)
        assert named.op.inputs[1].dtype == tf.int64
        with pytest.raises(ValueError, match="batch_gather does not allow indices with unknown "
                                             "shape."):
            tf.batch_scatter_update(v, tf.placeholder(tf.int32), [1.0])
        bad = tf.batch_scatter_update(v, [[[4]], [[0]]], np.ones((2, 1, 1), np.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), [
                [[0, -1, 2, 3], [-2, 5, 6, -3], [8, 9, -5, 11]],
                [[-7, 13, 14, -6], [16, -8, -9, 19], [-11, 21, 22, 23]]])
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"indices\[0,0,0\] = \[0, 0, 4\] does not index into "
                                     r"shape \[2,3,4\]"):
                sess.run(bad)
