"""tf.multinomial / tf.random.categorical and their stateless twins: TensorFlow 2.21's indices.

Every expected value below was printed by TensorFlow 2.21 (tf.compat.v1, CPU) for the same
program, one process per `intra_op_parallelism_threads` (TF sizes its intra-op pool once per
process). Small outputs are spelled out; large ones are compared by the first 16 hex digits of
the SHA-256 of their int64 bytes (`_digest`). The sharded cases are large enough for TF to split
the rows over its intra-op threads, so their values depend on the thread count.
"""
import hashlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.kernels import multinomial

INF = np.inf


def _digest(values) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, np.int64).tobytes()).hexdigest()[:16]


def _logits(rows, classes, seed):
    return np.random.RandomState(seed).randn(rows, classes).astype(np.float32)


def _runs(build, runs=2, threads=0, feed=None):
    """`runs` runs of the tensor `build()` makes, in one session with `threads` intra-op
    threads (0: TF's default, the cores)."""
    with tf.Graph().as_default():
        t = build()
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            return [sess.run(t, feed) for _ in range(runs)]


def _graph_seed_only():
    tf.set_random_seed(1234)
    tf.multinomial(_logits(2, 3, 4), 1)     # takes the graph's op seed 0
    return tf.multinomial(_logits(2, 6, 5), 10)


# name: (build, dtype, TensorFlow's values run after run in one session)
SMALL = {
    "batch_1": (lambda: tf.multinomial(np.linspace(-2, 2, 10, dtype=np.float32)[None], 9, seed=5),
                np.int64, [[[5, 8, 9, 9, 4, 8, 7, 9, 9]], [[5, 0, 9, 8, 9, 7, 5, 8, 5]],
                           [[6, 8, 8, 9, 9, 5, 9, 7, 8]]]),
    "rows_7_samples": (lambda: tf.random.categorical(_logits(3, 5, 1), 7, seed=11), np.int64,
                       [[[3, 0, 0, 0, 0, 4, 0], [1, 4, 1, 3, 1, 1, 1], [4, 4, 0, 0, 0, 0, 1]],
                        [[1, 0, 4, 4, 3, 4, 0], [1, 1, 1, 1, 4, 1, 1], [4, 4, 0, 0, 0, 2, 0]]]),
    # No finite logit -> num_classes; +inf and NaN have probability 0.
    "non_finite_int32": (lambda: tf.multinomial(np.array(
        [[-INF] * 4, [INF, np.nan, 0.0, -INF], [1.0, -INF, 2.0, 0.5]], np.float32), 6, seed=3,
        output_dtype=tf.int32), np.int32,
        [[[4] * 6, [2] * 6, [2, 2, 0, 0, 2, 0]], [[4] * 6, [2] * 6, [0, 3, 2, 2, 2, 0]]]),
    "float16": (lambda: tf.multinomial(_logits(3, 4, 2).astype(np.float16), 5, seed=8), np.int64,
                [[[3, 3, 3, 3, 3], [2, 2, 0, 1, 2], [3, 3, 3, 3, 3]],
                 [[3, 3, 3, 1, 3], [2, 2, 2, 2, 1], [2, 3, 3, 0, 3]]]),
    "float64_int32": (lambda: tf.random.categorical(_logits(4, 5, 3).astype(np.float64), 5,
                                                    seed=9, dtype=tf.int32), np.int32,
                      [[[1, 0, 4, 0, 0], [3, 2, 1, 0, 4], [3, 3, 2, 1, 3], [3, 1, 1, 3, 3]],
                       [[0, 3, 2, 0, 1], [3, 0, 1, 3, 3], [3, 2, 3, 3, 2], [3, 3, 3, 3, 3]]]),
    "graph_seed_only": (_graph_seed_only, np.int64,
                        [[[2, 2, 2, 2, 2, 2, 2, 3, 2, 5], [5, 5, 0, 2, 2, 1, 0, 5, 0, 4]],
                         [[2, 4, 2, 5, 2, 2, 2, 2, 1, 2], [3, 2, 4, 4, 2, 3, 0, 3, 3, 2]]]),
}


@pytest.mark.parametrize("name", SMALL)
def test_small_outputs_run_after_run(name):
    build, dtype, expected = SMALL[name]
    got = _runs(build, runs=len(expected))
    for value, want in zip(got, expected):
        assert value.dtype == dtype
        np.testing.assert_array_equal(value, want)


