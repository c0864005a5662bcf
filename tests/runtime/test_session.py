"""Session: fetches, feeds, errors, lifetime, per-session state, plan caching."""
import collections
import logging

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_fetch_structures_round_trip(graph):
    Pair = collections.namedtuple("Pair", "a b")
    a = tf.constant(1.5, name="a")
    b = tf.constant([2, 3], name="b")
    op = tf.no_op(name="op")
    with tf.Session() as sess:
        out = sess.run({"x": [a, (b, op)], "p": Pair(a, b), "n": "a:0"})
    assert out["x"][0] == 1.5 and out["x"][1][1] is None
    assert type(out["p"]) is Pair and list(out["p"].b) == [2, 3]
    assert isinstance(out["n"], np.float32)


def test_indexed_slices_are_fetched_and_fed_as_tensorflow_does(graph):
    from tensorweave.framework.indexed_slices import IndexedSlicesValue
    table = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    grad = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(table, [0, 2, 2]) * 2.0), table)[0]
    bare = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))   # no dense_shape
    with tf.Session() as sess:
        sess.run(table.initializer)
        value = sess.run(grad)
        assert type(value) is IndexedSlicesValue   # TF 2.21: (values, indices, dense_shape)
        assert value.values.tolist() == [[2.0] * 3] * 3 and value.indices.tolist() == [0, 2, 2]
        assert value.dense_shape.tolist() == [4, 3]
        nested = sess.run({"g": [grad, bare]})["g"]
        assert nested[0].indices.tolist() == [0, 2, 2] and nested[1].dense_shape is None
        fed = sess.run([grad.values, grad.indices, grad.dense_shape],
                       {grad: (np.ones((3, 3), np.float32), np.array([1, 1, 3], np.int32),
                               np.array([5, 3], np.int32))})
        assert fed[1].tolist() == [1, 1, 3] and fed[2].tolist() == [5, 3]
        with pytest.raises(TypeError, match="IndexedSlicesValue"):
            sess.run(grad.values, {grad: np.ones((3, 3), np.float32)})
        with pytest.raises(ValueError, match="dense_shape"):
            sess.run(bare.values, {bare: ([[2.0]], [0], [1, 1])})


