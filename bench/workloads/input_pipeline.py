"""Input pipelines: the mlp_train SGD step (784-512-512-10, batch 128) fed in different ways.

`feed_dict`: each step feeds the next of a set of prepared NumPy batches (no data work: the
issue's baseline). `shuffled feed_dict`: each step feeds BATCH examples gathered in NumPy from
the 60,000 in a per-epoch shuffled order, the data work a feeding loop does to shuffle; tf.data's
shuffle does the same work, so their ratio compares the pipelines on equal terms. `queue`: a
FIFOQueue of single examples, filled by a QueueRunner thread (enqueue_many of 512 consecutive
rows of the data set from a random offset per run), and the step trains on
`dequeue_many(128)`. `dataset`: tf.data's from_tensor_slices of 60,000 samples →
shuffle(10,000) → repeat → batch(128) → prefetch(1) through a one-shot iterator. All train on
the same kind of synthetic, learnable data; the check before timing is that 30 steps lower the
loss. The four are timed in alternating batches in one process (the targets are ratios between
them).
"""
import contextlib
import time

import numpy as np

from bench.metrics import Metric
from bench.timing import batch_means_each
from bench.workloads.mlp_train import SIZES, mlp_loss

BATCH = 128
SAMPLES = 4096
DATASET_SAMPLES = 60_000
SHUFFLE_BUFFER = 10_000
CHUNK = 512            # rows per enqueue_many of the queue runner
CAPACITY = 4 * CHUNK
STEPS_TO_CHECK = 30

METRICS = {
    "feed_dict_ms_per_step": Metric("ms", f"SGD step fed by feed_dict, batch {BATCH}"),
    "queue_ms_per_step": Metric("ms", f"SGD step on FIFOQueue.dequeue_many({BATCH}) filled by "
                                      "a QueueRunner"),
    "dataset_ms_per_step": Metric("ms", f"SGD step on tf.data: shuffle({SHUFFLE_BUFFER}), "
                                        f"repeat, batch({BATCH}), prefetch(1)"),
    "shuffled_feed_dict_ms_per_step": Metric(
        "ms", f"SGD step fed by feed_dict a batch gathered in NumPy from {DATASET_SAMPLES} "
              "examples in a per-epoch shuffled order"),
    "queue_over_feed_dict": Metric("x", "queue step / feed_dict step, median of the ratios "
                                        "of batches timed moments apart"),
    "dataset_over_feed_dict": Metric("x", "tf.data step / feed_dict step, the same way"),
    "dataset_over_shuffled_feed_dict": Metric(
        "x", "tf.data step / shuffled feed_dict step: the same data work on both sides"),
}


def _data(samples=SAMPLES):
    """Inputs in [0, 1) and labels a fixed random linear map of them can predict."""
    rng = np.random.RandomState(0)
    inputs = rng.uniform(0, 1, (samples, SIZES[0])).astype(np.float32)
    classes = np.argmax(inputs @ rng.normal(size=(SIZES[0], SIZES[-1])), axis=1)
    return inputs, np.eye(SIZES[-1], dtype=np.float32)[classes]


def _train_op(tf, x, y):
    """The mlp_train model and its SGD step on inputs `x` and one-hot labels `y`."""
    loss = mlp_loss(tf, x, y)
    return loss, tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def _check_learns(losses) -> None:
    head, tail = np.mean(losses[:5]), np.mean(losses[-5:])
    if not np.all(np.isfinite(losses)) or not tail < head:
        raise AssertionError(f"loss did not decrease over {len(losses)} steps: {losses}")


def _prepared_batches():
    """next_batch() cycling through prepared slices of SAMPLES examples: no data work."""
    inputs, labels = _data()
    batches = [(inputs[i:i + BATCH], labels[i:i + BATCH])
               for i in range(0, SAMPLES - BATCH + 1, BATCH)]
    counter = iter(range(1 << 62))
    return lambda: batches[next(counter) % len(batches)]


def _shuffled_batches():
    """next_batch() gathering BATCH examples of DATASET_SAMPLES in NumPy, in an order shuffled
    each epoch: the data work of the tf.data pipeline's shuffle, done by the feeding loop, as
    `next_batch`-style input code does."""
    inputs, labels = _data(DATASET_SAMPLES)
    rng = np.random.RandomState(1)
    order = {"perm": rng.permutation(DATASET_SAMPLES), "pos": 0}

    def next_batch():
        if order["pos"] + BATCH > DATASET_SAMPLES:
            order["perm"], order["pos"] = rng.permutation(DATASET_SAMPLES), 0
        rows = order["perm"][order["pos"]:order["pos"] + BATCH]
        order["pos"] += BATCH
        return inputs[rows], labels[rows]
    return next_batch


