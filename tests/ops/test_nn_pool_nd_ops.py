"""max_pool_v2 / avg_pool_v2 (dispatch on rank), tf.nn.pool (strides, dilation_rate, layouts)
and with_space_to_batch against a NumPy reference over dilated windows; gradients through the
SpaceToBatchND composite numerically; names and errors as TensorFlow 2.21's."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def ref_pool(x, window, kind, padding, strides=None, rates=None, channels_first=False):
    """Max or mean over each (dilated) window's elements inside the input."""
    xl = np.moveaxis(x, 1, -1) if channels_first else x
    n = len(window)
    strides = strides or (1,) * n
    rates = rates or (1,) * n
    sizes = xl.shape[1:-1]
    outs, befores = [], []
    for size, k, s, r in zip(sizes, window, strides, rates):
        eff = (k - 1) * r + 1
        out = -(-size // s) if padding == "SAME" else (size - eff) // s + 1
        outs.append(out)
        befores.append(max((out - 1) * s + eff - size, 0) // 2 if padding == "SAME" else 0)
    y = np.zeros((xl.shape[0], *outs, xl.shape[-1]), x.dtype)
    for pos in np.ndindex(*outs):
        taps = []
        for tap in itertools.product(*(range(k) for k in window)):
            idx = [p * s + t * r - b for p, s, t, r, b in zip(pos, strides, tap, rates, befores)]
            if all(0 <= i < size for i, size in zip(idx, sizes)):
                taps.append(xl[(slice(None), *idx)])
        stacked = np.stack(taps)
        y[(slice(None), *pos)] = stacked.max(0) if kind == "MAX" else stacked.mean(0)
    return np.moveaxis(y, -1, 1) if channels_first else y


CASES = [
    OpCase("max_pool_v2_1d", lambda x: tf.nn.max_pool_v2(x, 2, 2, "SAME"),
           lambda x: ref_pool(x, (2,), "MAX", "SAME", (2,)), [_randn(2, 7, 3)], F32_64,
           unknown_shapes=False),
    OpCase("max_pool_v2_2d_explicit",
           lambda x: tf.nn.max_pool_v2(x, 2, 1, [[0, 0], [1, 0], [0, 1], [0, 0]]),
           lambda x: ref_pool(np.pad(x, [(0, 0), (1, 0), (0, 1), (0, 0)],
                                     constant_values=-np.inf), (2, 2), "MAX", "VALID"),
           [_randn(2, 4, 5, 2)], F32_64, unknown_shapes=False),
    OpCase("max_pool_v2_3d_ncdhw",
           lambda x: tf.nn.max_pool_v2(x, 2, [1, 2, 1], "SAME", data_format="NCDHW"),
           lambda x: ref_pool(x, (2, 2, 2), "MAX", "SAME", (1, 2, 1), channels_first=True),
           [_randn(2, 2, 3, 4, 3)], F32_64, unknown_shapes=False),
    OpCase("avg_pool_v2_1d_ncw", lambda x: tf.nn.avg_pool_v2(x, 3, 2, "VALID", "NCW"),
           lambda x: ref_pool(x, (3,), "AVG", "VALID", (2,), channels_first=True),
           [_randn(2, 3, 7)], F32_64, unknown_shapes=False),
    OpCase("avg_pool_v2_2d", lambda x: tf.nn.avg_pool_v2(x, [2, 3], [1, 2], "SAME"),
           lambda x: ref_pool(x, (2, 3), "AVG", "SAME", (1, 2)), [_randn(2, 5, 6, 2)], F32_64,
           unknown_shapes=False),
    OpCase("avg_pool_v2_3d", lambda x: tf.nn.avg_pool_v2(x, 2, 2, "VALID"),
           lambda x: ref_pool(x, (2, 2, 2), "AVG", "VALID", (2, 2, 2)),
           [_randn(1, 4, 5, 4, 2)], F32_64, unknown_shapes=False),
    OpCase("pool_max_1d_same", lambda x: tf.nn.pool(x, [3], "MAX", "SAME"),
           lambda x: ref_pool(x, (3,), "MAX", "SAME"), [_randn(2, 7, 3)], F32_64),
    OpCase("pool_avg_1d_dilated", lambda x: tf.nn.pool(x, [2], "AVG", "VALID", [2]),
           lambda x: ref_pool(x, (2,), "AVG", "VALID", rates=(2,)), [_randn(2, 7, 3)],
           F32_64),
    OpCase("pool_max_1d_ncw_strided",
           lambda x: tf.nn.pool(x, [2], "MAX", "VALID", strides=[2], data_format="NCW"),
           lambda x: ref_pool(x, (2,), "MAX", "VALID", (2,), channels_first=True),
           [_randn(2, 3, 7)], F32_64),
    OpCase("pool_avg_2d_strided", lambda x: tf.nn.pool(x, [2, 2], "AVG", "SAME", strides=[2, 1]),
           lambda x: ref_pool(x, (2, 2), "AVG", "SAME", (2, 1)), [_randn(2, 7, 8, 3)], F32_64),
    OpCase("pool_max_2d_dilated",
           lambda x: tf.nn.pool(x, [2, 3], "MAX", "VALID", dilation_rate=[2, 2]),
           lambda x: ref_pool(x, (2, 3), "MAX", "VALID", rates=(2, 2)), [_randn(2, 7, 8, 3)],
           F32_64),
    OpCase("pool_max_2d_dilated_nchw",
           lambda x: tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[3, 2],
                                data_format="NCHW"),
           lambda x: ref_pool(x, (2, 2), "MAX", "VALID", rates=(3, 2), channels_first=True),
           [_randn(2, 3, 7, 8)], F32_64),
    OpCase("pool_avg_3d_dilated",
           lambda x: tf.nn.pool(x, [2, 2, 2], "AVG", "VALID", dilations=[2, 1, 2]),
           lambda x: ref_pool(x, (2, 2, 2), "AVG", "VALID", rates=(2, 1, 2)),
           [_randn(1, 5, 4, 6, 2)], F32_64),
    OpCase("with_space_to_batch_same",
           lambda x: tf.nn.with_space_to_batch(
               x, [2, 2], "SAME", lambda v, n, p: tf.nn.max_pool(v, [1, 2, 2, 1], 1, p),
               filter_shape=[2, 2]),
           # SpaceToBatchND pads with zeros, which the max then sees (as in TF).
           lambda x: ref_pool(np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)]), (2, 2), "MAX",
                              "VALID", rates=(2, 2)),
           [_randn(2, 7, 8, 3)], F32_64),
    OpCase("with_space_to_batch_valid",
           lambda x: tf.nn.with_space_to_batch(
               x, [3, 2], "VALID", lambda v, n, p: tf.nn.avg_pool(v, [1, 2, 2, 1], 1, p)),
           lambda x: ref_pool(x, (2, 2), "AVG", "VALID", rates=(3, 2)),
           [_randn(2, 7, 8, 3)], F32_64),
]

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
# max_pool_v2 / avg_pool_v2 need the input's rank (TF raises otherwise), so their rows skip the
# unknown-rank build; the shape functions of the ops they pick are checked in test_nn_pool_ops.
_, test_shapes = case_tests([c for c in CASES if c.unknown_shapes])


