"""tf.tensor_scatter_nd_update / add / sub / max / min: every op against a NumPy loop (OpCase
rows: slices, elements, batched and empty indices, repeated indices), gradients, static shapes,
and values, names and errors recorded from TensorFlow 2.21 (run_with_tf)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

I32, I64 = tf.int32, tf.int64
FLOAT = (tf.float32, tf.float64)
INTS = (tf.int32, tf.int64, tf.uint8)


def _values(*shape):
    """Random values of the case's dtype: floats without ties, small integers, bools, bytes."""
    def make(rng, dt):
        v = rng.randn(*shape) * 4
        if dt is object:
            return np.vectorize(lambda x: f"{x:.1f}".encode(), otypes=[object])(v)
        kind = np.dtype(dt).kind
        return v > 0 if kind == "b" else np.abs(v).round() if kind in "iu" else v
    return make


def _indices(values, dtype=np.int32):
    return lambda rng, dt: np.array(values, dtype).reshape(np.shape(values))


def _reference(combine):
    """out[indices[i]] = combine(out[indices[i]], updates[i]), one index at a time in order."""
    def ref(tensor, indices, updates):
        out = tensor.copy()
        depth = indices.shape[-1]
        rows = updates.reshape((-1,) + tensor.shape[depth:])
        for index, row in zip(indices.reshape(-1, depth), rows):
            out[tuple(index)] = combine(out[tuple(index)], row)
        return out
    return ref


OPS = {"update": (tf.tensor_scatter_nd_update, lambda old, new: new,
                  FLOAT + INTS + (tf.bool, tf.string, tf.complex64)),
       "add": (tf.tensor_scatter_nd_add, np.add, FLOAT + INTS + (tf.complex64,)),
       "sub": (tf.tensor_scatter_nd_sub, np.subtract, FLOAT + INTS + (tf.complex64,)),
       "max": (tf.tensor_scatter_nd_max, np.maximum, FLOAT + INTS + (tf.float16,)),
       "min": (tf.tensor_scatter_nd_min, np.minimum, FLOAT + INTS + (tf.float16,))}
LAYOUTS = [  # (suffix, tensor shape, indices, index dtype, updates shape)
    ("rows", (5, 3), [[3], [0]], np.int32, (2, 3)),
    ("elements", (4, 3), [[0, 2], [3, 1], [1, 0]], np.int32, (3,)),
    ("batch_indices", (4, 2, 3), [[[1], [2]], [[0], [3]]], np.int64, (2, 2, 2, 3)),
    ("repeated", (5, 3), [[3], [0], [3], [3]], np.int32, (4, 3)),
    ("empty_indices", (3, 2), np.zeros((0, 1)), np.int32, (0, 2)),
]

