"""SparseTensor elements through tf.data's structures, iterators and transformations, and a
tensor shuffle seed, as TensorFlow 2.21 has them.

Every expected value below is what TensorFlow 2.21 (tf.compat.v1, graph mode) gives for the
same program: SparseTensors stay SparseTensors (output_classes, fetched SparseTensorValues),
mixing them with dense tensors is a TypeError, and a window of SparseTensors keeps each
element's own dense shape.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def triple(value):
    """A fetched SparseTensorValue as lists (indices, values, dense_shape), checking its type
    and its int64 indices and dense shape."""
    assert isinstance(value, tf.SparseTensorValue)
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    return value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist()


def leaves(value):
    if isinstance(value, tf.SparseTensorValue):
        return triple(value)
    if isinstance(value, tuple):
        return tuple(leaves(v) for v in value)
    if isinstance(value, dict):
        return {k: leaves(v) for k, v in value.items()}
    return np.asarray(value).tolist()


def elements(dataset, limit=20):
    """Every element of `dataset` (at most `limit`), SparseTensorValues as lists."""
    return [leaves(value) for value in drain_dataset(dataset, limit=limit)]


def classes(structured):
    return tf.nest.map_structure(lambda c: c.__name__,
                                 tf.data.get_output_classes(structured))


def sparse(indices, values, dense_shape):
    return D.from_tensors(tf.SparseTensor(indices, values, dense_shape))


# --- concatenate, choose_from_datasets, sample_from_datasets -----------------------------------

def test_concatenate_keeps_sparse_elements():
    dataset = sparse([[0]], [1], [2]).concatenate(sparse([[1]], [2], [2]))
    assert classes(dataset) == "SparseTensor"
    assert tf.data.get_output_types(dataset) == tf.int32
    assert tf.data.get_output_shapes(dataset).as_list() == [2]
    assert elements(dataset) == [([[0]], [1], [2]), ([[1]], [2], [2])]


def test_concatenate_relaxes_sparse_dense_shapes():
    other_shape = sparse([[0]], [1], [2]).concatenate(sparse([[4]], [7], [5]))
    assert tf.data.get_output_shapes(other_shape).as_list() == [None]
    assert elements(other_shape) == [([[0]], [1], [2]), ([[4]], [7], [5])]
    other_rank = sparse([[0]], [1], [2]).concatenate(sparse([[1, 1]], [2], [3, 3]))
    assert tf.data.get_output_shapes(other_rank).ndims is None
    assert classes(other_rank) == "SparseTensor"
    assert elements(other_rank) == [([[0]], [1], [2]), ([[1, 1]], [2], [3, 3])]


def test_concatenate_keeps_sparse_components_of_tuples():
    first = D.zip((sparse([[0]], [1], [2]), D.range(1)))
    second = D.zip((sparse([[4]], [7], [5]), D.range(1)))
    assert classes(first.concatenate(second)) == ("SparseTensor", "Tensor")


def test_concatenating_sparse_and_dense_elements_is_a_type_error():
    a = sparse([[0]], [1], [2])
    dense = D.from_tensors(tf.constant([1, 2]))
    with pytest.raises(TypeError) as info:
        a.concatenate(dense)
    assert str(info.value) == (
        "Incompatible dataset elements:\n  SparseTensorSpec(TensorShape([Dimension(2)]), "
        "tf.int32) vs.   TensorSpec(shape=(2,), dtype=tf.int32, name=None)")
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        dense.concatenate(a)
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        a.concatenate(sparse([[0]], [1.0], [2]))


def test_choose_from_datasets_keeps_sparse_elements():
    choices = D.from_tensor_slices(tf.constant([0, 1], tf.int64))
    chosen = E.choose_from_datasets([sparse([[0]], [1], [2]), sparse([[1]], [2], [2])],
                                    choices)
    assert classes(chosen) == "SparseTensor"
    assert elements(chosen) == [([[0]], [1], [2]), ([[1]], [2], [2])]
    relaxed = E.choose_from_datasets([sparse([[0]], [1], [2]), sparse([[4]], [7], [5])],
                                     choices)
    assert tf.data.get_output_shapes(relaxed).as_list() == [None]
    sampled = E.sample_from_datasets([sparse([[0]], [1], [2]), sparse([[4]], [7], [5])], seed=1)
    assert classes(sampled) == "SparseTensor"
    assert tf.data.get_output_shapes(sampled).as_list() == [None]


def test_choose_from_sparse_and_dense_datasets_is_a_type_error():
    choices = D.from_tensor_slices(tf.constant([0, 1], tf.int64))
    with pytest.raises(TypeError) as info:
        E.choose_from_datasets([sparse([[0]], [1], [2]), D.from_tensors(tf.constant([1, 2]))],
                               choices)
    assert str(info.value) == (
        "Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
        "element_spec=SparseTensorSpec(TensorShape([Dimension(2)]), tf.int32).\nDataset 1 "
        "element_spec=TensorSpec(shape=(2,), dtype=tf.int32, name=None).")


# --- Iterator.from_structure / from_string_handle with output_classes ---------------------------

def _int64_sparse():
    return D.from_tensors(tf.SparseTensor([[1]], tf.constant([5], tf.int64), [3]))


def test_from_structure_honours_sparse_output_classes():
    ds = _int64_sparse()
    it = tf.data.Iterator.from_structure(tf.data.get_output_types(ds),
                                         tf.data.get_output_shapes(ds),
                                         output_classes=tf.data.get_output_classes(ds))
    nxt = it.get_next()
    init = it.make_initializer(ds)
    assert isinstance(nxt, tf.SparseTensor)
    assert nxt.shape.as_list() == [3]
    assert classes(it) == "SparseTensor"
    with tf.Session() as sess:
        sess.run(init)
        assert triple(sess.run(nxt)) == ([[1]], [5], [3])


def test_from_structure_builds_specs_per_class():
    it = tf.data.Iterator.from_structure((tf.int64, tf.int32), ([None], []),
                                         output_classes=(tf.SparseTensor, tf.Tensor))
    assert classes(it) == ("SparseTensor", "Tensor")
    assert repr(it.element_spec) == (
        "(SparseTensorSpec(TensorShape([Dimension(None)]), tf.int64), "
        "TensorSpec(shape=(), dtype=tf.int32, name=None))")
    unshaped = tf.data.Iterator.from_structure(tf.int64, output_classes=tf.SparseTensor)
    assert tf.data.get_output_shapes(unshaped).ndims is None
    nxt = unshaped.get_next()
    assert isinstance(nxt, tf.SparseTensor)
    assert nxt.indices.shape.as_list() == [None, None]


def test_from_structure_checks_the_classes_of_the_dataset():
    with pytest.raises(TypeError, match="Expected output classes <class '.*Tensor'> but got "
                                        "dataset with output classes <class '.*SparseTensor'>"):
        tf.data.Iterator.from_structure(tf.int64, [3], output_classes=tf.Tensor) \
            .make_initializer(_int64_sparse())
    with pytest.raises(TypeError, match="Expected output classes <class '.*SparseTensor'> "
                                        "but got dataset with output classes <class '.*Tensor'>"):
        tf.data.Iterator.from_structure(tf.int64, [], output_classes=tf.SparseTensor) \
            .make_initializer(D.range(3))
    with pytest.raises(TypeError, match="Could not build a structure for output class int. "
                                        "Make sure any component class"):
        tf.data.Iterator.from_structure(tf.int64, output_classes=int)


def test_from_string_handle_honours_sparse_output_classes():
    ds = _int64_sparse()
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, tf.data.get_output_types(ds),
                                             tf.data.get_output_shapes(ds),
                                             tf.data.get_output_classes(ds))
    nxt = it.get_next()
    source = tf.data.make_one_shot_iterator(ds)
    assert isinstance(nxt, tf.SparseTensor)
    assert classes(it) == "SparseTensor"
    with tf.Session() as sess:
        value = sess.run(nxt, {handle: sess.run(source.string_handle())})
    assert triple(value) == ([[1]], [5], [3])


def test_from_structure_optional_of_a_sparse_element():
    it = tf.data.Iterator.from_structure(tf.int64, [3], output_classes=tf.SparseTensor)
    optional = it.get_next_as_optional()
    with tf.Session() as sess:
        sess.run(it.make_initializer(_int64_sparse()))
        assert triple(sess.run(optional.get_value())) == ([[1]], [5], [3])


# --- sources of SparseTensorValues -------------------------------------------------------------

def test_from_tensors_of_a_sparse_tensor_value():
    value = tf.SparseTensorValue(indices=[[0]], values=[1.0], dense_shape=[3])
    dataset = D.from_tensors(value)
    assert classes(dataset) == "SparseTensor"
    assert tf.data.get_output_types(dataset) == tf.float32
    assert tf.data.get_output_shapes(dataset).as_list() == [3]
    assert elements(dataset) == [([[0]], [1.0], [3])]
    nested = D.from_tensors((value, {"a": 1}))
    assert classes(nested) == ("SparseTensor", {"a": "Tensor"})
    assert elements(nested) == [(([[0]], [1.0], [3]), {"a": 1})]


def test_from_tensor_slices_of_a_sparse_tensor_value():
    value = tf.SparseTensorValue(indices=[[0, 0], [1, 2], [2, 1]], values=[1, 2, 3],
                                 dense_shape=[3, 4])
    dataset = D.from_tensor_slices(value)
    assert classes(dataset) == "SparseTensor"
    assert tf.data.get_output_types(dataset) == tf.int32
    assert tf.data.get_output_shapes(dataset).as_list() == [4]
    rows = [([[0]], [1], [4]), ([[2]], [2], [4]), ([[1]], [3], [4])]
    assert elements(dataset) == rows
    assert elements(D.from_tensor_slices((value, [7, 8, 9]))) == list(zip(rows, [7, 8, 9]))


# --- window over SparseTensors -----------------------------------------------------------------

def _rows():
    return D.from_tensor_slices(tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1, 2, 3], [3, 4]))


def _two_shapes():
    return sparse([[0]], [1], [2]).concatenate(sparse([[3]], [5], [6]))


def test_window_of_sparse_elements_is_a_dataset_of_them():
    windows = _rows().window(2)
    spec = "DatasetSpec(SparseTensorSpec(TensorShape([Dimension(4)]), tf.int32), TensorShape([]))"
    assert repr(windows.element_spec) == spec
    assert repr(tf.data.get_output_classes(windows)) == spec
    inner = _rows().window(3).flat_map(
        lambda w: D.from_tensors(tf.constant(str(w.element_spec))))
    assert elements(inner) == [b"SparseTensorSpec(TensorShape([Dimension(4)]), tf.int32)"]


@pytest.mark.parametrize("make, expected", [
    (lambda: _rows().window(2).flat_map(lambda w: w.batch(2)),
     [([[0, 0], [1, 2]], [1, 2], [2, 4]), ([[0, 1]], [3], [1, 4])]),
    (lambda: _rows().window(2, 1, drop_remainder=True).flat_map(lambda w: w.batch(2)),
     [([[0, 0], [1, 2]], [1, 2], [2, 4]), ([[0, 2], [1, 1]], [2, 3], [2, 4])]),
    (lambda: D.from_tensor_slices((tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1, 2, 3], [3, 4]),
                                   tf.constant([4, 5, 6]))).window(2).flat_map(
        lambda w, c: D.zip((w.batch(2), c.batch(2)))),
     [(([[0, 0], [1, 2]], [1, 2], [2, 4]), [4, 5]), (([[0, 1]], [3], [1, 4]), [6])]),
    (lambda: _rows().window(3).flat_map(lambda w: w.map(lambda s: tf.sparse.reduce_sum(s))),
     [1, 2, 3]),
    (lambda: _rows().window(3, drop_remainder=True).flat_map(lambda w: w.skip(1)),
     [([[2]], [2], [4]), ([[1]], [3], [4])]),
    (lambda: _two_shapes().window(2).flat_map(lambda w: w.batch(2)),
     [([[0, 0], [1, 3]], [1, 5], [2, 6])]),
    # each element of a window keeps its own dense shape
    (lambda: _two_shapes().window(2).flat_map(lambda w: w.map(lambda s: s.dense_shape)),
     [[2], [6]]),
    (lambda: _two_shapes().window(2).map(lambda w: w.cardinality()), [2]),
    (lambda: _two_shapes().window(2).map(lambda w: w.reduce(
        tf.constant(0, tf.int64), lambda acc, s: acc + tf.reduce_sum(s.dense_shape))), [8]),
], ids=["batch", "shift_drop", "tuple", "map", "skip", "batch_shapes", "own_shapes",
        "cardinality", "reduce"])
def test_window_over_sparse_elements(make, expected):
    assert elements(make()) == expected


# --- from_generator(output_signature=SparseTensorSpec) ----------------------------------------

SPEC = tf.SparseTensorSpec([2], tf.int32)


def generated(values, signature=SPEC):
    return D.from_generator(lambda: iter(values), output_signature=signature)


def test_from_generator_with_a_sparse_tensor_spec():
    empty = tf.SparseTensorValue(np.zeros((0, 1), np.int64), np.array([], np.int32), [2])
    dataset = generated([tf.SparseTensorValue([[0]], np.array([1], np.int32), [2]), empty,
                         tf.SparseTensorValue([[0]], [1], [2])])
    assert classes(dataset) == "SparseTensor"
    assert tf.data.get_output_types(dataset) == tf.int32
    assert tf.data.get_output_shapes(dataset).as_list() == [2]
    assert elements(dataset) == [([[0]], [1], [2]), ([], [], [2]), ([[0]], [1], [2])]
    assert tf.data.get_output_shapes(generated([], tf.SparseTensorSpec(None, tf.int32))) \
        .ndims is None


def test_from_generator_with_sparse_and_dense_specs():
    signature = (tf.SparseTensorSpec([None, 2], tf.int64), tf.TensorSpec([], tf.int32))
    value = (tf.SparseTensorValue(np.array([[1, 0]]), np.array([3]), np.array([2, 2])), 5)
    dataset = generated([value], signature)
    assert classes(dataset) == ("SparseTensor", "Tensor")
    assert elements(dataset) == [(([[1, 0]], [3], [2, 2]), 5)]


def _mismatch(structure, value):
    return ("`generator` yielded an element that did not match the expected structure. The "
            f"expected structure was {structure}, but the yielded element was {value}.")


def _wrong_spec(got, want):
    return f"`generator` yielded an element of {got} where an element of {want} was expected."


_INT32_2 = "SparseTensorSpec(TensorShape([Dimension(2)]), tf.int32)"


@pytest.mark.parametrize("values, signature, message", [
    ([tf.SparseTensorValue([[0, 0]], [1], [1, 1])], SPEC, _wrong_spec(
        "SparseTensorSpec(TensorShape([Dimension(1), Dimension(1)]), tf.int32)", _INT32_2)),
    ([tf.SparseTensorValue([[0]], [1.5], [2])], SPEC, _wrong_spec(
        "SparseTensorSpec(TensorShape([Dimension(2)]), tf.float32)", _INT32_2)),
    ([tf.SparseTensorValue([[0]], np.array([1], np.int64), [2])], SPEC, _wrong_spec(
        "SparseTensorSpec(TensorShape([Dimension(2)]), tf.int64)", _INT32_2)),
    ([tf.SparseTensorValue([[0]], [1], [2])], tf.SparseTensorSpec([2], tf.float32), _wrong_spec(
        _INT32_2, "SparseTensorSpec(TensorShape([Dimension(2)]), tf.float32)")),
    # python ints convert to int32 values, which an int64 spec refuses
    ([(tf.SparseTensorValue([[1, 0]], [3], [2, 2]), 5)],
     (tf.SparseTensorSpec([None, 2], tf.int64), tf.TensorSpec([], tf.int32)), _wrong_spec(
        "(SparseTensorSpec(TensorShape([Dimension(2), Dimension(2)]), tf.int32), "
        "TensorSpec(shape=(), dtype=tf.int32, name=None))",
        "(SparseTensorSpec(TensorShape([Dimension(None), Dimension(2)]), tf.int64), "
        "TensorSpec(shape=(), dtype=tf.int32, name=None))")),
    ([np.array([1, 2], np.int32)], SPEC, _mismatch(_INT32_2, "[1 2]")),
    ([([[0]], [1], [2])], SPEC, _mismatch(_INT32_2, "([[0]], [1], [2])")),
    ([tf.SparseTensorValue([[0], [1]], [1], [2])], SPEC, _mismatch(
        _INT32_2, "SparseTensorValue(indices=[[0], [1]], values=[1], dense_shape=[2])")),
], ids=["dense_shape", "float_values", "int64_values", "int_for_float", "python_int_for_int64",
        "dense_value", "tuple_value", "parts_disagree"])
def test_from_generator_checks_sparse_elements_as_tensorflow(values, signature, message):
    nxt = tf.data.make_one_shot_iterator(generated(values, signature)).get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(nxt)
    assert info.value.message.startswith("TypeError: " + message)


# --- shuffle with a tensor seed ----------------------------------------------------------------

def _shuffled(seed, graph_seed=None):
    if graph_seed is not None:
        tf.set_random_seed(graph_seed)
    return elements(D.range(8).shuffle(8, seed=seed))


@pytest.mark.parametrize("seed, graph_seed, expected", [
    (3, None, [4, 2, 1, 0, 3, 6, 5, 7]),
    (0, None, [4, 0, 6, 5, 3, 1, 7, 2]),
    (2**31 + 2, None, [4, 2, 1, 0, 3, 6, 5, 7]),
    (-5, None, [4, 7, 3, 6, 1, 0, 2, 5]),
    (3, 5, [4, 6, 0, 7, 5, 3, 2, 1]),
    (0, 0, [2, 3, 1, 7, 5, 0, 4, 6]),
], ids=["3", "0", "2**31+2", "-5", "graph_seed_5", "graph_seed_0"])
def test_shuffle_with_a_tensor_seed_is_as_with_its_value(seed, graph_seed, expected):
    assert _shuffled(tf.constant(seed, tf.int64), graph_seed) == expected


def test_shuffle_with_a_tensor_seed_across_epochs():
    shuffled = D.range(4).shuffle(4, seed=tf.constant(3, tf.int64)).repeat(2)
    assert elements(shuffled) == [0, 1, 2, 3, 0, 3, 2, 1]


def test_shuffle_with_a_fed_seed():
    seed = tf.placeholder(tf.int64, [])
    it = tf.data.make_initializable_iterator(D.range(8).shuffle(8, seed=seed))
    nxt = it.get_next()
    got = []
    with tf.Session() as sess:
        for value in (3, 4):
            sess.run(it.initializer, {seed: value})
            got.append([int(sess.run(nxt)) for _ in range(8)])
    assert got == [[4, 2, 1, 0, 3, 6, 5, 7], [7, 5, 4, 1, 6, 2, 3, 0]]


def test_shuffle_seed_tensor_must_be_int64():
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int64 for Tensor "
                                         "with dtype int32: <tf.Tensor 'mod"):
        D.range(8).shuffle(8, seed=tf.constant(3))
    with pytest.raises(ValueError, match="requested dtype int64 for Tensor with dtype float32"):
        D.range(8).shuffle(8, seed=tf.constant(3.0))
    with pytest.raises(TypeError):
        D.range(8).shuffle(8, seed=tf.constant("a"))


# --- Python iteration --------------------------------------------------------------------------

def test_python_iteration_is_eager_only():
    with pytest.raises(RuntimeError) as info:
        iter(D.range(3))
    assert str(info.value) == ("`tf.data.Dataset` only supports Python-style iteration in "
                               "eager mode or within tf.function.")
