"""Property: a random graph split over 2-3 devices computes what it computes on one device."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorweave as tf

_OPS = [
    lambda a, b: tf.add(a, b),
    lambda a, b: tf.multiply(a, b),
    lambda a, b: tf.subtract(a, b),
    lambda a, b: tf.maximum(a, b),
    lambda a, b: tf.tanh(a),
    lambda a, b: tf.square(a) * 0.5,
    lambda a, b: tf.identity(b),
]


@st.composite
def graphs(draw):
    n_devices = draw(st.integers(2, 3))
    n_nodes = draw(st.integers(1, 12))
    nodes = []
    for i in range(n_nodes):
        op = draw(st.integers(0, len(_OPS) - 1))
        a = draw(st.integers(0, i + 1))   # 0, 1: the two inputs; k + 2: node k
        b = draw(st.integers(0, i + 1))
        device = draw(st.sampled_from([None] + list(range(n_devices))))
        control = draw(st.one_of(st.none(), st.integers(0, i + 1)))
        nodes.append((op, a, b, device, control))
    fetches = draw(st.lists(st.integers(0, n_nodes - 1), min_size=1, max_size=3, unique=True))
    return n_devices, nodes, fetches, draw(st.sampled_from(["line", "traced", "parallel"]))


def _build(nodes, fetches):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [3], name="x")
            y = tf.placeholder(tf.float32, [3], name="y")
        values = [x, y]
        for op, a, b, device, control in nodes:
            deps = [] if control is None else [values[control].op]
            with tf.device(None if device is None else f"/cpu:{device}"), \
                    tf.control_dependencies(deps):
                values.append(_OPS[op](values[a], values[b]))
    return graph, x, y, [values[k + 2] for k in fetches]


@settings(max_examples=30, deadline=None)
@given(graphs())
def test_split_graph_matches_one_device(case):
    n_devices, nodes, fetches, mode = case
    feed_values = (np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, 0.25, -3.0], np.float32))
    results = []
    for count in (1, n_devices):
        graph, x, y, outs = _build(nodes, fetches)
        # Partitions on threads of their own, or together on the calling thread: as one
        # generated function, or (traced) through the cooperative ready queue.
        threads = {"intra_op_parallelism_threads": 1, "inter_op_parallelism_threads": 2} \
            if mode == "parallel" else {}
        config = tf.ConfigProto(device_count={"CPU": count}, allow_soft_placement=True,
                                **threads)
        options = tf.RunOptions(timeout_in_ms=20000, trace_level=tf.RunOptions.FULL_TRACE
                                if mode == "traced" else tf.RunOptions.NO_TRACE)
        with tf.Session(graph=graph, config=config) as sess:
            results.append(sess.run(outs, {x: feed_values[0], y: feed_values[1]},
                                    options=options, run_metadata=tf.RunMetadata()))
    for single, split in zip(*results):
        np.testing.assert_allclose(split, single, rtol=1e-6)
