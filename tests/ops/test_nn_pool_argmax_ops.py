"""MaxPoolWithArgmax and MaxPoolGradWithArgmax against NumPy loops over windows (TF's index
layout and tie rule), the gradient numerically, names and errors as TensorFlow 2.21's."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_pool_argmax_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_nn_conv3d_ops import check_run_error

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def ref_argmax_pool(x, ksize, strides, padding, include_batch=False):
    """(maxima, flat indices): per window, the first element in scan order that is greater
    than all before it (or the first inside the input)."""
    n, h, w, c = x.shape
    if padding == "SAME":
        oh, ow = -(-h // strides[0]), -(-w // strides[1])
        top = max((oh - 1) * strides[0] + ksize[0] - h, 0) // 2
        left = max((ow - 1) * strides[1] + ksize[1] - w, 0) // 2
    else:
        oh, ow = (h - ksize[0]) // strides[0] + 1, (w - ksize[1]) // strides[1] + 1
        top = left = 0
    y = np.zeros((n, oh, ow, c), x.dtype)
    arg = np.zeros((n, oh, ow, c), np.int64)
    for b, i, j, ch in np.ndindex(n, oh, ow, c):
        best, where = None, -1
        for r in range(i * strides[0] - top, i * strides[0] - top + ksize[0]):
            for col in range(j * strides[1] - left, j * strides[1] - left + ksize[1]):
                if 0 <= r < h and 0 <= col < w and (where < 0 or x[b, r, col, ch] > best):
                    best, where = x[b, r, col, ch], (r * w + col) * c + ch
        y[b, i, j, ch] = best
        arg[b, i, j, ch] = where + (b * h * w * c if include_batch else 0)
    return y, arg


def ref_grad(x, dy, argmax, include_batch=False):
    dx = np.zeros(x.size, dy.dtype)
    per_image = x.size // x.shape[0]
    for b in range(x.shape[0]):
        for g, a in zip(dy[b].ravel(), argmax[b].ravel()):
            dx[a if include_batch else a + b * per_image] += g
    return dx.reshape(x.shape)


def _ties(rng, dt):
    return rng.randint(0, 3, (2, 5, 6, 2)).astype(dt)


def _argmax_input(shape, ksize, strides, padding, include_batch):
    """The argmax a real forward pass gives for the row's first input."""
    return lambda rng, dt: ref_argmax_pool(_randn(*shape)(np.random.RandomState(0), dt),
                                           ksize, strides, padding, include_batch)[1]


CASES = [
    OpCase("max_pool_with_argmax_same",
           lambda x: list(tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")),
           lambda x: list(ref_argmax_pool(x, (3, 3), (2, 2), "SAME")), [_randn(2, 5, 4, 3)],
           F32_64),
    OpCase("max_pool_with_argmax_valid_batch_index",
           lambda x: list(tf.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 1, 2, 1], "VALID",
                                                     include_batch_in_index=True)),
           lambda x: list(ref_argmax_pool(x, (2, 3), (1, 2), "VALID", True)),
           [_randn(2, 4, 7, 2)], F32_64),
    OpCase("max_pool_with_argmax_ties_ints",
           lambda x: list(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME",
                                                     Targmax=tf.int32)),
           lambda x: [a.astype(np.int32) if a.dtype == np.int64 else a
                      for a in ref_argmax_pool(x, (2, 2), (1, 1), "SAME")],
           [_ties], (tf.float32, tf.int32, tf.uint8, tf.int64), grad=False),
    OpCase("max_pool_with_argmax_empty_batch",
           lambda x: list(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")),
           lambda x: list(ref_argmax_pool(x, (2, 2), (2, 2), "SAME")),
           [np.zeros((0, 3, 3, 2))], F32_64, grad=False),
    OpCase("max_pool_grad_with_argmax",
           lambda x, dy, a: apply_op(nn_pool_argmax_ops.MaxPoolGradWithArgmax, [x, dy, a],
                                     {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1],
                                      "padding": "SAME"}),
           lambda x, dy, a: ref_grad(x, dy, a),
           [_randn(2, 5, 4, 3), _randn(2, 3, 2, 3),
            _argmax_input((2, 5, 4, 3), (3, 3), (2, 2), "SAME", False)], F32_64,
           fixed_dtypes=(None, None, tf.int64), grad=False),
    OpCase("max_pool_grad_with_argmax_batch_index",
           lambda x, dy, a: apply_op(nn_pool_argmax_ops.MaxPoolGradWithArgmax, [x, dy, a],
                                     {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1],
                                      "padding": "VALID", "include_batch_in_index": True}),
           lambda x, dy, a: ref_grad(x, dy, a, True),
           [_randn(2, 3, 4, 2), _randn(2, 2, 3, 2),
            _argmax_input((2, 3, 4, 2), (2, 2), (1, 1), "VALID", True)], F32_64,
           fixed_dtypes=(None, None, tf.int32), grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_names_and_gradient_op():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 5, 4, 3])
        y, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        assert (y.name, argmax.name) == ("MaxPoolWithArgmax:0", "MaxPoolWithArgmax:1")
        assert argmax.dtype == tf.int64 and y.shape.as_list() == [2, 3, 2, 3]
        _, a32 = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                            output_dtype=tf.int32, name="p")
        assert a32.name == "p:1" and a32.dtype == tf.int32 and a32.shape.as_list() == [2, 2,
                                                                                      2, 3]
        g = tf.gradients(y, x)[0]
        assert g.name == "gradients/MaxPoolWithArgmax_grad/MaxPoolGradWithArgmax:0"
        # TensorFlow registers no gradient for MaxPoolGradWithArgmax.
        with pytest.raises(LookupError, match="No gradient defined for operation"):
            tf.gradients(g, x)


