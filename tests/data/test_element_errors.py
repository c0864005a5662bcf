"""An element that fails is reported by get_next, and the iterator goes on after it.

Each expected sequence is what TensorFlow 2.21 gave for the same pipeline (run through
compat.v1 with a one-shot iterator): values, "ERR" for an InvalidArgumentError from get_next,
"END" for OutOfRangeError. `bad` fails where x % 4 == 2 (integer division by zero), `bad3`
where x % 4 == 3, `bad5` where x % 5 == 4.
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset
E = tf.data.experimental


def bad(x):
    return 10 // (x % 4 - 2)


def bad3(x):
    return 10 // (x % 4 - 3)


def bad5(x):
    return 10 // (x % 5 - 4)


def fill_bad(x):
    return tf.fill([2], bad(x))


CASES = {
    "map": (lambda: D.range(8).map(bad), [-5, -10, "ERR", 10, -5, -10, "ERR", 10]),
    # map then batch is TensorFlow's fused map-and-batch: a failure fails its whole batch,
    # and the last partial batch is still computed under drop_remainder.
    "map_batch": (lambda: D.range(11).map(bad).batch(3),
                  ["ERR", [10, -5, -10], "ERR", "ERR"]),
    "map_batch_drop": (lambda: D.range(11).map(bad).batch(3, drop_remainder=True),
                       ["ERR", [10, -5, -10], "ERR", "ERR"]),
    "gather_batch": (lambda: D.range(11).map(lambda x: tf.gather([1, 2, 3, 4, 5, 6], x))
                     .batch(3), [[1, 2, 3], [4, 5, 6], "ERR", "ERR"]),
    # Not adjacent: the batch returns the error and drops what it had gathered.
    "map_filter_batch": (lambda: D.range(11).map(bad).filter(lambda x: x >= -100).batch(3),
                         ["ERR", [10, -5, -10], "ERR", [10, -5, -10], "ERR"]),
    # A map fused with batch takes its n inputs per batch whatever fails below it.
    "filter_then_map_batch": (lambda: D.range(10).map(bad).filter(lambda x: x > -100)
                              .map(lambda x: x * 2).batch(4), ["ERR", "ERR", [-10, -20]]),
    "filter_then_py_func_batch": (lambda: D.range(10).map(bad).filter(lambda x: x > -100)
                                  .map(lambda x: tf.py_func(lambda v: v * 2, [x], tf.int64))
                                  .batch(4), ["ERR", "ERR", [-10, -20]]),
    # Elements that cannot be stacked fail their batch, and the next batch goes on.
    "ragged_map_batch": (lambda: D.range(8).map(
        lambda x: tf.fill([tf.cast(x % 3 // 2, tf.int32) + 1], x)).batch(2),
        [[[0], [1]], "ERR", "ERR", [[6], [7]]]),
    "ragged_batch": (lambda: D.range(8).filter(lambda x: x < 100).map(
        lambda x: tf.fill([tf.cast(x % 3 // 2, tf.int32) + 1], x)).prefetch(1).batch(2),
        [[[0], [1]], "ERR", "ERR", [[6], [7]]]),
    "filter_predicate": (lambda: D.range(8).filter(lambda x: tf.not_equal(bad(x), 0)),
                         [0, 1, "ERR", 3, 4, 5, "ERR", 7]),
    "take": (lambda: D.range(8).map(bad).take(3), [-5, -10, "ERR", 10]),
    # TensorFlow's skip: an error ends a skipping attempt and what it skipped is not counted.
    "skip": (lambda: D.range(8).map(bad).skip(3), ["ERR", "ERR", 10]),
    "repeat": (lambda: D.range(4).map(bad).repeat(2), [-5, -10, "ERR", 10, -5, -10, "ERR", 10]),
    "cache_repeat": (lambda: D.range(4).map(bad).cache().repeat(2),
                     [-5, -10, "ERR", 10, -5, -10, 10]),
    "zip": (lambda: D.zip((D.range(6).map(bad), D.range(6))),
            [[-5, 0], [-10, 1], "ERR", [10, 3], [-5, 4], [-10, 5]]),
    "concatenate": (lambda: D.range(4).map(bad).concatenate(D.range(3)),
                    [-5, -10, "ERR", 10, 0, 1, 2]),
    "unbatch": (lambda: D.range(6).map(fill_bad).unbatch(),
                [-5, -5, -10, -10, "ERR", 10, 10, -5, -5, -10, -10]),
    # An element whose components' batch sizes differ fails alone.
    "unbatch_sizes_differ": (lambda: D.range(4).map(
        lambda x: (tf.fill([x % 3], x), tf.fill([1], x))).unbatch(),
        ["ERR", [1, 1], "ERR", "ERR"]),
    "rebatch_sizes_differ": (lambda: D.range(4).map(
        lambda x: (tf.fill([x % 3], x), tf.fill([1], x))).rebatch(1),
        ["ERR", [[1], [1]], "ERR", "ERR"]),
    "padded_batch": (lambda: D.range(7).map(lambda x: tf.fill([x % 3], bad(x)))
                     .padded_batch(2, padded_shapes=[None]),
                     [[[0], [-10]], "ERR", [[0], [-5]], "ERR"]),
    "map_map": (lambda: D.range(6).map(bad).map(lambda x: x * 2), [-10, -20, "ERR", 20, -10, -20]),
    "flat_map": (lambda: D.range(6).flat_map(lambda x: D.from_tensors(bad(x)).repeat(2)),
                 [-5, -5, -10, -10, "ERR", 10, 10, -5, -5, -10, -10]),
    "interleave": (lambda: D.range(6).interleave(
        lambda x: D.from_tensors(bad(x)).repeat(2), cycle_length=2),
        [-5, -10, -5, -10, "ERR", 10, -5, 10, -5, -10, -10]),
    "enumerate": (lambda: D.range(6).map(bad).enumerate(),
                  [[0, -5], [1, -10], "ERR", [3, 10], [4, -5], [5, -10]]),
    # TensorFlow's shard skips to its next index by a count that failures leave behind.
    "shard": (lambda: D.range(12).map(bad).shard(2, 0),
              [-5, "ERR", 10, -10, "ERR", -5, "ERR", 10]),
    "scan": (lambda: D.range(8).map(bad).apply(E.scan(tf.constant(0, tf.int64),
                                                      lambda s, x: (s + x, s + x))),
             [-5, -15, "ERR", -5, -10, -20, "ERR", -10]),
    "take_while": (lambda: D.range(8).map(bad).apply(E.take_while(lambda x: x < 100)),
                   [-5, -10, "ERR", 10, -5, -10, "ERR", 10]),
    "unique": (lambda: D.range(8).map(bad).apply(E.unique()), [-5, -10, "ERR", 10, "ERR"]),
    # A window holding a failure is that failure; failures it skips (stride, shift) are dropped.
    "window": (lambda: D.range(11).map(bad).window(3).flat_map(lambda w: w.batch(3)),
               ["ERR", [10, -5, -10], "ERR", "ERR"]),
    "window_drop": (lambda: D.range(11).map(bad).window(3, drop_remainder=True)
                    .flat_map(lambda w: w.batch(3)), ["ERR", [10, -5, -10], "ERR"]),
    "window_shift_1": (lambda: D.range(8).map(bad).window(3, shift=1)
                       .flat_map(lambda w: w.batch(3)),
                       ["ERR", "ERR", "ERR", [10, -5, -10], "ERR", "ERR", "ERR", [10]]),
    "window_shift_past": (lambda: D.range(12).map(bad).window(2, shift=5)
                          .flat_map(lambda w: w.batch(3)), [[-5, -10], "ERR", "ERR"]),
    "window_stride_skips": (lambda: D.range(12).map(bad3).window(3, shift=6, stride=2)
                            .flat_map(lambda w: w.batch(3)), [[-4, -10, -4], [-10, -4, -10]]),
    "window_take_inner": (lambda: D.range(11).map(bad).window(3).flat_map(lambda w: w.take(1)),
                          ["ERR", 10, "ERR", "ERR"]),
    "window_zip": (lambda: D.zip((D.range(8).map(bad), D.range(8))).window(3).flat_map(
        lambda a, b: D.zip((a.batch(3), b.batch(3)))),
        ["ERR", [[10, -5, -10], [3, 4, 5]], "ERR"]),
    "window_interleave": (lambda: D.range(11).map(bad).window(3).interleave(
        lambda w: w.batch(3), cycle_length=2), ["ERR", [10, -5, -10], "ERR", "ERR"]),
    # group_by_window passes a failure on at once and keeps its groups.
    "group_by_window": (lambda: D.range(12).map(bad).apply(E.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(2), window_size=2)),
        ["ERR", [-10, 10], [-5, -5], "ERR", [-10, 10], "ERR", [-10, 10], [-5]]),
    "group_by_window_key": (lambda: D.range(12).apply(E.group_by_window(
        lambda x: bad(x) % 2, lambda k, w: w.batch(2), window_size=2)),
        ["ERR", [1, 3], [0, 4], "ERR", [5, 7], "ERR", [9, 11], [8]]),
    "group_by_window_reduce": (lambda: D.range(8).apply(E.group_by_window(
        lambda x: x % 2, lambda k, w: w.map(bad), window_size=3)),
        [-5, "ERR", -5, -10, 10, -10, "ERR", 10]),
    "group_by_window_size": (lambda: D.range(6).apply(E.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(3), window_size_func=lambda k: k * 2)),
        ["ERR", "ERR", [1, 3], "ERR", [5]]),
    "bucket_by_sequence_length": (lambda: D.range(12).map(bad).apply(
        E.bucket_by_sequence_length(lambda x: tf.cast(x % 3, tf.int32), [2], [2, 2])),
        ["ERR", [-5, 10], [-10, -10], "ERR", [-5, 10], "ERR", [-5, 10], [-10]]),
    # group_by_reducer passes failures on at once; the states stay (a new key's initial one
    # too), and a failed finalize is followed by the next key.
    "group_by_reducer": (lambda: D.range(12).map(bad).apply(E.group_by_reducer(
        lambda x: x % 2, E.Reducer(lambda k: tf.constant(0, tf.int64), lambda s, x: s + x,
                                   lambda s: s))), ["ERR", "ERR", "ERR", 0, -15]),
    "group_by_reducer_reduce": (lambda: D.range(3).apply(E.group_by_reducer(
        lambda x: x, E.Reducer(lambda k: tf.constant(100, tf.int64), lambda s, x: s + bad(x),
                               lambda s: s))), ["ERR", 95, 90, 100]),
    "group_by_reducer_finalize": (lambda: D.range(4).apply(E.group_by_reducer(
        lambda x: x, E.Reducer(lambda k: k, lambda s, x: s + x, lambda s: bad(s // 2)))),
        [-5, -10, "ERR", 10]),
    # rebatch: a failure replaces the batch it fell in, whose rows are dropped, and the next
    # batch has the same size.
    "rebatch": (lambda: D.range(12).map(bad).batch(4).rebatch(2), ["ERR", "ERR", "ERR"]),
    "rebatch_rows_dropped": (lambda: D.range(15).map(bad5).filter(lambda x: True).batch(3)
                             .rebatch(2), [[-3, -4], "ERR", [-3, -4], "ERR", [-3, -4], "ERR"]),
    "rebatch_sizes": (lambda: D.range(12).map(bad).filter(lambda x: True).batch(2)
                      .rebatch([3, 0, 1]), ["ERR", "ERR", "ERR", [10]]),
    "rebatch_rows": (lambda: D.range(12).map(lambda x: tf.fill([2], bad(x)))
                     .filter(lambda x: True).batch(3).rebatch(2),
                     ["ERR", [[10, 10], [-5, -5]], "ERR", [[10, 10], [-5, -5]], "ERR",
                      [[10, 10]]]),
    "dense_to_sparse_batch": (lambda: D.range(9).map(lambda x: tf.fill([x % 3], bad(x)))
                              .apply(E.dense_to_sparse_batch(3, [5])),
                              ["ERR", [[[1, 0], [2, 0], [2, 1]], [-5, -10, -10], [3, 5]], "ERR",
                               [[[0, 0], [1, 0], [1, 1]], [10, -5, -5], [2, 5]]]),
    # assert_cardinality counts only the elements it returns.
    "assert_cardinality": (lambda: D.range(6).map(bad).apply(E.assert_cardinality(5)),
                           [-5, -10, "ERR", 10, -5, -10]),
    "prefetch_to_device": (lambda: D.range(6).map(bad).apply(E.prefetch_to_device("/cpu:0")),
                           [-5, -10, "ERR", 10, -5, -10]),
    "choose_from_datasets": (lambda: E.choose_from_datasets(
        [D.range(4).map(bad), D.range(4)], D.range(2).repeat(4)),
        [-5, 0, -10, 1, "ERR", 2, 10, 3]),
}


def _outcomes(dataset, limit=40):
    with tf.Graph().as_default():
        nxt = tf.data.make_one_shot_iterator(dataset()).get_next()
        out = []
        with tf.Session() as sess:
            while len(out) < limit:
                try:
                    value = sess.run(nxt)
                except tf.errors.OutOfRangeError:
                    return out
                except tf.errors.InvalidArgumentError:
                    out.append("ERR")
                    continue
                out.append(np.asarray(value).tolist() if not isinstance(value, tuple)
                           else [np.asarray(v).tolist() for v in value])
    raise AssertionError(f"no end after {limit} results: {out}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_iterator_goes_on_after_a_failed_element(name):
    dataset, expected = CASES[name]
    assert _outcomes(dataset) == expected


def test_shuffle_reports_each_failure_where_tensorflow_does():
    """A failure met while filling the buffer is returned at once and draws nothing."""
    assert _outcomes(lambda: D.range(8).map(bad).shuffle(3, seed=1)) == \
        ["ERR", -10, -5, -5, "ERR", 10, 10, -10]


def test_the_error_names_the_failing_op():
    with tf.Graph().as_default():
        nxt = tf.data.make_one_shot_iterator(D.range(4).map(bad)).get_next()
        with tf.Session() as sess:
            sess.run(nxt)
            sess.run(nxt)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
                sess.run(nxt)
            assert sess.run(nxt) == 10


def test_ignore_errors_drops_failures_below_any_passing_node():
    """The failed elements come up as values through unbatch and interleave, so
    ignore_errors drops them wherever they arose (it used to see only maps right below it)."""
    ignore = tf.data.experimental.ignore_errors
    unbatched = _outcomes(lambda: D.range(6).map(fill_bad).unbatch().apply(ignore()))
    assert unbatched == [-5, -5, -10, -10, 10, 10, -5, -5, -10, -10]
    interleaved = _outcomes(lambda: D.range(6).interleave(
        lambda x: D.from_tensors(bad(x)).repeat(2), cycle_length=2).apply(ignore()))
    assert interleaved == [-5, -10, -5, -10, 10, -5, 10, -5, -10, -10]


def test_reduce_still_fails_on_the_first_error():
    with tf.Graph().as_default():
        total = D.range(6).map(bad).reduce(np.int64(0), lambda s, x: s + x)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
                sess.run(total)


def test_a_restored_iterator_resumes_after_a_failure(tmp_path):
    """The failed element counts as produced, so a checkpoint taken after it replays to the
    same place."""
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(D.range(8).map(bad))
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it)])
        with tf.Session() as sess:
            sess.run(it.initializer)
            assert [sess.run(nxt), sess.run(nxt)] == [-5, -10]
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(nxt)
            path = saver.save(sess, str(tmp_path / "it"))
            assert sess.run(nxt) == 10
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert [sess.run(nxt), sess.run(nxt), sess.run(nxt)] == [10, -5, -10]
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(nxt)


def test_a_prefetch_between_map_and_batch_keeps_the_batches_vectorized():
    """The departure (ARCHITECTURE.md): batches pass through prefetch vectorized, so a failure
    fails its whole batch, as adjacent map and batch do. TensorFlow, which does not fuse
    across prefetch, gives ["ERR", [10, -5, -10], "ERR", [10, -5, -10], "ERR"] here."""
    assert _outcomes(lambda: D.range(11).map(bad).prefetch(2).batch(3)) == \
        ["ERR", [10, -5, -10], "ERR", "ERR"]


def test_a_map_that_ends_the_input_ends_a_fused_batch_too():
    """OutOfRangeError from a map function ends the input (TF 1.x's map), also inside a
    map-and-batch whose batch already holds a failure."""
    def ends_at_5(v):
        if v == 5:
            raise StopIteration
        if v == 4:
            raise ValueError("four")
        return v

    def make():
        return D.range(10).map(lambda x: tf.py_func(ends_at_5, [x], tf.int64))

    assert _outcomes(make) == [0, 1, 2, 3, "ERR"]
    assert _outcomes(lambda: make().batch(3)) == [[0, 1, 2]]