# name: (build, {intra-op threads: TensorFlow's digests of two runs})
SHARDED = {
    "64x50_40_samples": (lambda: tf.multinomial(_logits(64, 50, 6), 40, seed=12), {
        1: ["c41a5147fd3d017b", "325a72d620a8d0dd"], 2: ["b0dee8414b70e3c6", "0a089683bda3fc03"],
        3: ["9b8bc3f162058c2f", "4cad878cfe76ba93"], 5: ["294b3f92c2d2a135", "9d1174fb5346164d"]}),
    "200x20_33_samples": (lambda: tf.multinomial(_logits(200, 20, 7), 33, seed=13), {
        1: ["2fa90eb840421426", "08ae7214f1b6ee97"], 2: ["06b7c970019d505b", "54af3ae363473465"],
        3: ["9cb9df3ab2334397", "00537509989c8ffc"], 5: ["85e6637bee8e6e9d", "f66d9e7bcce022b8"]}),
    "40x1000_2_samples": (lambda: tf.multinomial(_logits(40, 1000, 8), 2, seed=14), {
        1: ["6249145f58e801ff", "8d57d77bbe46336d"], 2: ["9fde8ca934e35110", "6c568d9c3c89d15b"],
        3: ["ff1760cdd2426aef", "45ed9b3acb7d7988"], 5: ["7f04b544eb27e956", "a3b8870f1ae782b1"]}),
    "7x3_100000_samples": (lambda: tf.multinomial(_logits(7, 3, 9), 100000, seed=15), {
        1: ["e4b529b16bb5c010", "f5b39917cc0a041f"], 2: ["f7396168ab8ec1d7", "5deada5f1c1227d4"],
        3: ["7575670e8be2113f", "548c5c4edb296498"], 5: ["f7396168ab8ec1d7", "5deada5f1c1227d4"]}),
    "300x100_17_samples_float16_int32": (lambda: tf.multinomial(
        _logits(300, 100, 10).astype(np.float16), 17, seed=16, output_dtype=tf.int32), {
        1: ["a20424e822fe3cbd", "7a80a82469fac412"], 2: ["d1a87f70b3d9e8a3", "244e0809f0b6af8b"],
        3: ["3b85ebd1288ffc93", "f42a297378286efc"], 5: ["587e45258ef31ad9", "fbf4253e693fbdcb"]}),
}


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
@pytest.mark.parametrize("name", SHARDED)
def test_sharded_rows_run_after_run(name, threads):
    build, digests = SHARDED[name]
    assert [_digest(v) for v in _runs(build, threads=threads)] == digests[threads]


def test_shard_boundary_rows():
    """Rows 7 and 8 of 64x50_40_samples at 2 threads: TF's first two shards (8 rows each) end
    and start there; row 8's stream starts 8 * 43 // 4 = 86 blocks in, inside row 4's draws."""
    first = _runs(SHARDED["64x50_40_samples"][0], runs=1, threads=2)[0]
    np.testing.assert_array_equal(first[7], [
        17, 2, 27, 16, 19, 46, 21, 17, 2, 4, 6, 29, 45, 42, 18, 1, 17, 18, 12, 12, 49, 23, 24, 4,
        13, 19, 6, 10, 12, 25, 32, 17, 8, 31, 41, 21, 36, 12, 30, 15])
    np.testing.assert_array_equal(first[8], [
        33, 26, 12, 13, 13, 26, 21, 16, 12, 18, 13, 5, 22, 26, 47, 9, 4, 42, 9, 26, 16, 26, 49, 33,
        16, 42, 6, 31, 42, 46, 33, 21, 2, 28, 14, 16, 21, 2, 26, 40])


# Stateless, (64, 50) logits, 40 samples, seed [3, 4]; and (40, 1000) float64, 2 samples,
# seed [-7, 9], int32: TensorFlow's digests by intra-op threads.
STATELESS_64x50 = {1: "02561e3ec2c8da0a", 2: "63aca727ce4a7ab5", 3: "66267c3180cabfa4",
                   5: "4d77dd15c89287ab"}
STATELESS_40x1000 = {1: "32e5b20d1960158d", 2: "c5da8dacb09cd637", 3: "9d910fb86d5b3e42",
                     5: "0f0dc311b7c1d642"}


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_stateless_fed_logits_shard_like_tensorflow(threads):
    def build():
        logits = tf.placeholder(tf.float32, [64, 50], name="logits")
        return tf.random.stateless_categorical(logits, 40, [3, 4])
    with tf.Graph().as_default():
        out = build()
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
            value = sess.run(out, {"logits:0": _logits(64, 50, 6)})
    assert _digest(value) == STATELESS_64x50[threads]