@pytest.mark.parametrize("build,exc,message", [
    (lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                          data_format="NCHW"),
     ValueError, "`data_format` values other  than 'NHWC' are not supported"),
    (lambda x: tf.nn.max_pool_with_argmax(x, [2, 2], [1, 2, 2, 1], "VALID"),
     ValueError, "Attr 'ksize' of 'MaxPoolWithArgmax' Op passed list of length 2 less than "
     "minimum 4"),
    (lambda x: tf.nn.max_pool_with_argmax(x, 2, 2, "VALID"),
     TypeError, "Expected list for 'ksize' argument to 'max_pool_with_argmax' Op, not 2"),
    (lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "EXPLICIT"),
     ValueError, "Attr 'padding' of 'MaxPoolWithArgmax' Op passed string 'EXPLICIT' not in"),
    (lambda x: tf.nn.max_pool_with_argmax(x[0], [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
     ValueError, "Shape must be rank 4 but is rank 3"),
    (lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                          Targmax=tf.int16),
     TypeError, "Targmax"),
])
def test_build_errors(build, exc, message):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=message.replace("(", r"\(").replace("[", r"\[")):
            build(tf.zeros([2, 5, 4, 3]))


def _fed(value, dtype=np.float32):
    return tf.placeholder_with_default(np.asarray(value, dtype), None)


@pytest.mark.parametrize("build,exc,message", [
    (lambda: tf.nn.max_pool_with_argmax(_fed(np.zeros((2, 5, 4, 4))), [1, 2, 2, 2],
                                        [1, 2, 2, 2], "VALID")[1],
     errors.UnimplementedError,
     "MaxPooling supports exactly one of pooling across depth or pooling across width/height."),
    (lambda: apply_op(nn_pool_argmax_ops.MaxPoolGradWithArgmax,
                      [_fed(np.zeros((2, 5, 4, 3))), _fed(np.ones((2, 2, 2, 3))),
                       _fed(np.zeros((2, 3, 2, 3)), np.int64)],
                      {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}),
     errors.InvalidArgumentError, "Expected grad shape to be [2,3,2,3], but got [2,2,2,3]"),
    (lambda: apply_op(nn_pool_argmax_ops.MaxPoolGradWithArgmax,
                      [_fed(np.zeros((2, 5, 4, 3))), _fed(np.ones((2, 3, 2, 3))),
                       _fed(np.zeros((2, 3, 2, 2)), np.int64)],
                      {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}),
     errors.InvalidArgumentError, "Expected argmax shape to be [2,3,2,3], but got [2,3,2,2]"),
    (lambda: apply_op(nn_pool_argmax_ops.MaxPoolGradWithArgmax,
                      [_fed(np.zeros((2, 5, 4, 3))), _fed(np.ones((2, 3, 2, 3))),
                       _fed(np.full((2, 3, 2, 3), 1000), np.int64)],
                      {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}),
     errors.InvalidArgumentError, "Invalid output gradient index: 1000, 0, 120"),
])
def test_run_errors(build, exc, message):
    check_run_error(build, exc, message)
