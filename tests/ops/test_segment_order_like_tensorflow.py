"""SegmentSum and SegmentMean add in TensorFlow's order, so their float results are TF's bits
(kernels/segment_order.py). Each digest below is of the output TF 2.21 computed from the same
seeded inputs; runs of 1, 2, 15, 16, 17, 3 and 40 rows, with gaps between the ids, cover the
copied single row, the sequential runs and the interleaved packet columns."""
import hashlib

import numpy as np
import pytest

import tensorweave as tf

LENGTHS = [1, 2, 15, 16, 17, 3, 40]
TF_DIGESTS = {
    ("float16", 1, "segment_sum"): "45f2a5ae8961ed85",
    ("float16", 1, "segment_mean"): "450609df3644579c",
    ("float16", 9, "segment_sum"): "8fd4d8923b22d998",
    ("float16", 9, "segment_mean"): "731463cff67bb724",
    ("float16", 16, "segment_sum"): "a097ad8dc9c530e8",
    ("float16", 16, "segment_mean"): "8d558fe2d163c00f",
    ("float32", 1, "segment_sum"): "a9deae27d4ec05f8",
    ("float32", 1, "segment_mean"): "7903774aa8662dcf",
    ("float32", 9, "segment_sum"): "acd21402e80c28e0",
    ("float32", 9, "segment_mean"): "69e95a91663aedf0",
    ("float32", 16, "segment_sum"): "e05f12b95ccf667c",
    ("float32", 16, "segment_mean"): "27cc28490ac0d6d4",
    ("float64", 1, "segment_sum"): "e909d6685d37c206",
    ("float64", 1, "segment_mean"): "5deb968b69e2c108",
    ("float64", 9, "segment_sum"): "95e9834f8d3b5346",
    ("float64", 9, "segment_mean"): "5b34dfe55b660551",
    ("float64", 16, "segment_sum"): "e55748e42ed3166a",
    ("float64", 16, "segment_mean"): "1d75e2ad2e870b32",
}


def _inputs(dtype, inner):
    rng = np.random.RandomState(inner)
    n = sum(LENGTHS)
    data = (rng.uniform(-1, 1, (n, inner)) * 10 ** rng.uniform(-2, 2, (n, inner))).astype(dtype)
    return data, np.repeat(np.arange(len(LENGTHS)) * 2, LENGTHS).astype(np.int32)


@pytest.mark.parametrize("dtype,inner,op", sorted(TF_DIGESTS))
def test_float_segment_sums_round_as_tensorflow(dtype, inner, op):
    data, ids = _inputs(dtype, inner)
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(getattr(tf, op)(data, ids))
    assert hashlib.sha256(out.tobytes()).hexdigest()[:16] == TF_DIGESTS[dtype, inner, op]


def test_embedding_lookup_sparse_sums_as_tensorflow():
    """The case that showed it: 8/7 twice plus 3 * 5/7 is 4.4285717 in TF's order (4.428571
    pairwise)."""
    table = np.arange(12, dtype=np.float32).reshape(4, 3) / np.float32(7)
    with tf.Graph().as_default(), tf.Session() as sess:
        indices = [[0, 0], [0, 1], [0, 2]]
        ids = tf.SparseTensor(indices, tf.constant([2, 2, 1], tf.int64), [1, 3])
        weights = tf.SparseTensor(indices, [1.0, 1.0, 3.0], [1, 3])
        out = sess.run(tf.nn.embedding_lookup_sparse(table, ids, weights, combiner="sum"))
    assert out[0, 2] == np.float32(4.4285717)


def test_signed_zeros_as_tensorflow():
    """A one-row segment is copied (-0.0 stays); a sum of several rows starts from +0.0."""
    with tf.Graph().as_default(), tf.Session() as sess:
        one = sess.run(tf.segment_sum(np.array([[-0.0, 1.0]], np.float32), [0]))
        two = sess.run(tf.segment_sum(np.array([[-0.0, 1.0], [-0.0, 2.0]], np.float32), [0, 0]))
        many = sess.run(tf.segment_sum(np.full((20, 8), -0.0, np.float32),
                                       np.zeros(20, np.int32)))
        mean = sess.run(tf.segment_mean(np.array([[-0.0, 1.0]], np.float32), [0]))
    assert np.signbit(one).tolist() == [[True, False]]
    assert not np.signbit(two).any() and not np.signbit(many).any()
    assert np.signbit(mean).tolist() == [[True, False]]


def _reference_sums(data, lengths, interleaved):
    """The documented order, one run and one column at a time."""
    lanes = {np.float32: 8, np.float16: 8, np.float64: 4}[data.dtype.type] if interleaved else 0
    sums, start = [], 0
    for length in lengths:
        rows = data[start:start + length].reshape(length, -1)
        start += length
        if length == 1:
            sums.append(rows[0].copy())
            continue
        total = np.zeros(rows.shape[1], data.dtype)
        for row in rows:
            total = total + row
        packed = rows.shape[1] // lanes * lanes if lanes and length >= 16 else 0
        if packed:
            whole = length // 4 * 4
            parts = []
            for k in range(4):
                part = np.zeros(packed, data.dtype)
                for row in rows[k:whole:4, :packed]:
                    part = part + row
                parts.append(part)
            head = ((parts[0] + parts[1]) + parts[2]) + parts[3]
            for row in rows[whole:, :packed]:
                head = head + row
            total[:packed] = head
        sums.append(total)
    return np.array(sums).reshape((len(lengths),) + data.shape[1:])


@pytest.mark.parametrize("lengths", [[15] + [1] * 100, [3, 16, 1, 2, 33, 7, 64]],
                         ids=["mostly-single-runs", "mixed"])
@pytest.mark.parametrize("shape", [(), (5,), (2, 8), (20,)])
def test_sums_follow_the_documented_order(lengths, shape):
    rng = np.random.RandomState(len(shape))
    data = (rng.uniform(-1, 1, (sum(lengths),) + shape)
            * 10 ** rng.uniform(-3, 3, (sum(lengths),) + shape)).astype(np.float32)
    ids = np.repeat(np.arange(len(lengths)), lengths)
    with tf.Graph().as_default(), tf.Session() as sess:
        total, mean = sess.run([tf.segment_sum(data, ids), tf.segment_mean(data, ids)])
    np.testing.assert_array_equal(total, _reference_sums(data, lengths, True))
    counts = np.array(lengths, np.float32).reshape((-1,) + (1,) * len(shape))
    np.testing.assert_array_equal(mean, _reference_sums(data, lengths, False) / counts)
