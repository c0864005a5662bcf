"""SparseCrossV2 (tf.sparse.cross) and SparseCross (tf.sparse.cross_hashed): forward against a
Python reference of TensorFlow's cross order, hashes against values captured from TensorFlow
2.21, shapes, graph structure and errors."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.string_hash import hash_strings
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, sparse, triple

I64, STR = tf.int64, tf.string
# Batch of 4: row 2 is empty in both sparse columns; row 1 has several features.
A_IND = np.array([[0, 0], [1, 0], [1, 1], [3, 0]], np.int64)
A_VAL = np.array([b"a", b"b", b"c", b"dd"], object)
I_IND = np.array([[0, 0], [1, 0], [1, 2], [3, 1]], np.int64)
I_VAL = np.array([5, -7, 12345678901, 0], np.int64)
DENSE = np.array([[b"x", b"y"], [b"z", b"w"], [b"u", b"v"], [b"q", b"r"]], object)
DENSE_INT = np.array([[1], [2], [3], [-4]], np.int32)
SHAPE_A, SHAPE_I = np.array([4, 2], np.int64), np.array([4, 3], np.int64)
MASK = 2**64 - 1


def _row_features(columns, b):
    """Row b's features per column: (indices, values) sparse columns, then dense matrices."""
    return [list(c[1][c[0][:, 0] == b]) if isinstance(c, tuple) else list(c[b])
            for c in columns]


def _cross_ref(columns, combine, batch=4):
    """TensorFlow's order: per row, itertools.product over the columns (last fastest)."""
    indices, values, widest = [], [], 0
    for b in range(batch):
        crosses = list(itertools.product(*_row_features(columns, b)))
        widest = max(widest, len(crosses))
        indices += [[b, k] for k in range(len(crosses))]
        values += [combine(c) for c in crosses]
    return [np.array(indices, np.int64).reshape(-1, 2), np.array(values, dtype=object
                                                                 if values and isinstance(
                                                                     values[0], bytes)
                                                                 else np.int64),
            np.array([batch, widest], np.int64)]


def _text(v):
    return v if isinstance(v, bytes) else str(int(v)).encode()


def _joined(sep):
    return lambda cross: sep.join(_text(v) for v in cross)


def _cat64(fp1, fp2):
    """FingerprintCat64 in Python integers (the reference for the NumPy version)."""
    mul = 0xC6A4A7935BD1E995

    def shift_mix(v):
        return v ^ (v >> 47)
    result = fp1 ^ mul
    result ^= (shift_mix((fp2 * mul) & MASK) * mul) & MASK
    result = (result * mul) & MASK
    result = (shift_mix(result) * mul) & MASK
    return shift_mix(result)


def _hashed(num_buckets, key=0xDECAFCAFFE):
    def combine(cross):
        h = key
        for v in cross:
            h = _cat64(h, int(hash_strings([v])[0]) if isinstance(v, bytes) else int(v) & MASK)
        return h % num_buckets if num_buckets > 0 else h % (2**63 - 1)
    return combine


CASES = [
    OpCase("sparse_cross_sparse_dense_int",
           lambda ai, av, s, d, ii, iv, s2: triple(tf.sparse.cross(
               [sparse(ai, av, s), d, sparse(ii, iv, s2)])),
           lambda ai, av, s, d, ii, iv, s2: _cross_ref([(ai, av), (ii, iv), d], _joined(b"_X_")),
           [A_IND, A_VAL, SHAPE_A, DENSE, I_IND, I_VAL, SHAPE_I], dtypes=(I64,),
           fixed_dtypes=(I64, STR, I64, STR, I64, I64, I64), grad=False),
    OpCase("sparse_cross_separator_int32_dense",
           lambda d, ai, av, s, di: triple(tf.sparse.cross([d, sparse(ai, av, s), di],
                                                           separator="--")),
           lambda d, ai, av, s, di: _cross_ref([(ai, av), d, di], _joined(b"--")),
           [DENSE, A_IND, A_VAL, SHAPE_A, DENSE_INT], dtypes=(tf.int32,),
           fixed_dtypes=(STR, I64, STR, I64, None), grad=False),
    OpCase("sparse_cross_with_empty_column",
           lambda ai, av, s: triple(tf.sparse.cross(
               [sparse(ai, av, s), tf.SparseTensor(tf.zeros([0, 2], I64),
                                                   tf.constant([], STR), [4, 5])])),
           lambda ai, av, s: _cross_ref([(ai, av), (np.zeros((0, 2), np.int64),
                                                    np.array([], object))], _joined(b"_X_")),
           [A_IND, A_VAL, SHAPE_A], dtypes=(I64,), fixed_dtypes=(I64, STR, I64), grad=False),
    OpCase("sparse_cross_hashed_buckets",
           lambda ai, av, s, d, ii, iv, s2: triple(tf.sparse.cross_hashed(
               [sparse(ai, av, s), d, sparse(ii, iv, s2)], num_buckets=100)),
           lambda ai, av, s, d, ii, iv, s2: _cross_ref([(ai, av), (ii, iv), d], _hashed(100)),
           [A_IND, A_VAL, SHAPE_A, DENSE, I_IND, I_VAL, SHAPE_I], dtypes=(I64,),
           fixed_dtypes=(I64, STR, I64, STR, I64, I64, I64), grad=False),
    OpCase("sparse_cross_hashed_key_no_buckets",
           lambda d, ai, av, s: triple(tf.sparse.cross_hashed([d, sparse(ai, av, s)],
                                                              hash_key=12345)),
           lambda d, ai, av, s: _cross_ref([(ai, av), d], _hashed(0, 12345)),
           [DENSE, A_IND, A_VAL, SHAPE_A], dtypes=(I64,), fixed_dtypes=(STR, I64, STR, I64),
           grad=False),
    OpCase("sparse_cross_hashed_int_only",
           lambda ii, iv, s2, di: triple(tf.sparse.cross_hashed([sparse(ii, iv, s2), di],
                                                                num_buckets=7)),
           lambda ii, iv, s2, di: _cross_ref([(ii, iv), di], _hashed(7)),
           [I_IND, I_VAL, SHAPE_I, DENSE_INT], dtypes=(tf.int32,),
           fixed_dtypes=(I64, I64, I64, None), grad=False),
]

