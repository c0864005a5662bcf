"""Training step of an LSTM through dynamic_rnn: sequence 50, batch 32, input 64, hidden 128.

One SGD step of a mean-squared loss on the final output (a fixed random batch). TF1: the same
graph (tf.nn.dynamic_rnn of tf.nn.rnn_cell.LSTMCell); PyTorch: torch.nn.LSTM (its fused
kernel), the issue's reference point.
"""
import numpy as np

from bench.metrics import Metric
from bench.timing import per_call_us

SEQ, BATCH, INPUT, HIDDEN = 50, 32, 64, 128
STEPS_TO_CHECK = 3

METRICS = {
    "ms_per_step": Metric("ms", f"forward + backward + SGD over {SEQ} steps, batch {BATCH}"),
}


def _batch():
    rng = np.random.RandomState(0)
    return (rng.uniform(-1, 1, (BATCH, SEQ, INPUT)).astype(np.float32),
            rng.uniform(-1, 1, (BATCH, HIDDEN)).astype(np.float32))


def _timed_ms(step) -> float:
    return per_call_us(step, batches=10, batch_seconds=0.1, warmup_seconds=0.5,
                       min_calls=20) / 1e3


def _check_learns(losses) -> None:
    if not all(np.isfinite(losses)) or not losses[-1] < losses[0]:
        raise AssertionError(f"loss did not decrease: {losses}")


def run_tf1(tf):
    """Time `sess.run(train_op, feed)` of the dynamic_rnn LSTM."""
    inputs, targets = _batch()
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, SEQ, INPUT])
        y = tf.placeholder(tf.float32, [BATCH, HIDDEN])
        outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(HIDDEN), x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(outputs[:, -1] - y))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        feed = {x: inputs, y: targets}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _check_learns([sess.run([loss, train], feed)[0] for _ in range(STEPS_TO_CHECK)])
            return {"ms_per_step": _timed_ms(lambda: sess.run(train, feed))}


def run_torch(torch):
    """torch.nn.LSTM (batch_first) with the same shapes and one SGD step."""
    inputs, targets = _batch()
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(INPUT, HIDDEN, batch_first=True)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.5)
    x, y = torch.from_numpy(inputs), torch.from_numpy(targets)

    def step():
        opt.zero_grad()
        out, _ = lstm(x)
        loss = ((out[:, -1] - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()
    _check_learns([step() for _ in range(STEPS_TO_CHECK)])
    return {"ms_per_step": _timed_ms(step)}
