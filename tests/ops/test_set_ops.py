"""Set ops: dense/dense, dense/sparse and sparse/sparse set algebra and SetSize against a
Python-set reference (sorted results, dense shape `groups + [largest set]`), every supported
dtype, TF's wrapper, shape-function and index-validation errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

INTS = (tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16)

_OPS = {"intersection": set.intersection, "union": set.union,
        "a-b": set.difference, "b-a": lambda a, b: b - a}


def _groups_of_dense(x):
    return {g: set(x[g].tolist()) for g in np.ndindex(*x.shape[:-1])}


def _groups_of_sparse(indices, values, shape):
    groups = {g: set() for g in np.ndindex(*shape[:-1])}
    for index, value in zip(indices.tolist(), values.tolist()):
        groups[tuple(index[:-1])].add(value)
    return groups


def _sparse_result(groups, group_shape, dtype):
    """The expected SparseTensor components of per-group sets."""
    indices, values = [], []
    for g in np.ndindex(*group_shape):
        for j, v in enumerate(sorted(groups[g])):
            indices.append([*g, j])
            values.append(v)
    width = max((len(s) for s in groups.values()), default=0)
    return [np.array(indices, np.int64).reshape(-1, len(group_shape) + 1),
            np.array(values, dtype), np.array([*group_shape, width], np.int64)]


def _pairwise_ref(operation, a_groups, b_groups, group_shape, dtype):
    op = _OPS[operation]
    return _sparse_result({g: op(a_groups[g], b_groups[g]) for g in a_groups}, group_shape,
                          dtype)


def _components(st):
    return [st.indices, st.values, st.dense_shape]


def _dense_dense(fn, operation):
    def ref(a, b):
        return _pairwise_ref(operation, _groups_of_dense(a), _groups_of_dense(b),
                             a.shape[:-1], a.dtype)
    return lambda a, b: _components(fn(a, b)), ref


_B_INDICES = np.array([[0, 0, 0], [0, 0, 2], [1, 1, 0], [1, 1, 1]])
_B_SHAPE = np.array([2, 2, 3])


def _dense_sparse(fn, operation):
    def build(a, values):
        return _components(fn(a, tf.SparseTensor(_B_INDICES, values, _B_SHAPE)))

    def ref(a, values):
        b = _groups_of_sparse(_B_INDICES, values, _B_SHAPE)
        return _pairwise_ref(operation, _groups_of_dense(a), b, a.shape[:-1], a.dtype)
    return build, ref


_A_INDICES = np.array([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 3]])
_A_SHAPE = np.array([2, 2, 4])


def _sparse_sparse(fn, operation):
    def build(a_values, b_values):
        return _components(fn(tf.SparseTensor(_A_INDICES, a_values, _A_SHAPE),
                              tf.SparseTensor(_B_INDICES, b_values, _B_SHAPE)))

    def ref(a_values, b_values):
        a = _groups_of_sparse(_A_INDICES, a_values, _A_SHAPE)
        b = _groups_of_sparse(_B_INDICES, b_values, _B_SHAPE)
        return _pairwise_ref(operation, a, b, tuple(_A_SHAPE[:-1]), a_values.dtype)
    return build, ref


def _small_ints(*shape):
    return lambda rng, dt: rng.randint(0, 6, size=shape).astype(dt)


def _words(*shape):
    return lambda rng, dt: np.array([b"ab", b"", b"c", b"ab", b"z", b"c"], dtype=object)[
        rng.randint(0, 6, size=shape)]


def _set_size(values):
    return tf.sets.set_size(tf.SparseTensor(_A_INDICES, values, _A_SHAPE))


def _set_size_ref(values):
    groups = _groups_of_sparse(_A_INDICES, values, _A_SHAPE)
    return np.array([len(groups[g]) for g in np.ndindex(2, 2)], np.int32).reshape(2, 2)


_PAIR_FNS = [("intersection", tf.sets.set_intersection, "intersection"),
             ("union", tf.sets.union, "union"),
             ("difference", tf.sets.set_difference, "a-b"),
             ("difference_b_minus_a", lambda a, b: tf.sets.difference(a, b, aminusb=False),
              "b-a")]

CASES = []
for _label, _fn, _operation in _PAIR_FNS:
    CASES += [
        OpCase(f"dense_dense_{_label}", *_dense_dense(_fn, _operation),
               [_small_ints(2, 3, 5), _small_ints(2, 3, 4)], dtypes=INTS, grad=False),
        OpCase(f"dense_sparse_{_label}", *_dense_sparse(_fn, _operation),
               [_small_ints(2, 2, 4), _small_ints(4)], dtypes=INTS, grad=False),
        OpCase(f"sparse_sparse_{_label}", *_sparse_sparse(_fn, _operation),
               [_small_ints(4), _small_ints(4)], dtypes=INTS, grad=False),
    ]
CASES += [
    OpCase("dense_dense_strings", *_dense_dense(tf.sets.set_union, "union"),
           [_words(3, 4), _words(3, 2)], dtypes=(tf.string,), grad=False),
    OpCase("dense_sparse_strings", *_dense_sparse(tf.sets.set_difference, "a-b"),
           [_words(2, 2, 3), _words(4)], dtypes=(tf.string,), grad=False),
    # A SparseTensor first: the wrapper swaps the inputs and flips the difference.
    OpCase("sparse_dense_difference", *_dense_sparse(lambda a, b: tf.sets.difference(b, a),
                                                     "b-a"),
           [_small_ints(2, 2, 4), _small_ints(4)], dtypes=(tf.int32,), grad=False),
    OpCase("dense_empty_sets", *_dense_dense(tf.sets.set_intersection, "intersection"),
           [_small_ints(2, 0), _small_ints(2, 0)], dtypes=(tf.int64,), grad=False),
    OpCase("set_size", _set_size, _set_size_ref, [_small_ints(4)], dtypes=INTS, grad=False),
    OpCase("set_size_strings", _set_size, _set_size_ref, [_words(4)], dtypes=(tf.string,),
           grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_op_types_names_and_static_shapes():
    a = tf.constant([[1, 2], [3, 4]])
    st = tf.sets.intersection(a, a)
    assert st.indices.op.type == "DenseToDenseSetOperation"
    assert st.indices.shape.as_list() == [None, 2] and st.dense_shape.shape.as_list() == [2]
    sparse = tf.SparseTensor([[0, 0]], [1], [2, 2])
    assert tf.sets.union(sparse, sparse).indices.op.type == "SparseToSparseSetOperation"
    assert tf.sets.union(sparse, a).indices.op.type == "DenseToSparseSetOperation"
    size = tf.sets.size(sparse)
    assert size.op.type == "SetSize" and size.dtype == tf.int32 and size.shape.ndims is None
    unknown = tf.sets.union(tf.placeholder(tf.int32), tf.placeholder(tf.int32))
    assert unknown.indices.shape.as_list() == [None, None]


def test_not_differentiable():
    st = tf.sets.union(tf.constant([[1, 2]]), tf.constant([[3]]))
    assert tf.gradients(tf.reduce_sum(tf.cast(st.values, tf.float32)),
                        tf.constant([[1, 2]])) == [None]


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.sets.union(tf.constant([1.0]), tf.constant([1.0])), TypeError,
     "'a' has invalid dtype"),
    (lambda: tf.sets.union(tf.constant([[1]]), tf.constant([[1]], tf.int64)), TypeError,
     "Types don't match"),
    (lambda: tf.sets.union(tf.constant([1, 2]), tf.constant([1, 2])), ValueError,
     "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.sets.union(tf.constant([[[1, 2]]]), tf.constant([[1, 2]])), ValueError,
     "Shape must be rank 3 but is rank 2"),
    (lambda: tf.sets.union(tf.constant([[1, 2], [3, 4]]), tf.constant([[1, 2]])), ValueError,
     "Dimension 0 in both shapes must be equal, but are 2 and 1"),
    (lambda: tf.sets.set_size(tf.constant([[1, 2]])), TypeError, "Expected `SparseTensor`"),
])
def test_build_errors(build, error, match):
    with tf.Graph().as_default(), pytest.raises(error, match=match):
        build()


def _sparse(indices, shape):
    return tf.SparseTensor(indices, list(range(len(indices))), shape)


@pytest.mark.parametrize("build,match", [
    (lambda: tf.sets.size(_sparse([[0, 1], [0, 0]], [2, 2])),
     r"indices\[1\] = \[0,0\] is out of order. Many sparse ops require sorted indices"),
    (lambda: tf.sets.size(_sparse([[0, 1], [0, 3]], [2, 2])),
     r"indices\[1\] = \[0,3\] is out of bounds: need 0 <= index < \[2,2\]"),
    (lambda: tf.sets.size(_sparse([[0, 1], [0, 1]], [2, 2])), r"indices\[1\] = \[0,1\] is "
     "repeated"),
    (lambda: tf.sets.size(_sparse([[0], [1]], [2])), "Invalid rank 1."),
    (lambda: tf.sets.union(tf.constant([[1, 2]]), _sparse([[0, 1], [1, 0]], [2, 2])),
     r"Mismatched shapes \[1\] vs \[2\]"),
    (lambda: tf.sets.union(_sparse([[0, 1], [1, 0]], [2, 2]), _sparse([[0, 1]], [3, 4])),
     r"Mismatched shapes \[2\] vs \[3\]"),
    (lambda: tf.sets.union(tf.placeholder_with_default([[1, 2], [3, 4]], [None, None]),
                           tf.placeholder_with_default([[1, 2, 3]], [None, None])),
     r"Mismatched shapes \[2\] vs \[1\]"),
])
def test_run_time_errors(build, match):
    with tf.Graph().as_default():
        out = build()
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(out)


def test_validate_indices_false_accepts_unsorted_indices():
    sizes = _run(tf.sets.size(_sparse([[0, 1], [0, 0]], [2, 2]), validate_indices=False))
    np.testing.assert_array_equal(sizes, [2, 0])
