"""Session.partial_run_setup / partial_run: one step fed and fetched over several calls.

Values, handles and messages are TensorFlow 2.21's (tf.compat.v1), checked with
shared/programs/run_with_tf.py.
"""
import threading

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test builds in a graph of its own, so op names are the ones it expects."""
    with tf.Graph().as_default():
        yield


def _graph():
    """TensorFlow's partial_run example: r1 = a + b, r2 = r1 * c, and inc adds r1 to v."""
    a = tf.placeholder(tf.float32, shape=[], name="a")
    b = tf.placeholder(tf.float32, shape=[], name="b")
    c = tf.placeholder(tf.float32, shape=[], name="c")
    r1 = tf.add(a, b, name="r1")
    r2 = tf.multiply(r1, c, name="r2")
    v = tf.Variable(0.0, name="v")
    inc = tf.assign_add(v, r1, name="inc")
    return a, b, c, r1, r2, v, inc


def test_a_step_fed_and_fetched_in_two_calls():
    a, b, c, r1, r2, v, inc = _graph()
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([r1, r2, inc], [a, b, c])
        assert h == "a:0,b:0,c:0->inc:0,r1:0,r2:0//1/;0"
        res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        assert res == 3.0 and isinstance(res, np.float32)
        assert sess.partial_run(h, [r2, inc], feed_dict={c: res}) == [9.0, 3.0]
        assert sess.run(v) == 3.0                     # inc ran once
        h2 = sess.partial_run_setup([r1], [a, b])
        assert h2.endswith(";1")
        assert sess.partial_run(h2, {"x": r1, "y": [r1]}, {a: 1, b: 1}) == {"x": 2.0,
                                                                             "y": [2.0]}


def test_setup_targets_run_once_without_being_fetched():
    a, b, c, r1, r2, v, inc = _graph()
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(tf.assign(v, 2.0))
        h = sess.partial_run_setup([r1, inc.op], [a, b])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 1}) == 2.0
        assert sess.run(v) == 4.0
        with pytest.raises(RuntimeError, match=r"partial_run\(\) requires empty `target_list`"):
            sess.partial_run(sess.partial_run_setup([r1, inc.op], [a, b]), inc.op)


def test_setup_without_feeds_and_fetch_of_a_fed_tensor():
    a, b, c, r1, r2, v, inc = _graph()
    five = tf.constant(5.0)
    with tf.Session() as sess:
        assert sess.partial_run(sess.partial_run_setup([five]), five) == 5.0
        h = sess.partial_run_setup([a, r1], [a, b])
        assert sess.partial_run(h, [a, r1], {a: 4.0, b: 1.0}) == [4.0, 5.0]


@pytest.mark.parametrize("case, message", [
    ("feed not in setup", r"^The feed Const:0 was not specified in partial_run_setup\.$"),
    ("fetch not in setup", r"^The fetch Const:0 was not specified in partial_run_setup\.$"),
    ("feed twice", r"^The feed a:0 has already been fed\.$"),
    ("fetch twice", r"^The fetch r1:0 has already been fetched\.$"),
    ("bad handle", r"^Must run 'setup' before performing partial runs!$"),
    ("fetch needs an unfed feed",
     r"^Fetch c:0 can't be computed from the feeds that have been fed so far\.$"),
])
def test_misuse_is_invalid_argument_with_tensorflows_message(case, message):
    a, b, c, r1, r2, v, inc = _graph()
    other = tf.constant(3.0)
    calls = {
        "feed not in setup": lambda s, h: s.partial_run(h, r1, {other: 1.0}),
        "fetch not in setup": lambda s, h: s.partial_run(h, other, {a: 1, b: 2}),
        "feed twice": lambda s, h: (s.partial_run(h, r1, {a: 1, b: 2}),
                                    s.partial_run(h, r2, {a: 1, c: 2})),
        "fetch twice": lambda s, h: (s.partial_run(h, r1, {a: 1, b: 2}), s.partial_run(h, r1)),
        "bad handle": lambda s, h: s.partial_run("nope", r1, {a: 1, b: 2}),
        "fetch needs an unfed feed": lambda s, h: s.partial_run(h, r2, {a: 1, b: 2}),
    }
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([r1, r2, inc], [a, b, c])
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            calls[case](sess, h)


def test_feed_of_the_wrong_shape_is_a_value_error():
    a, b, c, r1, *_ = _graph()
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1], [a, b])
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\) for Tensor a:0, "
                                             r"which has shape \(\)"):
            sess.partial_run(h, r1, {a: [1, 2], b: 2})


def test_failing_step_raises_the_ops_error_and_its_handle_stays_failed():
    d = tf.placeholder(tf.float32, [None])
    e = tf.reshape(d, [3], name="bad_reshape")
    with tf.Session() as sess:
        h = sess.partial_run_setup([e], [d])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"(?s)Input to reshape is a tensor with 2 values.*bad_reshape"):
            sess.partial_run(h, e, {d: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
            sess.partial_run(h, e, {d: [1.0, 2.0, 3.0]})


def test_fetched_variable_value_is_a_snapshot():
    """A fetch of a variable's value copies it: the step's later update does not show."""
    x = tf.placeholder(tf.float32, [2])
    v = tf.Variable([1.0, 2.0])
    with tf.control_dependencies([v.value()]):
        later = tf.assign_add(v, x)
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([v.value(), later], [x])
        first = sess.partial_run(h, v.value())
        np.testing.assert_array_equal(first, [1.0, 2.0])
        np.testing.assert_array_equal(sess.partial_run(h, later, {x: [10.0, 10.0]}),
                                      [11.0, 12.0])
        np.testing.assert_array_equal(first, [1.0, 2.0])
        first[0] = 99.0                                  # the user's own array
        np.testing.assert_array_equal(sess.run(v), [11.0, 12.0])


def test_partial_run_across_two_devices():
    """Feeds and fetches on different devices: the partitions' own transfers and the
    client's share the step's rendezvous."""
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [2], name="a")
        doubled = a * 2.0
    with tf.device("/cpu:1"):
        b = tf.placeholder(tf.float32, [2], name="b")
        total = doubled + b
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        h = sess.partial_run_setup([doubled, total], [a, b])
        np.testing.assert_array_equal(sess.partial_run(h, doubled, {a: [1.0, 2.0]}), [2.0, 4.0])
        np.testing.assert_array_equal(sess.partial_run(h, total, {b: [1.0, 1.0]}), [3.0, 5.0])


def test_close_cancels_a_pending_partial_run():
    a, b, c, r1, r2, v, inc = _graph()
    sess = tf.Session()
    sess.run(v.initializer)
    h = sess.partial_run_setup([r1, r2], [a, b, c])
    assert sess.partial_run(h, r1, {a: 1, b: 2}) == 3.0
    before = {t for t in threading.enumerate() if t.name.startswith("tw-partial-run")}
    assert before
    sess.close()
    for t in before:
        t.join(timeout=10)
        assert not t.is_alive()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.partial_run(h, r2, {c: 1})