def test_names_as_tf():
    with tf.Graph().as_default():
        x3, x4, x5 = tf.zeros([2, 7, 3]), tf.zeros([2, 7, 8, 3]), tf.zeros([2, 5, 6, 7, 2])
        assert tf.nn.max_pool_v2(x3, 2, 2, "SAME").name == "MaxPool1d/Squeeze:0"
        assert tf.nn.max_pool_v2(x4, 2, 2, "SAME").name == "MaxPool2d:0"
        assert tf.nn.max_pool_v2(x5, 2, 2, "SAME").name == "MaxPool3D:0"
        assert tf.nn.avg_pool_v2(x3, 2, 2, "SAME").name == "AvgPool1D/Squeeze:0"
        assert tf.nn.avg_pool_v2(x4, 2, 2, "SAME").name == "AvgPool:0"
        assert tf.nn.avg_pool_v2(x5, 2, 2, "SAME").name == "AvgPool3D:0"
        assert tf.nn.pool(x3, [3], "MAX", "SAME").name == "max_pool/Squeeze:0"
        assert tf.nn.pool(x4, [2, 2], "AVG", "SAME").name == "avg_pool:0"
        p = tf.nn.pool(x4, [2, 2], "MAX", "VALID", dilation_rate=[2, 2])
        assert p.name == "max_pool_1/BatchToSpaceND:0" and p.shape.as_list() == [2, 5, 6, 3]
        dyn = tf.nn.pool(tf.placeholder(tf.float32, [None, None, None, 3]), [2, 2], "MAX",
                         "VALID", dilation_rate=[2, 3])
        assert dyn.shape.as_list() == [None, None, None, 3]
        assert tf.nn.with_space_to_batch(x4, [1, 1], "SAME", lambda v, n, pad: v) is x4


