"""tf.data.experimental's element-wise transformations, cardinality, single elements, Options.

Expected values are TensorFlow 2.21's on the same programs (tf.compat.v1, run with
/work/shared/programs/run_with_tf.py): element values, dtypes, static shapes and errors.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


def run(tensor):
    with tf.Session() as sess:
        return sess.run(tensor)


pytestmark = pytest.mark.usefixtures("graph")


def test_autotune_and_cardinality_constants():
    assert tf.data.AUTOTUNE == E.AUTOTUNE == -1
    assert (E.INFINITE_CARDINALITY, E.UNKNOWN_CARDINALITY) == (-1, -2)
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)


def test_enumerate():
    ds = D.from_tensor_slices(([1., 2, 3], [4, 5, 6])).enumerate(start=5)
    assert ds.output_types == (tf.int64, (tf.float32, tf.int32))
    got = drain(ds)
    assert [(i, a, b) for i, (a, b) in got] == [(5, 1., 4), (6, 2., 5), (7, 3., 6)]
    assert drain(D.range(3).apply(E.enumerate_dataset(2))) == [(2, 0), (3, 1), (4, 2)]


def test_scan_running_state():
    got = drain(D.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 10)))
    assert got == [0, 0, 10, 30, 60]


def test_scan_nested_state_and_tuple_element():
    ds = D.from_tensor_slices(([1, 2, 3], [4., 5, 6])).apply(
        E.scan((0, 1.0), lambda s, x: ((s[0] + x[0], s[1] * x[1]), x[0] + s[0])))
    assert ds.output_types == tf.int32
    got = drain(ds)
    assert got == [1, 3, 6] and got[0].dtype == np.int32


def test_scan_state_shape_is_relaxed():
    ds = D.range(3).scan(tf.constant([], tf.int64),
                         lambda s, x: (tf.concat([s, [x]], 0), tf.size(s)))
    assert ds.output_types == tf.int32
    assert drain(ds) == [0, 1, 2]


def test_scan_errors():
    with pytest.raises(TypeError, match="should return a pair consisting of new state"):
        D.range(3).scan(np.int64(0), lambda s, x: s)
    with pytest.raises(TypeError, match="new state returned by `scan_func`"):
        D.range(3).scan(np.int64(0), lambda s, x: ((s, s), x))
    with pytest.raises(TypeError):   # int32 state + int64 element
        D.range(3).scan(0, lambda s, x: (s + x, s))


def test_take_while():
    assert drain(D.range(10).take_while(lambda x: x < 4)) == [0, 1, 2, 3]
    got = drain(D.from_tensor_slices(([1, 2, 3, 1], [1, 1, 1, 1])).apply(
        E.take_while(lambda a, b: a + b < 4)))
    assert got == [(1, 1), (2, 1)]
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
        D.range(10).take_while(lambda x: x)


def test_unique_keeps_first_occurrences():
    got = drain(D.from_tensor_slices([1, 3, 1, 2, 3, 5]).unique())
    assert got == [1, 3, 2, 5] and got[0].dtype == np.int32
    assert drain(D.from_tensor_slices([b"a", b"b", b"a"]).apply(E.unique())) == [b"a", b"b"]
    vectors = drain(D.from_tensor_slices([[1, 2], [1, 2], [2, 1]]).unique())
    np.testing.assert_array_equal(vectors, [[1, 2], [2, 1]])


def test_unique_errors():
    with pytest.raises(TypeError, match=r"does not support type <dtype: 'float32'> -- only"):
        D.from_tensor_slices([1., 2.]).unique()
    with pytest.raises(tf.errors.InvalidArgumentError, match="single component"):
        drain(D.from_tensor_slices(([1], [2])).unique())


def test_counter():
    assert drain(E.Counter(3, 2).take(4)) == [3, 5, 7, 9]
    got = drain(D.counter(1, 3, tf.int32).take(3))
    assert got == [1, 4, 7] and got[0].dtype == np.int32
    assert drain(E.Counter().take_while(lambda x: x < 3)) == [0, 1, 2]


def test_assert_cardinality():
    assert drain(D.range(3).apply(E.assert_cardinality(3))) == [0, 1, 2]
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 5 elements but contained only 3 elements"):
        drain(D.range(3).apply(E.assert_cardinality(5)))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 5 elements but contained at least 6 "):
        drain(D.range(7).apply(E.assert_cardinality(5)))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="contain 1 element but contained only 0 elements"):
        drain(D.range(0).apply(E.assert_cardinality(1)))


def test_ignore_errors_drops_failing_elements():
    def make():
        return D.from_tensor_slices([1., 0., 2., 0., 3.]).map(
            lambda x: tf.debugging.check_numerics(1. / x, "bad"))
    np.testing.assert_allclose(drain(make().apply(E.ignore_errors())), [1., .5, 1 / 3])
    np.testing.assert_allclose(drain(make().filter(lambda x: x < .9).ignore_errors()),
                               [.5, 1 / 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf values"):
        drain(make())


def test_map_and_batch_and_unbatch():
    got = drain(D.range(7).apply(E.map_and_batch(lambda x: x * 2, 3)))
    assert [g.tolist() for g in got] == [[0, 2, 4], [6, 8, 10], [12]]
    ds = D.range(7).apply(E.map_and_batch(lambda x: (x, x * 2), 3, drop_remainder=True))
    assert ds.output_shapes == (tf.TensorShape([3]), tf.TensorShape([3]))
    assert [(a.tolist(), b.tolist()) for a, b in drain(ds)] == \
        [([0, 1, 2], [0, 2, 4]), ([3, 4, 5], [6, 8, 10])]
    rows = drain(D.from_tensor_slices(np.arange(12).reshape(3, 2, 2)).apply(E.unbatch()))
    np.testing.assert_array_equal(rows, np.arange(12).reshape(6, 2))


def test_parallel_interleave_has_interleave_order():
    got = drain(D.range(1, 5).apply(E.parallel_interleave(
        lambda x: D.from_tensors(x).repeat(x), cycle_length=2, block_length=2)))
    assert got == [1, 2, 2, 3, 3, 3, 4, 4, 4, 4]


def test_shuffle_and_repeat_is_a_seeded_permutation_per_epoch():
    got = drain(D.range(5).apply(E.shuffle_and_repeat(3, 2, seed=1)))
    assert sorted(got[:5]) == sorted(got[5:]) == [0, 1, 2, 3, 4]
    with tf.Graph().as_default():
        again = drain(D.range(5).apply(E.shuffle_and_repeat(3, 2, seed=1)))
    assert got == again


CARDINALITIES = [
    ("range", lambda: D.range(10), 10),
    ("TF1 map is not cardinality-preserving", lambda: D.range(10).map(lambda x: x).batch(3),
     -2),
    ("batch drop", lambda: D.range(10).batch(3, drop_remainder=True), 3),
    ("batch", lambda: D.range(10).batch(3), 4),
    ("filter", lambda: D.range(10).filter(lambda x: x > 3), -2),
    ("repeat", lambda: D.range(10).repeat(), -1),
    ("repeat empty", lambda: D.range(0).repeat(), 0),
    ("repeat 3", lambda: D.range(4).repeat(3), 12),
    ("take of infinite", lambda: D.range(10).repeat().take(5), 5),
    ("skip", lambda: D.range(10).skip(4), 6),
    ("skip infinite", lambda: D.range(10).repeat().skip(4), -1),
    ("skip -1", lambda: D.range(10).skip(-1), 0),
    ("take -1", lambda: D.range(10).take(-1), 10),
    ("slices", lambda: D.from_tensor_slices(np.zeros((7, 2))), 7),
    ("tensors", lambda: D.from_tensors(np.zeros((7, 2))), 1),
    ("zip", lambda: D.zip((D.range(3), D.range(5))), 3),
    ("zip with infinite", lambda: D.zip((D.range(3).repeat(), D.range(5))), 5),
    ("concatenate", lambda: D.range(3).concatenate(D.range(5)), 8),
    ("concatenate unknown", lambda: D.range(3).concatenate(D.range(5).filter(
        lambda x: True)), -2),
    ("concatenate infinite", lambda: D.range(3).repeat().concatenate(D.range(5).filter(
        lambda x: True)), -1),
    ("shuffle", lambda: D.range(3).shuffle(5), 3),
    ("enumerate", lambda: D.range(3).enumerate(), 3),
    ("scan", lambda: D.range(3).scan(np.int64(0), lambda s, x: (s, x)), 3),
    ("take_while", lambda: D.range(3).take_while(lambda x: x < 1), -2),
    ("unique", lambda: D.range(3).unique(), -2),
    ("assert_cardinality", lambda: D.range(3).filter(lambda x: True).apply(
        E.assert_cardinality(3)), 3),
    ("interleave", lambda: D.range(3).interleave(lambda x: D.range(x)), -2),
    ("unbatch", lambda: D.from_tensor_slices(np.zeros((6, 2))).unbatch(), -2),
    ("padded_batch", lambda: D.range(10).padded_batch(4), 3),
    ("cache, prefetch", lambda: D.range(10).cache().prefetch(2), 10),
    ("from_generator", lambda: D.from_generator(lambda: iter([1]), tf.int64), -2),
    ("text lines", lambda: tf.data.TextLineDataset(["x"]), -2),
    ("Counter", lambda: E.Counter(), -1),
    ("ignore_errors", lambda: D.range(3).ignore_errors(), -2),
    ("sample_from_datasets, endless input", lambda: E.sample_from_datasets(
        [D.range(3), D.range(2).repeat()], seed=1), -1),
    ("choose_from_datasets, endless input", lambda: E.choose_from_datasets(
        [D.range(3).repeat(), D.range(2)], D.range(2).repeat(3)), -1),
    ("choose_from_datasets, finite inputs", lambda: E.choose_from_datasets(
        [D.range(3), D.range(2)], D.range(2).repeat(3)), -2),
    ("group_by_window", lambda: D.range(3).group_by_window(lambda x: x, lambda k, w: w, 2),
     -2),
    ("sample_from_datasets", lambda: E.sample_from_datasets([D.range(3), D.range(4)]), -2),
    ("choose_from_datasets", lambda: E.choose_from_datasets([D.range(3), D.range(4)],
                                                            D.range(2)), -2),
]


@pytest.mark.parametrize("make, expected", [c[1:] for c in CARDINALITIES],
                         ids=[c[0] for c in CARDINALITIES])
def test_cardinality_matches_tensorflow(make, expected):
    tensor = E.cardinality(make())
    assert tensor.op.type == "DatasetCardinality" and tensor.dtype == tf.int64
    assert tensor.shape == tf.TensorShape([])
    assert run(tensor) == expected


def test_cardinality_method_and_fed_count():
    count = tf.placeholder(tf.int64, [])
    tensor = D.range(5).skip(count).cardinality()
    assert tensor.op.name == "DatasetCardinality"
    with tf.Session() as sess:
        assert sess.run(tensor, {count: 2}) == 3
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset` object but got"):
        E.cardinality(3)


def test_get_single_element():
    a, b = E.get_single_element(D.from_tensors((np.int32(3), {"a": np.zeros(2)})))
    assert a.op.type == "DatasetToSingleElement" and b["a"].shape == tf.TensorShape([2])
    got = run((a, b))
    assert got[0] == 3 and got[0].dtype == np.int32
    np.testing.assert_array_equal(got[1]["a"], [0., 0.])
    assert run(D.range(1).map(lambda x: x + 7).get_single_element()) == 7


def test_get_single_element_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty."):
        run(E.get_single_element(D.range(0)))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Dataset had more than one element."):
        run(E.get_single_element(D.range(2)))
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset` object"):
        E.get_single_element(3)
    with pytest.raises(TypeError):
        E.get_single_element(D.range(2).window(2))


def test_graph_def_of_new_transformations_is_serializable():
    ds = D.range(20).scan(np.int64(0), lambda s, x: (s + x, s)).take_while(
        lambda x: x < 100).group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2)
    it = tf.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    graph_def = tf.get_default_graph().as_graph_def()
    graph_def = type(graph_def).FromString(graph_def.SerializeToString())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run(g.get_operation_by_name(it.initializer.name))
            got = [sess.run(g.get_tensor_by_name(nxt.name)).tolist() for _ in range(2)]
    # scan outputs the state before each element: 0 0 1 3 6 10 ..., windows of even and odd
    assert got == [[0, 0], [1, 3]]


def test_options_are_recorded_and_merged():
    options = tf.data.Options()
    assert (options.deterministic, options.experimental_slack, options.autotune.enabled,
            options.threading.private_threadpool_size,
            options.experimental_optimization.apply_default_optimizations) == (None,) * 5
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options."):
        options.foo = 1
    with pytest.raises(TypeError, match='Property "deterministic" must be of type'):
        options.deterministic = 3
    other = tf.data.Options()
    other.deterministic = False
    other.threading.private_threadpool_size = 4
    assert other.experimental_deterministic is False
    ds = D.range(3).with_options(other).map(lambda x: x * 2).with_options(options)
    assert ds.options().deterministic is False
    assert ds.options().threading.private_threadpool_size == 4
    assert D.range(3).with_options(options).options() == options
    assert drain(ds) == [0, 2, 4]


def test_autotune_is_accepted_as_a_parallelism():
    A = tf.data.AUTOTUNE
    ds = D.range(1, 4).map(lambda x: x * 10, num_parallel_calls=A).interleave(
        lambda x: D.from_tensors(x).repeat(2), cycle_length=A, num_parallel_calls=A)
    got = drain(ds.batch(2).prefetch(A))
    assert sorted(np.concatenate(got).tolist()) == [10, 10, 20, 20, 30, 30]


def test_option_enums_and_classes_are_tensorflows():
    E = tf.data.experimental
    assert [(m.name, int(m.value)) for m in E.AutoShardPolicy] == [
        ("OFF", -1), ("AUTO", 0), ("FILE", 1), ("DATA", 2), ("HINT", 3)]
    assert [m.name for m in E.AutotuneAlgorithm] == [
        "DEFAULT", "HILL_CLIMB", "GRADIENT_DESCENT", "MAX_PARALLELISM", "STAGE_BASED"]
    assert [m.name for m in E.ExternalStatePolicy] == ["WARN", "IGNORE", "FAIL"]
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    options.autotune.autotune_algorithm = E.AutotuneAlgorithm.HILL_CLIMB
    options.experimental_external_state_policy = E.ExternalStatePolicy.IGNORE
    assert options.experimental_distribute.auto_shard_policy == 2
    assert isinstance(options.experimental_distribute, E.DistributeOptions)
    assert isinstance(options.threading, E.ThreadingOptions)
    assert isinstance(options.autotune, E.AutotuneOptions)
    assert isinstance(options.experimental_optimization, E.OptimizationOptions)
    with pytest.raises(TypeError, match='Property "auto_shard_policy" must be of type'):
        options.experimental_distribute.auto_shard_policy = 2
    dataset = tf.data.Dataset.range(3).with_options(options)
    assert dataset.options().experimental_distribute.auto_shard_policy is \
        E.AutoShardPolicy.DATA
