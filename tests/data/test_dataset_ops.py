"""tf.data transformations against Python references: values, structures, shapes and types."""
import numpy as np
import pytest

import tensorweave as tf


def drain(dataset, limit=10_000):
    """Every element of `dataset` (as nested NumPy values) through a one-shot iterator."""
    with tf.Graph().as_default():
        nxt = dataset().make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            for _ in range(limit):
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out
    raise AssertionError("dataset did not end")


def values(dataset):
    return [np.asarray(v).tolist() for v in drain(dataset)]


D = tf.data.Dataset


@pytest.mark.parametrize("make, expected", [
    (lambda: D.range(5), list(range(5))),
    (lambda: D.range(2, 9, 3), list(range(2, 9, 3))),
    (lambda: D.range(5, 0, -2), list(range(5, 0, -2))),
    (lambda: D.from_tensors([1, 2]), [[1, 2]]),
    (lambda: D.from_tensor_slices(np.arange(6).reshape(3, 2)), [[0, 1], [2, 3], [4, 5]]),
    (lambda: D.range(4).concatenate(D.range(2)), [0, 1, 2, 3, 0, 1]),
    (lambda: D.range(6).map(lambda x: x * x), [x * x for x in range(6)]),
    (lambda: D.range(6).filter(lambda x: x % 3 > 0), [1, 2, 4, 5]),
    (lambda: D.range(3).flat_map(lambda x: D.range(x)), [0, 0, 1]),
    (lambda: D.range(10).interleave(lambda x: D.from_tensors(x).repeat(x % 4), cycle_length=3,
                                    block_length=2),
     [1, 2, 2, 3, 3, 3, 5, 6, 6, 7, 7, 7, 9]),  # TensorFlow 2.21's order
    (lambda: D.range(7).batch(3), [[0, 1, 2], [3, 4, 5], [6]]),
    (lambda: D.range(7).batch(3, drop_remainder=True), [[0, 1, 2], [3, 4, 5]]),
    (lambda: D.range(5).map(lambda x: x * 2 + 1).batch(2), [[1, 3], [5, 7], [9]]),
    (lambda: D.range(5).map(lambda x: tf.fill([2], x)).batch(2),
     [[[0, 0], [1, 1]], [[2, 2], [3, 3]], [[4, 4]]]),
    (lambda: D.range(3).repeat(2), [0, 1, 2, 0, 1, 2]),
    (lambda: D.range(10).take(3), [0, 1, 2]),
    (lambda: D.range(10).skip(7), [7, 8, 9]),
    (lambda: D.range(3).skip(-1), []),
    (lambda: D.range(3).take(-1), [0, 1, 2]),
    (lambda: D.range(3).prefetch(2), [0, 1, 2]),
    (lambda: D.range(3).cache().repeat(2), [0, 1, 2, 0, 1, 2]),
    (lambda: D.range(6).batch(4).unbatch(), list(range(6))),
    (lambda: D.range(5).apply(lambda d: d.take(2)), [0, 1]),
    (lambda: D.range(0).repeat(), []),
    (lambda: D.range(1, 4).map(lambda n: tf.fill([n], n)).padded_batch(
        2, padded_shapes=[4], padding_values=tf.constant(-1, tf.int64)),
     [[[1, -1, -1, -1], [2, 2, -1, -1]], [[3, 3, 3, -1]]]),
    (lambda: D.range(1, 4).map(lambda n: tf.fill([n], n)).padded_batch(
        2, padded_shapes=tf.constant([3], tf.int64)), [[[1, 0, 0], [2, 2, 0]], [[3, 3, 3]]]),
    (lambda: D.range(1, 4).map(lambda n: tf.fill([n], tf.cast(n, tf.int32))).padded_batch(
        2, padded_shapes=[None], padding_values=-1), [[[1, -1], [2, 2]], [[3, 3, 3]]]),
])
def test_transformation_values(make, expected):
    assert values(make) == expected


