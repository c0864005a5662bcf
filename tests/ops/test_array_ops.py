"""Identity, shape, shape-manipulation and creation ops: forward against NumPy, shape functions
against the kernels, gradients against central differences, TF's construction-time and run-time
errors, default names and op types, static shapes with unknown dimensions, static values, and
the kernels' aliasing contract. (More on gradients: test_array_gradients.py.)"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.kernels.registry import find_kernel
from tensorweave.ops import array_creation_ops, array_ops, array_tile_pad_ops
from tensorweave.testing.op_case import (
    OpCase,
    check_forward,
    check_gradient,
    check_shapes,
    parametrize,
)

ALL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.bool)
NUM = (tf.float32, tf.float64, tf.int32, tf.int64)
FLOAT = (tf.float32, tf.float64)
I32 = (tf.int32,)


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 3).astype(dt)


def _arange(*shape):
    return lambda rng, dt: np.arange(int(np.prod(shape))).reshape(shape).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


_WORDS = np.array([[b"a", b"bb"], [b"", b"d"]], dtype=object)
_C64 = (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3)


def _shape_op(x):
    return apply_op(array_ops.Shape, [x])


def _size_op(x):
    return apply_op(array_ops.Size, [x], {"out_type": tf.int64})


def _rank_op(x):
    return apply_op(array_ops.Rank, [x])


def _pad_ref(mode):
    return lambda x: np.pad(x, ((1, 0), (0, 2)), mode=mode)


_MIRROR_PADS = [[1, 2], [2, 0]]


def _mirror_pad_grad(mode):
    """MirrorPadGrad of a (7, 7) gradient of MirrorPad([[1, 2], [2, 0]]) of a (4, 5) input."""
    def build(g):
        return apply_op(array_tile_pad_ops.MirrorPadGrad, [g, _MIRROR_PADS], {"mode": mode})

    def ref(g):  # each padded entry's gradient goes to the input entry it copies
        source = np.pad(np.arange(20).reshape(4, 5), _MIRROR_PADS, mode=mode.lower())
        out = np.bincount(source.ravel(), weights=g.ravel().astype(np.float64), minlength=20)
        return out.reshape(4, 5).astype(g.dtype)
    return build, ref


CASES = [
    # --- Identity / IdentityN / StopGradient
    OpCase("identity", tf.identity, lambda x: x, [_randn(2, 3)], dtypes=ALL),
    OpCase("identity_string", tf.identity, lambda x: x, [_WORDS], dtypes=(tf.string,)),
    OpCase("identity_empty", tf.identity, lambda x: x, [_randn(0, 3)]),
    OpCase("identity_n", lambda x, y: tf.identity_n([x, y]), lambda x, y: [x, y],
           [_randn(2), _value([[1, 2]])], fixed_dtypes=(None, tf.int64), dtypes=ALL),
    OpCase("stop_gradient", tf.stop_gradient, lambda x: x, [_randn(3, 1)], dtypes=ALL,
           grad=False),
    # --- Shape / ShapeN / Size / Rank
    OpCase("shape_op", _shape_op, lambda x: np.array(x.shape, np.int32), [_randn(2, 0, 3)],
           dtypes=ALL, grad=False),
    OpCase("shape_const", lambda x: tf.shape(x, out_type=tf.int64),
           lambda x: np.array(x.shape, np.int64), [_randn(4, 1)], grad=False),
    OpCase("shape_n", lambda x, y: tf.shape_n([x, y]),
           lambda x, y: [np.array(x.shape, np.int32), np.array(y.shape, np.int32)],
           [_randn(2, 3), _randn(5)], dtypes=NUM, grad=False),
    OpCase("size_op", _size_op, lambda x: np.int64(x.size), [_randn(2, 3, 4)], dtypes=ALL,
           grad=False),
    OpCase("size", tf.size, lambda x: np.int32(x.size), [_randn(0, 3)], grad=False),
    OpCase("rank_op", _rank_op, lambda x: np.int32(x.ndim), [_randn(2, 1, 1)], dtypes=ALL,
           grad=False),
    OpCase("rank_scalar", tf.rank, lambda x: np.int32(0), [_randn()], grad=False),
    # --- Reshape
    OpCase("reshape_infer", lambda x: tf.reshape(x, [-1, 4]), lambda x: x.reshape(-1, 4),
           [_randn(24)], dtypes=ALL),
    OpCase("reshape_middle", lambda x: tf.reshape(x, [2, -1, 3]),
           lambda x: x.reshape(2, -1, 3), [_randn(4, 6)]),
    OpCase("reshape_to_scalar", lambda x: tf.reshape(x, []), lambda x: x.reshape(()),
           [_randn(1, 1)], dtypes=NUM),
    OpCase("reshape_scalar_up", lambda x: tf.reshape(x, [1, 1, 1]),
           lambda x: x.reshape(1, 1, 1), [_randn()]),
    OpCase("reshape_fed_shape", lambda x, s: tf.reshape(x, s), lambda x, s: x.reshape(s),
           [_randn(3, 4), _value([2, 6])], fixed_dtypes=(None, tf.int64)),
    OpCase("reshape_empty_infer", lambda x: tf.reshape(x, [-1, 0]), lambda x: x.reshape(3, 0),
           [_randn(0, 3)]),
    OpCase("reshape_strings", lambda x: tf.reshape(x, [-1]), lambda x: x.reshape(-1),
           [_WORDS], dtypes=(tf.string,)),
    # --- ExpandDims / Squeeze
    OpCase("expand_dims_0", lambda x: tf.expand_dims(x, 0), lambda x: x[None],
           [_randn(2, 3)], dtypes=ALL),
    OpCase("expand_dims_neg", lambda x: tf.expand_dims(x, -1), lambda x: x[..., None],
           [_randn(2, 3)]),
    OpCase("expand_dims_middle_fed", lambda x, a: tf.expand_dims(x, a),
           lambda x, a: np.expand_dims(x, int(a)), [_randn(2, 3), _value(-2)],
           fixed_dtypes=(None, tf.int64)),
    OpCase("expand_dims_scalar", lambda x: tf.expand_dims(x, axis=[0]), lambda x: x[None],
           [_randn()]),
    OpCase("squeeze_all", tf.squeeze, np.squeeze, [_randn(1, 3, 1, 2)], dtypes=ALL),
    OpCase("squeeze_listed", lambda x: tf.squeeze(x, [0, -2]), lambda x: x[0, :, 0],
           [_randn(1, 3, 1, 2)]),
    OpCase("squeeze_scalar_axis", lambda x: tf.squeeze(x, axis=1), lambda x: x[:, 0],
           [_randn(0, 1)]),
    # --- Transpose / ConjugateTranspose
    OpCase("transpose_default", tf.transpose, np.transpose, [_randn(2, 3, 4)], dtypes=ALL),
    OpCase("transpose_perm", lambda x: tf.transpose(x, [2, 0, 1]),
           lambda x: x.transpose(2, 0, 1), [_randn(2, 3, 4)]),
    OpCase("transpose_fed_perm", lambda x, p: tf.transpose(x, p),
           lambda x, p: x.transpose(p), [_randn(2, 3, 4), _value([1, 2, 0])],
           fixed_dtypes=(None, tf.int64)),
    OpCase("transpose_conjugate", lambda x: tf.transpose(x, conjugate=True),
           lambda x: x.T.conj(), [_C64], dtypes=(tf.complex64, tf.complex128)),
    OpCase("transpose_conjugate_real", lambda x: tf.transpose(x, conjugate=True),
           lambda x: x.T, [_randn(2, 3)]),
    OpCase("conjugate_transpose_op",
           lambda x: apply_op(array_ops.ConjugateTranspose, [x, [1, 0]]), lambda x: x.T.conj(),
           [_C64], dtypes=(tf.complex64,)),
    # --- Tile
    OpCase("tile", lambda x: tf.tile(x, [2, 1]), lambda x: np.tile(x, (2, 1)),
           [_randn(2, 3)], dtypes=ALL),
    OpCase("tile_zero", lambda x: tf.tile(x, [1, 0, 3]), lambda x: np.tile(x, (1, 0, 3)),
           [_randn(2, 1, 2)]),
    OpCase("tile_fed", lambda x, m: tf.tile(x, m), lambda x, m: np.tile(x, m),
           [_randn(2, 3), _value([3, 2])], fixed_dtypes=(None, tf.int64)),
    # --- Pad / PadV2 / MirrorPad
    OpCase("pad", lambda x: tf.pad(x, [[1, 0], [0, 2]]), _pad_ref("constant"),
           [_randn(3, 4)], dtypes=ALL),
    OpCase("pad_strings", lambda x: tf.pad(x, [[1, 0], [0, 2]]),
           lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=b""), [_WORDS],
           dtypes=(tf.string,)),
    OpCase("pad_v2", lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=3),
           lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=3), [_randn(3, 4)],
           dtypes=NUM),
    OpCase("pad_reflect", lambda x: tf.pad(x, [[1, 0], [0, 2]], "reflect"),
           _pad_ref("reflect"), [_randn(3, 4)], dtypes=NUM),
    OpCase("pad_symmetric", lambda x: tf.pad(x, [[1, 0], [0, 2]], mode="Symmetric"),
           _pad_ref("symmetric"), [_randn(3, 2)], dtypes=NUM),
    OpCase("pad_fed_paddings", lambda x, p: tf.pad(x, p), lambda x, p: np.pad(x, p),
           [_randn(2, 2), _value([[0, 1], [2, 0]])], fixed_dtypes=(None, tf.int64)),
    OpCase("pad_scalar", lambda x: tf.pad(x, np.zeros((0, 2), np.int32)), lambda x: x,
           [_randn()]),
    OpCase("mirror_pad_grad_reflect", *_mirror_pad_grad("REFLECT"), [_randn(7, 7)],
           dtypes=NUM),
    OpCase("mirror_pad_grad_symmetric", *_mirror_pad_grad("SYMMETRIC"), [_randn(7, 7)]),
    # --- ReverseV2
    OpCase("reverse", lambda x: tf.reverse(x, [1]), lambda x: x[:, ::-1], [_randn(2, 3)],
           dtypes=ALL),
    OpCase("reverse_many", lambda x: tf.reverse_v2(x, [0, -1]), lambda x: x[::-1, :, ::-1],
           [_randn(2, 3, 4)]),
    OpCase("reverse_none", lambda x: tf.reverse(x, np.zeros([0], np.int64)), lambda x: x,
           [_randn(2, 3)]),
    OpCase("reverse_strings", lambda x: tf.reverse(x, [0]), lambda x: x[::-1], [_WORDS],
           dtypes=(tf.string,)),
    # --- ReverseSequence
    OpCase("reverse_sequence", lambda x: tf.reverse_sequence(x, [2, 0, 4], seq_axis=1),
           lambda x: np.stack([np.concatenate([r[:n][::-1], r[n:]]) for r, n in
                               zip(x, [2, 0, 4])]), [_randn(3, 4, 2)], dtypes=ALL),
    OpCase("reverse_sequence_batch_last",
           lambda x, n: tf.reverse_sequence(x, n, seq_axis=0, batch_axis=2),
           lambda x, n: np.stack([np.concatenate([x[:k, :, b][::-1], x[k:, :, b]])
                                  for b, k in enumerate(n)], 2),
           [_randn(4, 2, 3), _value([1, 4, 3])], fixed_dtypes=(None, tf.int64)),
]

CREATION_CASES = [
    # --- Fill / zeros / ones
    OpCase("fill_value", lambda v: tf.fill([2, 3], v), lambda v: np.full((2, 3), v),
           [_randn()], dtypes=ALL),
    OpCase("fill_string", lambda v: tf.fill([2], v), lambda v: np.full(2, v, object),
           [np.array(b"ab", object)], dtypes=(tf.string,)),
    OpCase("fill_fed_dims", lambda d: tf.fill(d, 1.5), lambda d: np.full(d, 1.5, np.float32),
           [_value([3, 0, 2])], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("zeros_of_shape", lambda x: tf.zeros(tf.shape(x), tf.int32),
           lambda x: np.zeros(x.shape, np.int32), [_randn(2, 3)], dtypes=ALL, grad=False),
    OpCase("ones_of_shape", lambda x: tf.ones(tf.shape(x)), lambda x: np.ones(x.shape,
           np.float32), [_randn(4, 1)], dtypes=NUM, grad=False),
    OpCase("ones_large", lambda x: tf.ones([1000], x.dtype) + x,
           lambda x: np.ones(1000, x.dtype) + x, [_randn()]),
    # --- ZerosLike / OnesLike
    OpCase("zeros_like", tf.zeros_like, np.zeros_like, [_randn(2, 3)], dtypes=ALL,
           grad=False),
    OpCase("zeros_like_strings", tf.zeros_like, lambda x: np.full(x.shape, b"", object),
           [_WORDS], dtypes=(tf.string,), grad=False),
    OpCase("zeros_like_dtype", lambda x: tf.zeros_like(x, dtype=tf.int64),
           lambda x: np.zeros(x.shape, np.int64), [_randn(2, 3)], grad=False),
    OpCase("ones_like", tf.ones_like, np.ones_like, [_randn(3)], dtypes=ALL, grad=False),
    OpCase("ones_like_dtype", lambda x: tf.ones_like(x, tf.float64),
           lambda x: np.ones(x.shape), [_randn(3)], dtypes=(tf.int32,), grad=False),
    OpCase("ones_like_op", lambda x: apply_op(array_creation_ops.OnesLike, [x]),
           np.ones_like, [_randn(2, 0)], dtypes=ALL, grad=False),
    OpCase("zeros_like_op", lambda x: apply_op(array_creation_ops.ZerosLike, [x]),
           np.zeros_like, [_randn(2, 1)], dtypes=ALL, grad=False),
    # --- Range / LinSpace
    OpCase("range", lambda a, b, c: tf.range(a, b, c), lambda a, b, c: np.arange(a, b, c),
           [_value(2), _value(11), _value(3)], dtypes=NUM, grad=False),
    OpCase("range_down", lambda a, b, c: tf.range(a, b, c), lambda a, b, c: np.arange(a, b, c),
           [_value(5), _value(-3), _value(-2)], dtypes=NUM, grad=False),
    OpCase("range_empty", lambda a: tf.range(a, a), lambda a: np.arange(a, a), [_value(4)],
           dtypes=NUM, grad=False),
    OpCase("range_float_step", lambda a, b: tf.range(a, b, 0.25),
           lambda a, b: np.arange(a, b, 0.25, dtype=np.float32), [_value(-1), _value(1.1)],
           grad=False),
    OpCase("linspace", lambda a, b: tf.linspace(a, b, 7), lambda a, b: np.linspace(a, b, 7),
           [_value(-1.5), _value(2)], dtypes=FLOAT, grad=False),
    OpCase("linspace_one", lambda a, b: tf.lin_space(a, b, 1), lambda a, b: np.array([a]),
           [_value(3), _value(9)], grad=False),
    # --- meshgrid (composite)
    OpCase("meshgrid_xy", lambda x, y: tf.meshgrid(x, y), lambda x, y: np.meshgrid(x, y),
           [_randn(3), _randn(4)], dtypes=NUM),
    OpCase("meshgrid_ij", lambda x, y, z: tf.meshgrid(x, y, z, indexing="ij"),
           lambda x, y, z: np.meshgrid(x, y, z, indexing="ij"),
           [_randn(2), _randn(3), _randn(4)]),
    OpCase("meshgrid_xy_3d", lambda x, y, z: tf.meshgrid(x, y, z),
           lambda x, y, z: np.meshgrid(x, y, z), [_randn(2), _randn(3), _randn(1)]),
]


@parametrize(CASES + CREATION_CASES)
def test_forward(case, dtype):
    check_forward(case, dtype)


@parametrize(CASES + CREATION_CASES)
def test_shapes(case, dtype):
    check_shapes(case, dtype)


# Rows of floating dtypes whose op is differentiable: central differences in float64.
@pytest.mark.parametrize("case", [c for c in CASES + CREATION_CASES if c.grad and
                                  any(d.is_floating for d in c.dtypes)], ids=str)
def test_gradient(case):
    check_gradient(case)


# --- default names, op types, dtypes -------------------------------------------------------------
def test_default_op_names_types_and_dtypes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        c = tf.constant(np.ones((2, 3), np.float32))
        made = [
            (tf.identity(x), "Identity", "Identity", tf.float32),
            (tf.identity_n([x, c])[1], "IdentityN", "IdentityN", tf.float32),
            (tf.stop_gradient(x), "StopGradient", "StopGradient", tf.float32),
            (tf.zeros([2, 3]), "zeros", "Const", tf.float32),
            (tf.zeros([2000, 3000]), "zeros_1", "Fill", tf.float32),
            (tf.zeros(tf.shape(x)), "zeros_2", "Fill", tf.float32),
            (tf.ones([2], tf.int32, name="o"), "o", "Const", tf.int32),
            (tf.fill([2, 2], 9), "Fill", "Fill", tf.int32),
            (tf.zeros_like(x), "zeros_like", "ZerosLike", tf.float32),
            (tf.zeros_like(c), "zeros_like_1", "Const", tf.float32),
            (tf.zeros_like(x, dtype=tf.int32), "zeros_like_2", "Fill", tf.int32),
            (tf.ones_like(x), "ones_like", "Fill", tf.float32),
            (tf.range(5), "range", "Range", tf.int32),
            (tf.range(1.0, 5), "range_1", "Range", tf.float32),
            (tf.linspace(0.0, 1.0, 5), "LinSpace", "LinSpace", tf.float32),
            (tf.shape(x), "Shape_1", "Shape", tf.int32),
            (tf.shape(c, out_type=tf.int64), "Shape_2", "Const", tf.int64),
            (tf.shape_n([x, c])[0], "ShapeN", "ShapeN", tf.int32),
            (tf.size(x), "Size", "Size", tf.int32),
            (tf.size(c), "Size_1", "Const", tf.int32),
            (tf.rank(x), "Rank", "Const", tf.int32),
            (tf.reshape(x, [-1]), "Reshape", "Reshape", tf.float32),
            (tf.expand_dims(x, 1), "ExpandDims", "ExpandDims", tf.float32),
            (tf.squeeze(x), "Squeeze", "Squeeze", tf.float32),
            (tf.transpose(x), "transpose", "Transpose", tf.float32),
            (tf.tile(x, [1, 2]), "Tile", "Tile", tf.float32),
            (tf.pad(x, [[1, 0], [0, 0]]), "Pad", "Pad", tf.float32),
            (tf.pad(x, [[1, 0], [0, 0]], constant_values=1.0), "PadV2", "PadV2", tf.float32),
            (tf.pad(x, [[1, 0], [0, 0]], "REFLECT"), "MirrorPad", "MirrorPad", tf.float32),
            (tf.reverse(x, [1]), "ReverseV2", "ReverseV2", tf.float32),
            (tf.meshgrid([1, 2], [3, 4, 5])[0], "meshgrid/mul", "Mul", tf.int32),
        ]
        for tensor, name, op_type, dtype in made:
            assert (tensor.op.name, tensor.op.type, tensor.dtype) == (name, op_type, dtype)
        assert tf.transpose(x).op.inputs[1].op.name == "transpose_1/perm"
        assert tf.pad(x, [[0, 0], [0, 0]], "reflect").op.get_attr("mode") == b"REFLECT"
        assert tf.shape(x).op.get_attr("out_type") == tf.int32
        assert tf.reshape(x, np.array([-1], np.int64)).op.get_attr("Tshape") == tf.int64
        assert tf.reverse_v2 is tf.reverse and tf.lin_space is tf.linspace
        assert tf.newaxis is None


@pytest.mark.parametrize("args,kwargs,dtype", [
    ((5,), {}, tf.int32),
    ((2, 11, 3), {}, tf.int32),
    ((1.0, 5), {}, tf.float32),
    ((1, 5.5), {}, tf.float32),
    ((np.int64(5),), {}, tf.int64),
    ((0, np.float64(1), 0.5), {}, tf.float64),
    ((5,), {"dtype": tf.float64}, tf.float64),
    ((5,), {"dtype": tf.int64}, tf.int64),
])
def test_range_dtype_inference(args, kwargs, dtype):
    with tf.Graph().as_default():
        r = tf.range(*args, **kwargs)
        assert r.dtype == dtype
        assert all(t.dtype == dtype for t in r.op.inputs)
        with tf.Session() as sess:
            got = sess.run(r)
        start, limit, delta = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
        np.testing.assert_allclose(got, np.arange(start, limit, delta))
        assert got.dtype == dtype.as_numpy_dtype


def test_range_casts_tensor_arguments_to_the_widest_dtype():
    with tf.Graph().as_default():
        r = tf.range(tf.constant(2, tf.int64), 10.0, 3)
        assert r.dtype == tf.float32
        assert [t.op.type for t in r.op.inputs] == ["Cast", "Const", "Const"]
        assert [t.op.name for t in r.op.inputs[1:]] == ["range/limit", "range/delta"]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(r), [2.0, 5.0, 8.0])


def test_range_matches_tensorflow_float_rounding():
    """Element i is start + i * delta in float32 (not accumulated, not float64)."""
    with tf.Graph().as_default():
        r = tf.range(0.3, 100.7, 0.7)
        with tf.Session() as sess:
            got = sess.run(r)
    f32 = np.float32
    assert got.shape == (144,)
    np.testing.assert_array_equal(got, f32(0.3) + np.arange(144, dtype=f32) * f32(0.7))


def test_zeros_and_ones_values_and_dtypes():
    with tf.Graph().as_default():
        cases = [
            (tf.zeros([2, 3], tf.bool), np.zeros((2, 3), bool)),
            (tf.ones([2], tf.bool), np.ones(2, bool)),
            (tf.zeros([2], tf.string), np.array([b"", b""], object)),
            (tf.ones((2, 1), tf.complex64), np.ones((2, 1), np.complex64)),
            (tf.zeros(3), np.zeros(3, np.float32)),
            (tf.zeros(tf.TensorShape([2, 1])), np.zeros((2, 1), np.float32)),
            (tf.zeros([]), np.float32(0)),
            (tf.ones([0, 5]), np.ones((0, 5), np.float32)),
            (tf.ones([1000, 2], tf.int64), np.ones((1000, 2), np.int64)),
            (tf.zeros(tf.constant(3)), np.zeros(3, np.float32)),
        ]
        with tf.Session() as sess:
            got = sess.run([t for t, _ in cases])
    for (tensor, expected), value in zip(cases, got):
        assert tensor.shape.as_list() == list(np.shape(expected))
        assert value.dtype == expected.dtype and value.shape == np.shape(expected)
        np.testing.assert_array_equal(value, expected)


def test_zeros_follow_a_fed_batch_size():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        z = tf.zeros([tf.shape(x)[0], 3])
        o = tf.ones_like(x, dtype=tf.int32)
        assert z.shape.as_list() == [None, 3] and o.shape.as_list() == [None, 2]
        with tf.Session() as sess:
            for n in (1, 4):
                zv, ov = sess.run([z, o], {x: np.zeros((n, 2))})
                np.testing.assert_array_equal(zv, np.zeros((n, 3), np.float32))
                np.testing.assert_array_equal(ov, np.ones((n, 2), np.int32))


# --- construction-time errors --------------------------------------------------------------------
def _t24():
    return tf.constant(np.arange(24, dtype=np.float32))


def _x():
    return tf.placeholder(tf.float32, [None, 6])


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.reshape(_t24(), [5, -1]), ValueError, "evenly divisible by 5 but is 24"),
    (lambda: tf.reverse_sequence(tf.zeros([4, 6]), [1, 1, 1], seq_axis=1), ValueError,
     "Dimensions must be equal, but are 4 and 3"),
    (lambda: tf.reverse_sequence(tf.zeros([4, 6]), [1] * 4, seq_axis=2), ValueError,
     "seq_dim must be < input rank: 2 vs. 2"),
    (lambda: tf.reshape(_t24(), [5, 5]), ValueError,
     r"Cannot reshape a tensor with 24 elements to shape \[5,5\] \(25 elements\)"),
    (lambda: tf.reshape(_t24(), [-2, 3]), ValueError, "Invalid value in tensor used for shape"),
    (lambda: tf.reshape(_t24(), [[2, 12]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.reshape(_x(), [5, 4]), ValueError, "evenly divisible by 6 but is 20"),
    (lambda: tf.squeeze(_x(), [1]), ValueError,
     r"Can not squeeze dim\[1\], expected a dimension of 1, got 6"),
    (lambda: tf.squeeze(_x(), [2]), ValueError, r"squeeze_dims\[0\] not in \[-2,2\)"),
    (lambda: tf.squeeze(_x(), axis=[0], squeeze_dims=[0]), ValueError, "both"),
    (lambda: tf.expand_dims(_x(), 3), ValueError, r"dim 3 not in the interval \[-3, 2\]"),
    (lambda: tf.expand_dims(_x(), [1, 2]), ValueError, "must be a tensor with a single value"),
    (lambda: tf.expand_dims(_x()), ValueError, "Must specify an axis"),
    (lambda: tf.transpose(_x(), [0]), ValueError, "Dimension must be 2 but is 1"),
    (lambda: tf.transpose(_x(), [0, 2]), ValueError, "perm dim 2 is out of range"),
    (lambda: tf.tile(_x(), [2]), ValueError, "Shape must be rank 2 but is rank 1"),
    (lambda: tf.tile(_x(), [[2, 1]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.pad(_x(), [[1, 0]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.pad(_x(), [[-1, 0], [0, 0]]), ValueError, "Paddings must be non-negative"),
    (lambda: tf.pad(_x(), [[1, 0], [0, 0]], "wrap"), ValueError, "CONSTANT"),
    (lambda: tf.reverse(_x(), [2]), ValueError, r"'axis'\[0\] = 2 is out of valid range"),
    (lambda: tf.reverse(_x(), [0, -2]), ValueError, "axis 0 specified more than once"),
    (lambda: tf.reverse(_x(), 1), ValueError, "Shape must be rank 1 but is rank 0"),
    (lambda: tf.fill([2, -1], 1.0), ValueError, "Fill dimensions must be >= 0"),
    (lambda: tf.fill([2], [1.0, 2.0]), ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: tf.fill([2.5], 1.0), TypeError, "not in list of allowed values"),
    (lambda: tf.zeros([-1, 2]), ValueError, "Fill dimensions must be >= 0"),
    (lambda: tf.zeros([None, 2]), TypeError, "int32"),
    (lambda: tf.zeros(tf.TensorShape([None, 2])), ValueError, "partially known"),
    (lambda: tf.ones([2], tf.string), TypeError, "string"),
    (lambda: tf.range(1, 5, 0), ValueError, "Requires delta != 0"),
    (lambda: tf.range(5, 1), ValueError, "Requires start <= limit when delta > 0: 5/1"),
    (lambda: tf.range(1, 5, -1), ValueError, "Requires start >= limit when delta < 0: 1/5"),
    (lambda: tf.range(tf.placeholder(tf.int32, [2])), ValueError, "rank 0 but is rank 1"),
    (lambda: tf.range("a"), TypeError, "tf.range"),
    (lambda: tf.linspace(0.0, 1.0, 0), ValueError, "Requires num > 0: 0"),
    (lambda: tf.linspace(0, 1, 3), TypeError, "not in list of allowed values"),
    (lambda: tf.ones_like(tf.constant(["a"])), TypeError, "string"),
    (lambda: tf.meshgrid([1], [2], indexing="yx"), ValueError, "indexing"),
    (lambda: tf.meshgrid([1], [2], sparse=True), TypeError, "sparse"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


# TF materializes a constant shape input before rerunning the shape function; an entry below -1
# fails there, so its message carries no node text (texts from TF 2.21). A packed negative scalar
# is only an unknown dim, so reshape accepts it and Fill's own check reports it.
@pytest.mark.parametrize("build,text", [
    (lambda: tf.fill([2, -3], 1.0), "Invalid value in tensor used for shape: -3"),
    (lambda: tf.zeros([2, -3]), "Invalid value in tensor used for shape: -3"),
    (lambda: tf.ones(tf.stack([2, -3])), "Invalid value in tensor used for shape: -3"),
    (lambda: tf.zeros([-3]), "Invalid value in tensor used for shape: -3"),
    (lambda: tf.broadcast_to(1.0, [2, -3]), "Invalid value in tensor used for shape: -3"),
    (lambda: tf.reshape(_t24(), [-2, 3]), "Invalid value in tensor used for shape: -2"),
    (lambda: tf.slice(tf.zeros([4, 4]), [0, 0], [2, -3]),
     "Invalid value in tensor used for shape: -3"),
    (lambda: tf.fill(tf.stack([tf.constant(2), tf.constant(-3)]), 1.0),
     "Fill dimensions must be >= 0 for '{{node Fill}} = Fill[T=DT_FLOAT, index_type=DT_INT32]"
     "(stack, Fill/value)' with input shapes: [2], [] and with input tensors computed as "
     "partial shapes: input[0] = [2,?]."),
])
def test_invalid_shape_tensor_errors_match_tf(build, text):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
    assert str(info.value) == text


def test_reshape_to_packed_negative_scalar_is_an_unknown_dim():
    with tf.Graph().as_default():
        out = tf.reshape(_t24(), tf.stack([tf.constant(-2), tf.constant(3)]))
    assert out.shape.as_list() == [8, 3]


def test_range_zero_delta_reason_matches_tf():
    """TF 2.21's shape function omits the value that its kernel's message adds."""
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            tf.range(0, 10, 0)
    assert str(info.value).startswith(
        "Requires delta != 0 for '{{node range}} = Range[Tidx=DT_INT32](range/start, "
        "range/limit, range/delta)'")


def test_reshape_to_empty_list_names_its_shape_like_tf():
    """TF converts [] once unpreferred (float32, not an allowed Tshape), leaves that constant
    unused and converts it again as int32: both live in the op's scope."""
    with tf.Graph().as_default() as g:
        y = tf.reshape(tf.constant([1.0]), [])
        assert [op.name for op in g.get_operations()] == [
            "Const", "Reshape/shape", "Reshape/shape_1", "Reshape"]
        assert y.op.inputs[1].op.name == "Reshape/shape_1"
        assert y.op.get_attr("Tshape") == tf.int32 and y.shape.as_list() == []


