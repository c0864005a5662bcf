"""SpaceToDepth, DepthToSpace, SpaceToBatchND, BatchToSpaceND and the v1 wrappers
tf.space_to_batch / tf.batch_to_space: forward against slicing references, shape functions
against the kernels, gradients against central differences, TensorFlow 2.21's construction-time
and run-time errors (checked with run_with_tf), op types and names."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

ALL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.bool)
REAL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.float16)


def _iota(*shape):
    return lambda rng, dt: np.arange(np.prod(shape)).reshape(shape).astype(dt)


def _gauss(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape)).astype(dt)


# References written with strided slices, not with the kernels' reshape-transpose.
def _depth_ref(b, to_depth):
    """Block offset (i, j) is depth group i * b + j of the output (SpaceToDepth) or of the
    input (DepthToSpace)."""
    def ref(x):
        n, h, w, c = x.shape
        shape = (n, h // b, w // b, c * b * b) if to_depth else (n, h * b, w * b, c // (b * b))
        out = np.empty(shape, x.dtype)
        space, depth = (x, out) if to_depth else (out, x)
        group = depth.shape[-1] // (b * b)
        for i, j in itertools.product(range(b), range(b)):
            k = i * b + j
            if to_depth:
                depth[..., k * group:(k + 1) * group] = space[:, i::b, j::b]
            else:
                space[:, i::b, j::b] = depth[..., k * group:(k + 1) * group]
        return out
    return ref


def _nchw(ref):
    return lambda x: ref(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def _to_batch_ref(block, pads):
    def ref(x):
        m = len(block)
        padded = np.pad(x, [(0, 0), *pads] + [(0, 0)] * (x.ndim - m - 1))
        groups = [padded[(slice(None), *(slice(o, None, b) for o, b in zip(offsets, block)))]
                  for offsets in itertools.product(*(range(b) for b in block))]
        return np.concatenate(groups) if groups else padded
    return ref


def _to_space_nd_ref(block, crops):
    def ref(x):
        m, n = len(block), x.shape[0] // int(np.prod(block))
        full = np.empty((n, *(d * b for d, b in zip(x.shape[1:m + 1], block)),
                         *x.shape[m + 1:]), x.dtype)
        for k, offsets in enumerate(itertools.product(*(range(b) for b in block))):
            full[(slice(None), *(slice(o, None, b) for o, b in zip(offsets, block)))] = \
                x[k * n:(k + 1) * n]
        return full[(slice(None), *(slice(lo, s - hi) for (lo, hi), s in
                                    zip(crops, full.shape[1:m + 1])))]
    return ref


_PADS = [[1, 1], [0, 1]]
_CROPS = [[1, 0], [2, 1]]

CASES = [
    # --- SpaceToDepth / DepthToSpace
    OpCase("space_to_depth", lambda x: tf.space_to_depth(x, 2), _depth_ref(2, True),
           [_gauss(2, 4, 6, 3)], dtypes=ALL),
    OpCase("space_to_depth_3", lambda x: tf.space_to_depth(x, 3), _depth_ref(3, True),
           [_iota(1, 3, 6, 2)]),
    OpCase("space_to_depth_nchw", lambda x: tf.space_to_depth(x, 2, data_format="NCHW"),
           _nchw(_depth_ref(2, True)), [_gauss(2, 3, 4, 6)]),
    OpCase("space_to_depth_empty", lambda x: tf.space_to_depth(x, 2), _depth_ref(2, True),
           [_gauss(0, 2, 4, 1)]),
    OpCase("depth_to_space", lambda x: tf.depth_to_space(x, 2), _depth_ref(2, False),
           [_gauss(2, 3, 2, 8)], dtypes=ALL),
    OpCase("depth_to_space_3", lambda x: tf.depth_to_space(x, 3), _depth_ref(3, False),
           [_iota(1, 2, 1, 9)]),
    OpCase("depth_to_space_nchw", lambda x: tf.depth_to_space(x, 2, data_format="NCHW"),
           _nchw(_depth_ref(2, False)), [_gauss(1, 8, 2, 3)]),
    # --- SpaceToBatchND / BatchToSpaceND
    OpCase("space_to_batch_nd", lambda x: tf.space_to_batch_nd(x, [2, 2], _PADS),
           _to_batch_ref([2, 2], _PADS), [_gauss(2, 2, 3, 2)], dtypes=REAL),
    OpCase("space_to_batch_nd_1d", lambda x: tf.space_to_batch_nd(x, [3], [[0, 0]]),
           _to_batch_ref([3], [[0, 0]]), [_iota(2, 3)]),
    OpCase("space_to_batch_nd_3d_block", lambda x: tf.space_to_batch_nd(
        x, [1, 2, 3], [[0, 0], [1, 0], [0, 2]]), _to_batch_ref([1, 2, 3], [[0, 0], [1, 0],
                                                                         [0, 2]]),
           [_gauss(2, 2, 3, 4, 2)]),
    OpCase("space_to_batch_nd_no_block", lambda x: tf.space_to_batch_nd(
        x, np.zeros(0, np.int32), np.zeros((0, 2), np.int32)), lambda x: x, [_gauss(2, 3)]),
    # TF needs the size of block_shape while building: the fed rows give it with a Reshape.
    OpCase("space_to_batch_nd_fed",
           lambda x, b, p: tf.space_to_batch_nd(x, tf.reshape(b, [2]), p),
           lambda x, b, p: _to_batch_ref(b.tolist(), p.tolist())(x),
           [_gauss(1, 4, 2, 1), lambda rng, dt: np.array([2, 1]), lambda rng, dt: _PADS],
           fixed_dtypes=(None, tf.int64, tf.int32)),
    OpCase("space_to_batch_nd_empty", lambda x: tf.space_to_batch_nd(x, [2], [[0, 0]]),
           _to_batch_ref([2], [[0, 0]]), [_gauss(0, 4, 1)]),
    OpCase("batch_to_space_nd", lambda x: tf.batch_to_space_nd(x, [2, 2], _CROPS),
           _to_space_nd_ref([2, 2], _CROPS), [_gauss(8, 2, 3, 1)], dtypes=REAL),
    OpCase("batch_to_space_nd_uncropped", lambda x: tf.batch_to_space_nd(
        x, [3, 1], [[0, 0], [0, 0]]), _to_space_nd_ref([3, 1], [[0, 0], [0, 0]]),
           [_iota(3, 2, 2, 2)]),
    OpCase("batch_to_space_nd_fed",
           lambda x, b, c: tf.batch_to_space_nd(x, tf.reshape(b, [2]), c),
           lambda x, b, c: _to_space_nd_ref(b.tolist(), c.tolist())(x),
           [_gauss(4, 1, 3), lambda rng, dt: np.array([2, 2]),
            lambda rng, dt: np.array([[0, 2], [1, 1]])],
           fixed_dtypes=(None, tf.int32, tf.int64)),
    OpCase("batch_to_space_nd_cropped_away", lambda x: tf.batch_to_space_nd(
        x, [2], [[1, 1]]), _to_space_nd_ref([2], [[1, 1]]), [_gauss(2, 1, 3)]),
    # --- the v1 wrappers
    OpCase("space_to_batch", lambda x: tf.space_to_batch(x, _PADS, 2),
           _to_batch_ref([2, 2], _PADS), [_gauss(1, 2, 3, 2)]),
    OpCase("space_to_batch_block_shape",
           lambda x: tf.space_to_batch(x, _PADS, block_shape=2),
           _to_batch_ref([2, 2], _PADS), [_gauss(1, 2, 3, 2)]),
    OpCase("batch_to_space", lambda x: tf.batch_to_space(x, _CROPS, 2),
           _to_space_nd_ref([2, 2], _CROPS), [_gauss(4, 2, 3, 2)]),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_op_types_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, None, 8])
        made = [
            (tf.space_to_depth(x, 2), "SpaceToDepth", [None, 2, None, 32]),
            (tf.depth_to_space(x, 2), "DepthToSpace", [None, 8, None, 2]),
            (tf.space_to_depth(tf.placeholder(tf.float32, [1, 3, 4, 6]), 2, data_format="NCHW"),
             "SpaceToDepth_1", [1, 12, 2, 3]),
            (tf.depth_to_space(tf.placeholder(tf.float32, [None, 4, 3, None]), 2),
             "DepthToSpace_1", [None, 8, 6, None]),
            (tf.space_to_batch_nd(tf.placeholder(tf.float32, [None, 4, 6, 3]), [2, 3],
                                  [[0, 0], [0, 0]]), "SpaceToBatchND", [None, 2, 2, 3]),
            (tf.space_to_batch_nd(tf.placeholder(tf.float32, [2, None, 6, 3]), [2, 3],
                                  [[0, 0], [0, 0]]), "SpaceToBatchND_1", [12, None, 2, 3]),
            (tf.space_to_batch_nd(tf.placeholder(tf.float32, [2, 4, 6, 3]),
                                  tf.placeholder(tf.int32, [2]), [[0, 0], [0, 0]]),
             "SpaceToBatchND_2", [None, None, None, 3]),
            (tf.space_to_batch_nd(tf.placeholder(tf.float32, [2, 4, 6, 3]), [2, 3],
                                  tf.placeholder(tf.int32, [2, 2])),
             "SpaceToBatchND_3", [12, None, None, 3]),
            (tf.batch_to_space_nd(tf.placeholder(tf.float32, [None, 2, 3, 1]), [2, 2],
                                  [[1, 0], [2, 1]]), "BatchToSpaceND", [None, 3, 3, 1]),
            (tf.batch_to_space_nd(tf.placeholder(tf.float32, [4, None, 3, 1]), [2, 2],
                                  [[1, 0], [2, 1]]), "BatchToSpaceND_1", [1, None, 3, 1]),
            (tf.space_to_batch(tf.placeholder(tf.float32), [[0, 0], [0, 0]], 2),
             "SpaceToBatchND_4", [None] * 4),
            (tf.batch_to_space(tf.placeholder(tf.float32), [[0, 0], [0, 0]], 2),
             "BatchToSpaceND_2", [None] * 4),
        ]
        for tensor, name, shape in made:
            assert (tensor.op.name, tensor.shape.as_list()) == (name, shape)
        s2b = tf.space_to_batch(x, [[0, 0], [0, 0]], block_size=2)
        assert s2b.op.type == "SpaceToBatchND" and s2b.op.inputs[1].dtype == tf.int64
        assert tf.space_to_batch_nd(tf.placeholder(tf.float32), [2], [[0, 0]]).shape.ndims \
            is None
        assert tf.space_to_depth(x, 2).op.get_attr("data_format") == b"NHWC"


def test_gradients_are_the_partner_ops():
    with tf.Graph().as_default():
        x = tf.constant(np.zeros((2, 4, 6, 4), np.float32))
        pairs = [(tf.space_to_depth(x, 2, data_format="NCHW"), "DepthToSpace"),
                 (tf.depth_to_space(x, 2), "SpaceToDepth"),
                 (tf.space_to_batch(x, [[0, 0], [0, 0]], 2), "BatchToSpaceND"),
                 (tf.batch_to_space_nd(x, [2, 1], [[0, 1], [0, 0]]), "SpaceToBatchND")]
        grads = [tf.gradients(y, x)[0] for y, _ in pairs]
        assert [g.op.type for g in grads] == [partner for _, partner in pairs]
        assert grads[0].op.get_attr("data_format") == b"NCHW"
        # The ND gradients reuse the forward op's block_shape and paddings (crops) tensors.
        assert [t.name for t in grads[2].op.inputs[1:]] == \
            [t.name for t in pairs[2][0].op.inputs[1:]]


@pytest.mark.parametrize("build,exc,match", [
    (lambda x: tf.space_to_depth(x, 1), ValueError,
     "Attr 'block_size' of 'SpaceToDepth' Op passed 1 less than minimum 2."),
    (lambda x: tf.depth_to_space(x, 0), ValueError,
     "Attr 'block_size' of 'DepthToSpace' Op passed 0 less than minimum 2."),
    (lambda x: tf.space_to_depth(x, 2, data_format="NHCW"), ValueError,
     "Attr 'data_format' of 'SpaceToDepth' Op passed string 'NHCW' not in: \"NHWC\", \"NCHW\", "
     "\"NCHW_VECT_C\"."),
    (lambda x: tf.space_to_depth(x, 2, data_format="NCHW_VECT_C"), ValueError, "qint8"),
    (lambda x: tf.space_to_depth(x, 3), ValueError,
     "Dimension size must be evenly divisible by 3 but is 2"),
    (lambda x: tf.space_to_depth(x[0], 2), ValueError, "Shape must be rank 4 but is rank 3"),
    (lambda x: tf.depth_to_space(x, 3), ValueError,
     "Dimension size must be evenly divisible by 9 but is 4"),
    (lambda x: tf.space_to_batch_nd(x, [3, 3], [[0, 0], [0, 0]]), ValueError,
     "Dimension size must be evenly divisible by 3 but is 2"),
    (lambda x: tf.space_to_batch_nd(x, [2, 2], [[-2, 0], [0, 0]]), ValueError,
     "paddings cannot be negative"),
    (lambda x: tf.space_to_batch_nd(x, [0, 2], [[0, 0], [0, 0]]), ValueError,
     "block_shape must be positive"),
    (lambda x: tf.space_to_batch_nd(x, [2, 2], [[0, 0]]), ValueError,
     r"Dimension 0 in both shapes must be equal, but are 1 and 2. Shapes are \[1,2\] and "
     r"\[2,2\]."),
    (lambda x: tf.space_to_batch_nd(x, [[2, 2]], [[0, 0], [0, 0]]), ValueError,
     "block_shape must have rank 1."),
    (lambda x: tf.space_to_batch_nd(x, tf.placeholder(tf.int32, [None]), [[0, 0]]),
     ValueError, "block_shape must have known size."),
    (lambda x: tf.space_to_batch_nd(x, [1, 1, 1, 1], [[0, 0]] * 4), ValueError,
     "Shape must be at least rank 5 but is rank 4"),
    (lambda x: tf.batch_to_space_nd(x, [2, 1], [[0, 0], [0, 0]]), ValueError,
     "Dimension size must be evenly divisible by 2 but is 1"),
    (lambda x: tf.batch_to_space_nd(tf.concat([x] * 4, 0), [2, 2], [[3, 2], [0, 0]]),
     ValueError, "Negative dimension size caused by subtracting 2 from 1"),
    (lambda x: tf.batch_to_space_nd(x, [1, 1], [[-1, 0], [0, 0]]), ValueError,
     "crops cannot be negative"),
    (lambda x: tf.space_to_batch(x[0], [[0, 0], [0, 0]], 2), ValueError,
     r"Shape \(8, 1, 2\) must have rank 4"),
    (lambda x: tf.space_to_batch(x, [[0, 0], [0, 0]], 2, block_shape=2), ValueError,
     "Cannot specify both 'block_size' and 'block_shape'."),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        x = tf.constant(np.zeros((1, 2, 2, 4), np.float32))
        with pytest.raises(exc, match=match):
            build(x)


_Y = np.zeros((4, 2, 3, 1), np.float32)


@pytest.mark.parametrize("build,feeds,match", [
    (lambda x: tf.space_to_depth(x, 3), [np.zeros((1, 2, 2, 4), np.float32)],
     "Image width 2 and height 2 should be divisible by block_size: 3"),
    (lambda x: tf.space_to_depth(x, 2), [np.zeros((2, 2, 4), np.float32)],
     "Input rank should be 4 instead of 3"),
    (lambda x: tf.depth_to_space(x, 2), [np.zeros((1, 1, 1, 6), np.float32)],
     "Input depth dimension 6 should be divisible by: 4"),
    (lambda x: tf.depth_to_space(x, 2), [np.zeros((1, 1, 4), np.float32)],
     "Input rank should be: 4 instead of: 3"),
    (lambda x: tf.space_to_batch_nd(x, [3, 3], [[0, 0], [0, 0]]), [_Y],
     r"padded_shape\[0\]=2 is not divisible by block_shape\[0\]=3"),
    (lambda p: tf.space_to_batch_nd(_Y, [2, 2], p), [np.int32([[-2, 0], [0, 0]])],
     "Paddings must be non-negative"),
    (lambda p: tf.space_to_batch_nd(_Y, [2, 2], p), [np.int32([[0, 0]])],
     r"paddings should have shape \[2, 2\] instead of \[1,2\]"),
    (lambda x: tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]),
     [np.zeros((2, 4), np.float32)], "input rank should be >= 3 instead of 2"),
    (lambda b: tf.space_to_batch_nd(_Y, b, [[0, 0], [0, 0]]), [np.int32([0, 2])],
     "Product of block sizes must be positive, got 0"),
    (lambda x: tf.batch_to_space_nd(x, [3, 2], [[0, 0], [0, 0]]), [_Y],
     r"Input batch dimension \(4\) is not divisible by product of block sizes \(6\)"),
    (lambda c: tf.batch_to_space_nd(_Y, [2, 2], c), [np.int32([[3, 2], [0, 0]])],
     r"cropped_shape\[0\]=-1 must be non-negative"),
    (lambda c: tf.batch_to_space_nd(_Y, [2, 2], c), [np.int32([[-1, 0], [0, 0]])],
     "Crops must be non-negative"),
    (lambda c: tf.batch_to_space_nd(_Y, [2, 2], c), [np.int32([[0, 0]])],
     r"crops should have shape \[2, 2\] instead of \[1,2\]"),
    (lambda b: tf.batch_to_space_nd(_Y, b, [[0, 0], [0, 0]]), [np.int32([-1, -1])],
     r"Block sizes must be positive, got \[-1,-1\]"),
])
def test_runtime_errors(build, feeds, match):
    with tf.Graph().as_default():
        # A fed block_shape needs a static size; everything else is fed with unknown shape.
        holders = [tf.placeholder(tf.as_dtype(f.dtype), f.shape if f.ndim == 1 else None)
                   for f in feeds]
        tensor = build(*holders)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                sess.run(tensor, dict(zip(holders, feeds)))


def test_batch_ops_have_no_kernel_for_strings():
    with tf.Graph().as_default():
        y = tf.space_to_batch_nd(tf.constant([[b"a", b"b"]]), [2], [[0, 0]])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.OpError):
                sess.run(y)
