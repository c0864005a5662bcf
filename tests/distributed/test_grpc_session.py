"""Sessions on a tf.train.Server's master, on loopback: through the in-process master and
through real gRPC calls, with TF's session semantics (graph sent then extended, variables
shared by the server's sessions, errors naming the user's op, timeouts, close, reset)."""
import inspect
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import config_pb2
from tests.distributed.loopback import errors_of_blocked_run


@pytest.fixture(scope="module")
def server():
    server = tf.train.Server.create_local_server()
    yield server
    server.stop()


@pytest.fixture(params=["in-process", "rpc"])
def config(request):
    config = config_pb2.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = request.param == "rpc"
    return config


def test_local_server_target_and_a_step(server, config):
    assert server.target.startswith("grpc://localhost:")
    assert int(server.target.rpartition(":")[2]) > 0
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.reduce_sum(x * [[1.0, 10.0]], axis=1)
        with tf.Session(server.target, config=config) as sess:
            np.testing.assert_allclose(sess.run(y, {x: [[1, 2], [3, 4]]}), [21, 43])
            assert sess.run({"y": y, "n": tf.size(x)}, {x: np.ones([3, 2])})["n"] == 6


def test_ops_added_after_the_first_run_reach_the_master(server, config):
    with tf.Graph().as_default():
        a = tf.constant([1, 2, 3])
        with tf.Session(server.target, config=config) as sess:
            assert list(sess.run(a)) == [1, 2, 3]
            b = a * 2
            assert list(sess.run(b)) == [2, 4, 6]
            words = tf.strings.join(["x", tf.as_string(b)], separator="=")
            assert list(sess.run(words)) == [b"x=2", b"x=4", b"x=6"]
            with tf.control_dependencies([b]):
                c = tf.identity(a, name="after_b")
            assert list(sess.run(c)) == [1, 2, 3]


def test_training_on_the_server_and_state_shared_by_its_sessions(server, config):
    with tf.Graph().as_default():
        x = tf.constant(np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1))
        w = tf.Variable([[0.0]], name="shared_w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 3 * x))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session(server.target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(50):
                sess.run(train)
            assert abs(sess.run(w)[0, 0] - 3.0) < 1e-3
        with tf.Session(server.target, config=config) as other:   # no initializer run
            assert abs(other.run(w)[0, 0] - 3.0) < 1e-3
        tf.Session.reset(server.target, config=config)
        with tf.Session(server.target, config=config) as after_reset:
            with pytest.raises(tf.errors.FailedPreconditionError, match="shared_w"):
                after_reset.run(w)


def test_kernel_errors_name_the_users_op_and_line(server, config):
    with tf.Graph().as_default():
        index = tf.placeholder(tf.int32, [])
        line = inspect.currentframe().f_lineno + 1
        picked = tf.gather([1, 2], index, name="pick")
        with tf.Session(server.target, config=config) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(picked, {index: 5})
    assert info.value.op is picked.op
    assert "indices = 5 is not in [0, 2)" in info.value.message
    assert "[[node pick (op GatherV2)" in str(info.value)
    assert f"{__file__}:{line}" in str(info.value)


def test_feeds_are_checked_by_the_client(server, config):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.Session(server.target, config=config) as sess:
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\)"):
                sess.run(x + 1, {x: [1, 2, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
                sess.run(x + 1)


def test_a_blocked_step_times_out_and_close_cancels(server, config):
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(4, tf.float32)
        take = queue.dequeue()
        with tf.Session(server.target, config=config) as sess:
            started = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(take, options=tf.RunOptions(timeout_in_ms=300))
            assert time.monotonic() - started < 5
        sess = tf.Session(server.target, config=config)
        failures = errors_of_blocked_run(lambda: sess.run(take), sess.close)
        assert [type(e) for e in failures] == [tf.errors.CancelledError]


def test_run_metadata_comes_back(server, config):
    with tf.Graph().as_default():
        y = tf.constant(2.0) * 3
        with tf.Session(server.target, config=config) as sess:
            metadata = tf.RunMetadata()
            sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                              output_partition_graphs=True),
                     run_metadata=metadata)
    assert metadata.partition_graphs and metadata.step_stats.dev_stats


def test_list_devices_names_the_servers_task(server, config):
    with tf.Graph().as_default(), tf.Session(server.target, config=config) as sess:
        devices = sess.list_devices()
    assert [d.name for d in devices] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert devices[0].incarnation != 0


def test_unknown_targets_and_unreachable_servers():
    with pytest.raises(tf.errors.NotFoundError, match="No session factory registered"):
        tf.Session("foo://bar")
    with tf.Graph().as_default():
        one = tf.constant(1)
        sess = tf.Session("grpc://localhost:1")
        started = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError):
            sess.run(one)
        assert time.monotonic() - started < 10
        sess.close()


def test_partial_runs(server, config):
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        c = a + 1
        d = c * b
        with tf.Session(server.target, config=config) as sess:
            handle = sess.partial_run_setup([c, d], [a, b])
            assert sess.partial_run(handle, c, {a: 2.0}) == 3.0
            assert sess.partial_run(handle, d, {b: 4.0}) == 12.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
                sess.partial_run(handle, d, {b: 4.0})
            second = sess.partial_run_setup([d], [a, b])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="can't be computed from the feeds"):
                sess.partial_run(second, d, {a: 1.0})
            with pytest.raises(ValueError, match="Cannot feed value of shape"):
                sess.partial_run(sess.partial_run_setup([c], [a]), c, {a: [1.0, 2.0]})


def test_large_tensors_and_long_error_messages_arrive_whole(server):
    config = config_pb2.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True   # through the wire
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        doubled = x * 2
        message = "m" * 20_000
        failing = tf.Assert(tf.reduce_all(x > 0), [message])
        with tf.Session(server.target, config=config) as sess:
            big = np.arange(16 << 20, dtype=np.float32)   # 64 MiB each way
            np.testing.assert_array_equal(sess.run(doubled, {x: big}), big * 2)
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(failing, {x: [-1.0]})
    assert message in info.value.message
