"""Graph optimizer on over off, in one process: mlp_train's SGD and Adam steps and cnn_train's step.

Each model is built once and run in two sessions of its graph: the default config, and the
optimizer switched off the way a TF1 user switches it off (`OptimizerOptions(opt_level=L0)` and
`RewriterConfig(disable_meta_optimizer=True)`, which TensorFlow honours too). Their timed
batches alternate (bench.timing.batch_means_each) and a metric is the median over rounds of
the ratio of the round's two batch means: a drift of the machine hits both sides of a ratio
alike, which separate processes (`bench.run --opt-off`) cannot promise. Issue #7's target:
at most 0.85 (the optimizer makes the step at least 15% faster).
"""
import numpy as np

from bench.metrics import Metric
from bench.timing import batch_means_each
from bench.workloads import cnn_train, mlp_train

METRICS = {
    "mlp_sgd_on_over_off": Metric("x", "mlp_train's SGD step, optimizer on / off"),
    "mlp_adam_on_over_off": Metric("x", "mlp_train's Adam step, optimizer on / off"),
    "cnn_on_over_off": Metric("x", "cnn_train's step, optimizer on / off"),
}


def _off_config(tf):
    return tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
        rewrite_options={"disable_meta_optimizer": True}))


def _mlp(tf, make_optimizer):
    inputs, labels, _ = mlp_train._batch()
    x = tf.placeholder(tf.float32, [mlp_train.BATCH, mlp_train.SIZES[0]])
    y = tf.placeholder(tf.float32, [mlp_train.BATCH, mlp_train.SIZES[-1]])
    loss = mlp_train.mlp_loss(tf, x, y)
    return loss, make_optimizer(tf).minimize(loss), {x: inputs, y: labels}


def _cnn(tf):
    images, labels, _ = cnn_train._batch()
    x = tf.placeholder(tf.float32, [cnn_train.BATCH, 28, 28, 1])
    y = tf.placeholder(tf.float32, [cnn_train.BATCH, 10])
    loss = cnn_train.cnn_loss(tf, x, y)
    return loss, tf.train.AdamOptimizer(1e-4).minimize(loss), {x: images, y: labels}


def _on_over_off(tf, build, batch_seconds: float) -> float:
    """Median over alternating rounds of (optimized step) / (unoptimized step)."""
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        loss, train, feed = build(tf)
        init = tf.global_variables_initializer()
        with tf.Session() as on, tf.Session(config=_off_config(tf)) as off:
            losses = []
            for sess in (on, off):
                sess.run(init)
                losses.append([sess.run([loss, train], feed)[0] for _ in range(3)])
            if not np.allclose(losses[0], losses[1], rtol=1e-4) or \
                    not losses[0][-1] < losses[0][0]:
                raise AssertionError(f"optimizer on and off disagree or do not learn: {losses}")
            means = batch_means_each({"on": lambda: on.run(train, feed),
                                      "off": lambda: off.run(train, feed)},
                                     batches=21, batch_seconds=batch_seconds,
                                     warmup_seconds=0.5, min_calls=21)
    return float(np.median(np.array(means["on"]) / np.array(means["off"])))


def run_tf1(tf):
    """The three ratios, each model in its own graph and pair of sessions."""
    return {
        "mlp_sgd_on_over_off": _on_over_off(
            tf, lambda t: _mlp(t, lambda t: t.train.GradientDescentOptimizer(0.01)), 0.05),
        "mlp_adam_on_over_off": _on_over_off(
            tf, lambda t: _mlp(t, lambda t: t.train.AdamOptimizer(1e-3)), 0.05),
        "cnn_on_over_off": _on_over_off(tf, _cnn, 0.15),
    }
