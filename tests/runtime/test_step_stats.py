"""FULL_TRACE fills RunMetadata.step_stats with one record per executed node."""
import numpy as np

import tensorweave as tf


def test_full_trace_records_every_node_with_outputs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        y = tf.reduce_sum(tf.square(x, name="sq"), name="total")
        with tf.Session() as sess:
            meta = tf.RunMetadata()
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            value = sess.run(y, {x: np.ones((2, 3), np.float32)}, options=options,
                             run_metadata=meta)
            untraced = tf.RunMetadata()
            sess.run(y, {x: np.ones((2, 3), np.float32)}, run_metadata=untraced)
    assert value == 6.0
    assert len(meta.step_stats.dev_stats) == 1
    dev = meta.step_stats.dev_stats[0]
    assert dev.device.endswith("device:CPU:0")
    by_name = {n.node_name: n for n in dev.node_stats}
    assert {"sq", "total"} <= set(by_name)
    sq = by_name["sq"].output[0].tensor_description
    assert [d.size for d in sq.shape.dim] == [2, 3]
    assert sq.allocation_description.requested_bytes == 24
    assert by_name["sq"].all_start_micros > 0
    assert len(untraced.step_stats.dev_stats) == 0


def test_a_variables_output_is_described_by_its_storage():
    """A VariableV2 outputs a reference; the trace describes the array it refers to, as TF's
    does (dtype and shape of the variable), with the allocator that holds it."""
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            meta = tf.RunMetadata()
            sess.run(v, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=meta)
    by_name = {n.node_name: n for n in meta.step_stats.dev_stats[0].node_stats}
    out = by_name["v"].output[0].tensor_description
    assert out.dtype == tf.float32.as_datatype_enum
    assert [d.size for d in out.shape.dim] == [3]
    assert out.allocation_description.allocator_name == "cpu"
    assert out.allocation_description.allocated_bytes == 12
