"""Tokens and TLS on real servers on loopback (distributed/security.py): cluster tasks and
sessions, and the model server's REST and gRPC APIs. Certificates: tests/fixtures/tls."""
import json
import logging
import os
import ssl
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.security import Security
from tensorweave.protos import prediction_service_pb2 as apis
from tensorweave.serving import ModelServer
from tests.distributed.loopback import free_port

TLS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tls")
OVER_RPC = tf.ConfigProto()
OVER_RPC.rpc_options.use_rpc_for_inprocess_master = True   # not the in-process shortcut
_VARIABLES = ("TENSORWEAVE_TOKEN", "TENSORWEAVE_TOKEN_FILE", "TENSORWEAVE_TLS_CERT",
              "TENSORWEAVE_TLS_KEY", "TENSORWEAVE_TLS_CA", "TENSORWEAVE_TLS_CLIENT_AUTH")


@pytest.fixture
def env(monkeypatch):
    """set(**variables): this process's security settings from now on (servers and clients
    read them when they are made)."""
    def set_(**variables):
        for name in _VARIABLES:
            monkeypatch.delenv(name, raising=False)
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
    set_()
    return set_


def _tls(name):
    return os.path.join(TLS, name)


def _server_tls(client_auth=False):
    return {"TENSORWEAVE_TLS_CERT": _tls("server.pem"), "TENSORWEAVE_TLS_KEY": _tls("server.key"),
            "TENSORWEAVE_TLS_CA": _tls("ca.pem"),
            **({"TENSORWEAVE_TLS_CLIENT_AUTH": "1"} if client_auth else {})}


def _add_over_rpc(server):
    """2 + 3 through the server's master over gRPC (not the in-process shortcut)."""
    with tf.Graph().as_default(), tf.Session(server.target, config=OVER_RPC) as sess:
        return sess.run(tf.constant(2) + 3)


def _server(env, **variables):
    env(**variables)
    return tf.train.Server.create_local_server()


