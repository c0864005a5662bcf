"""InvertPermutation, Bitcast, Cross, ParallelConcat, SegmentProd / UnsortedSegmentProd,
ScatterNdAdd / Sub / Update (and their ResourceScatterNd* twins) and the compositions tf.repeat
and tf.batch_gather: OpCase rows against NumPy (forward, shape functions, gradients), TensorFlow
2.21's values and messages (repeated scatter indices among them), names, build-time and
run-time errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.misc_array_ops import ParallelConcat
from tensorweave.testing.op_case import OpCase, case_tests
from tensorweave.testing.variable_builders import on_resource_variable, ref_updated, run_update

FLOAT = (tf.float32, tf.float64)
NUM = (tf.float32, tf.float64, tf.int32, tf.int64)
I32, I64 = tf.int32, tf.int64


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 2).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _scatter_nd_ref(ufunc):
    def ref(params, indices, updates):
        out = params.copy()
        depth = indices.shape[-1]
        rows = updates.reshape((-1,) + params.shape[depth:])
        for index, row in zip(indices.reshape(-1, depth), rows):
            out[tuple(index)] = row if ufunc is None else ufunc(out[tuple(index)], row)
        return out
    return ref


def _segment_prod_ref(data, ids, num=None):
    num = (int(ids.max()) + 1 if ids.size else 0) if num is None else int(num)
    out = np.ones((num,) + data.shape[ids.ndim:], data.dtype)
    for i, row in zip(ids.reshape(-1), data.reshape((ids.size,) + data.shape[ids.ndim:])):
        if i >= 0:
            out[i] = out[i] * row
    return out


def _bitcast(dtype):
    return lambda x: tf.bitcast(x, dtype)


def _bitcast_ref(np_dtype):
    def ref(x):
        out = np.ascontiguousarray(x.reshape(x.shape or (1,))).view(np_dtype)
        ratio = x.itemsize / np.dtype(np_dtype).itemsize
        if ratio > 1:
            return out.reshape(x.shape + (int(ratio),))
        return out.reshape(x.shape[:-1] if ratio < 1 else x.shape)
    return ref


def _repeat_ref(repeats, axis=None):
    return lambda x: np.repeat(x, repeats, axis=axis)


def _batch_gather_ref(params, indices):
    lead = indices.shape[:-1]
    out = np.empty(indices.shape + params.shape[indices.ndim:], params.dtype)
    for b in np.ndindex(*lead):
        out[b] = params[b][indices[b]]
    return out


_PERM = _value([3, 0, 4, 1, 2])
_SEG_IDS = _value([0, 0, 2, 2, 2])
_ZEROS_DATA = _value([[1.5, 0.0], [-2.0, 0.5], [0.0, 3.0], [2.0, 0.0], [1.25, -0.5]])

CASES = [
    # --- InvertPermutation
    OpCase("invert_permutation", tf.invert_permutation, np.argsort, [_PERM], dtypes=(I32, I64),
           grad=False),
    OpCase("invert_permutation_empty", tf.math.invert_permutation, np.argsort,
           [_value(np.zeros(0))], dtypes=(I32,), grad=False),
    # --- Bitcast
    OpCase("bitcast_narrower", _bitcast(tf.uint8), _bitcast_ref(np.uint8), [_randn(2, 3)],
           dtypes=(tf.float32, tf.int64, tf.float16), grad=False),
    OpCase("bitcast_wider", _bitcast(tf.float32), _bitcast_ref(np.float32),
           [_value([[0, 0, 128, 63], [0, 0, 0, 192]])], dtypes=(tf.uint8,), grad=False),
    OpCase("bitcast_same_size", _bitcast(tf.int32), _bitcast_ref(np.int32), [_randn(4)],
           dtypes=(tf.float32,), grad=False),
    OpCase("bitcast_complex", _bitcast(tf.float64), _bitcast_ref(np.float64),
           [lambda rng, dt: (rng.randn(3) + 1j * rng.randn(3)).astype(dt)],
           dtypes=(tf.complex128,), grad=False),
    OpCase("bitcast_scalar", _bitcast(tf.int16), _bitcast_ref(np.int16), [_value(7)],
           dtypes=(tf.int32,), grad=False),
    # --- Cross
    OpCase("cross", tf.cross, np.cross, [_randn(4, 3), _randn(4, 3)], dtypes=NUM),
    OpCase("cross_batch", tf.linalg.cross, np.cross, [_randn(2, 2, 3), _randn(2, 2, 3)],
           dtypes=FLOAT),
    OpCase("cross_vector", tf.cross, np.cross, [_randn(3), _randn(3)], dtypes=FLOAT),
    # --- ParallelConcat
    OpCase("parallel_stack", lambda a, b, c: tf.parallel_stack([a, b, c]),
           lambda a, b, c: np.stack([a, b, c]), [_randn(2, 3)] * 3,
           dtypes=NUM + (tf.bool,), grad=False, unknown_shapes=False),
    OpCase("parallel_stack_scalars", lambda a, b: tf.parallel_stack([a, b]),
           lambda a, b: np.stack([a, b]), [_randn(), _randn()], grad=False,
           unknown_shapes=False),
    # The op itself, so the shape function also meets inputs of unknown shape.
    OpCase("parallel_concat_op",
           lambda a, b: apply_op(ParallelConcat, [[a, b]], {"shape": tf.TensorShape([2, 3])}),
           lambda a, b: np.concatenate([a, b]), [_randn(1, 3), _randn(1, 3)], grad=False),
    # --- SegmentProd / UnsortedSegmentProd
    OpCase("segment_prod", tf.segment_prod, _segment_prod_ref, [_randn(5, 2), _SEG_IDS],
           dtypes=NUM, fixed_dtypes=(None, I32)),
    OpCase("segment_prod_zeros", tf.math.segment_prod, _segment_prod_ref,
           [_ZEROS_DATA, _SEG_IDS], dtypes=FLOAT, fixed_dtypes=(None, I64)),
    OpCase("segment_prod_complex", tf.segment_prod, _segment_prod_ref,
           [_value([1j, 2j, 3]), _value([0, 0, 1])], dtypes=(tf.complex64,),
           fixed_dtypes=(None, I32), grad=False),
    OpCase("segment_prod_empty", tf.segment_prod, _segment_prod_ref,
           [_randn(0, 2), _value(np.zeros(0))], fixed_dtypes=(None, I32), grad=False),
    OpCase("unsorted_segment_prod", lambda d, i: tf.unsorted_segment_prod(d, i, 4),
           lambda d, i: _segment_prod_ref(d, i, 4), [_ZEROS_DATA, _value([1, -1, 1, 3, 1])],
           dtypes=NUM, fixed_dtypes=(None, I32)),
    OpCase("unsorted_segment_prod_2d_ids", lambda d, i: tf.unsorted_segment_prod(d, i, 3),
           lambda d, i: _segment_prod_ref(d, i, 3), [_randn(2, 2, 3), _value([[2, 0], [2, 2]])],
           dtypes=FLOAT, fixed_dtypes=(None, I64)),
    # --- ScatterNdAdd / Sub / Update
    *[OpCase(f"scatter_nd_{name}", ref_updated(fn), _scatter_nd_ref(ufunc),
             [_randn(4, 3), _value([[1], [3], [1]]), _randn(3, 3)], dtypes=NUM, grad=False,
             fixed_dtypes=(None, I32, None))
      for name, fn, ufunc in (("add", tf.scatter_nd_add, np.add),
                              ("sub", tf.scatter_nd_sub, np.subtract),
                              ("update", tf.scatter_nd_update, None))],
    *[OpCase(f"resource_scatter_nd_{name}", on_resource_variable(fn), _scatter_nd_ref(ufunc),
             [_randn(4, 3), _value([[1], [3], [1]]), _randn(3, 3)], dtypes=NUM, grad=False,
             fixed_dtypes=(None, I32, None))
      for name, fn, ufunc in (("add", tf.scatter_nd_add, np.add),
                              ("sub", tf.scatter_nd_sub, np.subtract),
                              ("update", tf.scatter_nd_update, None))],
    OpCase("scatter_nd_add_elements", ref_updated(tf.scatter_nd_add),
           _scatter_nd_ref(np.add), [_randn(3, 2), _value([[0, 1], [2, 0], [0, 1]]), _randn(3)],
           dtypes=FLOAT, grad=False, fixed_dtypes=(None, I64, None)),
    OpCase("scatter_nd_update_batch_indices", ref_updated(tf.scatter_nd_update),
           _scatter_nd_ref(None), [_randn(4, 2), _value([[[0], [2]], [[3], [1]]]),
                                   _randn(2, 2, 2)],
           dtypes=(tf.float32, tf.bool), grad=False, fixed_dtypes=(None, I32, None)),
    # --- compositions
    OpCase("repeat_scalar", lambda x: tf.repeat(x, 2, axis=0), _repeat_ref(2, 0),
           [_randn(2, 3)], dtypes=NUM),
    OpCase("repeat_vector", lambda x: tf.repeat(x, [1, 3, 0], axis=1),
           _repeat_ref([1, 3, 0], 1), [_randn(2, 3)], dtypes=NUM + (tf.bool,)),
    OpCase("repeat_flat", lambda x: tf.repeat(x, [1, 0, 2, 1]), _repeat_ref([1, 0, 2, 1]),
           [_randn(2, 2)]),
    OpCase("repeat_negative_axis", lambda x: tf.repeat(x, [2, 1], axis=-2),
           _repeat_ref([2, 1], -2), [_randn(2, 3)], unknown_shapes=False),
    OpCase("repeat_fed", lambda x, r: tf.repeat(x, r, axis=1),
           lambda x, r: np.repeat(x, r, axis=1), [_randn(2, 2), _value([2, 0])],
           fixed_dtypes=(None, I64)),
    OpCase("batch_gather", tf.batch_gather, _batch_gather_ref,
           [_randn(2, 3, 4), _value([[2, 0], [1, 1]])], dtypes=NUM, fixed_dtypes=(None, I32),
           unknown_shapes=False),
    OpCase("batch_gather_1d", tf.batch_gather, _batch_gather_ref,
           [_randn(3), _value([2, 0, 0])], fixed_dtypes=(None, I64), unknown_shapes=False),
    OpCase("batch_gather_two_batch_dims", tf.batch_gather, _batch_gather_ref,
           [_randn(2, 2, 3), _value([[[2], [0]], [[1], [1]]])], fixed_dtypes=(None, I64),
           unknown_shapes=False),
]

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
# tf.parallel_stack needs fully known shapes, and tf.batch_gather a known rank, as in TensorFlow.
_, test_shapes = case_tests([c for c in CASES if c.unknown_shapes])


def _run(t, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(t, feed)


def test_values_recorded_from_tensorflow():
    with tf.Graph().as_default():
        d = tf.constant([[1., 0.], [3., 4.], [0., 6.], [2., 0.]])
        w = tf.constant([[1., 2.], [3., 4.]])
        grads = [tf.gradients(tf.segment_prod(d, [0, 0, 1, 1]) * w, d)[0],
                 tf.gradients(tf.unsorted_segment_prod(d, [1, -1, 1, 1], 2) * w, d)[0]]
        v = tf.Variable([[1., 2.], [3., 4.], [5., 6.]])
        add = tf.scatter_nd_add(v, [[0], [2], [0]], [[1., 1.], [2., 2.], [3., 3.]])
        g_sorted, g_unsorted, added = _run(grads + [add])
    np.testing.assert_array_equal(g_sorted, [[3, 8], [1, 0], [6, 0], [0, 24]])
    np.testing.assert_array_equal(g_unsorted, [[0, 0], [0, 0], [6, 0], [0, 0]])
    np.testing.assert_array_equal(added, [[5, 6], [3, 4], [7, 8]])


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("update", [
    tf.scatter_nd_update, tf.compat.v1.scatter_nd_update,
    lambda v, indices, updates: v.scatter_nd_update(indices, updates),
], ids=["tf", "compat_v1", "method"])
@pytest.mark.parametrize("init,indices,updates,expected", [
    ([0] * 4, [[1], [1], [1]], [1, 2, 3], [0, 3, 0, 0]),
    ([0] * 4, [[1], [3], [1], [0], [3]], [1, 2, 3, 4, 5], [4, 3, 0, 5]),
    (np.zeros([3, 3]), [[0, 1], [2, 2], [0, 1], [0, 1]], [1, 2, 3, 4],
     [[0, 4, 0], [0, 0, 0], [0, 0, 2]]),
    (np.zeros([3, 2]), [[1], [0], [1]], [[1, 2], [3, 4], [5, 6]], [[3, 4], [5, 6], [0, 0]]),
    (np.zeros([2, 2, 2]), [[1, 0], [1, 0], [0, 1], [1, 0]], [[1, 2], [3, 4], [5, 6], [7, 8]],
     [[[0, 0], [5, 6]], [[7, 8], [0, 0]]]),
    ([0] * 4, [[[2], [2]], [[2], [1]]], [[1, 2], [3, 4]], [0, 4, 3, 0]),
    ([0] * 5, [[i % 3] for i in range(40)], list(range(40)), [39, 37, 38, 0, 0]),
], ids=["thrice", "mixed", "points", "rows", "slices", "batched", "many"])
def test_scatter_nd_update_applies_repeated_indices_in_order(update, use_resource, init,
                                                             indices, updates, expected):
    """TensorFlow's CPU kernel writes the updates in order: the last of repeated indices
    wins (values from TF 2.21), for reference and resource variables alike."""
    assert run_update(update, np.asarray(init, np.float32), indices,
                      np.asarray(updates, np.float32), use_resource=use_resource) == \
        (expected, expected)


def test_names_attrs_and_static_shapes():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((3, 2), np.float32))
        add = tf.scatter_nd_add(v, [[1]], [[7., 8.]])
        assert (add.op.name, add.op.type, add.dtype) == ("ScatterNdAdd", "ScatterNdAdd",
                                                         tf.float32_ref)
        assert add.op.get_attr("use_locking") is False
        assert tf.scatter_nd_update(v, [[1]], [[1., 1.]]).op.get_attr("use_locking") is True
        assert tf.scatter_nd_sub(v, [[1]], [[1., 1.]], name="s").op.name == "s"
        stacked = tf.parallel_stack([tf.zeros([2]), tf.ones([2])])
        assert (stacked.op.name, stacked.shape.as_list()) == ("parallel_stack/ParallelConcat",
                                                              [2, 2])
        assert tf.bitcast(tf.zeros([3, 4], tf.uint8), tf.float32).shape.as_list() == [3]
        assert tf.bitcast(tf.placeholder(tf.float64, [None]), tf.int16).shape.as_list() == \
            [None, 4]
        assert tf.segment_prod(tf.zeros([4, 3]), [0, 0, 1, 1]).shape.as_list() == [None, 3]
        assert tf.unsorted_segment_prod(tf.zeros([4, 3]), [0, 0, 1, 1], 5).shape.as_list() \
            == [5, 3]
        r = tf.repeat(tf.zeros([2, 2]), 2, axis=0)
        assert (r.op.name, r.shape.as_list()) == ("Repeat/Reshape_1", [4, 2])
        g = tf.batch_gather(tf.zeros([2, 3, 4]), [[2, 0], [1, 1]])
        assert (g.op.name, g.shape.as_list()) == ("BatchGather/Reshape_3", [2, 2, 4])
        assert tf.repeat(tf.placeholder(tf.float32, [2, None]), [1, 1], axis=0).shape \
            .as_list() == [None, None]


@pytest.mark.parametrize("use_resource", [False, True])
def test_scatter_nd_variable_ops_carry_bad_indices_policy(use_resource):
    with tf.Graph().as_default() as g:
        v = tf.Variable(tf.zeros([4]), use_resource=use_resource)
        for fn in (tf.scatter_nd_update, tf.scatter_nd_add, tf.scatter_nd_sub):
            fn(v, [[1]], [1.0])
    ops = [op for op in g.get_operations() if "ScatterNd" in op.type]
    assert len(ops) == 3
    for op in ops:
        assert op.get_attr("bad_indices_policy") == b"", op.type


def test_no_gradient_where_tensorflow_has_none():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(LookupError, match="op type: ParallelConcat"):
            tf.gradients(tf.parallel_stack([x, x]), x)
        v = tf.Variable([1.0, 2.0])
        assert tf.gradients(tf.scatter_nd_add(v, [[0]], [1.0]), v) == [None]


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.invert_permutation([[0]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.invert_permutation([0.0]), TypeError, "DataType float32 not in list"),
    (lambda: tf.bitcast(tf.constant([[0, 0, 128]], tf.uint8), tf.float32), ValueError,
     "Cannot bitcast from 4 to 1 due to shape. 3 does not match 4"),
    (lambda: tf.bitcast(tf.constant(1, tf.uint8), tf.int16), ValueError,
     "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.bitcast(tf.constant([True]), tf.uint8), TypeError, "DataType bool not in list"),
    (lambda: tf.cross([[1., 2.]], [[4., 5.]]), ValueError, "Dimension must be 3 but is 2"),
    (lambda: tf.cross([[1., 2., 3.]], [1., 2., 3.]), ValueError,
     "Shapes must be equal rank, but are 2 and 1"),
    (lambda: tf.cross(1., 2.), ValueError, "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.parallel_stack([[1, 2], [3]]), ValueError,
     "Dimension 1 in both shapes must be equal, but are 1 and 2"),
    (lambda: tf.parallel_stack([tf.placeholder(tf.float32)] * 2), ValueError,
     "shape attr must be fully defined"),
    (lambda: tf.scatter_nd_update(tf.Variable(tf.zeros([3, 2])), [[1]], [[7., 8., 9.]]),
     ValueError, r"Dimensions \[1,2\) of input\[shape=\[3,2\]\] = \[2\] must match dimensions "
     r"\[1,2\) of updates\[shape=\[1,3\]\] = \[3\]"),
    (lambda: tf.scatter_nd_add(tf.Variable(tf.zeros([3, 2])), [[1], [2]], [[7., 8.]]),
     ValueError, r"Dimensions \[0,1\) of indices\[shape=\[2,1\]\] = \[2\] must match"),
    (lambda: tf.scatter_nd_update(tf.Variable(tf.zeros([3, 2])), [[1]], 5.0), ValueError,
     "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.repeat(tf.zeros([2]), 2, axis=tf.constant(0)), TypeError,
     "Argument `axis` must be an int"),
    (lambda: tf.repeat(tf.zeros([2]), 2, axis=1), ValueError, "axis=1 out of bounds"),
    (lambda: tf.repeat(tf.zeros([2]), 2.0), TypeError, "must be of type integer"),
    (lambda: tf.repeat(tf.zeros([2]), [1, 2, 3]), ValueError, "not compatible"),
    (lambda: tf.repeat(tf.placeholder(tf.float32), 2, axis=-1), ValueError,
     "axis=-1 may only be negative if rank"),
    (lambda: tf.batch_gather(tf.zeros([2]), tf.placeholder(tf.int32)), ValueError,
     "does not allow indices with unknown shape"),
    (lambda: tf.batch_gather([1., 2.], [[0]]), ValueError,
     r"`batch_dims` = 1 must be less than rank\(`params`\) = 1"),
])
def test_build_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            build()


@pytest.mark.parametrize("build,feed,error,message", [
    (lambda p: tf.invert_permutation(p), [0, 0, 1], errors.InvalidArgumentError,
     "0 is duplicated in the input."),
    (lambda p: tf.invert_permutation(p), [0, 3, 1], errors.InvalidArgumentError,
     "3 is not between 0 and 3"),
    (lambda p: tf.invert_permutation(p), [[0]], errors.InvalidArgumentError,
     "invert_permutation expects a 1D vector."),
    (lambda p: tf.bitcast(p, tf.int64), [1, 2, 3], errors.InvalidArgumentError,
     "Cannot bitcast from 3 to 9"),
    (lambda p: tf.cross(tf.cast(p, tf.float32), tf.cast(p, tf.float32)), [1, 2],
     errors.FailedPreconditionError, "Cross-products are only defined for 3-element vectors"),
    (lambda p: tf.cross(tf.cast(p, tf.float32), [[1., 2., 3.]]), [1, 2, 3],
     errors.InvalidArgumentError, r"Both inputs must be of same shape: \[3\] vs. \[1,3\]"),
    (lambda p: tf.segment_prod([1., 2.], p), [1, 0], errors.InvalidArgumentError,
     "segment ids are not increasing"),
    (lambda p: tf.unsorted_segment_prod([1., 2.], p, 2), [1, 5], errors.InvalidArgumentError,
     r"segment_ids\[1\] = 5 is out of range \[0, 2\)"),
    (lambda p: tf.scatter_nd_add(tf.Variable(tf.zeros([3, 2])), p, [[7., 8.]]), [[5]],
     errors.InvalidArgumentError, r"indices\[0\] = \[5\] does not index into shape \[3,2\]"),
])
def test_run_time_errors(build, feed, error, message):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int32)
        t = build(p)
        with pytest.raises(error, match=message):
            _run(t, {p: feed})