def test_map_with_captured_tensor_and_constant_vectors():
    def make():
        scale = tf.constant(3, tf.int64)
        offset = tf.constant([1, 2], tf.int64)   # not a scalar: no batch fusion
        return D.range(3).map(lambda x: x * scale + offset).batch(2)
    assert values(make) == [[[1, 2], [4, 5]], [[7, 8]]]


def test_a_list_returned_by_a_function_is_a_tuple():
    # TensorFlow 2.21: at the top level a returned list is a tuple (components may differ in
    # dtype); a list inside the result stays one tensor.
    with tf.Graph().as_default():
        pair = D.range(3).map(lambda x: [x, tf.cast(x, tf.float32)])
        assert pair.output_types == (tf.int64, tf.float32)
        assert pair.map(lambda a, b: a).output_types == tf.int64
        assert D.range(3).map(lambda x: [x]).output_types == (tf.int64,)
        inner = D.range(3).map(lambda x: ([x, x], x))
        assert [s.as_list() for s in inner.output_shapes] == [[2], []]
        with pytest.raises(TypeError, match="Got <class 'tuple'>"):
            D.range(3).flat_map(lambda x: [D.range(x)])
    assert [tuple(map(int, e)) for e in drain(lambda: D.range(3).map(lambda x: [x, x + 1]))] \
        == [(0, 1), (1, 2), (2, 3)]
    with tf.Graph().as_default():
        total = D.range(4).reduce((tf.constant(0, tf.int64), tf.constant(1, tf.int64)),
                                  lambda s, x: [s[0] + x, s[1] * 2])
        with tf.Session() as sess:
            assert [int(v) for v in sess.run(total)] == [6, 16]


def test_nested_structures_and_dicts():
    feats = np.arange(6, dtype=np.float32).reshape(3, 2)
    labels = np.array([7, 8, 9])

    def make():
        ds = D.from_tensor_slices({"x": feats, "pair": (labels, labels * 2)})
        return ds.map(lambda d: {"x": d["x"] + 1.0, "pair": (d["pair"][1], d["pair"][0])})
    got = drain(make)
    assert sorted(got[0]) == ["pair", "x"]
    np.testing.assert_allclose(got[2]["x"], feats[2] + 1)
    assert [tuple(int(v) for v in e["pair"]) for e in got] == [(14, 7), (16, 8), (18, 9)]


def test_zip_of_nested_datasets():
    def make():
        return D.zip((D.range(3), (D.range(10, 13), D.from_tensor_slices([b"a", b"b"]))))
    got = drain(make)
    assert [(int(a), int(b), c) for a, (b, c) in got] == [(0, 10, b"a"), (1, 11, b"b")]


def test_shuffle_is_a_permutation_and_seeded_orders_repeat():
    def make():
        return D.range(50).shuffle(10, seed=7).repeat(2)
    first, second = values(make), values(make)
    assert first == second
    assert sorted(first[:50]) == list(range(50)) and first[:50] != list(range(50))
    assert first[:50] != first[50:]


def test_shuffle_without_reshuffle_repeats_the_epoch_order():
    got = values(lambda: D.range(20).shuffle(20, seed=1, reshuffle_each_iteration=False)
                 .repeat(2))
    assert got[:20] == got[20:] and sorted(got[:20]) == list(range(20))


def test_from_generator_with_args_structures_and_shapes():
    def gen(n):
        for i in range(int(n)):
            yield i, [float(i)] * 2

    def make():
        return D.from_generator(gen, (tf.int32, tf.float32), (tf.TensorShape([]), [2]),
                                args=(3,))
    got = drain(make)
    assert [int(a) for a, _ in got] == [0, 1, 2]
    assert got[2][1].dtype == np.float32 and got[2][1].tolist() == [2.0, 2.0]


def test_from_generator_wrong_shape_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        drain(lambda: D.from_generator(lambda: iter([[1, 2, 3]]), tf.int32, [2]))


def test_file_cache_is_written_once_and_read_back(tmp_path):
    prefix = str(tmp_path / "cache")
    assert values(lambda: D.range(4).map(lambda x: x + 1).cache(prefix)) == [1, 2, 3, 4]
    # A second pipeline over a different source reads the cache file instead.
    assert values(lambda: D.range(100).cache(prefix)) == [1, 2, 3, 4]


