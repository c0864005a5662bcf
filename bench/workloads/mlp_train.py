"""Training step of a 784-512-512-10 MLP (batch 128) with SGD and with Adam.

Two ReLU hidden layers of 512 units and a 10-way softmax cross entropy on one-hot labels, the
classic MNIST-sized MLP; one metric per optimizer (GradientDescentOptimizer(0.01),
AdamOptimizer(1e-3)), each in its own graph. Inputs are a fixed random batch (no download); the
check before timing is that a few steps lower the loss on that batch.
"""
import numpy as np

from bench import memory
from bench.metrics import Metric
from bench.timing import elapsed_ms, per_call_us

BATCH = 128
SIZES = (784, 512, 512, 10)
STEPS_TO_CHECK = 5

METRICS = {
    "sgd_ms_per_step": Metric("ms", f"one training step (forward, backward, SGD), batch {BATCH}"),
    "adam_ms_per_step": Metric("ms",
                               f"one training step (forward, backward, Adam), batch {BATCH}"),
    "sgd_peak_mb": Metric("MB", "peak resident-set growth over the SGD session's init and "
                          "steps (bench/memory.py)"),
    "adam_peak_mb": Metric("MB", "the same for the Adam graph"),
    "first_step_ms": Metric("ms", "the SGD graph's first step, the process's first (with "
                            "executor build and any JIT compilation)"),
}


def _batch():
    """A fixed batch: random 784-pixel inputs, one-hot labels of random classes."""
    rng = np.random.RandomState(0)
    inputs = rng.uniform(0, 1, (BATCH, SIZES[0])).astype(np.float32)
    classes = rng.randint(0, SIZES[-1], BATCH)
    return inputs, np.eye(SIZES[-1], dtype=np.float32)[classes], classes


def _timed_ms(step) -> float:
    """Median per-step time in ms over about a second of steps (after a warm-up)."""
    return per_call_us(step, batches=20, batch_seconds=0.05, warmup_seconds=0.5,
                       min_calls=100) / 1e3


def mlp_loss(tf, x, y):
    """The workload's model: mean softmax cross entropy of the 784-512-512-10 ReLU MLP on
    inputs `x` and one-hot labels `y` (the input-pipeline workloads train it too)."""
    h = x
    for i, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        w = tf.Variable(tf.truncated_normal([fan_in, fan_out], stddev=0.05), name=f"w{i}")
        b = tf.Variable(tf.zeros([fan_out]), name=f"b{i}")
        h = tf.matmul(h, w) + b
        if i < len(SIZES) - 2:
            h = tf.nn.relu(h)
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=h))


def _check_learns(losses) -> None:
    if not all(np.isfinite(losses)) or not losses[-1] < losses[0]:
        raise AssertionError(f"loss did not decrease over {len(losses)} steps: {losses}")


def _tf1_step_ms(tf, make_optimizer) -> tuple[float, float, float]:
    """(ms per step, peak MB, ms of the first step)."""
    inputs, labels, _ = _batch()
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, SIZES[0]], name="x")
        y = tf.placeholder(tf.float32, [BATCH, SIZES[-1]], name="y")
        loss = mlp_loss(tf, x, y)
        train = make_optimizer(tf).minimize(loss)
        feed = {x: inputs, y: labels}
        start = memory.start_phase()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first_ms = elapsed_ms(lambda: sess.run(train, feed))
            _check_learns([sess.run([loss, train], feed)[0] for _ in range(STEPS_TO_CHECK)])
            ms = _timed_ms(lambda: sess.run(train, feed))
            return ms, memory.peak_growth_mb(start), first_ms


def run_tf1(tf):
    """Time `sess.run(train_op, feed)` of the MLP written against the TF1 API."""
    sgd_ms, sgd_mb, first_ms = _tf1_step_ms(tf,
                                            lambda t: t.train.GradientDescentOptimizer(0.01))
    adam_ms, adam_mb, _ = _tf1_step_ms(tf, lambda t: t.train.AdamOptimizer(1e-3))
    return {"sgd_ms_per_step": sgd_ms, "adam_ms_per_step": adam_ms, "sgd_peak_mb": sgd_mb,
            "adam_peak_mb": adam_mb, "first_step_ms": first_ms}


def _torch_step_ms(torch, make_optimizer) -> float:
    inputs, _, classes = _batch()
    torch.manual_seed(0)
    nn = torch.nn
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    optimizer = make_optimizer(model.parameters())
    x, y = torch.from_numpy(inputs), torch.from_numpy(classes)

    def step():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    _check_learns([step() for _ in range(STEPS_TO_CHECK)])
    return _timed_ms(step)


def run_torch(torch):
    """The same MLP and steps in eager PyTorch."""
    return {
        "sgd_ms_per_step": _torch_step_ms(torch, lambda p: torch.optim.SGD(p, lr=0.01)),
        "adam_ms_per_step": _torch_step_ms(torch, lambda p: torch.optim.Adam(p, lr=1e-3)),
    }
