"""Control flow across virtual devices: a cond's dead tokens cross the rendezvous (the
receiver learns the tensor is dead instead of waiting). Loops spanning devices:
test_loops_across_devices.py."""
import tensorweave as tf
from tensorweave.testing.bounded import run_bounded

CONFIG = tf.ConfigProto(device_count={"CPU": 2})


def test_cond_with_branches_on_two_devices():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [])
        with tf.device("/cpu:0"):
            v = tf.Variable(0.0)

        def true_fn():
            with tf.device("/cpu:1"):
                a = tf.square(x)
            with tf.device("/cpu:0"):
                return a + 1.0

        def false_fn():
            bumped = tf.assign_add(v, 5.0)
            with tf.device("/cpu:1"):
                return bumped * 2.0
        y = tf.cond(p, true_fn, false_fn)
        with tf.Session(config=CONFIG) as sess:
            sess.run(v.initializer)
            assert run_bounded(lambda: sess.run(y, {p: True, x: 3.0})) == 10.0
            assert sess.run(v) == 0.0
            assert run_bounded(lambda: sess.run(y, {p: False, x: 3.0})) == 10.0
            assert sess.run(v) == 5.0
            meta = tf.RunMetadata()
            sess.run(y, {p: True, x: 1.0}, options=tf.RunOptions(
                output_partition_graphs=True), run_metadata=meta)
            ops = {n.op for g in meta.partition_graphs for n in g.node}
            assert {"_Send", "_Recv", "Switch", "Merge"} <= ops

