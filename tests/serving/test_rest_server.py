"""The REST model server on loopback: TensorFlow Serving's endpoints, JSON formats and errors,
for SavedModels written by simple_save and SavedModelBuilder."""
import base64
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.serving import ModelServer


def _save_linear(path, weights=(1.0, 2.0, 3.0)):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.array(weights, np.float32).reshape(3, 1))
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(path), {"x": x}, {"y": y})


def _save_multi(path):
    """Inputs a (float [None, 2]) and tag (string [None]); outputs total, a_doubled, echo_bytes
    and greeting (strings)."""
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        tag = tf.placeholder(tf.string, [None], name="tag")
        outputs = {"total": tf.reduce_sum(a, axis=1), "a_doubled": a * 2.0,
                   "echo_bytes": tf.identity(tag),
                   "greeting": tf.strings.join(["hi ", tag])}
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, str(path), {"a": a, "tag": tag}, outputs)


def _save_examples_model(path):
    """Regress and classify signatures over serialized tf.Examples with features x (2 floats)
    and bias (float, often sent as context)."""
    with tf.Graph().as_default():
        serialized = tf.placeholder(tf.string, [None], name="examples")
        features = tf.parse_example(serialized, {
            "x": tf.FixedLenFeature([2], tf.float32),
            "bias": tf.FixedLenFeature([1], tf.float32, default_value=[0.0])})
        value = tf.reduce_sum(features["x"], axis=1) + features["bias"][:, 0]
        scores = tf.stack([value, -value], axis=1)
        classes = tf.tile(tf.constant([["pos", "neg"]]), [tf.shape(value)[0], 1])
        with tf.Session() as sess:
            builder = tf.saved_model.builder.SavedModelBuilder(str(path))
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "tensorflow/serving/regress":
                    tf.saved_model.regression_signature_def(serialized, value),
                "serving_default":
                    tf.saved_model.classification_signature_def(serialized, classes, scores)})
            builder.save()