# --- run-time errors -----------------------------------------------------------------------------
def _fed(build, *feeds):
    """Builds with placeholders of unknown shape fed `feeds`; returns (tensor, feed_dict)."""
    holders = [tf.placeholder(tf.as_dtype(np.asarray(f).dtype)) for f in feeds]
    return build(*holders), dict(zip(holders, feeds))


_F = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("build,feeds,match", [
    (lambda x: tf.reverse_sequence(x, [3, 1], seq_axis=1), [np.zeros((2, 2))],
     r"seq_lens\(0\) > input.dims\(1\)"),
    (lambda x: tf.reverse_sequence(x, [1, -1], seq_axis=1), [np.zeros((2, 2))],
     r"seq_lens\(1\) < 0"),
    (lambda x, n: tf.reverse_sequence(x, n, seq_axis=1), [np.zeros((2, 2)), np.ones(3, np.int64)],
     r"Length of seq_lengths != input.dims\(0\), \(3 vs. 2\)"),
    (lambda x: tf.reshape(x, [-1, 4]), [np.zeros((5, 6), np.float32)],
     "tensor with 30 values, but the requested shape requires a multiple of 4"),
    (lambda x, s: tf.reshape(x, s), [np.zeros(6), np.array([4, 2], np.int32)],
     "tensor with 6 values, but the requested shape has 8"),
    (lambda x, s: tf.reshape(x, s), [np.zeros(6), np.array([-1, -1], np.int32)],
     "Only one input size may be -1, not both 0 and 1"),
    (lambda x, s: tf.reshape(x, s), [np.zeros(6), np.array([-3, 2], np.int32)],
     "Size 0 must be non-negative, not -3"),
    (lambda x, s: tf.reshape(x, s), [np.zeros(6), np.array([[6]], np.int32)],
     r"sizes input must be 1-D, not \[1,1\]"),
    (lambda x: tf.squeeze(x, [1]), [_F], r"Can not squeeze dim\[1\], expected a dimension of 1"),
    (lambda x: tf.squeeze(x, [3]), [_F], "Tried to squeeze dim index 3 for tensor with 2"),
    (lambda x, a: tf.expand_dims(x, a), [_F, np.int32(4)],
     "Tried to expand dim index 4 for tensor with 2 dimensions"),
    (lambda x, a: tf.expand_dims(x, a), [_F, np.array([1, 2], np.int32)],
     "'dim' must be a tensor with a single value"),
    (lambda x, p: tf.transpose(x, p), [_F, np.array([0, 0], np.int32)],
     r"1 is missing from \{0,0\}"),
    (lambda x, p: tf.transpose(x, p), [_F, np.array([0, 2], np.int32)],
     r"2 is out of range \[0 .. 2\)"),
    (lambda x, p: tf.transpose(x, p), [_F, np.array([0], np.int32)],
     "transpose expects a vector of size 2. But input.1. is a vector of size 1"),
    (lambda x, m: tf.tile(x, m), [_F, np.array([2, -1], np.int32)],
     r"Expected multiples\[1\] >= 0, but got -1"),
    (lambda x, m: tf.tile(x, m), [_F, np.array([2], np.int32)],
     "multiples argument to be a vector of length 2 but got length 1"),
    (lambda x, p: tf.pad(x, p), [_F, np.array([[1, -1], [0, 0]], np.int32)],
     "Paddings must be non-negative: 1 -1"),
    (lambda x, p: tf.pad(x, p), [_F, np.array([[1, 1]], np.int32)],
     r"The first dimension of paddings must be the rank of inputs\[1,2\] \[2,3\]"),
    (lambda x, p: tf.pad(x, p, "REFLECT"), [_F, np.array([[2, 0], [0, 0]], np.int32)],
     "paddings must be less than the dimension size: 2, 0 not less than 2"),
    (lambda x, p: tf.pad(x, p, "SYMMETRIC"), [_F, np.array([[3, 0], [0, 0]], np.int32)],
     "paddings must be no greater than the dimension size: 3, 0 greater than 2"),
    (lambda x, c: tf.pad(x, [[0, 0], [0, 0]], constant_values=c),
     [_F, np.zeros(2, np.float32)], "constant_values must be a scalar"),
    (lambda x, a: tf.reverse(x, a), [_F, np.array([2], np.int32)],
     r"'axis'\[0\] = 2 is out of valid range \[0, 1"),
    (lambda x, a: tf.reverse(x, a), [_F, np.array([0, -2], np.int32)],
     "axis 0 specified more than once"),
    (lambda d: tf.fill(d, 1.0), [np.array([2, -1], np.int32)], "Dimension -1 must be >= 0"),
    (lambda d, v: tf.fill(d, v), [np.array([2], np.int32), np.zeros(2, np.float32)],
     r"value must represent a scalar, got shape \[2\]"),
    (lambda a, d: tf.range(a, 5, d), [np.int32(1), np.int32(0)], "Requires delta != 0: 0"),
    (lambda a: tf.range(a, 1, 1), [np.int32(5)], "Requires start <= limit when delta > 0: 5/1"),
    (lambda a: tf.range(a, 1.0, 0.5), [np.float32(5)],
     "Requires start <= limit when delta > 0: 5/1"),
    (lambda a: tf.range(a), [np.zeros(2, np.int32)], r"limit must be a scalar, not shape \[2\]"),
    (lambda n: tf.linspace(0.0, 1.0, n), [np.int32(0)], "Requires num > 0: 0"),
])
def test_runtime_errors(build, feeds, match):
    with tf.Graph().as_default():
        tensor, feed = _fed(build, *feeds)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                sess.run(tensor, feed)


