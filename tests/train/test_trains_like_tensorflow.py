"""Seeded TF1 training programs follow TensorFlow's loss curves.

tf.data's shuffle order, tf.layers' glorot initializers, dropout's masks and Adam all follow
TensorFlow's numbers for a seed, so the losses of this program equal TensorFlow 2.21's: the
ones below are TF's, printed by the same program run under TensorFlow (they agreed bit for bit
here; the tolerance leaves room for another CPU's BLAS kernels rounding its products
differently). TensorFlow 2.21 needs TF_USE_LEGACY_KERAS=1 for tf.layers.
"""
import numpy as np

import tensorweave as tf

TF_LOSSES = [0.702942967414856, 0.6942963600158691, 0.6325762271881104, 0.7146725654602051,
             0.6686553955078125, 0.615028977394104, 0.48137539625167847, 0.5462081432342529,
             0.49682438373565674, 0.4576250910758972, 0.4506656527519226, 0.4097619354724884,
             0.3372563421726227, 0.3499326705932617, 0.43708670139312744, 0.3602760136127472,
             0.3282138705253601, 0.3603513836860657, 0.26474741101264954, 0.30921292304992676,
             0.2973130941390991, 0.28930217027664185, 0.3144342303276062, 0.28640544414520264,
             0.18693585693836212, 0.20478522777557373, 0.22154265642166138, 0.18577039241790771,
             0.25694870948791504, 0.17114147543907166]


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


TF_CNN_LOSSES = [2.015672445297241, 1.6023833751678467, 1.6700763702392578, 1.0559560060501099,
                 1.3274742364883423, 1.4031630754470825, 0.894180178642273, 1.036017656326294,
                 1.0264135599136353, 1.0700421333312988, 1.2716466188430786, 1.0776606798171997,
                 0.8445262908935547, 0.9791531562805176, 0.8134812712669373, 0.9449836611747742,
                 0.8992787599563599, 0.9153914451599121, 0.9342494010925293, 0.9530327320098877]


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
