"""UnravelIndex (tf.unravel_index): forward against NumPy's unravel_index, shape function,
TensorFlow 2.21's names, C arithmetic on negative indices, and its errors and messages."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

INDEX = (tf.int32, tf.int64)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _numpy_ref(indices, dims):
    return np.array(np.unravel_index(indices, dims), dtype=indices.dtype)


CASES = [
    OpCase("unravel_index", tf.unravel_index, _numpy_ref,
           [_value([1, 5, 7, 0, 8]), _value([3, 3])], dtypes=INDEX, grad=False),
    OpCase("unravel_index_scalar", tf.unravel_index, _numpy_ref,
           [_value(5), _value([2, 3])], dtypes=INDEX, grad=False),
    OpCase("unravel_index_rank4", tf.unravel_index, _numpy_ref,
           [lambda rng, dt: rng.randint(0, 120, 9).astype(dt), _value([2, 3, 4, 5])],
           dtypes=INDEX, grad=False),
    OpCase("unravel_index_no_dims", tf.unravel_index, lambda i, d: np.zeros([0], i.dtype),
           [_value(0), np.zeros([0])], dtypes=INDEX, grad=False),
    # TensorFlow lets negative indices through; C's truncated % and / give these (recorded
    # from TensorFlow 2.21).
    OpCase("unravel_index_negative", tf.unravel_index,
           lambda i, d: np.array([[0, 0, 0], [-1, 0, -1]], i.dtype),
           [_value([-7, -6, -13]), _value([2, 3])], dtypes=INDEX, grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_names_static_shapes_and_large_int64():
    with tf.Graph().as_default():
        out = tf.unravel_index([1, 5, 7], [3, 3])
        assert (out.op.name, out.op.type, out.dtype) == ("UnravelIndex", "UnravelIndex", tf.int32)
        assert [t.op.name for t in out.op.inputs] == ["UnravelIndex/indices", "UnravelIndex/dims"]
        assert out.shape.as_list() == [2, 3]
        assert tf.unravel_index([1], [4], name="uu").op.name == "uu"
        # Like TensorFlow, a matrix of indices passes the shape function (it fails at run time).
        assert tf.unravel_index([[1, 2]], [2, 3]).shape.as_list() == [2, 2]
        unknown = tf.placeholder(tf.int32, None)
        assert tf.unravel_index(unknown, [2, 3]).shape.ndims is None
        assert tf.unravel_index(tf.placeholder(tf.int32, [None]),
                                tf.placeholder(tf.int32, [None])).shape.as_list() == [None, None]
        assert tf.unravel_index(tf.placeholder(tf.int32, []), unknown).shape.as_list() == [None]
        wide = tf.unravel_index(tf.constant(2**40 + 5, tf.int64),
                                tf.constant([2**20, 2**21], tf.int64))
        assert wide.dtype == tf.int64 and _run(wide).tolist() == [524288, 5]
        assert tf.gradients(tf.cast(tf.unravel_index(unknown, [2]), tf.float32),
                            unknown) == [None]


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.unravel_index([1], [[2, 3]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.unravel_index(tf.constant([1]), tf.constant([2], tf.int64)), TypeError,
     "Input 'dims' of 'UnravelIndex' Op has type int64 that does not match type int32 of "
     "argument 'indices'."),
    (lambda: tf.unravel_index([1.0], [2, 3]), TypeError,
     "Value passed to parameter 'indices' has DataType float32 not in list of allowed values: "
     "int32, int64"),
])
def test_graph_construction_errors(build, error, match):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
        assert match in str(info.value)


# Messages of TensorFlow 2.21's CPU kernel, in its order of checks.
@pytest.mark.parametrize("indices,dims,dtype,message", [
    ([1, 6], [2, 3], np.int32, "index is out of bound as with dims"),
    (1, [], np.int32, "index is out of bound as with dims"),
    ([[1, 2]], [2, 3], np.int32, 'The indices can only be scalar or vector, got "[1,2]"'),
    (np.zeros([0, 2]), 3, np.int64, 'The indices can only be scalar or vector, got "[0,2]"'),
    (np.zeros([0]), [2, 0], np.int32,
     "received empty tensor indices: Tensor<type: int32 shape: [0] values: >"),
    (np.zeros([0]), 3, np.int64,
     "received empty tensor indices: Tensor<type: int64 shape: [0] values: >"),
    ([9], [[0]], np.int32, 'The indices can only be 1-D, got "[1,1]"'),
    ([1], 3, np.int32, 'The indices can only be 1-D, got "[]"'),
    ([7], [2, 0], np.int32,
     "Input dims cannot contain a dim of zero, but dims contains zero at index 1"),
    ([1], [2, -3], np.int32, "Input dims cannot be negative. Got dim = -3 at index 1"),
    ([1], [100000, 100000], np.int32,
     "Input dims product is causing integer overflow: (100000 100000)"),
    ([1], [2, 2**30], np.int32,
     "Input dims product is causing integer overflow: (         2 1073741824)"),
    ([1], [2**31, 2**31, 3], np.int64,
     "Input dims product is causing integer overflow: (2147483648 2147483648          3)"),
])
def test_run_time_errors(indices, dims, dtype, message):
    with tf.Graph().as_default():
        i = tf.placeholder(tf.as_dtype(dtype), None)
        d = tf.placeholder(tf.as_dtype(dtype), None)
        out = tf.unravel_index(i, d)
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out, {i: np.asarray(indices, dtype), d: np.asarray(dims, dtype)})
        assert message in str(info.value)


def test_largest_int32_product_is_accepted():
    with tf.Graph().as_default():
        assert _run(tf.unravel_index([1], [2, 2**30 - 1])).tolist() == [[0], [1]]