CASES = [
    OpCase(f"tensor_scatter_{name}_{suffix}", fn, _reference(combine),
           [_values(*shape), _indices(indices, index_dtype), _values(*updates)],
           dtypes if suffix == "rows" else (tf.float32,),
           fixed_dtypes=[None, tf.as_dtype(index_dtype), None],
           # With repeated indices TF's update gradient reaches the overwritten updates too.
           grad=not (name == "update" and suffix == "repeated"))
    for name, (fn, combine, dtypes) in OPS.items()
    for suffix, shape, indices, index_dtype, updates in LAYOUTS
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_values_recorded_from_tensorflow():
    nan = np.nan
    t = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Graph().as_default():
        got = _run([
            tf.tensor_scatter_nd_update(tf.zeros([3], tf.int32), [[0], [0], [2], [0]],
                                        [1, 2, 3, 4]),
            tf.tensor_scatter_nd_update(t, [[1], [1], [1]], [[1., 1.], [2., 2.], [3., 3.]]),
            tf.tensor_scatter_nd_sub(t, [[1], [1]], [[1., 1.], [2., 2.]]),
            tf.tensor_scatter_nd_max(t, [[1, 0], [1, 0], [2, 1]], [5., 1., -3.]),
            tf.tensor_scatter_nd_min(t, [[1, 0], [1, 0], [2, 1]], [5., 1., -3.]),
            # A NaN update never lands; a NaN in the tensor stays.
            tf.tensor_scatter_nd_max([1., 2., nan], [[0], [2]], [nan, 5.]),
            tf.tensor_scatter_nd_min([1., 2., nan], [[0], [2]], [nan, 5.]),
            tf.tensor_scatter_nd_max([1., 2., 3.], [[0], [0], [0]], [nan, 5., nan]),
            tf.tensor_scatter_nd_update(tf.zeros([0, 2]), tf.zeros([0, 1], tf.int32),
                                        tf.zeros([0, 2])),
        ])
    np.testing.assert_array_equal(got[0], [4, 0, 3])
    np.testing.assert_array_equal(got[1], [[0, 1], [3, 3], [4, 5], [6, 7]])
    np.testing.assert_array_equal(got[2], [[0, 1], [-1, 0], [4, 5], [6, 7]])
    np.testing.assert_array_equal(got[3], [[0, 1], [5, 3], [4, 5], [6, 7]])
    np.testing.assert_array_equal(got[4], [[0, 1], [1, 3], [4, -3], [6, 7]])
    np.testing.assert_array_equal(got[5], [1, 2, nan])
    np.testing.assert_array_equal(got[6], [1, 2, nan])
    np.testing.assert_array_equal(got[7], [5, 2, 3])
    assert got[8].shape == (0, 2)


def test_the_last_of_many_repeated_updates_wins():
    """TF's CPU kernel writes in order; NumPy's fancy assignment does not promise an order."""
    rows = np.tile(np.arange(5000, dtype=np.float32)[:, None], (1, 64))
    with tf.Graph().as_default():
        out = _run(tf.tensor_scatter_nd_update(tf.zeros([1000, 64]), tf.zeros([5000, 1], I32),
                                               rows))
    assert (out[0] == 4999).all() and not out[1:].any()


def test_gradients_recorded_from_tensorflow():
    """Repeated indices: every update of an index gets its gradient (update); max and min
    split the gradient evenly between the tensor and updates that tie."""
    w = np.array([[1., 2.], [3., 4.], [5., 6.]])
    with tf.Graph().as_default():
        t, u = tf.constant([[1., 5.], [2., 2.], [3., 3.]], tf.float64), \
            tf.constant([[7., 5.], [8., 5.]], tf.float64)
        grads = []
        for fn in (tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_max,
                   tf.tensor_scatter_nd_sub):
            grads += tf.gradients(tf.reduce_sum(fn(t, [[0], [0]], u) * w), [t, u])
        update_t, update_u, max_t, max_u, sub_t, sub_u = _run(grads)
    np.testing.assert_array_equal(update_t, [[0, 0], [3, 4], [5, 6]])
    np.testing.assert_array_equal(update_u, [[1, 2], [1, 2]])
    np.testing.assert_allclose(max_t, [[0, 2 / 3], [3, 4], [5, 6]])
    np.testing.assert_allclose(max_u, [[0, 2 / 3], [1, 2 / 3]])
    np.testing.assert_array_equal(sub_t, w)
    np.testing.assert_array_equal(sub_u, [[-1, -2], [-1, -2]])


def test_names_attrs_aliases_and_static_shapes():
    assert tf.tensor_scatter_update is tf.tensor_scatter_nd_update
    assert tf.tensor_scatter_add is tf.tensor_scatter_nd_add
    assert tf.tensor_scatter_sub is tf.tensor_scatter_nd_sub
    with tf.Graph().as_default():
        t = tf.zeros([4, 2])
        for fn, op_type in ((tf.tensor_scatter_nd_update, "TensorScatterUpdate"),
                            (tf.tensor_scatter_nd_add, "TensorScatterAdd"),
                            (tf.tensor_scatter_nd_sub, "TensorScatterSub"),
                            (tf.tensor_scatter_nd_max, "TensorScatterMax"),
                            (tf.tensor_scatter_nd_min, "TensorScatterMin")):
            out = fn(t, [[1]], [[1., 1.]])
            assert (out.op.type, out.op.name, out.dtype, out.shape.as_list()) == \
                (op_type, op_type, tf.float32, [4, 2])
            assert out.op.get_attr("Tindices") == I32
        assert tf.tensor_scatter_nd_add(t, [[1]], [[1., 1.]], name="foo").op.name == "foo"

        def shape(tensor, indices, updates):
            out = tf.tensor_scatter_nd_sub(tf.placeholder(tf.float32, tensor),
                                           tf.placeholder(I32, indices),
                                           tf.placeholder(tf.float32, updates)).shape
            return None if out.ndims is None else out.as_list()
        assert shape([None, 3], [None, 1], None) == [None, 3]
        assert shape(None, [5, 1], None) is None
        assert shape([None, None], [2, None], [2, 5]) == [None, None]
        assert shape([0, 3], [0, 1], [0, 3]) == [0, 3]
        assert shape([2, 3], [1, 3], [1]) == [2, 3]
        assert shape([2, 3], [2, 1], []) == [2, 3]  # a scalar `updates` is the kernel's to reject


@pytest.mark.parametrize("shapes,message", [
    (([], [1, 0], [1]), "Shape must be at least rank 1 but is rank 0"),
    (([4, 2], [], [2]), "Shape must be at least rank 1 but is rank 0"),
    (([None, 3], [None, 1], [None, 4]),
     "Dimensions [1,2) of input[shape=[?,3]] = [3] must match dimensions [1,2) of "
     "updates[shape=[?,4]] = [4]: Dimension 0 in both shapes must be equal, but are 3 and 4. "
     "Shapes are [3] and [4]."),
    (([2, 3], [2, 5, 1], [2, 4, 3]),
     "Dimensions [0,2) of indices[shape=[2,5,1]] = [2,5] must match dimensions [0,2) of "
     "updates[shape=[2,4,3]] = [2,4]: Dimension 1 in both shapes must be equal, but are 5 and "
     "4. Shapes are [2,5] and [2,4]."),
    (([2, 3], [5, 3], [5, 1]),
     "Dimensions [3,2) of input[shape=[2,3]] = [] must match dimensions [1,2) of "
     "updates[shape=[5,1]] = [1]: Shapes must be equal rank, but are 0 and 1"),
    (([0, 3], [None, 1], [2, 3]), "Indices and updates specified for empty input"),
    (([0, 3], [2, 1], [None, 3]), "Indices and updates specified for empty input"),
])
def test_static_shape_errors(shapes, message):
    with tf.Graph().as_default():
        tensor, indices, updates = shapes
        with pytest.raises(ValueError) as info:
            tf.tensor_scatter_nd_max(tf.placeholder(tf.float32, tensor),
                                     tf.placeholder(I32, indices),
                                     tf.placeholder(tf.float32, updates))
    assert str(info.value).startswith(message + " for '{{node TensorScatterMax}}")


@pytest.mark.parametrize("tensor,indices,updates,message", [
    (np.zeros((3, 2)), [[5], [6], [0]], np.ones((3, 2)),  # TF names the last bad index
     "indices[1] = [6] does not index into shape [3,2]"),
    (np.zeros((4, 2)), [[-1, 0]], [2.], "indices[0] = [-1, 0] does not index into shape [4,2]"),
    (np.zeros((2, 3, 4)), [[[0, 0], [1, 3]], [[1, 1], [0, 0]]], np.ones((2, 2, 4)),
     "indices[0,1] = [1, 3] does not index into shape [2,3,4]"),
    (np.zeros((4, 2)), [[1], [2]], [[1., 2.]], "Outer dimensions of indices and update must "
     "match. Indices shape: [2,1], updates shape:[1,2]"),
    (np.zeros((4, 2)), [[1, 1, 1]], [1.], "Inner dimensions of output shape must match inner "
     "dimensions of updates shape. Output: [4,2] updates: [1]"),
    (np.zeros((4, 2)), [[1]], [[1., 2., 3.]], "The inner 1 dimensions of output.shape=[4,2] "
     "must match the inner 1 dimensions of updates.shape=[1,3]"),
    (np.zeros((4, 2)), 1, [5., 6.], "Indices shape must have rank at least one. Found:[]"),
    (np.zeros((4, 2)), [[1, 1]], 5., "Updates shape must have rank at least one. Found:[]"),
    (np.zeros((4, 2)), np.zeros((2, 0)), np.ones((2, 4, 2)),
     "Indices and updates specified for empty output shape"),
    (np.zeros((4, 2)), np.zeros((0, 0)), np.zeros((0, 4, 2)),
     "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested "
     "rank: 0"),
    (np.zeros((2,) * 8 + (1,)), np.zeros((3, 8)), np.ones((3, 1)),
     "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested "
     "rank: 8"),
    (1., np.zeros((0, 0)), np.zeros(0), "Output must be at least 1-D, got shape: []"),
    # 1-D indices: the shape function reads one index of depth K, the kernel K of depth 1.
    (np.zeros((4, 2)), [1], [5., 6.], "Dimensions [0,1) of indices[shape=[1]] = 1 must match "
     "dimensions [0,1) of updates[shape=[2]] = 2"),
    (np.zeros((4, 2, 2)), [1, 1], [5., 6.], "Dimensions [1,3) of input[shape=[4,2,2]] must "
     "match dimensions [1,1) of updates[shape=[2]]"),
])
def test_run_time_errors(tensor, indices, updates, message):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32), tf.placeholder(I32), tf.placeholder(tf.float32)]
        out = tf.tensor_scatter_nd_add(*holders)
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out, dict(zip(holders, (tensor, indices, updates))))
    assert info.value.message.startswith(message)


