"""Grappler's canonical input order (canonical_inputs.py): commutative nodes' data inputs sorted
by TensorFlow's input names, which decides the order AddN adds in."""
import numpy as np

import tensorweave as tf
from tensorweave.runtime.passes.canonical_inputs import sort_commutative_inputs


def test_commutative_inputs_are_sorted_by_tensorflow_names(pt):
    x = tf.placeholder(tf.float32, [3], name="x")
    w = tf.placeholder(tf.float32, [3], name="b_fed")
    total = tf.add_n([tf.square(x, name="z_sq"), w, tf.exp(x, name="a_exp")], name="total")
    prod = tf.multiply(tf.exp(x, name="m_exp"), w, name="prod")
    quotient = tf.divide(tf.exp(x, name="q_exp"), w, name="quotient")   # not commutative
    graph, opts = pt.apply(sort_commutative_inputs, [total, prod, quotient], feeds=[x, w])
    assert [s for s, _ in graph.nodes["total"].inputs] == ["a_exp", "_arg_b_fed_0_1", "z_sq"]
    assert [s for s, _ in graph.nodes["prod"].inputs] == ["_arg_b_fed_0_1", "m_exp"]
    assert [s for s, _ in graph.nodes["quotient"].inputs] == ["q_exp", "_arg_b_fed_0_1"]
    assert opts.log.kinds().count("sort_inputs") == 2


def _gradient_sum():
    """A tensor used by three ops: its gradient is an AddN of three partial gradients."""
    rng = np.random.RandomState(0)
    xv = rng.randn(1000).astype(np.float32)
    av, bv = rng.randn(1000).astype(np.float32), rng.randn(1000).astype(np.float32)
    x = tf.placeholder(tf.float32, [1000])
    u = x * 1.5
    y = u * tf.constant(av) + tf.square(u) * tf.constant(bv) + u * u * u
    return tf.gradients(tf.reduce_sum(y), x)[0], {x: xv}


def test_a_gradient_sum_adds_in_tensorflows_order(pt):
    """TF 2.21 printed these bytes for the gradient (default config: the AddN's inputs sorted;
    with every rewrite off, in tf.gradients' order, as here with the same switches)."""
    grad, feed = _gradient_sum()
    with tf.Session() as sess:
        got = sess.run(grad, feed)
    with tf.Session(config=pt.OFF) as sess:
        off = sess.run(grad, feed)
    assert got.tobytes().hex()[:64] == \
        "6762a1416c70fbbdc64c14419a58254214e80b4264155141edf7d440deba0ac0"
    assert off.tobytes().hex()[:64] == \
        "6662a1417870fbbdc54c14419a58254214e80b4262155141edf7d440deba0ac0"