def test_static_shapes_and_types_match_tensorflow():
    with tf.Graph().as_default():
        ds = D.from_tensor_slices((np.zeros((4, 3), np.float32), np.zeros(4, np.int64)))
        assert ds.output_types == (tf.float32, tf.int64)
        assert [s.as_list() for s in ds.output_shapes] == [[3], []]
        assert ds.output_classes == (tf.Tensor, tf.Tensor)
        assert ds.batch(2).output_shapes[0].as_list() == [None, 3]
        assert ds.batch(2, drop_remainder=True).output_shapes[0].as_list() == [2, 3]
        assert ds.batch(2).unbatch().output_shapes[0].as_list() == [3]
        assert D.range(3).padded_batch(2, padded_shapes=[]).output_shapes.as_list() == [None]
        assert tf.data.get_output_types(D.range(2)) == tf.int64
        merged = D.from_tensors(np.zeros(2)).concatenate(D.from_tensors(np.zeros(3)))
        assert merged.output_shapes.as_list() == [None]
        assert tf.data.experimental.AUTOTUNE == -1


@pytest.mark.parametrize("build, error, match", [
    (lambda: D.range(3).concatenate(D.range(3).map(lambda x: tf.cast(x, tf.int32))),
     TypeError, "Incompatible dataset elements"),
    (lambda: D.range(3).map(lambda x: (x, x)).concatenate(D.range(3)), TypeError,
     "Incompatible dataset elements"),
    (lambda: D.zip([D.range(1), D.range(1)]), TypeError, "Python `list` is not supported"),
    (lambda: D.range(3).filter(lambda x: x), ValueError, "must return a `tf.bool` scalar"),
    (lambda: D.range(3).flat_map(lambda x: x), TypeError, "must return a `Dataset`"),
    (lambda: D.range(3).map(lambda x: D.range(x)), TypeError, "flat_map"),
    (lambda: D.from_tensor_slices((np.zeros(2), np.zeros(3))), ValueError, "dimension 0"),
    (lambda: D.range(3).map(lambda x, y: x), TypeError, "argument"),
])
def test_construction_errors(build, error, match):
    with tf.Graph().as_default():
        with pytest.raises(error, match=match):
            build()


@pytest.mark.parametrize("kwargs, error, match", [
    # TensorFlow 2.21: a padding value must have the component's dtype exactly, and a Python
    # number gets its default dtype first (int32), so -1 cannot pad an int64 component.
    (lambda: dict(padded_shapes=[None], padding_values=-1), TypeError,
     r"Invalid `padding_values`\. `padding_values` values type <dtype: 'int32'> does not match "
     r"type <dtype: 'int64'>"),
    (lambda: dict(padded_shapes=[None], padding_values=tf.constant(-1, tf.int32)), TypeError,
     "Invalid `padding_values`"),
    (lambda: dict(padded_shapes=[None], padding_values=tf.constant([-1], tf.int64)),
     ValueError,
     "should be scalars"),
    (lambda: dict(padded_shapes=tf.constant([3], tf.int32)), TypeError,
     "must be a `tf.int64` vector tensor, but its element type was int32"),
    (lambda: dict(padded_shapes=[3, 3]), ValueError,
     r"The padded shape \(3, 3\) is not compatible with the shape \(\?,\)"),
])
def test_padded_batch_argument_errors(kwargs, error, match):
    with tf.Graph().as_default():
        filled = D.range(1, 4).map(lambda n: tf.fill([n], n))
        with pytest.raises(error, match=match):
            filled.padded_batch(2, **kwargs())


def test_padded_batch_static_shape_from_a_padded_shape_tensor():
    with tf.Graph().as_default():
        filled = D.range(1, 4).map(lambda n: tf.fill([n], n))
        given = filled.padded_batch(2, padded_shapes=tf.constant([3], tf.int64))
        assert given.output_shapes.as_list() == [None, 3]
        fed = filled.padded_batch(2, padded_shapes=tf.placeholder(tf.int64, [1]))
        assert fed.output_shapes.as_list() == [None, None]