def test_bad_indices_policy_attr_like_tensorflow():
    """TF 2.21's op defs carry bad_indices_policy="" and print it in the node text."""
    fns = [tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_add, tf.tensor_scatter_nd_sub,
           tf.tensor_scatter_nd_max, tf.tensor_scatter_nd_min]
    with tf.Graph().as_default():
        for fn in fns:
            op = fn(tf.zeros([4]), [[0], [2]], [1.0, 2.0]).op
            assert op.get_attr("bad_indices_policy") == b"", op.type
        with pytest.raises(ValueError) as info:
            tf.tensor_scatter_nd_update(tf.zeros([4, 4]), [[0], [1]], tf.zeros([3, 4]))
    assert ("= TensorScatterUpdate[T=DT_FLOAT, Tindices=DT_INT32, bad_indices_policy=\"\"]"
            in str(info.value))


def test_kernels_take_the_dtypes_tensorflow_registers():
    """The OpDef takes any dtype, as TF's does; there is no CPU kernel to add strings or to
    take the maximum of complex numbers (InvalidArgumentError in both, in other words)."""
    with tf.Graph().as_default():
        added = tf.tensor_scatter_nd_add(tf.constant(["a", "b"]), [[1]], ["c"])
        largest = tf.tensor_scatter_nd_max(tf.constant([1j, 2j]), [[1]], [3j])
        for out in (added, largest):
            with pytest.raises(errors.InvalidArgumentError, match="no registered kernel"):
                _run(out)
        assert _run(tf.tensor_scatter_nd_update(tf.constant(["a", "b"]), [[1]], ["c"])) \
            .tolist() == [b"a", b"c"]