def test_a_token_is_required_of_every_call(env, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    server = _server(env, TENSORWEAVE_TOKEN_FILE=str(token_file))
    try:
        env()
        with pytest.raises(tf.errors.UnauthenticatedError, match="token"):
            _add_over_rpc(server)
        env(TENSORWEAVE_TOKEN="wrong")
        with pytest.raises(tf.errors.UnauthenticatedError):
            _add_over_rpc(server)
        env(TENSORWEAVE_TOKEN="s3cret")
        assert _add_over_rpc(server) == 5
    finally:
        server.stop()


def test_tasks_of_a_cluster_send_the_token_to_each_other(env):
    env(TENSORWEAVE_TOKEN="cluster-secret")
    spec = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    servers = [tf.train.Server(spec, job_name=job, task_index=0) for job in ("ps", "worker")]
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with tf.device("/job:worker/task:0"):
                bumped = tf.assign_add(v, 2.0)
            with tf.Session(servers[1].target) as sess:
                sess.run(v.initializer)
                assert sess.run(bumped) == 3.0
    finally:
        for server in servers:
            server.stop()


def test_tls_servers_talk_only_to_clients_that_trust_them(env):
    server = _server(env, **_server_tls())
    try:
        env(TENSORWEAVE_TLS_CA=_tls("ca.pem"))
        assert _add_over_rpc(server) == 5
        for client in ({}, {"TENSORWEAVE_TLS_CA": _tls("other_ca.pem")}):
            env(**client)   # plaintext, or a CA that did not sign the server's certificate
            with pytest.raises(tf.errors.UnavailableError):
                _add_over_rpc(server)
    finally:
        server.stop()


def test_mutual_tls_requires_a_client_certificate(env):
    server = _server(env, **_server_tls(client_auth=True))
    try:
        env(TENSORWEAVE_TLS_CA=_tls("ca.pem"))
        with pytest.raises(tf.errors.UnavailableError):
            _add_over_rpc(server)
        env(TENSORWEAVE_TLS_CA=_tls("ca.pem"), TENSORWEAVE_TLS_CERT=_tls("client.pem"),
            TENSORWEAVE_TLS_KEY=_tls("client.key"))
        assert _add_over_rpc(server) == 5
    finally:
        server.stop()


def test_settings_that_cannot_work_are_refused(tmp_path):
    cert, key, ca = _tls("server.pem"), _tls("server.key"), _tls("ca.pem")
    for environ, message in (
            ({"TENSORWEAVE_TLS_CERT": cert}, "go together"),
            ({"TENSORWEAVE_TLS_CLIENT_AUTH": "1", "TENSORWEAVE_TLS_CA": ca}, "CLIENT_AUTH"),
            ({"TENSORWEAVE_TOKEN_FILE": str(tmp_path / "missing")}, "cannot read")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            Security.from_environment(environ)
    settings = Security.from_environment({"TENSORWEAVE_TLS_CERT": cert,
                                          "TENSORWEAVE_TLS_KEY": key})
    assert settings.serves_tls and settings.token is None and settings.ca is None
    assert Security().accepts(None) and not Security(token="t").accepts("Bearer u")
    assert Security(token="t").accepts("Bearer t")


def test_listening_beyond_loopback_without_protection_warns(caplog):
    with caplog.at_level(logging.WARNING, logger="tensorweave.distributed"):
        Security().warn_if_exposed("localhost", 1, "A")
        Security(token="t").warn_if_exposed("0.0.0.0", 2, "B")
        Security().warn_if_exposed("0.0.0.0", 3, "C")
    assert [r.getMessage()[:1] for r in caplog.records] == ["C"]
    assert "without a token or TLS" in caplog.records[0].getMessage()


def _save_model(path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.reduce_sum(x, axis=1, name="y")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, str(path), {"x": x}, {"y": y})


def _predict_rest(url, token=None, context=None):
    request = urllib.request.Request(url, data=json.dumps({"instances": [[1, 2]]}).encode(),
                                     headers={"Authorization": f"Bearer {token}"} if token
                                     else {})
    with urllib.request.urlopen(request, timeout=30, context=context) as response:
        return json.loads(response.read())


def test_the_model_server_requires_the_token_on_both_apis(env, tmp_path):
    _save_model(tmp_path / "m" / "1")
    env(TENSORWEAVE_TOKEN="model-secret")
    server = ModelServer("m", str(tmp_path / "m"), port=0, poll_seconds=0, grpc_port=0).start()
    try:
        url = f"http://127.0.0.1:{server.port}/v1/models/m:predict"
        with pytest.raises(urllib.error.HTTPError) as refused:
            _predict_rest(url, token="wrong")
        assert refused.value.code == 401 and "token" in json.loads(refused.value.read())["error"]
        assert _predict_rest(url, token="model-secret") == {"predictions": [3.0]}
        request = apis.PredictRequest(model_spec=apis.ModelSpec(name="m"))
        request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.ones([1, 2], np.float32)))
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            predict = channel.unary_unary(
                "/tensorflow.serving.PredictionService/Predict",
                request_serializer=apis.PredictRequest.SerializeToString,
                response_deserializer=apis.PredictResponse.FromString)
            with pytest.raises(grpc.RpcError) as denied:
                predict(request, timeout=30)
            assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
            response = predict(request, timeout=30,
                               metadata=[("authorization", "Bearer model-secret")])
            assert tf.make_ndarray(response.outputs["y"]).tolist() == [2.0]
    finally:
        server.stop()


def test_the_model_server_speaks_tls(env, tmp_path):
    _save_model(tmp_path / "m" / "1")
    env(**_server_tls())
    server = ModelServer("m", str(tmp_path / "m"), port=0, poll_seconds=0).start()
    try:
        trusted = ssl.create_default_context(cafile=_tls("ca.pem"))
        url = f"https://localhost:{server.port}/v1/models/m:predict"
        assert _predict_rest(url, context=trusted) == {"predictions": [3.0]}
        with pytest.raises(urllib.error.URLError):
            _predict_rest(url, context=ssl.create_default_context(cafile=_tls("other_ca.pem")))
    finally:
        server.stop()
