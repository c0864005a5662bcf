"""tf.losses against TensorFlow 2.21's printed behaviour: the weights check is TF's
assert_broadcastable (its static messages and names, and a run-time Assert when shapes are
unknown), sparse labels and weights are squeezed as TF squeezes them, and the totals."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.losses.Reduction
RNG = np.random.RandomState(1)
LABELS = (RNG.rand(4, 3) > 0.5).astype(np.float32)
PRED = RNG.rand(4, 3).astype(np.float32)
ROWS = np.array([[1.0], [0.0], [2.0], [3.0]], np.float32)
FULL = np.ones([4, 3], np.float32) * [[1], [0], [2], [1]]


def _run_fed(build, shape, value):
    """The loss built on a weights placeholder of `shape`, run with `value` fed."""
    with tf.Graph().as_default():
        weights = tf.placeholder(tf.float32, shape)
        loss = build(weights)
        with tf.Session() as sess:
            return loss, sess.run(loss, {weights: value})


@pytest.mark.parametrize("reduction, expected", [
    (R.SUM_BY_NONZERO_WEIGHTS, {(): 0.31454375, (4, 1): 0.22660194, (4, 3): 0.18351144}),
    (R.MEAN, {(): 0.15727188, (4, 1): 0.11330097, (4, 3): 0.13763358}),
])
def test_weights_of_unknown_shape_reduce_as_tensorflow(reduction, expected):
    for shape, want in expected.items():
        value = np.float32(2.0) if shape == () else (ROWS if shape == (4, 1) else FULL)
        loss, got = _run_fed(lambda w: tf.losses.mean_squared_error(
            LABELS, PRED, w, reduction=reduction), None, value)
        assert loss.name == "mean_squared_error/value:0"
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_unreduced_losses_with_unknown_weights_keep_the_losses_shape():
    loss, got = _run_fed(lambda w: tf.losses.mean_squared_error(
        LABELS, PRED, w, reduction=R.NONE), [None, None], ROWS)
    assert loss.name == "mean_squared_error/Mul:0" and loss.shape.as_list() == [4, 3]
    np.testing.assert_allclose(got[3], [3.0219783e-03, 2.9470414e-01, 2.8399613e-01],
                               rtol=1e-6)
    assert not got[1].any()


@pytest.mark.parametrize("build", [
    lambda w: tf.losses.mean_squared_error(LABELS, PRED, w),
    lambda w: tf.losses.mean_squared_error(LABELS, PRED, w, reduction=R.NONE),
    lambda w: tf.losses.mean_pairwise_squared_error(LABELS, PRED, w),
])
@pytest.mark.parametrize("value", [np.ones([3], np.float32), np.ones([4, 3, 1], np.float32),
                                   np.ones([2, 3], np.float32)])
def test_weights_that_do_not_broadcast_fail_when_run(build, value):
    # TF: an Assert; numpy broadcasting must not let [3] or [4, 3, 1] through silently.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"weights can not be broadcast to values\."):
        _run_fed(build, None, value)


def test_static_weights_errors_name_the_converted_weights():
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as rank_error:
            tf.losses.absolute_difference(LABELS, PRED, np.ones([3], np.float32))
        with pytest.raises(ValueError) as dim_error:
            tf.losses.cosine_distance(LABELS, PRED, axis=1, weights=np.ones([4, 3], np.float32))
        with pytest.raises(ValueError) as sparse_error:
            tf.losses.sparse_softmax_cross_entropy([0, 2, 1, 2], PRED, [1.0, 0.0, 2.0])
    assert str(rank_error.value) == (
        "weights can not be broadcast to values. values.rank=2. weights.rank=1. "
        "values.shape=(4, 3). weights.shape=(3,). Received weights=Tensor("
        "\"absolute_difference/assert_broadcastable/weights:0\", shape=(3,), dtype=float32), "
        "values=Tensor(\"absolute_difference/Abs:0\", shape=(4, 3), dtype=float32)")
    assert str(dim_error.value).startswith(
        "weights can not be broadcast to values. Mismatch at dim 1. values.shape=[4 1], "
        "weights.shape=[4 3]. Received weights=Tensor("
        "\"cosine_distance_loss/assert_broadcastable/weights:0\"")
    assert str(sparse_error.value).startswith(
        "weights can not be broadcast to values. Mismatch at dim 0. values.shape=[4], "
        "weights.shape=[3]. Received weights=Tensor("
        "\"sparse_softmax_cross_entropy_loss/Const:0\"")


def test_sparse_weights_of_unknown_rank_lose_their_last_dimension_when_run():
    expected = {(): 2.3865995, (4,): 2.406336, (4, 1): 2.406336}
    for shape, want in expected.items():
        value = np.float32(2.0) if shape == () else ROWS.reshape(shape)
        _, got = _run_fed(lambda w: tf.losses.sparse_softmax_cross_entropy(
            [0, 1, 2, 1], PRED, w), None, value)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Can not squeeze dim\[1\], expected a dimension of 1, got 3"):
        _run_fed(lambda w: tf.losses.sparse_softmax_cross_entropy([0, 1, 2, 1], PRED, w),
                 None, np.ones([4, 3], np.float32))


def test_pairwise_loss_with_unknown_weights():
    expected = {(): 1.0935544, (4, 1): 1.1694772, (4, 3): 2.3463383}
    for shape, want in expected.items():
        value = np.float32(2.0) if shape == () else (ROWS if shape == (4, 1) else FULL)
        loss, got = _run_fed(lambda w: tf.losses.mean_pairwise_squared_error(LABELS, PRED, w),
                             None, value)
        assert loss.name == "mean_pairwise_squared_error/value_2:0"
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_collections_and_totals():
    with tf.Graph().as_default():
        with tf.variable_scope("a"):
            tf.get_variable("v", [2], initializer=tf.constant_initializer([1.0, 2.0]),
                            regularizer=tf.nn.l2_loss)
            tf.get_variable("v2", [2], initializer=tf.constant_initializer([3.0, 4.0]),
                            regularizer=lambda x: tf.reduce_sum(x) * 0.5)
        tf.losses.absolute_difference(LABELS, PRED)
        tf.losses.mean_squared_error(LABELS, PRED, loss_collection="mine")
        tf.losses.log_loss(LABELS, PRED, loss_collection=None)
        tf.losses.add_loss(tf.constant(5.0))
        tf.losses.add_loss(tf.constant(7.0), loss_collection="mine")
        # TF's get_variable calls each regularizer once outside any scope first: Const_1, ...
        assert [t.name for t in tf.losses.get_losses()] == ["absolute_difference/value:0",
                                                             "Const_1:0"]
        assert [t.name for t in tf.losses.get_losses(loss_collection="mine")] == [
            "mean_squared_error/value:0", "Const_2:0"]
        assert [t.name for t in tf.losses.get_regularization_losses()] == [
            "a/v/Regularizer/L2Loss:0", "a/v2/Regularizer/mul:0"]
        totals = [tf.losses.get_regularization_loss(),
                  tf.losses.get_regularization_loss(scope="nothing"),
                  tf.losses.get_total_loss(),
                  tf.losses.get_total_loss(add_regularization_losses=False, name="tt"),
                  tf.losses.get_total_loss(scope="absolute")]
        assert [t.name for t in totals] == ["total_regularization_loss:0", "Const_3:0",
                                            "total_loss:0", "tt:0", "total_loss_1:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(totals),
                                       [6.0, 0.0, 11.316021, 5.3160214, 0.31602147], rtol=1e-6)
        with pytest.raises(ValueError, match="Inputs must be an iterable of at least one"):
            tf.losses.get_total_loss(scope="zzz")
