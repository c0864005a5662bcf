"""Train, save and serve: a softmax classifier of scikit-learn's 8x8 digits, exported as a
SavedModel and served over TensorFlow Serving's REST API.

    python examples/serve_digits.py [EXPORT_BASE]

Trains for a few seconds with tf.feature_column's input layer, writes `EXPORT_BASE/1/` with
`tf.saved_model.simple_save` (a directory TensorFlow and TensorFlow Serving load too), serves it
with `tensorweave.serving.ModelServer` on loopback and classifies held-out digits with HTTP
requests in TensorFlow Serving's JSON. The same directory is served from a shell with

    tensorweave serve --model_name digits --model_base_path EXPORT_BASE
"""
import json
import sys
import tempfile
import urllib.request

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf
from tensorweave.serving import ModelServer


def train_and_export(export_base: str, steps: int = 300, seed: int | None = None) -> float:
    """Trains the classifier, saves it as version 1 under `export_base`; returns the
    held-out accuracy in the training session. `seed`, if given, is the graph seed (the
    initial weights are otherwise new each run)."""
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    train, test = slice(0, 1500), slice(1500, None)
    with tf.Graph().as_default():
        if seed is not None:
            tf.set_random_seed(seed)
        pixels = tf.placeholder(tf.float32, [None, 64], name="pixels")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        column = tf.feature_column.numeric_column("pixels", shape=(64,))
        dense = tf.feature_column.input_layer({"pixels": pixels}, [column])
        logits = tf.layers.dense(dense, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.train.AdamOptimizer(0.01).minimize(loss)
        probabilities = tf.nn.softmax(logits, name="probabilities")
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(step, {pixels: images[train], labels: digits.target[train]})
            held_out = sess.run(accuracy, {pixels: images[test], labels: digits.target[test]})
            tf.saved_model.simple_save(sess, f"{export_base}/1", {"pixels": pixels},
                                       {"probabilities": probabilities})
    return float(held_out)


def classify_over_http(export_base: str, count: int = 20) -> float:
    """Serves the SavedModel and asks it for `count` held-out digits, one request each;
    returns the fraction it got right."""
    digits = load_digits()
    server = ModelServer("digits", export_base, port=0).start()
    try:
        right = 0
        for image, label in zip(digits.data[-count:] / 16.0, digits.target[-count:]):
            body = json.dumps({"instances": [image.tolist()]}).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{server.port}/v1/models/digits:predict", data=body,
                method="POST")
            with urllib.request.urlopen(request, timeout=30) as response:
                (scores,) = json.loads(response.read())["predictions"]
            right += int(np.argmax(scores) == label)
        return right / count
    finally:
        server.stop()


def main() -> None:
    export_base = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="digits_")
    print(f"held-out accuracy after training: {train_and_export(export_base):.3f}")
    print(f"saved to {export_base}/1")
    print(f"accuracy of the served model over HTTP: {classify_over_http(export_base):.2f}")


if __name__ == "__main__":
    main()
