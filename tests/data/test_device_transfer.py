"""tf.data.experimental.copy_to_device / prefetch_to_device, enable_debug_mode, to_variant and
from_variant (data/device_transfer.py, data/variant_dataset.py).

Expected values and errors are TensorFlow 2.21's on the same programs (CPU-only machine).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


@pytest.mark.parametrize("transform", [
    lambda: E.prefetch_to_device("/cpu:0"), lambda: E.prefetch_to_device("/cpu:0", 2),
    lambda: E.copy_to_device("/cpu:0"),
    lambda: E.copy_to_device("/job:localhost/replica:0/task:0/device:CPU:0")])
def test_copy_to_the_cpu_yields_the_same_elements_of_unknown_cardinality(transform):
    ds = D.range(5).apply(transform())
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    assert drain(ds) == [0, 1, 2, 3, 4]
    with tf.Session() as sess:
        assert sess.run(ds.cardinality()) == -2


def test_copy_keeps_sparse_components():
    ds = D.range(2).map(lambda x: (x, tf.sparse.SparseTensor([[0]], [1.0], [3]))) \
        .apply(E.copy_to_device("/cpu:0")).repeat(2)
    got = drain(ds)
    assert len(got) == 4 and got[0][0] == 0
    np.testing.assert_array_equal(got[0][1].dense_shape, [3])


@pytest.mark.parametrize("transform, device", [
    (lambda: E.prefetch_to_device("/gpu:0"), "GPU:0"),
    (lambda: E.copy_to_device("/gpu:0"), "GPU:0"),
    (lambda: E.prefetch_to_device("/cpu:1"), "CPU:1"),
    (lambda: E.prefetch_to_device("/device:GPU:1", 3), "GPU:1")])
def test_a_device_the_session_lacks_fails_placement(transform, device):
    ds = D.range(5).apply(transform())
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=f"(?s)Cannot assign a device.*{device}"):
        sess.run(nxt)


def test_soft_placement_runs_the_copy_on_the_cpu():
    ds = D.range(3).apply(E.copy_to_device("/gpu:0"))
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert [sess.run(nxt) for _ in range(3)] == [0, 1, 2]


def test_enable_debug_mode_is_eager_only():
    with pytest.raises(ValueError, match="only supported in eager mode"):
        E.enable_debug_mode()


def test_variant_round_trip():
    variant = E.to_variant(D.range(3).map(lambda x: x * 2))
    assert variant.dtype == tf.variant and variant.shape.ndims == 0
    ds = E.from_variant(variant, tf.TensorSpec([], tf.int64))
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    assert drain(ds) == [0, 2, 4]
    with tf.Session() as sess:
        assert sess.run(ds.cardinality()) == -2   # map: unknown, as TF1's
        assert sess.run(E.from_variant(E.to_variant(D.range(3)),
                                       tf.TensorSpec([], tf.int64)).cardinality()) == 3


def test_from_variant_needs_a_variant():
    with pytest.raises(TypeError, match="`variant` must be a scalar tf.variant tensor"):
        E.from_variant(tf.constant(1), tf.TensorSpec([], tf.int32))
