"""A seeded TF1 training program follows TensorFlow's loss curve.

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