def test_reshape_fed_batch_mismatch_is_an_invalid_argument_error():
    with tf.Graph().as_default():
        batch = tf.placeholder(tf.float32, [None, 6])
        r = tf.reshape(batch, [-1, 4])
        ok = tf.reshape(batch, [-1, 2, 3])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(ok, {batch: np.ones((5, 6))}),
                                          np.ones((5, 2, 3)))
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(r, {batch: np.ones((5, 6))})
    assert "Reshape" in str(info.value) and "30 values" in str(info.value)


def test_reshape_follows_tensorflow_on_zero_sized_inputs():
    cases = [((0, 3), [-1, 0], (3, 0)), ((0,), [-1, 0], (1, 0)), ((0, 3), [2, -1, 0], (2, 1, 0)),
             ((0, 3), [0, -1], (0, 3)), ((0, 3), [-1, 3], (0, 3))]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        s = tf.placeholder(tf.int32)
        r = tf.reshape(x, s)
        with tf.Session() as sess:
            for in_shape, target, expected in cases:
                got = sess.run(r, {x: np.zeros(in_shape), s: target})
                assert got.shape == expected, (in_shape, target)


# --- static shapes with unknown dimensions -------------------------------------------------------
def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6])
        u = tf.placeholder(tf.float32)
        v = tf.placeholder(tf.int32, [3])
        p3 = tf.placeholder(tf.float32, [2, None, 3])
        n = tf.placeholder(tf.int32, [])
        shapes = [
            (tf.reshape(x, [-1, 2, 3]), [None, 2, 3]),
            (tf.reshape(x, [-1, 4]), [None, 4]),
            (tf.reshape(x, [4, -1]), [4, None]),
            (tf.reshape(x, v), [None, None, None]),
            (tf.reshape(x, tf.shape(x)), [None, 6]),
            (tf.reshape(x, [tf.shape(x)[0], 2, -1]), [None, 2, None]),
            (tf.reshape(p3, [6, -1]), [6, None]),
            (tf.reshape(p3, [-1, 3]), [None, 3]),
            (tf.reshape(u, [-1]), [None]),
            (tf.reshape(_t24(), [-1, -1]), [None, None]),
            (tf.reshape(tf.zeros([0, 3]), [0, -1]), [0, None]),
            (tf.expand_dims(x, -1), [None, 6, 1]),
            (tf.expand_dims(x, n), [None, None, None]),
            (tf.squeeze(tf.placeholder(tf.float32, [1, None, 1])), None),
            (tf.squeeze(tf.placeholder(tf.float32, [None, 3, 1]), [0]), [3, 1]),
            (tf.transpose(x), [6, None]),
            (tf.transpose(x, [1, -1]), [6, 6]),
            (tf.transpose(x, v[:2]), [None, None]),
            (tf.transpose(u, [1, 0]), [None, None]),
            (tf.tile(x, [3, 2]), [None, 12]),
            (tf.tile(x, [0, v[0]]), [0, None]),
            (tf.tile(u, [2, 1]), [None, None]),
            (tf.pad(x, [[1, 1], [2, 3]]), [None, 11]),
            (tf.pad(x, tf.placeholder(tf.int32, [2, 2])), [None, None]),
            (tf.pad(u, [[1, 0], [0, 2]]), [None, None]),
            (tf.reverse(u, [0]), None),
            (tf.fill(tf.shape(x), 1.0), [None, 6]),
            (tf.fill(v, 1.0), [None, None, None]),
            (tf.zeros(tf.stack([n, 4])), [None, 4]),
            (tf.ones_like(u), None),
            (tf.range(n), [None]),
            (tf.range(2, 9, 2), [4]),
            (tf.linspace(0.0, 1.0, n), [None]),
            (tf.shape(u), [None]),
            (tf.shape_n([x, u])[1], [None]),
            (tf.meshgrid(u, x[0])[0], [6, None]),
        ]
    for tensor, expected in shapes:
        got = tensor.shape.as_list() if tensor.shape.ndims is not None else None
        assert got == expected, f"{tensor.name}: {got} != {expected}"


