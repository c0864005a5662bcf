"""AddN adds in TensorFlow's order (runtime/executor/sum_order.py, kernels/math.add_n_head).

Every expected digest was printed by TensorFlow 2.21 for the same program (only exactly rounded
ops feed the sums, so the order is the only difference): the input TF's kernel reuses goes
first, and past nine inputs blocks of eight are summed on their own. (The node names matter
too: the optimizer sorts the inputs by them, canonical_inputs.py.)
"""
import hashlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.math import add_n_head


def _digest(value) -> str:
    return hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest()[:12]


def test_sums_start_with_the_input_tensorflow_reuses():
    with tf.Graph().as_default():          # a fresh graph: the node names are TF's
        rng = np.random.RandomState(0)
        xv = rng.randn(4000).astype(np.float32)
        x = tf.placeholder(tf.float32, [4000])
        v = tf.Variable(rng.randn(4000).astype(np.float32))
        outs = {"fed_first": tf.add_n([x, x, x, x * 0.3]),   # the fed x is not reused
                "three": tf.add_n([x, x, x * 0.5]),
                "variable_first": tf.add_n([v, x * 0.7, tf.square(x)]),
                "view": tf.add_n([tf.identity(x), tf.reshape(x * 1.3, [4000]), x]),
                "eleven": tf.add_n([x] * 3 + [x * (0.1 * i + 0.05) for i in range(8)])}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = {k: _digest(val) for k, val in sess.run(outs, {x: xv}).items()}
    assert got == {"fed_first": "394c1005826f", "three": "2f3d942e228a",
                   "variable_first": "b7896ec007ae", "view": "9b9b571d7971",
                   "eleven": "b8fa38d3c6d9"}


@pytest.mark.parametrize("n, head", [(2, 2), (7, 7), (8, 8), (9, 9), (10, 2), (16, 8),
                                     (17, 9), (18, 2)])
def test_blocks_of_eight_after_the_head(n, head):
    assert add_n_head(n) == head


def test_many_terms_sum_in_blocks():
    values = [np.float32(v) for v in (1e8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)]
    with tf.Graph().as_default(), tf.Session() as sess:
        total = tf.add_n([tf.constant(v) for v in values])
        # 1e8 + 1.0 (the head of two) rounds to 1e8; the block of eight 1.0s is 8, added once
        assert sess.run(total) == np.float32(1e8) + np.float32(8)