def test_pool_with_unknown_spatial_sizes_runs():
    x = np.random.RandomState(0).randn(2, 7, 8, 3).astype(np.float32)
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.float32, [None, None, None, 3])
        y = tf.nn.pool(holder, [2, 2], "MAX", "VALID", dilation_rate=[2, 3])
        with tf.Session() as sess:
            got = sess.run(y, {holder: x})
    np.testing.assert_allclose(got, ref_pool(x, (2, 2), "MAX", "VALID", rates=(2, 3)))


@pytest.mark.parametrize("build,message", [
    (lambda x: tf.nn.max_pool_v2(tf.zeros([1] * 6), 2, 2, "SAME"),
     "`input.shape.rank` must be 3, 4 or 5. Received: input.shape=(1, 1, 1, 1, 1, 1) of "
     "rank 6."),
    (lambda x: tf.nn.max_pool_v2(tf.placeholder(tf.float32), 2, 2, "SAME"),
     "Cannot take the length of shape with unknown rank."),
    (lambda x: tf.nn.max_pool_v2(tf.zeros([1, 2, 2, 2, 1]), 2, 2,
                                 [[0, 0], [1, 0], [0, 1], [0, 0], [0, 0]]),
     "Explicit padding is not supported with an input tensor of rank 5."),
    (lambda x: tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2]),
     "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
     "padding=SAME and dilation_rate=[2 2]"),
    (lambda x: tf.nn.pool(x, [2, 2], "MAX", "VALID", strides=[3, 1]),
     "`strides` > `window_shape` not supported due to inconsistency between CPU and GPU "
     "implementations. Received: strides=[3 1] and window_shape=[2, 2]"),
    (lambda x: tf.nn.pool(x, [2, 2], "MIN", "VALID"), "2-D MIN pooling is not supported."),
    (lambda x: tf.nn.pool(x, [2, 2, 2, 2], "MAX", "VALID"),
     "`len(window_shape)` must be 1, 2, or 3. Received: window_shape=[2, 2, 2, 2] of length 4"),
    (lambda x: tf.nn.pool(x, [2], "MAX", "VALID"), "must have rank 3"),
    (lambda x: tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2], strides=[2, 2]),
     "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     "strides=[2 2] and dilation_rate=[2 2]"),
    (lambda x: tf.nn.pool(tf.zeros([2, 7, 3]), [2], "MAX", "VALID", data_format="NHWC"),
     "data_format must be either 'NWC' or 'NCW'. Received: data_format=NHWC"),
    (lambda x: tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda v, n, p: v),
     "`filter_shape` must be specified for `padding='SAME'`."),
    (lambda x: tf.nn.with_space_to_batch(x, [0, 2], "VALID", lambda v, n, p: v),
     "`dilation_rate` must be positive. Received: dilation_rate=[0 2]"),
    (lambda x: tf.nn.with_space_to_batch(x, [2, 2], "VALID", lambda v, n, p: v,
                                         spatial_dims=[2, 1]),
     "`spatial_dims` must be a monotonically increasing sequence of positive integers."),
])
def test_build_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build(tf.zeros([2, 7, 8, 3]))
    assert message in str(info.value)
