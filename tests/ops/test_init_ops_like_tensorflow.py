"""tf.orthogonal_initializer as TensorFlow 2.21's init_ops.Orthogonal builds it in graph mode:
random_normal of the flattened shape, Qr, q * sign(diag(r)), transpose for wide shapes,
reshape, times gain. Expected values are TF 2.21's under tf.set_random_seed(42). The
random numbers are TF's bit for bit; Qr (NumPy/LAPACK here, Eigen in TF) rounds differently
in the last bits, so values are compared to about one float32 (float64) epsilon."""
import numpy as np
import pytest

import tensorweave as tf

_V_3X4 = ("be2526d0 bf215082 bf337ef7 3e9588d8 3ef72774 3f1cec01 bf1d8f4c 3de4684f 3e8a1da8 "
          "bd05e410 3eaf1dc4 3f66489c")
_GAIN_3X3 = "bed7d9bc 3f99ae97 4009b8f2 bfd2d5e4 3fbe451c bf9376e2 bfea9931 bfce58ea 3f0a56a6"
_SEEDED_2235 = (
    "bde31d90 be1da349 3c31c713 3d0feae2 3df82310 3e0fc14a 3e967326 3e8efd1e bcd7845c 3ed3d6cb "
    "3d0f8796 3f22dc17 3e268314 be91647e bdb63883 bdd28ed4 bea0d621 bbfec5d0 3deca36b 3e0e6f4d "
    "3ee81468 be83a502 3eaed825 3e751884 beceb8d4 be4cc00c 3daffc56 3e85e713 3e2aeb5e bebf0b65 "
    "3f19a0db bce538e8 bf1cd3b1 be8cc431 3c9a4ec0 bdb1ed9b be02fe43 3c3ae6b6 be561b70 3e065f73 "
    "bdbdcc8b 3ef3205e be855d26 3ee690a9 3e1f6e73 3dc6a663 3e80ea5e be4be501 3dca48ca bf187084 "
    "3f11e7b6 3da434f5 3ebe9b95 3e80ca40 3e8b812c 3c7dcf6d 3cc9b1db 3e98a17e bf26a841 bdf23451")
_SEEDED_5X2_F64 = (
    "-0x1.05f0052836186p-1 -0x1.55f2eced3b8f1p-1 0x1.90d34710385a2p-2 0x1.de5b2545c9157p-3 "
    "-0x1.29333eeb88bf5p-2 0x1.364b21e51bbc5p-1 0x1.69c1102e5ebbap-1 -0x1.73704f5c2c113p-2 "
    "0x1.47ad0c0de4c8dp-5 -0x1.7a2fdfe008bcep-6")


def _f32(bits: str, shape):
    return np.array([int(b, 16) for b in bits.split()], np.uint32).view(np.float32).reshape(shape)


def _f64(hexes: str, shape):
    return np.array([float.fromhex(h) for h in hexes.split()]).reshape(shape)


def _init_twice(shape, dtype=tf.float32, **kwargs):
    """The variable's value after two runs of its initializer, and the initializer tensor."""
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        init = tf.orthogonal_initializer(**kwargs)
        v = tf.get_variable("v", shape, dtype=dtype, initializer=init)
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = sess.run(v)
            sess.run(v.initializer)
            return first, sess.run(v), v.initializer.inputs[1]


def test_graph_is_tensorflows():
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(42)
        tf.get_variable("v", [3, 4], initializer=tf.orthogonal_initializer())
        ops = [(op.name, op.type) for op in graph.get_operations()]
    assert ops[:16] == [
        ("v/Initializer/random_normal/shape", "Const"),
        ("v/Initializer/random_normal/mean", "Const"),
        ("v/Initializer/random_normal/stddev", "Const"),
        ("v/Initializer/random_normal/RandomStandardNormal", "RandomStandardNormal"),
        ("v/Initializer/random_normal/mul", "Mul"), ("v/Initializer/random_normal", "AddV2"),
        ("v/Initializer/Qr", "Qr"), ("v/Initializer/DiagPart", "DiagPart"),
        ("v/Initializer/Sign", "Sign"), ("v/Initializer/mul", "Mul"),
        ("v/Initializer/matrix_transpose/transpose/perm", "Const"),
        ("v/Initializer/matrix_transpose/transpose", "Transpose"),
        ("v/Initializer/Reshape/shape", "Const"), ("v/Initializer/Reshape", "Reshape"),
        ("v/Initializer/mul_1/x", "Const"), ("v/Initializer/mul_1", "Mul")]


@pytest.mark.parametrize("shape, kwargs, expected", [
    ([3, 4], {}, _f32(_V_3X4, [3, 4])),
    ([4, 3], {}, _f32(_V_3X4, [3, 4]).T),  # tall: the wide case's transpose, as in TF
    ([3, 3], {"gain": 2.5}, _f32(_GAIN_3X3, [3, 3])),
    ([2, 2, 3, 5], {"seed": 7}, _f32(_SEEDED_2235, [2, 2, 3, 5])),
])
def test_float32_values_as_tensorflow(shape, kwargs, expected):
    first, again, init = _init_twice(shape, **kwargs)
    assert init.op.type == "Mul"
    np.testing.assert_allclose(first, expected, rtol=0, atol=3e-7)
    # Each run draws a fresh matrix (an op seed fixes the sequence, not one matrix).
    assert not np.array_equal(first, again)
    flat = first.reshape(-1, shape[-1])
    gain = kwargs.get("gain", 1.0)
    if flat.shape[0] >= flat.shape[1]:
        np.testing.assert_allclose(flat.T @ flat, gain ** 2 * np.eye(shape[-1]), atol=1e-5)
    else:
        np.testing.assert_allclose(flat @ flat.T, gain ** 2 * np.eye(flat.shape[0]), atol=1e-5)


def test_conv_kernel_is_orthogonal_over_its_flattened_rows():
    first, _, _ = _init_twice([3, 3, 2, 4])
    flat = first.reshape(18, 4)
    np.testing.assert_allclose(flat.T @ flat, np.eye(4), atol=1e-6)
    np.testing.assert_allclose(first.ravel()[:4], _f32("bd9e36c0 3e11b8ad bd3d3b95 bebc1d2d", 4),
                               rtol=0, atol=3e-7)


def test_float64_values_as_tensorflow():
    first, _, init = _init_twice([5, 2], tf.float64, seed=3)
    assert init.dtype == tf.float64
    np.testing.assert_allclose(first, _f64(_SEEDED_5X2_F64, [5, 2]), rtol=0, atol=5e-16)


def test_float16_values_close_to_tensorflow():
    first, _, _ = _init_twice([2, 3], tf.float16)
    assert first.dtype == np.float16
    expected = _f32("bf3dc000 bec60000 3f0c8000 3e2d8000 bf662000 becf4000", [2, 3])
    np.testing.assert_allclose(first.astype(np.float32), expected, rtol=0, atol=1e-3)


def test_rank_one_shape_is_rejected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be at least two-dimensional"):
            tf.orthogonal_initializer()([3])