def test_feeds_are_validated_before_the_step(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 4\).*x:0"):
            sess.run(y, {x: np.zeros((2, 4))})
        with pytest.raises(TypeError):
            sess.run(y, {"x": np.zeros((1, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="x"):
            sess.run(y)
        np.testing.assert_array_equal(sess.run(y, {"x:0": [[1, 2, 3]]}), [[2, 4, 6]])


def test_every_missing_feed_is_reported_at_once(graph):
    a = tf.placeholder(tf.float32, name="first")
    b = tf.placeholder(tf.float32, name="second")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(a + b)
    assert "first" in str(info.value) and "second" in str(info.value)


def test_every_uninitialized_variable_is_reported_at_once(graph):
    v = tf.Variable(1.0, name="vee")
    w = tf.Variable(2.0, name="wee")
    total = v + w
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(total)
        assert "vee" in str(info.value) and "wee" in str(info.value)
        sess.run(tf.global_variables_initializer())
        assert sess.run(total) == 3.0


def test_two_sessions_hold_different_variable_values(graph):
    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0)
    s1, s2 = tf.Session(), tf.Session()
    s1.run(v.initializer)
    s2.run(v.initializer)
    s1.run(inc)
    s1.run(inc)
    s2.run(inc)
    assert (s1.run(v), s2.run(v)) == (2.0, 1.0)
    s1.close()
    s2.close()


def test_fetched_variable_value_is_a_snapshot(graph):
    v = tf.Variable([1.0, 2.0])
    read = v.value()
    inc = tf.assign_add(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before_ref, before_read = sess.run([v, read])
        sess.run(inc)
        np.testing.assert_array_equal(before_ref, [1.0, 2.0])
        np.testing.assert_array_equal(before_read, [1.0, 2.0])


def test_closed_session_raises_runtime_error(graph):
    c = tf.constant(1)
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(c)


def test_make_callable_matches_run(graph):
    x = tf.placeholder(tf.float32, [])
    y = x * 3.0
    with tf.Session() as sess:
        f = sess.make_callable([y], feed_list=[x])
        assert f(2.0) == [6.0]
        assert sess.run([y], {x: 2.0}) == [6.0]


def test_make_callable_feeds_sparse_tensors_and_indexed_slices_component_wise(graph):
    sp = tf.sparse_placeholder(tf.float32, [None, None])
    total = tf.reduce_sum(sp.values)
    slices = tf.IndexedSlices(tf.placeholder(tf.float32, [None, 2]),
                              tf.placeholder(tf.int32, [None]))
    picked = slices.values[:, 0] + tf.cast(slices.indices, tf.float32)
    with tf.Session() as sess:
        f = sess.make_callable([total, picked], feed_list=[sp, slices])
        got = f(tf.SparseTensorValue([[0, 0], [1, 2]], [1.5, 2.0], [2, 3]),
                ([[1.0, 9.0], [2.0, 9.0]], [10, 20]))
        assert got[0] == 3.5 and got[1].tolist() == [11.0, 22.0]
        with pytest.raises(TypeError, match="Expected 2 feed values, got 1"):
            f(tf.SparseTensorValue([[0, 0]], [1.0], [1, 1]))
        traced = sess.make_callable(total, feed_list=[sp], accept_options=True)
        metadata = tf.RunMetadata()
        assert traced(tf.SparseTensorValue([[0, 1]], [4.0], [1, 2]),
                      options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                      run_metadata=metadata) == 4.0
        assert metadata.step_stats.dev_stats


def test_session_default_and_interactive(graph):
    c = tf.constant(4)
    with tf.Session() as sess:
        assert tf.get_default_session() is sess
        assert c.eval() == 4
    assert tf.get_default_session() is None
    inter = tf.InteractiveSession()
    assert tf.get_default_session() is inter and c.eval() == 4
    inter.close()
    assert tf.get_default_session() is None


def test_plans_are_cached_per_signature(graph):
    x = tf.placeholder(tf.float32, [])
    y = x + 1.0
    with tf.Session() as sess:
        sess.run(y, {x: 1.0})
        sess.run([y], {x: 1.0})
        plans = len(sess._core._plans)
        for _ in range(5):
            sess.run(y, {x: 2.0})
            sess.run([y], {x: 2.0})
        assert len(sess._core._plans) == plans


def test_growing_graph_warns_once_with_the_creating_line(graph, caplog):
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as sess, caplog.at_level(logging.WARNING, logger="tensorweave"):
        for _ in range(15):
            sess.run(x + 1.0, {x: 1.0})  # a new op every step: the classic TF1 leak
    warnings = [r for r in caplog.records if "graph grew" in r.getMessage()]
    assert len(warnings) == 1 and "test_session.py" in warnings[0].getMessage()


def test_soft_placement_error_lists_unplaceable_nodes(graph):
    with tf.device("/device:GPU:0"):
        c = tf.constant(1.0) + 1.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="GPU:0"):
            sess.run(c)
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(c) == 2.0


@pytest.mark.parametrize("device_count, n_devices", [
    ({"cpu": 3}, 1), ({"Cpu": 2}, 1), ({"cpu": 0}, 1), ({"GPU": 0}, 1), ({"CPU": 2}, 2)])
def test_device_count_keys_are_case_sensitive(graph, device_count, n_devices):
    """TF 2.21: a key that is not a device type as spelled ('cpu') is ignored."""
    a = tf.constant(1.0) * 2
    with tf.Session(config=tf.ConfigProto(device_count=device_count)) as sess:
        assert len(sess.list_devices()) == n_devices
        assert sess.run(a) == 2.0


def test_no_cpu_device_is_not_found_at_session_creation(graph):
    with pytest.raises(tf.errors.NotFoundError, match="No CPU devices are available"):
        tf.Session(config=tf.ConfigProto(device_count={"CPU": 0}))


def test_list_devices_of_a_closed_session_is_cancelled(graph):
    sess = tf.Session()
    sess.close()
    with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
        sess.list_devices()


def test_a_fetched_scalar_string_is_bytes():
    """TF returns a 0-d string as `bytes`, whichever kernel made it (queue, dataset, const)."""
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, [tf.string], shapes=[[]])
        enqueue = q.enqueue("x")
        element = tf.data.Dataset.from_tensor_slices(["a", "b"]).make_one_shot_iterator()
        with tf.Session() as sess:
            sess.run(enqueue)
            values = [sess.run(q.dequeue()), sess.run(element.get_next()),
                      sess.run(tf.constant("c"))]
    assert [(type(v), v) for v in values] == [(bytes, b"x"), (bytes, b"a"), (bytes, b"c")]


def test_feeds_the_dtype_cannot_hold_and_graph_tensors_are_type_errors():
    """TensorFlow raises TypeError for both (NumPy's OverflowError / ValueError before)."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int32, [])
        q = tf.placeholder(tf.uint8, [])
        r = tf.placeholder(tf.float32, [])
        c = tf.constant(1.0)
        with tf.Session() as sess:
            for tensor, value in ((p, 2**40), (q, -1), (r, c)):
                with pytest.raises(TypeError, match="feed"):
                    sess.run(tensor, {tensor: value})
                with pytest.raises(TypeError, match="feed"):
                    sess.run([tensor], {tensor: value})
            assert sess.run(p, {p: 2.7}) == 2      # a float truncates, as NumPy and TF do