@contextlib.contextmanager
def _feed_dict_step(tf, next_batch):
    """(step, None): the SGD step fed the batch `next_batch()` returns."""
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, SIZES[0]], name="x")
        y = tf.placeholder(tf.float32, [BATCH, SIZES[-1]], name="y")
        loss, train = _train_op(tf, x, y)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def step(fetches=train):
                bx, by = next_batch()
                return sess.run(fetches, {x: bx, y: by})
            _check_learns([step([loss, train])[0] for _ in range(STEPS_TO_CHECK)])
            yield step, None


def _queue_inputs(tf):
    """A QueueRunner-filled FIFOQueue of examples: ((x, y) = dequeue_many(BATCH), refilled),
    where refilled(sess) returns once the runner has put back what the steps took."""
    inputs, labels = _data()
    data_x, data_y = tf.constant(inputs), tf.constant(labels)
    start = tf.random_uniform([], 0, SAMPLES - CHUNK + 1, dtype=tf.int32)
    queue = tf.FIFOQueue(CAPACITY, [tf.float32, tf.float32],
                         shapes=[[SIZES[0]], [SIZES[-1]]])
    enqueue = queue.enqueue_many([tf.slice(data, tf.stack([start, 0]), [CHUNK, -1])
                                  for data in (data_x, data_y)])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    size = queue.size()

    def refilled(sess):
        while sess.run(size) < CAPACITY:
            time.sleep(1e-4)
    return queue.dequeue_many(BATCH), refilled


def _dataset_inputs(tf):
    """(x, y) = get_next() of the issue's tf.data pipeline over DATASET_SAMPLES examples."""
    dataset = (tf.data.Dataset.from_tensor_slices(_data(DATASET_SAMPLES))
               .shuffle(SHUFFLE_BUFFER).repeat().batch(BATCH).prefetch(1))
    return tf.data.make_one_shot_iterator(dataset).get_next(), None


@contextlib.contextmanager
def _pipeline_step(tf, make_inputs):
    """(step, finish): the SGD step on tensors from `make_inputs(tf)`, queue runners started."""
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        (x, y), refilled = make_inputs(tf)
        loss, train = _train_op(tf, x, y)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                _check_learns([sess.run([loss, train])[0] for _ in range(STEPS_TO_CHECK)])
                yield (lambda: sess.run(train)), (
                    (lambda: refilled(sess)) if refilled is not None else None)
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)


def run_tf1(tf):
    """Time the SGD step under each input pipeline, TF1 API: the three sessions exist at once
    and their timed batches alternate (bench.timing.batch_means_each), so the ratios to the
    feed_dict step compare like with like; a queue batch ends once its runner has refilled
    the queue, so that work is charged to it and not to the next batch."""
    with contextlib.ExitStack() as stack:
        steps, finish = {}, {}
        for metric, setup in (("feed_dict_ms_per_step",
                               lambda t: _feed_dict_step(t, _prepared_batches())),
                              ("shuffled_feed_dict_ms_per_step",
                               lambda t: _feed_dict_step(t, _shuffled_batches())),
                              ("queue_ms_per_step", lambda t: _pipeline_step(t, _queue_inputs)),
                              ("dataset_ms_per_step",
                               lambda t: _pipeline_step(t, _dataset_inputs))):
            steps[metric], done = stack.enter_context(setup(tf))
            if done is not None:
                finish[metric] = done
        means = batch_means_each(steps, batches=20, batch_seconds=0.05, warmup_seconds=0.5,
                                 min_calls=100, finish=finish)
    out = {metric: float(np.median(m)) * 1e3 for metric, m in means.items()}
    fed = np.array(means["feed_dict_ms_per_step"])
    for name, metric in (("queue", "queue_ms_per_step"), ("dataset", "dataset_ms_per_step")):
        out[f"{name}_over_feed_dict"] = float(np.median(np.array(means[metric]) / fed))
    out["dataset_over_shuffled_feed_dict"] = float(np.median(
        np.array(means["dataset_ms_per_step"]) / np.array(means["shuffled_feed_dict_ms_per_step"])))
    return out