def test_padding_to_a_smaller_shape_is_data_loss():
    # TensorFlow 2.21 raises DataLossError, then goes on with the next batch's end.
    got = []
    with tf.Graph().as_default():
        nxt = D.range(6).map(lambda x: tf.fill([x], x)).padded_batch(
            2, padded_shapes=[3]).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            got.append(sess.run(nxt).tolist())
            got.append(sess.run(nxt).tolist())
            with pytest.raises(tf.errors.DataLossError,
                               match="Attempted to pad to a smaller size than the input"):
                sess.run(nxt)
    assert got == [[[0, 0, 0], [1, 0, 0]], [[2, 2, 0], [3, 3, 3]]]


@pytest.mark.parametrize("make", [
    lambda: D.range(3).batch(tf.constant(0, tf.int64)),
    lambda: D.range(3).batch(-1),
    lambda: D.range(3).padded_batch(tf.constant(0, tf.int64), padded_shapes=[]),
])
def test_a_dataset_that_fails_to_build_fails_every_get_next(make):
    # TensorFlow 2.21: the batch size is checked when the dataset is built, so a one-shot
    # iterator fails the same way on every run and an initializer fails itself.
    with tf.Graph().as_default():
        nxt = make().make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            for _ in range(3):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="Batch size must be greater than zero"):
                    sess.run(nxt)
    with tf.Graph().as_default():
        size = tf.placeholder(tf.int64, [])
        it = D.range(3).batch(size).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size"):
                sess.run(it.initializer, {size: 0})
            with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
                sess.run(nxt)
            sess.run(it.initializer, {size: 2})
            assert sess.run(nxt).tolist() == [0, 1]


def test_batch_of_mismatched_shapes_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
        drain(lambda: D.range(1, 3).map(lambda n: tf.fill([n], n)).batch(2))


def test_map_reading_a_variable():
    """As TensorFlow 2.21 (more in test_function_semantics_like_tensorflow.py)."""
    with tf.Graph().as_default():
        v = tf.Variable(1, dtype=tf.int64)
        it = tf.data.make_initializable_iterator(D.range(3).map(lambda x: x + v))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(it.initializer)
            assert [sess.run(it.get_next()) for _ in range(3)] == [1, 2, 3]


# --- TensorFlow 2.21's compat.v1 signatures (outputs checked under TF 2.21) -------------------
def test_zip_takes_datasets_as_arguments_or_by_keyword():
    expected = [[0, 10], [1, 11], [2, 12]]
    assert values(lambda: D.zip(D.range(3), D.range(10, 13))) == expected
    assert values(lambda: D.zip(datasets=(D.range(3), D.range(10, 13)))) == expected
    assert D.zip(D.range(3)).element_spec == tf.TensorSpec([], tf.int64)
    with pytest.raises(TypeError, match=r"Both `\*args` and `datasets` cannot be set"):
        D.zip(D.range(1), datasets=(D.range(1),))
    with pytest.raises(TypeError, match="Must pass at least one dataset to `zip`"):
        D.zip()
    with pytest.raises(TypeError, match="Python `list` is not supported"):
        D.zip(D.range(1), [D.range(1)])


def test_range_output_type_and_ignored_keywords(caplog):
    assert D.range(2, 5, output_type=tf.int32).output_types == tf.int32
    assert drain(lambda: D.range(2, 5, output_type=tf.int32).batch(2)) and \
        [v.dtype for v in drain(lambda: D.range(2, 5, output_type=tf.int32).batch(2))] == \
        [np.int32, np.int32]
    assert [type(v) for v in drain(lambda: D.range(2, output_type=tf.float32))] == \
        [np.float32, np.float32]
    # TensorFlow ignores other keywords (dtype= too) and makes int64; a warning says so here.
    assert D.range(2, 5, dtype=tf.int32, name="r").output_types == tf.int64
    assert "ignores the keyword arguments ['dtype']" in caplog.text
    with pytest.raises(ValueError, match="length of `args` should be between 1 and 3 but was 4"):
        D.range(1, 2, 3, 4)