# --- static values --------------------------------------------------------------------------------
def test_static_values_of_shape_carrying_ops():
    with tf.Graph().as_default():
        c = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        x = tf.placeholder(tf.float32, [None, 3])
        known = [
            (tf.shape(c), np.array([2, 3], np.int32)),
            (apply_op(array_ops.Shape, [c], {"out_type": tf.int64}), np.array([2, 3], np.int64)),
            (tf.shape_n([c, c], out_type=tf.int64)[1], np.array([2, 3], np.int64)),
            (apply_op(array_ops.Size, [c]), np.int32(6)),
            (apply_op(array_ops.Rank, [x]), np.int32(2)),
            (tf.identity(tf.shape(c)), np.array([2, 3], np.int32)),
            (tf.stop_gradient(tf.constant(4)), np.int32(4)),
            (tf.identity_n([tf.constant(1), tf.constant(2.0)])[1], np.float32(2)),
            (tf.fill([2], 7), np.array([7, 7], np.int32)),
            (tf.range(1, 10, 4), np.array([1, 5, 9], np.int32)),
            (tf.reshape(tf.shape(c), [2, 1]), np.array([[2], [3]], np.int32)),
            (tf.expand_dims(tf.constant(3), 0), np.array([3], np.int32)),
            (tf.squeeze(tf.constant([[5]])), np.int32(5)),
            (tf.zeros_like(tf.ones([2], tf.int64)), np.zeros(2, np.int64)),
            (apply_op(array_creation_ops.OnesLike, [c]), np.ones((2, 3), np.float32)),
        ]
        unknown = [tf.shape(x), apply_op(array_ops.Size, [x]), tf.identity(x),
                   tf.reshape(x, [-1]), tf.fill(tf.shape(x), 1.0), tf.range(tf.size(x)),
                   tf.fill([100000, 1000], 0.0)]
        for tensor, expected in known:
            value = tf.get_static_value(tensor)
            assert value is not None, tensor.name
            assert value.dtype == expected.dtype, tensor.name
            np.testing.assert_array_equal(value, expected)
        for tensor in unknown:
            assert tf.get_static_value(tensor) is None, tensor.name
        assert tf.get_static_value(3) == 3
        var = tf.Variable([1.0])
        assert tf.get_static_value(var) is None


