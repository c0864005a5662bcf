"""Training step of the classic two-conv MNIST net (batch 64, Adam): conv-heavy forward+backward.

The net of TensorFlow's "Deep MNIST" tutorial: conv 5x5x32 SAME + ReLU, max-pool 2x2, conv
5x5x64 SAME + ReLU, max-pool 2x2, fully connected 1024 + ReLU, fully connected 10; softmax cross
entropy on one-hot labels; AdamOptimizer(1e-4). Inputs are a fixed random batch (no download);
the check before timing is that a few steps lower the loss on that batch.
"""
import numpy as np

from bench import memory
from bench.metrics import Metric
from bench.timing import elapsed_ms, per_call_us

BATCH = 64
STEPS_TO_CHECK = 5

METRICS = {
    "ms_per_step": Metric("ms", f"one training step (forward, backward, Adam), batch {BATCH}"),
    "peak_mb": Metric("MB", "peak resident-set growth over the session's init and steps "
                      "(bench/memory.py)"),
    "first_step_ms": Metric("ms", "the first step of the process (with executor build and any "
                            "JIT compilation)"),
}


def _batch():
    """A fixed batch: random 28x28 images, one-hot labels of random classes."""
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 1, (BATCH, 28, 28, 1)).astype(np.float32)
    classes = rng.randint(0, 10, BATCH)
    return images, np.eye(10, dtype=np.float32)[classes], classes


def _timed_ms(step) -> float:
    """Median per-step time in ms over about a second of steps (after a warm-up)."""
    return per_call_us(step, batches=15, batch_seconds=0.08, warmup_seconds=0.5,
                       min_calls=30) / 1e3


def _check_learns(losses) -> None:
    if not all(np.isfinite(losses)) or not losses[-1] < losses[0]:
        raise AssertionError(f"loss did not decrease over {len(losses)} steps: {losses}")


def cnn_loss(tf, x, y):
    """The workload's model: mean softmax cross entropy of the two-conv net on NHWC images `x`
    and one-hot labels `y` (the optimizer_gain workload trains it too)."""
    def weight(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))

    def bias(shape):
        return tf.Variable(tf.constant(0.1, shape=shape))

    def conv(h, shape):
        return tf.nn.relu(tf.nn.conv2d(h, weight(shape), [1, 1, 1, 1], "SAME")
                          + bias(shape[-1:]))

    def pool(h):
        return tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")

    h = pool(conv(x, [5, 5, 1, 32]))
    h = pool(conv(h, [5, 5, 32, 64]))
    h = tf.reshape(h, [-1, 7 * 7 * 64])
    h = tf.nn.relu(tf.matmul(h, weight([7 * 7 * 64, 1024])) + bias([1024]))
    logits = tf.matmul(h, weight([1024, 10])) + bias([10])
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))


def run_tf1(tf):
    """Time `sess.run(train_op, feed)` of the two-conv net written against the TF1 API."""
    images, labels, _ = _batch()
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, 28, 28, 1], name="x")
        y = tf.placeholder(tf.float32, [BATCH, 10], name="y")
        loss = cnn_loss(tf, x, y)
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        feed = {x: images, y: labels}
        start = memory.start_phase()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first_ms = elapsed_ms(lambda: sess.run(train, feed))
            _check_learns([sess.run([loss, train], feed)[0] for _ in range(STEPS_TO_CHECK)])
            ms = _timed_ms(lambda: sess.run(train, feed))
            return {"ms_per_step": ms, "peak_mb": memory.peak_growth_mb(start),
                    "first_step_ms": first_ms}


def run_torch(torch):
    """The same net and step in eager PyTorch (NCHW, as PyTorch prefers)."""
    images, _, classes = _batch()
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.from_numpy(images.transpose(0, 3, 1, 2).copy())
    y = torch.from_numpy(classes)

    def step():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    _check_learns([step() for _ in range(STEPS_TO_CHECK)])
    return {"ms_per_step": _timed_ms(step)}