def _pairs():
    for i in range(3):
        yield i, np.arange(i, dtype=np.float32)


def test_from_generator_with_an_output_signature():
    signature = (tf.TensorSpec(shape=(), dtype=tf.int32),
                 tf.TensorSpec(shape=(None,), dtype=tf.float32))
    ds = D.from_generator(_pairs, output_signature=signature)
    assert ds.output_types == (tf.int32, tf.float32)
    assert [s.as_list() for s in ds.output_shapes] == [[], [None]]
    got = drain(lambda: D.from_generator(_pairs, output_signature=signature))
    assert [(int(i), v.tolist()) for i, v in got] == [(0, []), (1, [0.0]), (2, [0.0, 1.0])]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "provide either the `output_signature` argument or the `output_types` argument"),
    ({"output_types": tf.int32, "output_signature": tf.TensorSpec([], tf.int32)},
     "`output_types` argument can not be used together with the `output_signature`"),
    ({"output_shapes": [], "output_signature": tf.TensorSpec([], tf.int32)},
     "`output_shapes` argument can not be used together with the `output_signature`"),
    ({"output_signature": (tf.int32, tf.float32)},
     "must contain objects that are subclass of `tf.TypeSpec`"),
])
def test_from_generator_signature_errors(kwargs, message):
    with pytest.raises(TypeError, match=message):
        D.from_generator(_pairs, **kwargs)


def test_parallelism_arguments_and_names_change_nothing():
    assert values(lambda: D.range(5).batch(2, num_parallel_calls=2, deterministic=True,
                                           name="b")) == [[0, 1], [2, 3], [4]]
    assert values(lambda: D.range(3).map(lambda x: x * 2, num_parallel_calls=2,
                                         deterministic=False, synchronous=None,
                                         use_unbounded_threadpool=False, name="m")) == [0, 2, 4]
    assert values(lambda: D.range(2).interleave(lambda x: D.range(x + 1), cycle_length=2,
                                                num_parallel_calls=tf.data.experimental.AUTOTUNE,
                                                deterministic=True, name="i")) == [0, 0, 1]
    assert values(lambda: D.from_tensor_slices([1, 2], name="s").concatenate(
        D.from_tensors([3], name="t").unbatch(name="u"), name="c").padded_batch(
        2, name="p").shard(1, 0, name="h").repeat(1, name="r").take(9, name="k").skip(
        0, name="q").prefetch(1, name="f").cache("", name="a").filter(
        lambda x: True, name="g").flat_map(D.from_tensors, name="m")) == [[1, 2], [3]]


@pytest.mark.parametrize("calls", [0, -5])
def test_num_parallel_calls_must_be_positive_or_autotune(calls):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="num_parallel_calls must be greater than zero"):
        drain(lambda: D.range(3).map(lambda x: x, num_parallel_calls=calls))


def test_as_numpy_iterator_is_eager_only():
    with pytest.raises(RuntimeError, match=r"as_numpy_iterator\(\)` is only supported in "
                                           "eager mode"):
        D.range(3).as_numpy_iterator()


def test_tensor_spec_is_tensorflows():
    spec = tf.TensorSpec([2], tf.float32, name="x")
    assert repr(spec) == "TensorSpec(shape=(2,), dtype=tf.float32, name='x')"
    assert tf.TensorSpec([None]).dtype == tf.float32
    assert spec != tf.TensorSpec([2], tf.float32)
    assert spec.is_compatible_with(tf.TensorSpec([None], tf.float32))
    assert not spec.is_compatible_with(tf.TensorSpec([2], tf.int32))
    with tf.Graph().as_default():
        t = tf.zeros([3, 2], name="z")
        assert tf.TensorSpec.from_tensor(t) == tf.TensorSpec([3, 2], tf.float32, "z")
        assert tf.TensorSpec([None, 2]).is_compatible_with(t)
    assert tf.TensorSpec.from_spec(spec, "y") == tf.TensorSpec([2], tf.float32, "y")
    assert spec.most_specific_compatible_type(tf.TensorSpec([3], tf.float32)) == \
        tf.TensorSpec([None], tf.float32)
