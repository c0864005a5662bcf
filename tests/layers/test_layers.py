"""tf.layers under variable scopes (names, sharing, counters) and batch normalization's update
ops, checked against what TensorFlow 2.21 (tf.compat.v1 + tf_keras) builds."""
import numpy as np
import pytest

import tensorweave as tf


def _dense(x, units=4, **kwargs):
    return tf.layers.dense(x, units, kernel_initializer=tf.constant_initializer(0.5), **kwargs)


def _names(variables):
    return [v.name for v in variables]


def test_reentered_scope_with_reuse_shares_unnamed_layers():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with tf.variable_scope("model"):
            a = _dense(_dense(x), 1)
        with tf.variable_scope("model", reuse=True):
            b = _dense(_dense(x), 1)
        assert (a.name, b.name) == ("model/dense_1/BiasAdd:0", "model_1/dense_1/BiasAdd:0")
        assert _names(tf.global_variables()) == [
            "model/dense/kernel:0", "model/dense/bias:0",
            "model/dense_1/kernel:0", "model/dense_1/bias:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(*sess.run([a, b]))


def test_auto_reuse_model_function_builds_one_set_of_variables():
    def model(x):
        with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
            return _dense(x)

    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        a, b = model(x), model(x)
        assert _names(tf.trainable_variables()) == ["model/dense/kernel:0",
                                                    "model/dense/bias:0"]
        assert (a.name, b.name) == ("model/dense/BiasAdd:0", "model_1/dense/BiasAdd:0")


def test_layer_default_names_count_within_one_scope_entry_and_per_scope():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
            c, d = _dense(x, 2), _dense(x, 2)
        with tf.variable_scope("o1"):
            e = _dense(x, 2)
        with tf.variable_scope("o2"):
            f = _dense(x, 2)
        g, h = _dense(x, 2), _dense(x, 2)
        assert [t.name for t in (c, d, e, f, g, h)] == [
            "net/dense/BiasAdd:0", "net/dense_1/BiasAdd:0", "o1/dense/BiasAdd:0",
            "o2/dense/BiasAdd:0", "dense/BiasAdd:0", "dense_1/BiasAdd:0"]
        # an unnamed layer with reuse=True looks for the base name itself
        again = _dense(x, 2, reuse=True)
        assert again.name == "dense_2/BiasAdd:0"
        assert len(tf.global_variables()) == 12  # six layers, the reused one adds none


def test_nested_reentry_resets_only_the_reentered_scopes_subscopes():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with tf.variable_scope("outer"):
            with tf.variable_scope("inner"):
                g = _dense(x, 2)
            with tf.variable_scope("inner", reuse=True):
                h = _dense(x, 2)
            g2 = _dense(x, 2)
        with tf.variable_scope("outer", reuse=True):
            with tf.variable_scope("inner"):
                i = _dense(x, 2)
            i2 = _dense(x, 2)
        assert [t.name for t in (g, h, g2, i, i2)] == [
            "outer/inner/dense/BiasAdd:0", "outer/inner_1/dense/BiasAdd:0",
            "outer/dense/BiasAdd:0", "outer_1/inner/dense/BiasAdd:0", "outer_1/dense/BiasAdd:0"]
        assert _names(tf.global_variables()) == [
            "outer/inner/dense/kernel:0", "outer/inner/dense/bias:0",
            "outer/dense/kernel:0", "outer/dense/bias:0"]


def test_layers_in_a_variable_scope_object():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with tf.variable_scope("vso") as vso:
            j = _dense(x, 2)
        with tf.variable_scope(vso, reuse=True):
            k = _dense(x, 2)
        with tf.variable_scope(vso), pytest.raises(ValueError, match="vso/dense/kernel already"):
            _dense(x, 2)
        assert (j.name, k.name) == ("vso/dense/BiasAdd:0", "vso_1/dense/BiasAdd:0")


def test_layer_object_called_in_two_scope_entries_keeps_its_name_scope():
    """Later calls re-enter the layer's first name scope; the layer's open scope still counts
    in the second entry, so a new unnamed layer there is dense_1."""
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        layer = tf.layers.Dense(3)
        with tf.variable_scope("m5"):
            u1 = layer(x)
        with tf.variable_scope("m5"):
            u2 = layer(x)
            u3 = _dense(x, 2)
        assert (u1.name, u2.name, u3.name) == ("m5/dense/BiasAdd:0", "m5/dense/BiasAdd_1:0",
                                               "m5_1/dense/BiasAdd:0")
        assert layer.scope_name == "m5/dense"
        assert _names(tf.global_variables())[2:] == ["m5/dense_1/kernel:0", "m5/dense_1/bias:0"]


@pytest.mark.parametrize("fused", [True, False])
def test_batch_norm_update_ops_are_assign_sub_operations_named_as_tensorflow(fused):
    x = np.linspace(-1, 1, 2 * 3 * 3 * 2).reshape(2, 3, 3, 2).astype(np.float32)
    with tf.Graph().as_default():
        layer = tf.layers.BatchNormalization(momentum=0.9, fused=fused, name="bn")
        layer(tf.constant(x), training=True)
        ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert [(type(u).__name__, u.name, u.type) for u in ups] == [
            ("Operation", "bn/AssignMovingAvg", "AssignSub"),
            ("Operation", "bn/AssignMovingAvg_1", "AssignSub")]
        assert [i.name for i in ups[0].inputs][0] == "bn/moving_mean:0"
        assert layer.updates == ups
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(ups) == [None, None]
            mean, var = sess.run([layer.moving_mean, layer.moving_variance])
        batch_var = x.reshape(-1, 2).var(0)
        if fused:  # FusedBatchNormV3 hands the update the unbiased variance
            batch_var = batch_var * 18 / 17
        np.testing.assert_allclose(mean, 0.1 * x.reshape(-1, 2).mean(0), atol=1e-7)
        np.testing.assert_allclose(var, 0.9 + 0.1 * batch_var, rtol=1e-6)


def test_fused_batch_norm_layer_keeps_a_small_epsilon():
    # TF 2.21: the FusedBatchNormV3 node carries epsilon=1e-7 and normalizes with it.
    x = np.linspace(0, 1e-3, 2 * 2 * 2 * 3).reshape(2, 2, 2, 3).astype(np.float32)
    with tf.Graph().as_default() as g:
        y = tf.layers.batch_normalization(tf.constant(x), epsilon=1e-7, fused=True,
                                          training=True)
        (op,) = [o for o in g.get_operations() if o.type == "FusedBatchNormV3"]
        assert op.get_attr("epsilon") == pytest.approx(1e-7)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(y)
    flat = x.reshape(-1, 3).astype(np.float64)
    ref = (flat - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-7)
    np.testing.assert_allclose(out.reshape(-1, 3), ref, rtol=1e-3, atol=1e-3)


def test_batch_norm_with_a_training_tensor_updates_through_conds():
    x = np.linspace(-1, 1, 8).reshape(4, 2).astype(np.float32)
    with tf.Graph().as_default():
        training = tf.placeholder_with_default(True, [])
        tf.layers.batch_normalization(tf.constant(x), training=training, momentum=0.5,
                                      name="t2")
        ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert [(u.name, u.type) for u in ups] == [("t2/cond_2/Merge", "Merge"),
                                                   ("t2/cond_3/Merge", "Merge")]
        mean = tf.global_variables()[2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(ups, {training: False}) == [None, None]
            np.testing.assert_array_equal(sess.run(mean), [0.0, 0.0])
            sess.run(ups)
            np.testing.assert_allclose(sess.run(mean), 0.5 * x.mean(0), atol=1e-7)


def test_activity_regularizer_loss_is_divided_by_the_batch_size():
    """As TF: `<layer>/ActivityRegularizer/truediv`, the regularizer's value over the batch."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        tf.layers.dense(x, 1, kernel_initializer=tf.ones_initializer(),
                        activity_regularizer=tf.reduce_sum, name="d")
        (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert loss.name == "d/ActivityRegularizer/truediv:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(loss, {x: np.ones((4, 2), np.float32)}) == 2.0
