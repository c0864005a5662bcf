"""What arrives over the wire is checked: malformed tensors, keys and graphs get TensorFlow's
error codes from a live server, which keeps serving."""
import grpc
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorweave as tf
from tensorweave.distributed import wire
from tensorweave.protos import (
    graph_pb2,
    master_pb2,
    node_def_pb2,
    tensor_pb2,
    worker_pb2,
)

EXPECTED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
            grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.UNIMPLEMENTED}

tensor_protos = st.builds(
    lambda dtype, dims, content, floats, strings: _tensor(dtype, dims, content, floats,
                                                          strings),
    st.integers(-2, 130), st.lists(st.integers(-3, 1 << 45), max_size=4),
    st.binary(max_size=64), st.lists(st.floats(width=32), max_size=4),
    st.lists(st.binary(max_size=8), max_size=4))


def _tensor(dtype, dims, content, floats, strings):
    proto = tensor_pb2.TensorProto(dtype=dtype, tensor_content=content, float_val=floats,
                                   string_val=strings)
    for d in dims:
        proto.tensor_shape.dim.add(size=d)
    return proto


@settings(max_examples=400, deadline=None)
@given(tensor_protos)
def test_a_received_tensor_is_an_array_or_invalid_argument(proto):
    try:
        array = wire.ndarray(proto, "Feed x")
    except tf.errors.InvalidArgumentError as e:
        assert e.message.startswith("Feed x")
        return
    assert isinstance(array, np.ndarray)
    assert list(array.shape) == [d.size for d in proto.tensor_shape.dim]


def test_a_tiny_proto_cannot_ask_for_a_huge_array():
    proto = _tensor(1, [1 << 40], b"", [], [])   # DT_FLOAT, no values: a zero fill
    try:
        wire.ndarray(proto, "Feed x")
        raise AssertionError("a 4 TiB array was made")
    except tf.errors.InvalidArgumentError as e:
        assert "more than" in e.message


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(feed=tensor_protos, key=st.text(max_size=40), node_op=st.sampled_from(
    ["Const", "Placeholder", "NoSuchOp", "_Recv", "Add"]), step=st.integers(-5, 5))
def test_malformed_requests_get_error_codes_and_the_server_lives(server, feed, key, node_op,
                                                                step):
    address = server.target[len("grpc://"):]
    with grpc.insecure_channel(address, options=[("grpc.max_receive_message_length",
                                                  -1)]) as channel:
        def call(service, method, request, response_type):
            try:
                channel.unary_unary(f"/{service}/{method}",
                                    request_serializer=type(request).SerializeToString,
                                    response_deserializer=response_type.FromString)(
                                        request, timeout=10)
            except grpc.RpcError as e:
                assert e.code() in EXPECTED, (method, e.code(), e.details())
        graph = graph_pb2.GraphDef(node=[node_def_pb2.NodeDef(name="n", op=node_op,
                                                              input=[key] if key else [])])
        call("tensorflow.MasterService", "CreateSession",
             master_pb2.CreateSessionRequest(graph_def=graph), master_pb2.CreateSessionResponse)
        placed = graph_pb2.GraphDef()
        placed.CopyFrom(graph)
        placed.node[0].device = key
        call("tensorflow.WorkerService", "RegisterGraph",
             worker_pb2.RegisterGraphRequest(graph_def=placed),
             worker_pb2.RegisterGraphResponse)
        created = channel.unary_unary(
            "/tensorflow.MasterService/CreateSession",
            request_serializer=master_pb2.CreateSessionRequest.SerializeToString,
            response_deserializer=master_pb2.CreateSessionResponse.FromString)(
                master_pb2.CreateSessionRequest(graph_def=_placeholder_graph()), timeout=10)
        run = master_pb2.RunStepRequest(session_handle=created.session_handle, fetch=["y:0"])
        run.feed.add(name="x:0").tensor.CopyFrom(feed)
        call("tensorflow.MasterService", "RunStep", run, master_pb2.RunStepResponse)
        call("tensorflow.WorkerService", "RecvTensor",
             worker_pb2.RecvTensorRequest(step_id=step, rendezvous_key=key),
             worker_pb2.RecvTensorResponse)
        pushed = worker_pb2.SendTensorsRequest(step_id=step)
        pushed.tensor.add(rendezvous_key=key).tensor.CopyFrom(feed)
        call("tensorweave.WorkerService", "SendTensors", pushed, worker_pb2.SendTensorsResponse)
        sent = worker_pb2.RunGraphRequest(graph_handle=key, step_id=step)
        sent.send.add(name=key).tensor.CopyFrom(feed)
        call("tensorflow.WorkerService", "RunGraph", sent, worker_pb2.RunGraphResponse)
    with tf.Graph().as_default(), tf.Session(server.target) as sess:   # still serving
        assert sess.run(tf.constant(2) + 3) == 5


def _placeholder_graph():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None], name="x")
        tf.identity(x * 2, name="y")
    return graph.as_graph_def()


@__import__("pytest").fixture(scope="module")
def server():
    server = tf.train.Server.create_local_server()
    yield server
    server.stop()
