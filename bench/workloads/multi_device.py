"""Multi-device cost: a 100-add chain split over 2 virtual CPUs, and MLP training in 1/2/4 towers.

multi_device_overhead: overhead_chain's graph (100 chained `x + 1.0` on a fed scalar) in a
session with 2 CPU devices — all on /cpu:0, split once in the middle, and split every 10 adds
(alternating devices: 9 crossings) — µs per run, and µs per Send/Recv pair from the difference
between the every-10 split and one device.
towers_train: mlp_train's 784-512-512-10 model, batch 128 split over N = 1, 2, 4 towers on
/cpu:0..N-1 with the variables on /cpu:0 and the tower gradients averaged there (SGD); ms per
step with default threads, and with intra-op 1 / inter-op N threads. Each intra-op-1
configuration is measured in a process of its own (bench/isolated.py): TensorFlow keeps the
thread pools of a process's first session for all later ones, so measured after the
default-thread sessions its "intra-op 1" one-tower step ran on 1.65 cores.
"""
import numpy as np

from bench import isolated
from bench.metrics import Metric
from bench.timing import per_call_us

CHAIN = 100
BATCH = 128
SIZES = (784, 512, 512, 10)
TOWERS = (1, 2, 4)
PAIRS_SPLIT10 = CHAIN // 10 - 1

METRICS = {
    "chain_1dev_us": Metric("us", f"{CHAIN}-add chain, all on /cpu:0 of a 2-CPU session"),
    "chain_split1_us": Metric("us", f"{CHAIN}-add chain split once over 2 CPUs"),
    "chain_split10_us": Metric("us", f"{CHAIN}-add chain, device alternating every 10 adds"),
    "us_per_sendrecv": Metric("us", f"(split every 10 - one device) / {PAIRS_SPLIT10} pairs"),
    **{f"towers{n}_ms": Metric("ms", f"MLP step, batch {BATCH} over {n} tower(s), "
                               "default threads") for n in TOWERS},
    **{f"towers{n}_intra1_ms": Metric("ms", f"MLP step over {n} tower(s), intra-op 1, "
                                      f"inter-op {n}") for n in TOWERS},
}


def _chain_us(tf, segment: int) -> float:
    """µs per run of the chain whose device changes every `segment` adds (0: never)."""
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
        y = x
        for i in range(CHAIN):
            k = (i // segment) % 2 if segment else 0
            with tf.device(f"/cpu:{k}"):
                y = y + 1.0
        feed = {x: np.float32(0.0)}
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            if sess.run(y, feed) != CHAIN:
                raise AssertionError("wrong chain result")
            return per_call_us(lambda: sess.run(y, feed), batches=20, min_calls=1000)


def _mlp_logits(tf, x, params):
    h = x
    for i, (w, b) in enumerate(params):
        h = tf.matmul(h, w) + b
        if i < len(params) - 1:
            h = tf.nn.relu(h)
    return h


def _towers_ms(tf, towers: int, intra1: bool) -> float:
    rng = np.random.RandomState(0)
    inputs = rng.uniform(0, 1, (BATCH, SIZES[0])).astype(np.float32)
    labels = np.eye(SIZES[-1], dtype=np.float32)[rng.randint(0, SIZES[-1], BATCH)]
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, SIZES[0]], name="x")
        y = tf.placeholder(tf.float32, [BATCH, SIZES[-1]], name="y")
        with tf.device("/cpu:0"):
            params = [(tf.Variable(tf.truncated_normal([i, o], stddev=0.05)),
                       tf.Variable(tf.zeros([o]))) for i, o in zip(SIZES[:-1], SIZES[1:])]
        flat = [v for pair in params for v in pair]
        grads, losses = [], []
        for k, (xs, ys) in enumerate(zip(tf.split(x, towers), tf.split(y, towers))):
            with tf.device(f"/cpu:{k}"):
                loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
                    labels=ys, logits=_mlp_logits(tf, xs, params)))
                grads.append(tf.gradients(loss, flat))
                losses.append(loss)
        with tf.device("/cpu:0"):
            averaged = [tf.add_n(list(g)) / towers if towers > 1 else g[0]
                        for g in zip(*grads)]
            train = tf.train.GradientDescentOptimizer(0.01).apply_gradients(
                list(zip(averaged, flat)))
            loss = tf.add_n(losses) / towers
        threads = {"intra_op_parallelism_threads": 1,
                   "inter_op_parallelism_threads": towers} if intra1 else {}
        config = tf.ConfigProto(device_count={"CPU": towers}, **threads)
        feed = {x: inputs, y: labels}
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run([loss, train], feed)[0]
            for _ in range(4):
                last = sess.run([loss, train], feed)[0]
            if not last < first:
                raise AssertionError(f"towers={towers}: loss did not decrease")
            return per_call_us(lambda: sess.run(train, feed), batches=15, batch_seconds=0.05,
                               warmup_seconds=0.3, min_calls=60) / 1e3


def run_tf1(tf):
    """The chain splits and the tower configurations, each in its own graph and session."""
    one, split1, split10 = (_chain_us(tf, s) for s in (0, CHAIN // 2, 10))
    out = {"chain_1dev_us": one, "chain_split1_us": split1, "chain_split10_us": split10,
           "us_per_sendrecv": (split10 - one) / PAIRS_SPLIT10}
    for n in TOWERS:
        out[f"towers{n}_ms"] = _towers_ms(tf, n, False)
        out[f"towers{n}_intra1_ms"] = isolated.call(tf, _towers_ms, n, True)
    return out
