"""FractionalMaxPool / FractionalAvgPool draw TensorFlow 2.21's pooling sequences bit for bit,
and pool (and FractionalAvgPoolGrad spreads) with its arithmetic.

The expected values were printed by TF 2.21 (tf.compat.v1.nn.fractional_*_pool with
`deterministic=True` and the seeds shown) and are hard-coded: TF is not needed here.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.kernels.fractional_pool import pooling_sequence
from tensorweave.kernels.random_philox import PhiloxStream
from tensorweave.ops.nn_fractional_pool_ops import FractionalAvgPoolGrad

# (input [height, width], pooling ratio [rows, cols], pseudo_random, seed, seed2):
# TF's (row_pooling_sequence, col_pooling_sequence).
TF_SEQUENCES = [
    (([7, 6], [1.6, 1.4], False, 3, 7), ([0, 2, 4, 5, 7], [0, 1, 3, 4, 6])),
    (([7, 6], [1.6, 1.4], True, 3, 7), ([0, 2, 4, 6, 7], [0, 2, 4, 5, 6])),
    (([50, 23], [1.44, 1.73], False, 1, 2),
     ([0, 2, 4, 5, 7, 9, 10, 12, 13, 15, 17, 19, 20, 22, 23, 24, 26, 28, 29, 30, 31, 33, 35, 36,
       38, 39, 41, 42, 43, 44, 45, 46, 48, 49, 50],
      [0, 2, 4, 6, 8, 9, 11, 12, 14, 16, 18, 20, 22, 23])),
    (([50, 23], [1.44, 1.73], True, 1, 2),
     ([0, 1, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 20, 22, 23, 25, 26, 28, 29, 31, 32, 34,
       35, 37, 38, 40, 41, 43, 44, 45, 47, 48, 50],
      [0, 2, 3, 5, 7, 9, 10, 12, 14, 16, 18, 19, 21, 23])),
    (([100, 37], [2.7, 1.3], False, 5, 0),
     ([0, 2, 5, 8, 11, 14, 17, 20, 22, 25, 27, 30, 33, 35, 38, 41, 43, 46, 49, 51, 54, 56, 59,
       61, 64, 67, 70, 73, 75, 78, 81, 84, 87, 90, 92, 94, 97, 100],
      [0, 2, 3, 4, 6, 8, 9, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 23, 24, 25, 26, 27, 29, 30,
       32, 33, 35, 36, 37])),
    (([100, 37], [2.7, 1.3], True, 0, 9),
     ([0, 3, 6, 8, 11, 14, 17, 19, 22, 25, 27, 30, 33, 36, 38, 41, 44, 46, 49, 52, 54, 57, 60,
       63, 65, 68, 71, 73, 76, 79, 81, 84, 87, 90, 92, 95, 98, 100],
      [0, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 24, 26, 27, 28, 30, 31,
       32, 34, 35, 36, 37])),
    (([8, 9], [2, 3], True, 11, 12), ([0, 2, 4, 6, 8], [0, 3, 6, 9])),
    (([8, 9], [2, 3], False, 11, 12), ([0, 2, 4, 6, 8], [0, 3, 6, 9])),
    (([5, 5], [1, 1], True, -1, 123456789012), ([0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5])),
]


def _run(pool, x, ratio, pseudo_random, overlapping=False, seed=0, seed2=0, runs=1,
         deterministic=True):
    """`runs` runs of one op in one session, its input fed through a placeholder."""
    with tf.Graph().as_default(), tf.Session() as sess:
        p = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
        out = pool(p, [1.0, *ratio, 1.0], pseudo_random, overlapping, deterministic, seed, seed2)
        return [sess.run(list(out), {p: x}) for _ in range(runs)]


@pytest.mark.parametrize("case,expected", TF_SEQUENCES)
@pytest.mark.parametrize("pool", [tf.nn.fractional_max_pool, tf.nn.fractional_avg_pool])
def test_seeded_sequences_match_tensorflow(pool, case, expected):
    """Rows then columns from one fresh generator per run: every run repeats them."""
    size, ratio, pseudo_random, seed, seed2 = case
    x = np.zeros([2, *size, 3])
    for _, rows, cols in _run(pool, x, ratio, pseudo_random, seed=seed, seed2=seed2, runs=2):
        assert rows.tolist() == expected[0] and cols.tolist() == expected[1]


def test_pooling_sequence_reserves_what_tensorflow_does():
    """The row sequence (1 block pseudo-random, (n + 3) // 4 shuffled) moves the stream on to
    where the column sequence starts."""
    for (size, ratio, pseudo_random, seed, seed2), expected in TF_SEQUENCES:
        stream = PhiloxStream(seed, seed2)
        got = [pooling_sequence(stream, length, int(length // r), pseudo_random).tolist()
               for length, r in zip(size, ratio)]
        assert got == list(expected)


def test_pooled_values_match_tensorflow():
    """Float32 window means and maxima, bit for bit (TF's sums in window order)."""
    x = (np.arange(42, dtype=np.float32).reshape(1, 7, 6, 1) * np.float32(0.1)) ** 2
    [(avg, rows, cols)] = _run(tf.nn.fractional_avg_pool, x, [1.6, 1.4], True, True, 3, 7)
    assert rows.tolist() == [0, 2, 4, 6, 7] and cols.tolist() == [0, 2, 4, 5, 6]
    np.testing.assert_array_equal(avg.ravel(), np.array(
        [0.7366667, 1.0566667, 1.3450001, 1.4500002, 3.856667, 4.6566668, 5.3050003, 5.53,
         9.8566675, 11.136667, 12.145, 12.490001, 13.696667, 15.216667, 16.404999, 16.81],
        np.float32))
    [(top, rows, cols)] = _run(tf.nn.fractional_max_pool, x, [1.6, 1.4], False, False, 3, 7)
    assert rows.tolist() == [0, 2, 4, 5, 7] and cols.tolist() == [0, 1, 3, 4, 6]
    np.testing.assert_array_equal(top.ravel(), np.array(
        [0.36, 0.64000005, 0.81000006, 1.21, 3.2400002, 4.0, 4.410001, 5.29, 5.76, 6.7600007,
         7.2900004, 8.410001, 12.960001, 14.44, 15.210001, 16.81], np.float32))


def test_unseeded_ops_and_graph_seeds():
    """TF1's wrapper passes only the op's own seeds (a graph seed leaves them 0): without
    `deterministic` each run draws new seeds; with it and seeds (0, 0) a kernel keeps the
    pair it drew, and a new session draws another."""
    x = np.zeros([1, 40, 40, 1], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        out = tf.nn.fractional_max_pool(tf.zeros([1, 4, 4, 1]), [1.0, 1.5, 1.5, 1.0])
        assert (out.output.op.get_attr("seed"), out.output.op.get_attr("seed2")) == (0, 0)
    # Rows and columns together: one random sequence of 40 is one of C(26, 12) ~ 1e7, so
    # comparing rows alone would find two draws equal about once in a million test runs.
    for deterministic in (False, True):
        runs = [(rows.tolist(), cols.tolist()) for _session in range(2)
                for _, rows, cols in _run(tf.nn.fractional_max_pool, x, [1.5, 1.5], False,
                                          deterministic=deterministic, runs=3)]
        same = [runs[0] == r for r in runs[1:]]
        assert same == ([True, True, False, False, False] if deterministic else [False] * 5)


@pytest.mark.parametrize("dtype,expected", [(np.int32, [0, 2, 2, 6]),
                                            (np.float32, [0.75, 2.25, 2.25, 6.75])])
def test_avg_pool_grad_accumulates_in_float64(dtype, expected):
    """TF sums dy / window size in double and casts once: integer shares are not truncated
    one by one (overlapping windows of sizes 4, 2, 2 and 1 over a 2 x 2 input)."""
    seq = np.array([0, 1, 2], np.int64)
    with tf.Graph().as_default(), tf.Session() as sess:
        dx = apply_op(FractionalAvgPoolGrad, [np.array([1, 2, 2, 1], np.int64),
                                              np.full([1, 2, 2, 1], 3, dtype), seq, seq],
                      {"overlapping": True})
        got = sess.run(dx)
    assert got.dtype == dtype and got.ravel().tolist() == expected
