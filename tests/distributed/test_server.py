"""tf.train.Server: its ServerDef, ports, TensorFlow's wire names on a raw gRPC channel, the
master's refusals, and a server in another process."""
import subprocess
import sys

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.server import make_server_def
from tensorweave.protos import graph_pb2, master_pb2, tensorflow_server_pb2, worker_pb2
from tests.distributed.loopback import free_port


def _call(target, service, method, request, response_type):
    with grpc.insecure_channel(target[len("grpc://"):]) as channel:
        return channel.unary_unary(f"/{service}/{method}",
                                   request_serializer=type(request).SerializeToString,
                                   response_deserializer=response_type.FromString)(
                                       request, timeout=10)


def test_server_def_follows_tensorflows_rules():
    cluster = {"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]}
    with pytest.raises(ValueError, match="explicit `job_name`"):
        make_server_def(cluster)
    with pytest.raises(ValueError, match="explicit `task_index`"):
        make_server_def(cluster, job_name="worker")
    server_def = make_server_def(cluster, job_name="ps",
                                 config=tf.ConfigProto(intra_op_parallelism_threads=2))
    assert (server_def.job_name, server_def.task_index, server_def.protocol) == ("ps", 0, "grpc")
    assert server_def.default_session_config.intra_op_parallelism_threads == 2
    assert tf.train.ClusterSpec(server_def.cluster).as_dict() == cluster
    again = make_server_def(server_def, job_name="worker", task_index=1)
    assert (again.job_name, again.task_index) == ("worker", 1)
    assert tensorflow_server_pb2.ServerDef.FromString(again.SerializeToString()) == again
    with pytest.raises(TypeError, match="Could not convert"):
        make_server_def(42)


def test_bad_addresses_and_ports_in_use():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse port"):
        tf.train.Server({"local": ["localhost"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Task 3 was not defined"):
        tf.train.Server({"local": ["localhost:0"]}, job_name="local", task_index=3)
    port = free_port()
    first = tf.train.Server({"local": [f"localhost:{port}"]})
    try:
        assert first.target == f"grpc://localhost:{port}"
        with pytest.raises(tf.errors.UnknownError, match="Could not start gRPC server"):
            tf.train.Server({"local": [f"localhost:{port}"]})
    finally:
        first.stop()


def test_tensorflows_wire_names_answer_on_a_raw_channel():
    server = tf.train.Server({"worker": ["localhost:0"]}, config=tf.ConfigProto(
        device_count={"CPU": 2}))
    try:
        status = _call(server.target, "tensorflow.WorkerService", "GetStatus",
                       worker_pb2.GetStatusRequest(), worker_pb2.GetStatusResponse)
        assert [d.name for d in status.device_attributes] == [
            "/job:worker/replica:0/task:0/device:CPU:0",
            "/job:worker/replica:0/task:0/device:CPU:1"]
        assert all(d.incarnation for d in status.device_attributes)
        with pytest.raises(grpc.RpcError) as info:
            _call(server.target, "tensorflow.grpc.WorkerService", "GetStatus",
                  worker_pb2.GetStatusRequest(), worker_pb2.GetStatusResponse)
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED

        graph = tf.Graph()
        with graph.as_default():
            tf.add(tf.constant(2.0, name="a"), 3.0, name="sum")
        created = _call(server.target, "tensorflow.MasterService", "CreateSession",
                        master_pb2.CreateSessionRequest(graph_def=graph.as_graph_def()),
                        master_pb2.CreateSessionResponse)
        step = _call(server.target, "tensorflow.MasterService", "RunStep",
                     master_pb2.RunStepRequest(session_handle=created.session_handle,
                                               fetch=["sum:0"]),
                     master_pb2.RunStepResponse)
        assert tf.make_ndarray(step.tensor[0].tensor) == 5.0
        with pytest.raises(grpc.RpcError) as info:
            _call(server.target, "tensorflow.MasterService", "ExtendSession",
                  master_pb2.ExtendSessionRequest(session_handle=created.session_handle,
                                                  graph_def=graph_pb2.GraphDef(),
                                                  current_graph_version=99),
                  master_pb2.ExtendSessionResponse)
        assert info.value.code() == grpc.StatusCode.ABORTED
        assert "Current version is" in info.value.details()
        in_body = _call(server.target, "tensorflow.MasterService", "RunStep",
                        master_pb2.RunStepRequest(session_handle="nope", fetch=["sum:0"],
                                                  store_errors_in_response_body=True),
                        master_pb2.RunStepResponse)
        assert in_body.status_code == tf.errors.ABORTED
        assert in_body.status_error_message == "Session nope is not found."
    finally:
        server.stop()


def test_a_task_that_never_starts_times_out_or_is_filtered_out():
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": ["localhost:0"]}
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:0"):
                local = tf.constant(2.0) * 4
            with tf.device("/job:ps/task:0"):
                remote = tf.constant(1.0, name="on_ps")
            config = tf.ConfigProto(operation_timeout_in_ms=500)
            with tf.Session(server.target, config=config) as sess:
                with pytest.raises(tf.errors.DeadlineExceededError,
                                   match="waiting for response from worker: "
                                         "/job:ps/replica:0/task:0"):
                    sess.run(local)
            only_here = tf.ConfigProto(device_filters=["/job:worker/task:0"])
            with tf.Session(server.target, config=only_here) as sess:
                assert sess.run(local) == 8.0
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="no device matches the requested '/job:ps/task:0'"):
                    sess.run(remote)
    finally:
        server.stop()


def test_a_server_in_another_process():
    port = free_port()
    code = ("import sys, tensorweave as tf\n"
            f"server = tf.train.Server({{'worker': ['localhost:{port}']}})\n"
            "print('ready', flush=True)\n"
            "sys.stdin.read()\n"
            "server.stop()\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [3])
            total = tf.Variable(0.0)
            add = tf.assign_add(total, tf.reduce_sum(x))
            with tf.Session(f"grpc://localhost:{port}") as sess:
                sess.run(total.initializer)
                for _ in range(3):
                    sess.run(add, {x: np.arange(3, dtype=np.float32)})
                assert sess.run(total) == 9.0
    finally:
        child.stdin.close()
        child.wait(30)
        child.stdout.close()


def test_a_stale_incarnation_is_aborted_by_recv_tensor_and_recv_tensors():
    server = tf.train.Server({"ps": ["localhost:0"]})
    try:
        status = _call(server.target, "tensorflow.WorkerService", "GetStatus",
                       worker_pb2.GetStatusRequest(), worker_pb2.GetStatusResponse)
        device = status.device_attributes[0]
        stale = (f"{device.name};{device.incarnation ^ 1:016x};"
                 "/job:worker/replica:0/task:0/device:CPU:0;edge_1_x;0:0")
        with pytest.raises(grpc.RpcError) as info:
            _call(server.target, "tensorflow.WorkerService", "RecvTensor",
                  worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key=stale),
                  worker_pb2.RecvTensorResponse)
        assert info.value.code() == grpc.StatusCode.ABORTED
        assert "RecvTensor expects a different device incarnation" in info.value.details()
        with grpc.insecure_channel(server.target[len("grpc://"):]) as channel:
            stream = channel.unary_stream(
                "/tensorweave.WorkerService/RecvTensors",
                request_serializer=worker_pb2.RecvTensorsRequest.SerializeToString,
                response_deserializer=worker_pb2.RecvTensorsResponse.FromString)(
                    worker_pb2.RecvTensorsRequest(step_id=7, rendezvous_key=[stale]),
                    timeout=10)
            with pytest.raises(grpc.RpcError) as info:
                list(stream)
        assert info.value.code() == grpc.StatusCode.ABORTED
    finally:
        server.stop()


def test_a_server_from_tf_train_server_def():
    server_def = tf.train.ServerDef(
        cluster=tf.train.ClusterSpec({"w": ["localhost:0"]}).as_cluster_def(), job_name="w",
        task_index=0, protocol="grpc")
    server = tf.train.Server(server_def)
    try:
        assert server.server_def.job_name == "w"
        with tf.Graph().as_default(), tf.Session(server.target) as sess:
            assert sess.run(tf.constant(1) + 1) == 2
    finally:
        server.stop()
    with pytest.raises(tf.errors.NotFoundError, match="No server factory"):
        tf.train.Server(server_def, protocol="grpc+verbs")
