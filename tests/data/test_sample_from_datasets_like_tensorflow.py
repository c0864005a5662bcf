"""sample_from_datasets draws TensorFlow 2.21's elements, in TensorFlow's order.

TensorFlow builds it as Dataset.random(seed).batch(2) pairs seeding
stateless_multinomial(log(weights), 1), whose indices direct an interleave of the datasets;
tensorweave builds the same pipeline. Every expected list below is what TensorFlow 2.21
(tf.compat.v1, graph mode) yields for the same program.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data.transformations import sample_from_datasets

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def three():
    return [D.range(0, 6), D.range(100, 104), D.range(200, 208)]


def epochs(dataset, inits=1, feed=None, limit=None):
    """The elements of `dataset` through one initializable iterator initialized `inits` times
    (at most `limit` elements each)."""
    it = tf.data.make_initializable_iterator(dataset)
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(inits):
            sess.run(it.initializer, feed)
            got = []
            while limit is None or len(got) < limit:
                try:
                    got.append(np.asarray(sess.run(nxt)).tolist())
                except tf.errors.OutOfRangeError:
                    break
            out.append(got)
    return out if inits > 1 else out[0]


def _graph_seed(op_seed):
    def build():
        tf.set_random_seed(42)
        return E.sample_from_datasets(three(), seed=op_seed)
    return build


WEIGHTS_BY_ELEMENT = np.array([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]], np.float32)

# name: (the dataset, TensorFlow's elements)
CASES = {
    "uniform_op_seed": (lambda: E.sample_from_datasets(three(), seed=7), [
        100, 0, 200, 1, 101, 102, 103, 201, 2, 202, 203, 204, 3, 4, 5, 205, 206, 207]),
    "list_weights": (lambda: E.sample_from_datasets(three(), [0.2, 0.3, 0.5], seed=3), [
        200, 201, 202, 100, 203, 204, 101, 205, 102, 0, 206, 1, 207, 2, 103, 3, 4, 5]),
    "float64_array_weights": (lambda: E.sample_from_datasets(
        three(), np.array([1.0, 2.0, 5.0]), seed=3), [
        200, 201, 202, 100, 203, 204, 205, 206, 207, 0, 1, 2, 101, 3, 102, 103, 4, 5]),
    "weights_dataset": (lambda: E.sample_from_datasets(
        three(), D.from_tensor_slices(WEIGHTS_BY_ELEMENT).repeat(), seed=5), [
        0, 200, 1, 201, 2, 202, 3, 203, 4, 100, 5, 204, 205, 206, 207, 101, 102, 103]),
    # The selector ends with the weights: after 5 draws.
    "short_weights_dataset": (lambda: E.sample_from_datasets(
        three(), D.from_tensor_slices(np.array([[0.5, 0.25, 0.25]] * 5, np.float32)), seed=5),
        [0, 1, 2, 200, 201]),
    "graph_seed_only": (_graph_seed(None), [
        200, 100, 0, 1, 101, 102, 103, 201, 202, 203, 204, 205, 2, 3, 206, 207, 4, 5]),
    "graph_and_op_seed": (_graph_seed(9), [
        200, 201, 100, 0, 1, 2, 101, 3, 202, 203, 204, 4, 102, 205, 103, 5, 206, 207]),
    # The same draws with and without stopping: the end comes with the draw of range(0, 6)
    # after its 6 elements.
    "stop_on_empty_dataset": (lambda: E.sample_from_datasets(
        three(), [0.5, 0.25, 0.25], seed=1, stop_on_empty_dataset=True),
        [200, 0, 1, 2, 3, 4, 201, 100, 101, 5, 202]),
    "exhausted_inputs_skipped": (lambda: E.sample_from_datasets(
        three(), [0.5, 0.25, 0.25], seed=1, stop_on_empty_dataset=False), [
        200, 0, 1, 2, 3, 4, 201, 100, 101, 5, 202, 102, 103, 203, 204, 205, 206, 207]),
    # Every epoch of the repeat restarts the seed pairs: the same choices again.
    "repeat_after": (lambda: E.sample_from_datasets(
        [D.range(0, 3), D.range(10, 13)], seed=2).repeat(3), [10, 0, 11, 1, 12, 2] * 3),
    "endless_inputs": (lambda: E.sample_from_datasets(
        [D.range(0, 3).repeat(), D.range(10, 13).repeat()], [0.7, 0.3], seed=4).take(30), [
        0, 10, 1, 2, 0, 11, 1, 2, 0, 12, 1, 2, 0, 10, 1, 2, 11, 0, 1, 12, 10, 2, 0, 1, 2, 0,
        11, 1, 2, 0]),
    # A list drops the datasets of weight 0 (all of them: the first, emptied).
    "zero_weight_in_list": (lambda: E.sample_from_datasets(three(), [0.0, 1.0, 1.0], seed=6),
                            [100, 200, 101, 201, 202, 102, 203, 204, 205, 103, 206, 207]),
    "all_zero_list": (lambda: E.sample_from_datasets(three(), [0.0, 0.0, 0.0], seed=6), []),
    "dataset_method": (lambda: D.sample_from_datasets(
        [D.range(0, 3), D.range(10, 13)], seed=2).repeat(2), [10, 0, 11, 1, 12, 2] * 2),
}


@pytest.mark.parametrize("name", CASES)
def test_elements_in_tensorflows_order(name):
    make, expected = CASES[name]
    assert epochs(make()) == expected


def test_rerandomize_each_iteration_draws_other_choices_each_epoch():
    with pytest.warns(UserWarning, match="only supported for repeat-based epochs"):
        dataset = sample_from_datasets([D.range(0, 3), D.range(10, 13)], seed=2,
                                       rerandomize_each_iteration=True)
    assert epochs(dataset.repeat(3)) == [
        10, 0, 1, 2, 11, 12, 10, 0, 11, 12, 1, 2, 10, 0, 1, 2, 11, 12]


def test_each_initialization_draws_the_same_choices():
    assert epochs(E.sample_from_datasets(three(), seed=11), inits=3) == [[
        200, 0, 100, 101, 1, 2, 102, 103, 201, 3, 202, 4, 5, 203, 204, 205, 206, 207]] * 3


def test_weights_tensor_read_at_initialization():
    weights = tf.placeholder(tf.float32, [3])
    dataset = E.sample_from_datasets(three(), weights, seed=8)
    assert epochs(dataset, feed={weights: [0.1, 0.1, 0.8]}) == [
        200, 201, 202, 203, 204, 205, 206, 207, 0, 100, 1, 2, 3, 4, 101, 102, 5, 103]
    # A tensor keeps its zero-weight datasets: never drawn. Once the others are exhausted
    # the iteration ends (TensorFlow's draws forever there: its get_next hangs), also for
    # weights whose logs are not finite (inf, negative, NaN), which the draws never choose.
    assert epochs(dataset, feed={weights: [0.0, 1.0, 1.0]}) == [
        200, 100, 201, 202, 203, 101, 204, 102, 205, 103, 206, 207]
    assert epochs(dataset, feed={weights: [np.inf, 1.0, -1.0]}) == [100, 101, 102, 103]
    assert epochs(dataset, feed={weights: [np.nan, 0.0, 2.0]}) == list(range(200, 208))


def test_one_dataset_is_returned_as_it_is():
    single = D.range(3)
    assert E.sample_from_datasets([single], seed=1) is single
    kept = D.range(5)
    assert E.sample_from_datasets([D.range(3), kept], [0.0, 2.0]) is kept


def test_errors_are_tensorflows():
    with pytest.raises(TypeError, match=r"must be either `tf.float32` or `tf.float64` but is "
                                        r"<dtype: 'int32'>\."):
        E.sample_from_datasets(three(), [1, 2, 3])
    with pytest.raises(ValueError, match=r"should be compatible with `\[len\(datasets\)\]` but "
                                         r"is \(2,\)\."):
        E.sample_from_datasets(three(), tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"`len\(weights\)=2` vs. `len\(datasets\)=3`"):
        E.sample_from_datasets(three(), [1.0, 2.0])
    with pytest.raises(ValueError, match="Invalid `datasets`. `datasets` should not be empty."):
        E.sample_from_datasets([])


def test_cardinality_of_finite_inputs_is_unknown():
    cardinality = tf.data.experimental.cardinality
    counts = [cardinality(E.sample_from_datasets(three(), seed=1)),
              cardinality(E.sample_from_datasets([D.range(3)], seed=1)),
              cardinality(E.sample_from_datasets(
                  [D.range(3), D.range(4)], D.from_tensors([0.5, 0.5]).repeat(), seed=1))]
    with tf.Session() as sess:
        assert sess.run(counts) == [-2, 3, -2]