def test_static_values_make_later_shape_functions_precise():
    with tf.Graph().as_default():
        c = tf.zeros([4, 6])
        x = tf.placeholder(tf.float32, [None, 6])
        assert tf.reshape(x, tf.shape(c)).shape.as_list() == [4, 6]
        assert tf.zeros(tf.shape(c)).shape.as_list() == [4, 6]
        assert tf.reshape(c, tf.reverse(tf.shape(c), [0])).shape.as_list() == [6, 4]
        assert tf.fill(tf.identity(tf.shape_n([c])[0]), 1).shape.as_list() == [4, 6]
        assert tf.tile(x, tf.range(1, 3)).shape.as_list() == [None, 12]
        assert tf.reshape(x, tf.expand_dims(tf.size(c), 0)).shape.as_list() == [24]


# --- kernel contracts ---------------------------------------------------------------------------
def _kernel(op_type, dtype=tf.float32, **attrs):
    return find_kernel(op_type, "CPU", {"T": dtype, **attrs})


@pytest.mark.parametrize("op_type", ["Reshape", "ExpandDims", "Squeeze", "Transpose",
                                     "ReverseV2", "Identity", "StopGradient"])
def test_view_kernels_declare_returns_view(op_type):
    assert _kernel(op_type).returns_view


def test_reshape_and_transpose_kernels_do_not_copy():
    x = np.arange(24, dtype=np.float32)
    reshape = _kernel("Reshape").impl
    out = reshape(x, np.array([2, -1, 3], np.int32))
    assert out.shape == (2, 4, 3) and np.shares_memory(out, x)
    transposed = _kernel("Transpose").impl(out, np.array([2, 0, 1], np.int32))
    assert transposed.shape == (3, 2, 4) and np.shares_memory(transposed, x)
    reversed_ = _kernel("ReverseV2").impl(out, np.array([1], np.int32))
    assert np.shares_memory(reversed_, x)
    np.testing.assert_array_equal(reversed_, x.reshape(2, 4, 3)[:, ::-1])


