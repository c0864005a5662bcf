"""SavedModels and serving: save, load and predict with mlp_train's network (784-512-512-10,
softmax out), and tensorweave's REST server on the same model.

Both frameworks run the same TF1 code: `tf.saved_model.simple_save` into a fresh directory,
`tf.saved_model.loader.load` into a fresh graph and session, and the serving signature run
through `Session.run` with feeds (batch 1 and 64) after loading. Before timing, the loaded
model's predictions are checked against the saving session's. tensorweave also serves the
model with `tensorweave.serving.ModelServer` on loopback and times a predict request of one
example in TensorFlow Serving's JSON over HTTP from a client in the same process (JSON
encoding, HTTP, decoding and the run included); TensorFlow has no in-process server, so those
metrics are tensorweave's alone.
"""
import json
import os
import shutil
import statistics
import tempfile
import time
import urllib.request

import numpy as np

from bench.metrics import Metric
from bench.timing import per_call_us
from bench.workloads.mlp_train import SIZES

REPEATS = 5
REQUESTS = 200

METRICS = {
    "save_ms": Metric("ms", f"simple_save of the model into a fresh directory; median of "
                            f"{REPEATS}"),
    "load_ms": Metric("ms", f"loader.load into a fresh graph and session; median of {REPEATS}"),
    "predict_us_batch1": Metric("us", "the loaded signature, Session.run of 1 example"),
    "predict_us_batch64": Metric("us", "the loaded signature, Session.run of 64 examples"),
    "rest_predict_ms": Metric("ms", f"tensorweave serve: a 1-example predict request over "
                                    f"HTTP/JSON; median of {REQUESTS}"),
}


def _build(tf):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
    h = x
    for i, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        w = tf.Variable(rng.normal(0, fan_in ** -0.5, (fan_in, fan_out)).astype(np.float32))
        b = tf.Variable(np.zeros(fan_out, np.float32))
        h = tf.matmul(h, w) + b
        h = tf.nn.relu(h) if i < len(SIZES) - 2 else tf.nn.softmax(h, name="probabilities")
    return x, h


def _median_ms(fn) -> float:
    times = []
    for i in range(REPEATS):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def run_tf1(tf):
    """Time saving, loading and predicting; and, on tensorweave, serving."""
    work = tempfile.mkdtemp(prefix="bench_saved_model_")
    batch = np.random.RandomState(1).uniform(0, 1, (64, SIZES[0])).astype(np.float32)
    try:
        with tf.Graph().as_default():
            x, probabilities = _build(tf)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                expected = sess.run(probabilities, {x: batch})

                def save(i):
                    tf.saved_model.simple_save(sess, os.path.join(work, str(i + 1)), {"x": x},
                                               {"probabilities": probabilities})
                out = {"save_ms": _median_ms(save)}

        def load(i):
            with tf.Graph().as_default(), tf.Session() as sess:
                tf.saved_model.loader.load(sess, ["serve"], os.path.join(work, str(i + 1)))
        out["load_ms"] = _median_ms(load)
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], os.path.join(work, "1"))
            signature = meta.signature_def["serving_default"]
            feed_name = signature.inputs["x"].name
            fetch_name = signature.outputs["probabilities"].name
            if not np.allclose(sess.run(fetch_name, {feed_name: batch}), expected, atol=1e-6):
                raise AssertionError("the loaded model predicts differently")
            for size in (1, 64):
                rows = batch[:size]
                out[f"predict_us_batch{size}"] = per_call_us(
                    lambda rows=rows: sess.run(fetch_name, {feed_name: rows}), batches=7,
                    batch_seconds=0.1, warmup_seconds=0.3, min_calls=20)
        if tf.__name__ == "tensorweave":
            out["rest_predict_ms"] = _rest_predict_ms(work, batch[:1], expected[:1])
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _rest_predict_ms(base_path: str, example: np.ndarray, expected: np.ndarray) -> float:
    from tensorweave.serving import ModelServer
    server = ModelServer("mlp", base_path, port=0).start()
    try:
        body = json.dumps({"instances": example.tolist()}).encode()
        url = f"http://127.0.0.1:{server.port}/v1/models/mlp:predict"

        def ask():
            request = urllib.request.Request(url, data=body, method="POST")
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())["predictions"]
        if not np.allclose(ask(), expected, atol=1e-6):
            raise AssertionError("the served model predicts differently")
        times = []
        for _ in range(REQUESTS):
            start = time.perf_counter()
            ask()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)
    finally:
        server.stop()