test_forward, test_shapes = case_tests(CASES)

# Captured from TensorFlow 2.21 (tf.compat.v1 graph mode) on the inputs above.
TF_HASHED = {
    "buckets_100": [31, 40, 13, 71, 66, 86, 40, 29, 39, 24, 13, 66],
    "no_buckets": [1484974617627318892, 3920818148696658747, 2212269421006233460,
                   3635312390071628983, 5890530401397985473, 708001509833549428,
                   534825066155937688, 8998435994872348981],
    "key_12345": [5119037102409852142, 5706609467428979456, 8871756423397737736,
                  8400368741917839608, 3673261055230633092, 1807776436002034880,
                  6355200388836173936, 6885690496951410227],
    "int_7": [5, 0, 2, 3],
    "dense_int_only": [5199413699614396413, 5167850198417433268, 1424184489956106035,
                       7747622190617795195],
}


def test_hashes_match_tensorflow():
    with tf.Graph().as_default():
        a = tf.SparseTensor(A_IND, tf.constant(A_VAL), SHAPE_A)
        i = tf.SparseTensor(I_IND, tf.constant(I_VAL), SHAPE_I)
        d, di = tf.constant(DENSE), tf.constant(DENSE_INT)
        outs = {"buckets_100": tf.sparse.cross_hashed([a, d, i], num_buckets=100),
                "no_buckets": tf.sparse.cross_hashed([a, d], num_buckets=0),
                "key_12345": tf.sparse.cross_hashed([d, a], hash_key=12345),
                "int_7": tf.sparse.cross_hashed([i, di], num_buckets=7),
                "dense_int_only": tf.sparse.cross_hashed([di])}
        with tf.Session() as sess:
            got = sess.run({k: v.values for k, v in outs.items()})
    for key, want in TF_HASHED.items():
        assert got[key].dtype == np.int64
        np.testing.assert_array_equal(got[key], want, err_msg=key)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        a = tf.SparseTensor(A_IND, tf.constant(A_VAL), SHAPE_A)
        i = tf.SparseTensor(I_IND, tf.constant(I_VAL), SHAPE_I)
        d = tf.constant(DENSE)
        crossed = tf.sparse.cross([a, d, i])
        op = crossed.indices.op
        assert (op.type, op.name) == ("SparseCrossV2", "SparseCrossV2")
        assert op.get_attr("sparse_types") == [tf.string, tf.int64]
        assert op.get_attr("dense_types") == [tf.string] and op.get_attr("N") == 2
        assert [t.shape.as_list() for t in triple(crossed)] == [[None, 2], [None], [2]]
        hashed = tf.sparse.cross_hashed([a, d, i], num_buckets=100).indices.op
        assert (hashed.type, hashed.name) == ("SparseCross", "SparseCross")
        assert hashed.get_attr("hash_key") == 956888297470
        assert hashed.get_attr("internal_type") == tf.int64
        assert hashed.get_attr("out_type") == tf.int64 and hashed.get_attr("hashed_output")
        assert tf.sparse.cross_hashed([a, d]).indices.op.get_attr("internal_type") == tf.string
        floats = tf.SparseTensor(A_IND, tf.constant([1.0, 2.0, 3.0, 4.0]), SHAPE_A)
        assert tf.gradients(tf.sparse.cross_hashed([floats]).values, floats.values) == [None]


def test_build_errors():
    with tf.Graph().as_default():
        a = tf.SparseTensor(A_IND, tf.constant(A_VAL), SHAPE_A)
        with pytest.raises(TypeError, match="Inputs must be a list"):
            tf.sparse.cross(a)
        with pytest.raises(TypeError, match="All inputs must be Tensor or SparseTensor."):
            tf.sparse.cross([a, DENSE])
        with pytest.raises(TypeError, match="All inputs must be SparseTensors"):
            tf.sparse.cross_hashed([a, [["x"]]])


@pytest.mark.parametrize("build,message", [
    (lambda a: tf.sparse.cross([tf.SparseTensor([[0, 0]], ["a"], [3, 2]), tf.constant(DENSE)]),
     "Expected batch size 3 got 4 at dense tensor 0"),
    (lambda a: tf.sparse.cross_hashed([a, tf.constant([["a"]])]),
     "Expected batch size 4 got 1 at dense tensor 0"),
    (lambda a: tf.sparse.cross([a, tf.SparseTensor([[0, 0]], ["a"], [3, 2])]),
     "Expected batch size 4 got 3 at position 1"),
    (lambda a: tf.sparse.cross([a, tf.SparseTensor([[0, 0, 0]], ["a"], [4, 2, 1])]),
     "Expected D2 of index to be 2 got 3 at position 1"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(tf.SparseTensor(A_IND, tf.constant(A_VAL), SHAPE_A)), message)