def test_identity_of_a_variable_is_a_snapshot():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        read = tf.identity(v._variable)
        assert read.dtype == tf.float32 and read.op.type == "Identity"
        both = tf.identity_n([v._variable, tf.constant(1)])
        bump = tf.assign_add(v, [10.0, 10.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            first, pair = sess.run([read, both])
            sess.run(bump)
            np.testing.assert_array_equal(first, [1.0, 2.0])
            np.testing.assert_array_equal(pair[0], [1.0, 2.0])
            np.testing.assert_array_equal(sess.run(read), [11.0, 12.0])


def test_transpose_of_unknown_rank_reverses_dimensions():
    with tf.Graph().as_default():
        u = tf.placeholder(tf.float32)
        t = tf.transpose(u)
        assert t.shape.ndims is None
        with tf.Session() as sess:
            value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
            np.testing.assert_array_equal(sess.run(t, {u: value}), value.T)
            np.testing.assert_array_equal(sess.run(t, {u: np.float32(3)}), np.float32(3))


def test_aliases_and_deprecated_arguments():
    with tf.Graph().as_default():
        x = tf.zeros([1, 3, 1])
        assert tf.expand_dims(x, dim=0).shape.as_list() == [1, 1, 3, 1]
        assert tf.squeeze(x, squeeze_dims=[2]).shape.as_list() == [1, 3]
        assert tf.squeeze(x, -1).shape.as_list() == [1, 3]
        with pytest.raises(ValueError, match="both"):
            tf.expand_dims(x, axis=0, dim=0)
        assert tf.meshgrid() == []
