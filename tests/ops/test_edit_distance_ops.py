"""EditDistance: distances against a plain Levenshtein reference (ints, floats, strings; empty
sequences on either side; normalized and not), TensorFlow's shape function and its
construction-time and run-time errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests


def _levenshtein(a, b) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _sequences(indices, values):
    seqs = {}
    for index, value in zip(indices.tolist(), values.tolist()):
        seqs.setdefault(tuple(index[:-1]), []).append(value)
    return seqs


def _ref(normalize):
    """TensorFlow's rules: truth only -> its length (1.0 normalized), hypothesis only -> its
    length (inf normalized), neither -> 0."""
    def ref(h_idx, h_val, h_shape, t_idx, t_val, t_shape):
        out = np.zeros(np.maximum(h_shape, t_shape)[:-1], np.float32)
        hyp, truth = _sequences(h_idx, h_val), _sequences(t_idx, t_val)
        for key in set(hyp) | set(truth):
            h, t = hyp.get(key, []), truth.get(key, [])
            d = float(_levenshtein(h, t))
            out[key] = (d / len(t) if t else (np.inf if d else 0.0)) if normalize else d
        return out
    return ref


def _build(normalize):
    def build(h_idx, h_val, h_shape, t_idx, t_val, t_shape):
        return tf.edit_distance(tf.SparseTensor(h_idx, h_val, h_shape),
                                tf.SparseTensor(t_idx, t_val, t_shape), normalize=normalize)
    return build


def _random_sparse(shape, density, seed):
    rng = np.random.RandomState(seed)
    idx = np.argwhere(rng.rand(*shape) < density).astype(np.int64)
    values = rng.randint(0, 3, len(idx))
    return [idx, lambda r, dt: values.astype(dt), np.array(shape, np.int64)]


def _fixed(idx, vals, shape):
    return [np.array(idx, np.int64).reshape(-1, len(shape)),
            lambda r, dt: np.array(vals).astype(dt), np.array(shape, np.int64)]


I64 = tf.int64
_FIXED = (I64, None, I64, I64, None, I64)
_TYPES = (tf.int32, tf.int64, tf.float32)
_WORDS = [np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0]], np.int64),
          np.array([b"a", b"b", b"c"], dtype=object), np.array([2, 2, 2], np.int64),
          np.array([[0, 0, 0], [1, 0, 0]], np.int64), np.array([b"a", b"c"], dtype=object),
          np.array([2, 3, 1], np.int64)]

CASES = [
    OpCase(f"edit_distance_{'normalized' if norm else 'raw'}", _build(norm), _ref(norm),
           _random_sparse((3, 4, 6), 0.6, 1) + _random_sparse((3, 4, 5), 0.5, 2),
           dtypes=_TYPES, fixed_dtypes=_FIXED, grad=False)
    for norm in (True, False)
] + [
    OpCase("edit_distance_rank2_shapes_differ", _build(True), _ref(True),
           _random_sparse((5, 7), 0.5, 3) + _random_sparse((4, 8), 0.7, 4),
           fixed_dtypes=_FIXED, grad=False),
    OpCase("edit_distance_one_side_empty", _build(True), _ref(True),
           _fixed([[0, 1, 0]], [1.5], [1, 2, 3]) + _fixed([[0, 0, 2]], [1.5], [1, 2, 3]),
           dtypes=(tf.float32, tf.float64), fixed_dtypes=_FIXED, grad=False),
    OpCase("edit_distance_both_empty", _build(False), _ref(False),
           _fixed([], [], [2, 3]) + _fixed([], [], [2, 3]), fixed_dtypes=_FIXED,
           grad=False),
    OpCase("edit_distance_strings", _build(False), _ref(False), _WORDS,
           dtypes=(tf.string,), fixed_dtypes=(I64, tf.string, I64, I64, tf.string, I64),
           grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _st(idx, vals, shape):
    return tf.SparseTensorValue(np.array(idx, np.int64).reshape(-1, len(shape)),
                                np.array(vals, np.int32), np.array(shape, np.int64))


def test_name_type_and_static_shape():
    with tf.Graph().as_default():
        d = tf.edit_distance(_st([[0, 0]], [1], [2, 3]), _st([[1, 0]], [1], [3, 2]))
        hi = tf.placeholder(tf.int64)
        fed = tf.edit_distance(tf.SparseTensor(hi, [1], [2, 2]), _st([[0, 0]], [1], [2, 2]))
    assert (d.op.type, d.op.name, d.dtype, d.shape.as_list()) == \
        ("EditDistance", "edit_distance", tf.float32, [3])
    assert fed.shape.as_list() == [2]


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor."):
            tf.edit_distance([1, 2], _st([[0, 0]], [1], [2, 3]))
        with pytest.raises(TypeError, match="Truth must be a SparseTensor."):
            tf.edit_distance(_st([[0, 0]], [1], [2, 3]), None)
        with pytest.raises(ValueError, match="Input Hypothesis SparseTensors must have rank at "
                                             "least 2, but hypothesis_shape rank is: 1"):
            tf.edit_distance(_st([[0]], [1], [2]), _st([[0]], [1], [2]))
        with pytest.raises(ValueError, match="Num elements of hypothesis_shape does not match "
                                             "truth_shape: 2 vs. 3"):
            tf.edit_distance(_st([[0, 0]], [1], [2, 3]), _st([[0, 0, 0]], [1], [2, 3, 3]))


@pytest.mark.parametrize("feed,error,message", [
    (([[0, 0]], [1], [0, 3]), tf.errors.InvalidArgumentError,
     r"Got output shape \[0\] which has 0 elements"),
    (([[5, 0]], [1], [2, 3]), tf.errors.InternalError,
     r"Got an inner product 5 which would require writing to outside of the buffer for the "
     r"output tensor \(max elements 2\)"),
    (([[0, 0]], [1, 2], [2, 2]), tf.errors.InvalidArgumentError,
     r"Expected hypothesis_values.NumElements == #rows\(hypothesis_indices\), their shapes "
     r"are: \[2\] and \[1,2\]"),
    (([0, 0], [1, 2], [2, 2]), tf.errors.InvalidArgumentError,
     r"hypothesis_indices should be a matrix, but got shape: \[2\]"),
    (([[0, 0]], [1], [2, 2, 2]), tf.errors.InvalidArgumentError,
     r"Expected hypothesis_shape.NumElements == #cols\(hypothesis_indices\), their shapes "
     r"are: \[3\] and \[1,2\]"),
])
def test_run_time_errors(feed, error, message):
    with tf.Graph().as_default():
        hi = tf.placeholder(tf.int64)
        hv = tf.placeholder(tf.int32)
        hs = tf.placeholder(tf.int64)
        d = tf.edit_distance(tf.SparseTensor(hi, hv, hs), tf.SparseTensor(hi, hv, hs))
        with tf.Session() as sess:
            with pytest.raises(error, match=message):
                sess.run(d, {hi: np.array(feed[0], np.int64), hv: feed[1], hs: feed[2]})
