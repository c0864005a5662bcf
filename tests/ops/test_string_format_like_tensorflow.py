"""tf.strings.format and tf.print text of rank-3 and higher tensors as TensorFlow 2.21 writes it:
blocks of dimension d are separated by rank - d - 1 newlines (a blank line between matrices,
two between 3-d blocks). Expected strings are TF 2.21's outputs."""
import sys

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("value, summarize, expected", [
    (np.arange(8).reshape(2, 2, 2), 3, "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"),
    (np.arange(48).reshape(4, 4, 3), 1,
     "[[[0 ... 2]\n  ...\n  [9 ... 11]]\n\n ...\n\n [[36 ... 38]\n  ...\n  [45 ... 47]]]"),
    (np.arange(16).reshape(2, 2, 2, 2), 3,
     "[[[[0 1]\n   [2 3]]\n\n  [[4 5]\n   [6 7]]]\n\n\n [[[8 9]\n   [10 11]]\n\n"
     "  [[12 13]\n   [14 15]]]]"),
    (np.array([[["a"]], [["b"]]]), 3, '[[["a"]]\n\n [["b"]]]'),
    (np.zeros((2, 0, 3)), 3, "[\n\n ...]"),
    (np.arange(6).reshape(2, 3), 3, "[[0 1 2]\n [3 4 5]]"),
])
def test_format_separates_blocks_like_tensorflow(value, summarize, expected):
    with tf.Graph().as_default():
        out = tf.strings.format("{}", tf.constant(value), summarize=summarize)
        with tf.Session() as s:
            assert s.run(out).decode() == expected


def test_print_uses_the_same_layout(capsys):
    with tf.Graph().as_default():
        op = tf.print("v:", tf.constant(np.arange(8).reshape(2, 2, 2)),
                      output_stream=sys.stdout)
        with tf.Session() as s:
            s.run(op)
    assert capsys.readouterr().out == "v: [[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]\n"
