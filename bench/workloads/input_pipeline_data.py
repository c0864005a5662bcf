"""mlp_train's SGD step fed by tf.data instead of feed_dict.

from_tensor_slices of 60,000 random MNIST-sized samples -> shuffle(10,000) -> repeat ->
batch(128) -> prefetch(1) -> one-shot iterator; the 784-512-512-10 MLP trains on `get_next()`.
The check before timing is that a few steps lower the loss.
"""
import numpy as np

from bench.metrics import Metric
from bench.timing import per_call_us
from bench.workloads.mlp_train import SIZES, _check_learns, mlp_loss

SAMPLES = 60_000
BATCH = 128
STEPS_TO_CHECK = 20

METRICS = {
    "data_sgd_ms_per_step": Metric("ms", "one SGD step of mlp_train fed by tf.data "
                                   f"(shuffle(10000), repeat, batch({BATCH}), prefetch(1))"),
}


def run_tf1(tf):
    """Time `sess.run(train_op)` with the batch coming from the iterator."""
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 1, (SAMPLES, SIZES[0])).astype(np.float32)
    # Learnable labels (the brightest of the first ten pixels), so the loss check is meaningful.
    labels = np.eye(SIZES[-1], dtype=np.float32)[images[:, :SIZES[-1]].argmax(1)]
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        ds = (tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10_000).repeat()
              .batch(BATCH).prefetch(1))
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        loss = mlp_loss(tf, x, y)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(STEPS_TO_CHECK)]
            _check_learns([np.mean(losses[:5]), np.mean(losses[-5:])])
            ms = per_call_us(lambda: sess.run(train), batches=20, batch_seconds=0.05,
                             warmup_seconds=0.5, min_calls=100) / 1e3
    return {"data_sgd_ms_per_step": ms}
