"""SerializeSparse, SerializeManySparse, DeserializeManySparse: TensorFlow's byte format, round
trips against NumPy, shapes and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import make_ndarray
from tensorweave.protos.tensor_pb2 import TensorProto
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, triple, values_of

I64 = tf.int64
IND = np.array([[0, 1], [1, 0], [1, 3], [2, 2]], np.int64)
SHAPE = np.array([3, 4], np.int64)


def _strings_or_numbers(rng, np_dtype):
    if np_dtype is object:
        return np.array([b"a", b"", b"cd", b"e"], dtype=object)
    return rng.randn(4) * 10


def _parse(strings):
    """Each serialized TensorProto back to an array."""
    return [make_ndarray(TensorProto.FromString(s)) for s in np.ravel(strings)]


def _rows_ref(i, v, s):
    """Row r of the minibatch: its entries without the first index, dense shape s[1:]."""
    return [[i[i[:, 0] == r][:, 1:], v[i[:, 0] == r], s[1:]] for r in range(s[0])]


CASES = [
    OpCase("serialize_sparse_round_trip",
           lambda i, v, s: _round_trip(i, v, s),
           lambda i, v, s: [np.concatenate([np.insert(i, 0, b, axis=1) for b in (0, 1)]),
                            np.concatenate([v, v]), np.insert(s, 0, 2)],
           [IND, _strings_or_numbers, SHAPE], dtypes=(tf.float32, tf.int64, tf.string),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("serialize_many_sparse",
           lambda i, v, s: tf.serialize_many_sparse(tf.SparseTensor(i, v, s)),
           lambda i, v, s: np.array([[TensorProto.SerializeToString(_proto(x)) for x in row]
                                     for row in _rows_ref(i, v, s)], dtype=object),
           [IND, values_of(4), SHAPE], dtypes=(tf.float32, tf.float64),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("deserialize_many_sparse_of_many",
           lambda i, v, s: triple(tf.deserialize_many_sparse(
               tf.serialize_many_sparse(tf.SparseTensor(i, v, s)), v.dtype)),
           lambda i, v, s: [i, v, s], [IND, values_of(4), SHAPE],
           fixed_dtypes=(I64, None, I64), grad=False),
]


def _proto(array):
    from tensorweave.framework.tensor_util import make_tensor_proto
    return make_tensor_proto(array)


def _round_trip(i, v, s):
    one = tf.serialize_sparse(tf.SparseTensor(i, v, s))
    return triple(tf.deserialize_many_sparse(tf.stack([one, one]), v.dtype, rank=3))


test_forward, test_shapes = case_tests(CASES)


def test_bytes_match_tensorflow():
    """The strings TensorFlow 2.21 writes for this SparseTensor (captured from it)."""
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [1, 0], [1, 3], [2, 2]], [1.0, 2.0, 3.0, 4.0], [3, 4])
        one = tf.serialize_sparse(sp)
        many = tf.serialize_many_sparse(tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3]))
        assert (one.op.type, one.op.name, one.shape.as_list()) == ("SerializeSparse",
                                                                   "SerializeSparse", [3])
        assert many.shape.as_list() == [None, 3]
        back = tf.deserialize_many_sparse(many, tf.float32)
        assert back.indices.op.type == "DeserializeManySparse"
        assert back.indices.shape.as_list() == [None, None]
        with tf.Session() as sess:
            one, many = sess.run([one, many])
    assert one[1] == b'\x08\x01\x12\x04\x12\x02\x08\x04"\x10\x00\x00\x80?\x00\x00\x00@\x00\x00' \
                     b'@@\x00\x00\x80@'
    assert one[2] == b'\x08\t\x12\x04\x12\x02\x08\x02"\x10\x03' + b"\x00" * 7 + b"\x04" + \
        b"\x00" * 7
    assert many[1, 0] == b'\x08\t\x12\x08\x12\x02\x08\x01\x12\x02\x08\x01"\x08' + b"\x00" * 8
    assert many[0, 1] == b'\x08\x01\x12\x04\x12\x02\x08\x01"\x04\x00\x00\x80?'
    np.testing.assert_array_equal(_parse(one[:1])[0], [[0, 1], [1, 0], [1, 3], [2, 2]])


@pytest.mark.parametrize("build,message", [
    (lambda: tf.deserialize_many_sparse(tf.stack([tf.serialize_sparse(
        tf.SparseTensor([[0]], [1.0], [2]))]), tf.int32).values,
     "Requested SparseTensor of type int32 but SparseTensor[0].values.dtype() == float"),
    (lambda: tf.serialize_many_sparse(tf.SparseTensor([[0]], [1.0], [2])),
     "Rank of input SparseTensor should be > 1, but saw rank: 1"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(), message)


def test_build_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Input must be a SparseTensor"):
            tf.serialize_sparse(tf.constant([1.0]))
        with pytest.raises(ValueError, match="Shape must be rank 2"):
            tf.deserialize_many_sparse(tf.constant(["a", "b", "c"]), tf.float32)
