"""TensorFlow Serving's gRPC API on loopback: Predict and GetModelMetadata through a real gRPC
channel, with TF Serving's service and method names, messages and status codes."""
import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import meta_graph_pb2
from tensorweave.protos import prediction_service_pb2 as apis
from tensorweave.serving import ModelServer

SERVICE = "/tensorflow.serving.PredictionService/"


def _save(path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, tf.constant([[1.0], [2.0], [3.0]]), name="y")
        words = tf.strings.join(["n=", tf.as_string(tf.reduce_sum(x, axis=1))], name="words")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, str(path), {"x": x}, {"y": y, "words": words})


@pytest.fixture
def stub(tmp_path):
    _save(tmp_path / "m" / "4")
    server = ModelServer("m", str(tmp_path / "m"), port=0, poll_seconds=0, grpc_port=0)
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")

    def call(method, request, response_type):
        return channel.unary_unary(SERVICE + method,
                                   request_serializer=type(request).SerializeToString,
                                   response_deserializer=response_type.FromString)(
                                       request, timeout=30)
    yield call
    channel.close()
    server.stop()


def _request(**spec):
    request = apis.PredictRequest(model_spec=apis.ModelSpec(**spec))
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.array([[1, 1, 1], [0, 0, 1]],
                                                               np.float32)))
    return request


def test_predict_returns_tensor_protos(stub):
    response = stub("Predict", _request(name="m"), apis.PredictResponse)
    np.testing.assert_array_equal(tf.make_ndarray(response.outputs["y"]), [[6], [3]])
    assert list(tf.make_ndarray(response.outputs["words"])) == [b"n=3.000000", b"n=1.000000"]
    assert response.model_spec.name == "m" and response.model_spec.version.value == 4
    assert response.model_spec.signature_name == "serving_default"
    request = _request(name="m")
    request.output_filter.append("y")
    assert list(stub("Predict", request, apis.PredictResponse).outputs) == ["y"]


def test_metadata_holds_the_signature_map(stub):
    request = apis.GetModelMetadataRequest(model_spec=apis.ModelSpec(name="m"),
                                           metadata_field=["signature_def"])
    response = stub("GetModelMetadata", request, apis.GetModelMetadataResponse)
    signatures = apis.SignatureDefMap()
    assert response.metadata["signature_def"].Unpack(signatures)
    signature = signatures.signature_def["serving_default"]
    assert isinstance(signature, meta_graph_pb2.SignatureDef)
    assert signature.inputs["x"].name == "x:0" and sorted(signature.outputs) == ["words", "y"]


def test_errors_are_tensorflow_servings_status_codes(stub):
    with pytest.raises(grpc.RpcError) as info:
        stub("Predict", _request(name="other"), apis.PredictResponse)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert info.value.details() == "Servable not found for request: Latest(other)"
    request = _request(name="m")
    request.model_spec.version.value = 3
    with pytest.raises(grpc.RpcError) as info:
        stub("Predict", request, apis.PredictResponse)
    assert info.value.details() == "Servable not found for request: Specific(m, 3)"
    bad = _request(name="m")
    bad.inputs["x"].CopyFrom(tf.make_tensor_proto(np.ones([1, 2], np.float32)))
    with pytest.raises(grpc.RpcError) as info:
        stub("Predict", bad, apis.PredictResponse)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Cannot feed value of shape (1, 2)" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        stub("Predict", _request(name="m", signature_name="nope"), apis.PredictResponse)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert 'Serving signature name: "nope" not found' in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        stub("GetModelMetadata", apis.GetModelMetadataRequest(
            model_spec=apis.ModelSpec(name="m"), metadata_field=["other"]),
            apis.GetModelMetadataResponse)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_malformed_input_tensor_is_invalid_argument(stub):
    request = _request(name="m")
    request.inputs["x"].tensor_shape.dim[0].size = 1 << 40   # a zero fill of 4 TiB
    request.inputs["x"].ClearField("tensor_content")
    with pytest.raises(grpc.RpcError) as info:
        stub("Predict", request, apis.PredictResponse)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Input x" in info.value.details()