class Client:
    def __init__(self, server):
        self.base = f"http://127.0.0.1:{server.port}"

    def __call__(self, path, body=None, raw=None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data,
                                         method="GET" if data is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            with e:
                return e.code, json.loads(e.read())


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(save, name="model", versions=(1,)):
        for version in versions:
            save(tmp_path / name / str(version))
        server = ModelServer(name, str(tmp_path / name), port=0).start()
        servers.append(server)
        return Client(server)
    yield start
    for server in servers:
        server.stop()


def test_predict_in_row_and_columnar_formats(serve):
    call = serve(_save_linear)
    assert call("/v1/models/model:predict", {"instances": [[1, 1, 1], [1, 0, 0]]}) == \
        (200, {"predictions": [[6.0], [1.0]]})
    assert call("/v1/models/model/versions/1:predict", {"inputs": [[0, 0, 2]]}) == \
        (200, {"outputs": [[6.0]]})
    assert call("/v1/models/model:predict", {"inputs": {"x": [[0, 1, 0]]},
                                             "signature_name": "serving_default"}) == \
        (200, {"outputs": [[2.0]]})


def test_status_and_metadata_serve_the_latest_version(serve):
    call = serve(_save_linear, versions=(1, 7))
    assert call("/v1/models/model") == (200, {"model_version_status": [{
        "version": "7", "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""}}]})
    code, metadata = call("/v1/models/model/versions/7/metadata")
    assert code == 200 and metadata["model_spec"] == {"name": "model", "signature_name": "",
                                                      "version": "7"}
    signature = metadata["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["method_name"] == "tensorflow/serving/predict"
    assert signature["inputs"]["x"] == {"name": "x:0", "dtype": "DT_FLOAT", "tensor_shape": {
        "dim": [{"size": "-1"}, {"size": "3"}]}}
    assert call("/v1/models/model/versions/1:predict", {"instances": [[1, 1, 1]]}) == \
        (404, {"error": "Servable not found for request: Specific(model, 1)"})


def test_several_inputs_and_outputs_strings_and_binary(serve):
    call = serve(_save_multi)
    binary = {"b64": base64.b64encode(b"\xff").decode()}
    code, body = call("/v1/models/model:predict", {"instances": [
        {"a": [1, 2], "tag": "x"}, {"a": [3, 4], "tag": binary}]})
    assert code == 200
    first, second = body["predictions"]
    assert first == {"a_doubled": [2.0, 4.0], "echo_bytes": {"b64": "eA=="}, "greeting": "hi x",
                     "total": 3.0}
    assert second["greeting"] == {"b64": base64.b64encode(b"hi \xff").decode()}
    code, body = call("/v1/models/model:predict", {"inputs": {"a": [[0.5, 0.25]], "tag": ["z"]}})
    assert code == 200 and body["outputs"]["total"] == [0.75]
    assert body["outputs"]["echo_bytes"] == [{"b64": "eg=="}]


def test_nan_and_infinity_tokens(serve):
    call = serve(_save_linear)
    code, body = call("/v1/models/model:predict", raw=b'{"instances": [[NaN, 0, 0], '
                                                      b'[Infinity, 0, 0]]}')
    assert code == 200 and np.isnan(body["predictions"][0][0])
    assert body["predictions"][1] == [float("inf")]


def test_regress_and_classify_with_examples_and_context(serve):
    call = serve(_save_examples_model)
    assert call("/v1/models/model:regress", {
        "signature_name": "tensorflow/serving/regress", "context": {"bias": 10.0},
        "examples": [{"x": [1.0, 2.0]}, {"x": [0.5, 0.5]}]}) == (200, {"result": [13.0, 11.0]})
    assert call("/v1/models/model:classify", {"examples": [{"x": [1.0, 1.0], "bias": 1.0}]}) == \
        (200, {"result": [[["pos", 3.0], ["neg", -3.0]]]})
    code, body = call("/v1/models/model:classify", {"context": {"bias": 1.0},
                                                    "examples": [{"x": [1.0, 1.0], "bias": 2.0}]})
    assert code == 400 and "both the context and an example" in body["error"]


def test_errors_answer_json_with_tensorflow_serving_codes(serve):
    call = serve(_save_linear)
    assert call("/v1/models/other:predict", {"instances": [[1, 1, 1]]}) == \
        (404, {"error": "Servable not found for request: Latest(other)"})
    assert call("/v1/models/model:explain", {"instances": []})[0] == 404
    assert call("/v1/models/model:predict", raw=b"{not json")[0] == 400
    code, body = call("/v1/models/model:predict", {"instances": [[1, 1, 1]], "inputs": [[1]]})
    assert code == 400 and "exactly one is required" in body["error"]
    code, body = call("/v1/models/model:predict", {"instances": [[1, 1]]})
    assert code == 400 and "Cannot feed value of shape (1, 2)" in body["error"]
    code, body = call("/v1/models/model:predict", {"signature_name": "nope",
                                                   "instances": [[1, 1, 1]]})
    assert code == 400 and 'Serving signature name: "nope" not found' in body["error"]
    code, body = call("/v1/models/model:predict", {"instances": [["a", 1, 1]]})
    assert code == 400 and "not a tensor of float32" in body["error"]


def test_concurrent_requests_get_their_own_answers(serve):
    call = serve(_save_linear)
    results = {}

    def ask(k):
        results[k] = call("/v1/models/model:predict", {"instances": [[k, 0, 0]] * 3})

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == {k: (200, {"predictions": [[float(k)]] * 3}) for k in range(8)}


def test_a_newer_version_is_picked_up_and_a_broken_one_skipped(tmp_path):
    _save_linear(tmp_path / "m" / "1")
    server = ModelServer("m", str(tmp_path / "m"), port=0, poll_seconds=0.05).start()
    call = Client(server)
    try:
        assert call("/v1/models/m:predict", {"instances": [[1, 1, 1]]}) == \
            (200, {"predictions": [[6.0]]})
        _save_linear(tmp_path / "m" / "2", weights=(0.0, 0.0, 1.0))
        deadline = time.monotonic() + 30
        while call("/v1/models/m")[1]["model_version_status"][0]["version"] != "2":
            assert time.monotonic() < deadline, "version 2 was never served"
            time.sleep(0.05)
        assert call("/v1/models/m:predict", {"instances": [[1, 1, 1]]}) == \
            (200, {"predictions": [[1.0]]})
        assert call("/v1/models/m/versions/1:predict", {"instances": [[1, 1, 1]]})[0] == 404
        broken = tmp_path / "m" / "3"
        broken.mkdir()
        (broken / "saved_model.pb").write_bytes(b"not a SavedModel")
        assert not server.versions.check()          # logged and skipped
        assert server.model.version == 2
        assert call("/v1/models/m/versions/2:predict", {"instances": [[0, 0, 2]]}) == \
            (200, {"predictions": [[2.0]]})
    finally:
        server.stop()


def test_serve_command_answers_until_interrupted(tmp_path):
    _save_linear(tmp_path / "m" / "3")
    proc = subprocess.Popen([sys.executable, "-m", "tensorweave.cli", "serve", "--model_name",
                             "m", "--model_base_path", str(tmp_path / "m"), "--rest_api_port",
                             "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Serving m version 3 at http://127.0.0.1:")
        url = line.split(" at ")[1].strip()
        request = urllib.request.Request(url + ":predict", method="POST",
                                         data=json.dumps({"instances": [[1, 1, 1]]}).encode())
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read()) == {"predictions": [[6.0]]}
    finally:
        proc.send_signal(2)   # SIGINT: the command stops serving and exits 0
        assert proc.wait(timeout=60) == 0
        proc.stdout.close()
        proc.stderr.close()
    missing = subprocess.run([sys.executable, "-m", "tensorweave.cli", "serve", "--model_name",
                              "m", "--model_base_path", str(tmp_path / "none")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "Could not find base path" in missing.stderr
