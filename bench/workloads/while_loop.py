"""Loop overhead: tf.while_loop of 1,000 iterations of (i + 1, x * 0.99 + 1.0) on scalars."""
import numpy as np

from bench.metrics import Metric
from bench.timing import per_call_us

ITERATIONS = 1000

METRICS = {
    "us_per_iteration": Metric("us", f"one sess.run of a {ITERATIONS}-iteration loop, per "
                                     "iteration (torch: a Python loop of eager ops)"),
}


def _expected():
    x = np.float32(0.0)
    for _ in range(ITERATIONS):
        x = x * np.float32(0.99) + np.float32(1.0)
    return x


def run_tf1(tf):
    """Time one run of the loop; report microseconds per iteration."""
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        _, x = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 0.99 + 1.0),
                             [tf.constant(0), tf.constant(0.0)])
        feed = {n: ITERATIONS}
        with tf.Session() as sess:
            result = sess.run(x, feed)
            if not np.isclose(result, _expected(), rtol=1e-4):
                raise AssertionError(f"loop gave {result}, expected {_expected()}")
            return {"us_per_iteration": per_call_us(lambda: sess.run(x, feed)) / ITERATIONS}


def run_torch(torch):
    """The same recurrence as a Python loop of eager scalar-tensor ops."""
    def loop():
        i = torch.tensor(0)
        x = torch.tensor(0.0)
        while i < ITERATIONS:
            i = i + 1
            x = x * 0.99 + 1.0
        return x

    if not np.isclose(loop().item(), _expected(), rtol=1e-4):
        raise AssertionError("torch loop gave a wrong result")
    return {"us_per_iteration": per_call_us(loop) / ITERATIONS}