def test_dataset_functions_do_not_shard(monkeypatch):
    """TF runs a tf.data function's kernels unsharded, whatever the session's threads and the
    dataset's max_intra_op_parallelism: the one-thread values."""
    monkeypatch.setattr(multinomial, "_cores", lambda: 2)
    logits = _logits(64, 50, 6)
    options = tf.data.Options()
    options.threading.max_intra_op_parallelism = 2
    for opts in (None, options):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(1).map(
                lambda _: tf.random.stateless_categorical(logits, 40, [3, 4]))
            ds = ds if opts is None else ds.with_options(opts)
            value = tf.data.make_one_shot_iterator(ds).get_next()
            with tf.Session() as sess:
                assert _digest(sess.run(value)) == STATELESS_64x50[1]


def test_stateless_constant_logits_fold_with_the_cores(monkeypatch):
    """Constant inputs fold before any session runs: with the default thread count, the cores
    (here made 2, this machine's count when TensorFlow printed the values)."""
    monkeypatch.setattr(multinomial, "_cores", lambda: 2)
    got = _runs(lambda: tf.random.stateless_categorical(_logits(64, 50, 6), 40, [3, 4]), runs=1)
    assert _digest(got[0]) == STATELESS_64x50[2]
    wide = _runs(lambda: tf.random.stateless_multinomial(
        _logits(40, 1000, 8).astype(np.float64), 2, [-7, 9], output_dtype=tf.int32), runs=1)
    assert wide[0].dtype == np.int32 and _digest(wide[0]) == STATELESS_40x1000[2]


def test_empty_outputs_do_not_move_the_stream():
    """TF reserves Philox blocks only for a nonempty output."""
    probs = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]], np.float32))
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        logits = tf.placeholder(tf.float32, [None, 4])
        t = tf.multinomial(logits, n, seed=21)
        with tf.Session() as sess:
            got = [sess.run(t, {n: k, logits: lg})
                   for k, lg in ((3, probs), (0, probs), (3, probs[:0]), (3, probs))]
    np.testing.assert_array_equal(got[0], [[2, 0, 1], [2, 1, 3]])
    assert got[1].shape == (2, 0) and got[2].shape == (0, 3)
    np.testing.assert_array_equal(got[3], [[2, 2, 3], [1, 1, 1]])


@pytest.mark.parametrize("total, cost, threads, blocks", [
    (1, 10**9, 4, [(0, 1)]),                       # one row: inline
    (100, 1000, 2, [(0, 100)]),                    # 1e5 cycles: not worth a second thread
    (64, 13787, 2, [(k, k + 8) for k in range(0, 64, 8)]),        # 4 blocks a thread
    (64, 13787, 3, [(k, min(k + 11, 64)) for k in range(0, 64, 11)]),
    (7, 7924962, 2, [(0, 2), (2, 4), (4, 6), (6, 7)]),
    (7, 7924962, 5, [(0, 2), (2, 4), (4, 6), (6, 7)]),
    # 40000 / cost = 100 rows a block, grown to 125 for 8 blocks on 4 threads
    (1000, 400, 4, [(k, k + 125) for k in range(0, 1000, 125)]),
])
def test_shard_ranges_are_eigens_parallel_for_blocks(total, cost, threads, blocks):
    assert multinomial.shard_ranges(total, cost, threads) == blocks


def test_row_cost_is_tensorflows_int64():
    assert multinomial.row_cost(50, 40) == 13787      # 50 * (40 * log2(50) + 50), truncated
    assert multinomial.row_cost(1, 7) == 50


def test_runtime_errors_in_tensorflows_order():
    with tf.Graph().as_default():
        logits, n = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        out = tf.multinomial(logits, n, seed=1)
        with tf.Session() as sess:
            for shape, num, message in (
                    ([3], 2, r"logits should be a matrix, got shape \[3\]"),
                    ([2, 3], [2], r"num_samples should be a scalar, got shape \[1\]"),
                    ([2, 3], -2, "num_samples should be non-negative, got -2"),
                    ([0, 0], 0, "num_classes should be positive, got 0")):
                with pytest.raises(errors.InvalidArgumentError, match=message):
                    sess.run(out, {logits: np.zeros(shape), n: num})
