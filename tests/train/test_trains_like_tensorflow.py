"""Seeded TF1 training programs follow TensorFlow's loss curves.

tf.data's shuffle order, tf.layers' glorot initializers, dropout's masks and Adam all follow
TensorFlow's numbers for a seed, so the losses of this program equal TensorFlow 2.21's: the
ones below are TF's, printed by the same program run under TensorFlow (they agreed bit for bit
here; the tolerance leaves room for another CPU's BLAS kernels rounding its products
differently).
"""
import numpy as np

import tensorweave as tf

TF_LOSSES = [0.7240831851959229, 0.797322690486908, 0.6413910984992981, 0.6022384762763977,
             0.5098963975906372, 0.6204732060432434, 0.5372886657714844, 0.5238038301467896,
             0.5477659702301025, 0.5558410882949829, 0.46982401609420776, 0.4190286099910736,
             0.3983103334903717, 0.4070858359336853, 0.4667644500732422, 0.3404993414878845,
             0.277503103017807, 0.43112510442733765, 0.3181423544883728, 0.24225229024887085,
             0.28349393606185913, 0.33122578263282776, 0.3275083303451538, 0.26709118485450745,
             0.15399381518363953, 0.2298603653907776, 0.2461889684200287, 0.1853226125240326,
             0.2939724922180176, 0.17539775371551514]


def test_seeded_program_follows_tensorflows_losses():
    rng = np.random.RandomState(0)
    features = rng.uniform(-1, 1, (256, 20)).astype(np.float32)
    labels = (features[:, :5].sum(axis=1) > 0).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(64).repeat() \
            .batch(32)
        x, y = tf.data.make_one_shot_iterator(dataset).get_next()
        hidden = tf.nn.dropout(tf.layers.dense(x, 32, activation=tf.nn.relu), keep_prob=0.8)
        loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(hidden, 2))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(len(TF_LOSSES))]
    np.testing.assert_allclose(losses, TF_LOSSES, rtol=1e-4)


TF_CNN_LOSSES = [1.6857197284698486, 1.4179275035858154, 1.476782202720642, 1.1684309244155884,
                 1.0249519348144531, 0.9933347105979919, 1.1240017414093018, 1.0538356304168701,
                 1.0842089653015137, 1.0479297637939453, 0.9199470281600952, 1.0757832527160645,
                 1.1674902439117432, 0.8811084032058716, 0.7994563579559326, 0.9633176326751709,
                 0.690116822719574, 0.7173365950584412, 0.9461464285850525, 0.982116162776947]


def test_seeded_cnn_with_batch_norm_follows_tensorflows_losses():
    """Conv2D with a variance-scaling kernel, batch normalization (its update ops run with the
    step), max pooling, dropout, a truncated-normal dense layer and Momentum."""
    rng = np.random.RandomState(1)
    images = rng.uniform(0, 1, (64, 8, 8, 1)).astype(np.float32)
    labels = rng.randint(0, 3, 64).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(32).repeat() \
            .batch(16)
        x, y = tf.data.make_one_shot_iterator(dataset).get_next()
        training = tf.placeholder_with_default(True, [])
        h = tf.layers.conv2d(x, 4, 3, padding="same",
                             kernel_initializer=tf.variance_scaling_initializer())
        h = tf.nn.relu(tf.layers.batch_normalization(h, training=training))
        h = tf.layers.flatten(tf.layers.max_pooling2d(h, 2, 2))
        h = tf.layers.dropout(h, rate=0.3, training=training)
        logits = tf.layers.dense(h, 3,
                                 kernel_initializer=tf.truncated_normal_initializer(stddev=0.1))
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(len(TF_CNN_LOSSES))]
    np.testing.assert_allclose(losses, TF_CNN_LOSSES, rtol=1e-4)
