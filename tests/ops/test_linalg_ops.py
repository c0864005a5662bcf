"""MatMul, BatchMatMulV2, Einsum and tensordot: forward against NumPy, shape functions against
the kernels, gradients, errors at construction and at run time, op choice, names and attrs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import OP_REGISTRY
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
    check_forward,
    check_gradient,
    check_shapes,
    parametrize,
)

REAL_TYPES = (tf.float32, tf.float64, tf.int32, tf.int64)
MATMUL_TYPES = REAL_TYPES + (tf.complex64,)


def _randn(*shape):
    def make(rng, dt):
        x = rng.randn(*shape) * 3
        if np.dtype(dt).kind == "c":
            x = x + 1j * rng.randn(*shape)
        return x.astype(dt)
    return make


def _herm(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _transposing_cases(dtypes):
    """Rows whose graphs transpose an operand: for complex operands, on the paths that need
    the Conj op (MatMul adjoints, BatchMatMulV2 transposes), TF conjugates first."""
    return [
        OpCase("matmul_transpose_a", lambda a, b: tf.matmul(a, b, transpose_a=True),
               lambda a, b: a.T @ b, [_randn(4, 3), _randn(4, 5)], dtypes),
        OpCase("matmul_transpose_both", lambda a, b: tf.matmul(a, b, True, True),
               lambda a, b: a.T @ b.T, [_randn(4, 3), _randn(5, 4)], dtypes),
        OpCase("matmul_adjoint_a", lambda a, b: tf.matmul(a, b, adjoint_a=True),
               lambda a, b: _herm(a) @ b, [_randn(4, 3), _randn(4, 2)], dtypes),
        OpCase("batch_matmul_transpose_b", lambda a, b: tf.matmul(a, b, transpose_b=True),
               lambda a, b: a @ np.swapaxes(b, -1, -2), [_randn(2, 3, 4), _randn(2, 5, 4)],
               dtypes),
    ]


CASES = [
    OpCase("matmul", lambda a, b: tf.matmul(a, b), np.matmul, [_randn(3, 4), _randn(4, 5)],
           MATMUL_TYPES + (tf.uint8, tf.float16), rtol=1e-2, atol=1e-2),
    OpCase("matmul_operator", lambda a, b: a @ b, np.matmul, [_randn(2, 3), _randn(3, 2)],
           MATMUL_TYPES),
    OpCase("matmul_empty_inner", lambda a, b: tf.matmul(a, b), np.matmul,
           [np.zeros((2, 0)), np.zeros((0, 3))], (tf.float32, tf.int32)),
    OpCase("batch_matmul", lambda a, b: tf.matmul(a, b), np.matmul,
           [_randn(2, 3, 4), _randn(2, 4, 5)], MATMUL_TYPES),
    OpCase("batch_matmul_broadcast", lambda a, b: tf.matmul(a, b), np.matmul,
           [_randn(2, 1, 3, 4), _randn(5, 4, 2)], (tf.float32, tf.float64)),
    OpCase("batch_matmul_rank2_rank3", lambda a, b: tf.matmul(a, b), np.matmul,
           [_randn(3, 4), _randn(2, 4, 5)], (tf.float64,)),
    OpCase("batch_matmul_adjoints", lambda a, b: tf.matmul(a, b, adjoint_a=True,
                                                           adjoint_b=True),
           lambda a, b: _herm(a) @ _herm(b), [_randn(2, 4, 3), _randn(2, 5, 4)],
           (tf.float64, tf.complex64)),
    OpCase("einsum_matmul", lambda a, b: tf.einsum("ij,jk->ik", a, b), np.matmul,
           [_randn(3, 4), _randn(4, 2)], (tf.float32, tf.float64, tf.int32, tf.complex64)),
    OpCase("einsum_batch", lambda a, b: tf.einsum("bij,bjk->bik", a, b), np.matmul,
           [_randn(2, 3, 4), _randn(2, 4, 5)]),
    OpCase("einsum_implicit_output", lambda a, b: tf.einsum("ij,jk", a, b), np.matmul,
           [_randn(3, 4), _randn(4, 2)]),
    OpCase("einsum_trace", lambda m: tf.einsum("ii", m), np.trace, [_randn(3, 3)],
           (tf.float64, tf.int32)),
    OpCase("einsum_ellipsis_broadcast", lambda a, b: tf.einsum("...ij,...jk->...ik", a, b),
           np.matmul, [_randn(5, 2, 3), _randn(3, 4)]),
    OpCase("einsum_transpose", lambda x: tf.einsum("ijk->kji", x),
           lambda x: np.transpose(x, (2, 1, 0)), [_randn(2, 3, 4)]),
    OpCase("einsum_outer_three", lambda a, b, c: tf.einsum("i,j,k->ijk", a, b, c),
           lambda a, b, c: np.einsum("i,j,k->ijk", a, b, c), [_randn(2), _randn(3), _randn(4)],
           (tf.float64,)),
    OpCase("einsum_sum_all", lambda x: tf.einsum("ij->", x), np.sum, [_randn(3, 4)],
           (tf.float64,)),
    OpCase("einsum_ellipsis_size_one", lambda a, b: tf.einsum("...ij,...jk->...ik", a, b),
           np.matmul, [_randn(2, 1, 3, 4), _randn(5, 4, 2)], (tf.float64,)),
    OpCase("einsum_middle_ellipsis", lambda a, b: tf.einsum("a...b,b->...a", a, b),
           lambda a, b: np.einsum("a...b,b->...a", a, b), [_randn(2, 3, 4, 5), _randn(5)],
           (tf.float64,)),
    OpCase("einsum_diagonal_times_vector", lambda m, v: tf.einsum("ii,i->i", m, v),
           lambda m, v: np.einsum("ii,i->i", m, v), [_randn(3, 3), _randn(3)], (tf.float64,)),
    OpCase("tensordot_1", lambda a, b: tf.tensordot(a, b, 1), np.matmul,
           [_randn(3, 4), _randn(4, 5)], (tf.float32, tf.int32)),
    OpCase("tensordot_0_outer", lambda a, b: tf.tensordot(a, b, 0),
           lambda a, b: np.multiply.outer(a, b), [_randn(2), _randn(3)]),
    OpCase("tensordot_pairs", lambda a, b: tf.tensordot(a, b, [[1, 2], [1, 0]]),
           lambda a, b: np.tensordot(a, b, [[1, 2], [1, 0]]),
           [_randn(2, 3, 4), _randn(4, 3, 5)], (tf.float32, tf.float64)),
    OpCase("tensordot_neg_axes", lambda a, b: tf.tensordot(a, b, [[-1], [0]]),
           lambda a, b: np.tensordot(a, b, [[-1], [0]]), [_randn(2, 3, 4), _randn(4, 2, 2)]),
    OpCase("tensordot_2", lambda a, b: tf.tensordot(a, b, 2),
           lambda a, b: np.tensordot(a, b, 2), [_randn(5, 3, 4), _randn(3, 4, 2)]),
] + _transposing_cases(REAL_TYPES)

# Conj belongs to the math family; these rows run once it is defined.
CONJ_CASES = _transposing_cases((tf.complex64, tf.complex128))
_needs_conj = pytest.mark.skipif("Conj" not in OP_REGISTRY, reason="the Conj op is not defined")


test_forward, test_shapes = case_tests(CASES)


# Rows of floating dtypes whose op is differentiable: central differences in float64.
@pytest.mark.parametrize("case", [c for c in CASES if c.grad and
                                  any(d.is_floating for d in c.dtypes)], ids=str)
def test_gradient(case):
    check_gradient(case)


@_needs_conj
@parametrize(CONJ_CASES)
def test_forward_complex_transposes(case, dtype):
    check_forward(case, dtype)


@_needs_conj
@parametrize(CONJ_CASES)
def test_shapes_complex_transposes(case, dtype):
    check_shapes(case, dtype)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_op_choice_names_and_attrs():
    with tf.Graph().as_default():
        a = tf.constant(np.ones((2, 3), np.float32))
        b = tf.constant(np.ones((3, 4), np.float32))
        assert (a @ b).op.name == "matmul"
        m = tf.matmul(a, b)  # names are unique case-insensitively, like TF's
        assert (m.op.name, m.op.type, m.dtype) == ("MatMul_1", "MatMul", tf.float32)
        assert tf.matmul(a, b, name="mm").op.name == "mm"
        assert [t.op.name for t in m.op.inputs] == ["Const", "Const_1"]
        assert tf.matmul([[1.0]], [[2.0]]).op.inputs[1].op.name == "MatMul_2/b"
        # Only TensorFlow's attrs: the cost model reads contraction sizes from input shapes.
        assert set(m.op.attrs) == {"T", "transpose_a", "transpose_b", "grad_a", "grad_b"}
        assert tf.matmul(a, a, transpose_a=True).op.get_attr("transpose_a") is True
        batched = tf.matmul(tf.ones([5, 2, 3]), b)
        assert batched.op.type == "BatchMatMulV2"
        assert set(batched.op.attrs) == {"T", "adj_x", "adj_y", "grad_x", "grad_y"}
        unknown = tf.matmul(tf.placeholder(tf.float32), b, transpose_a=True)
        assert unknown.op.type == "BatchMatMulV2" and unknown.op.get_attr("adj_x") is True
        assert unknown.shape.ndims is None
        partial = tf.matmul(tf.placeholder(tf.float32, [None, None]),
                            tf.placeholder(tf.float32, [None, 4]))
        assert partial.shape.as_list() == [None, 4]
        e = tf.einsum("ij,jk", a, b)
        assert (e.op.name, e.op.type) == ("einsum/Einsum", "Einsum")
        assert e.op.get_attr("equation") == b"ij,jk->ik"
        assert tf.tensordot(a, b, 1).op.name == "Tensordot/MatMul"
        assert tf.tensordot(tf.ones([2, 3, 3]), b, 1).op.name == "Tensordot_1"
        lists = tf.matmul([[1.0]], [[2.0]])
        assert lists.dtype == tf.float32 and _run(lists) == [[2.0]]


def test_operator_with_numpy_operands():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        t = tf.constant(np.ones((3, 2), np.float32))
        left = a @ t
        right = t @ a
        assert left.dtype == right.dtype == tf.float32
        got_left, got_right = _run([left, right])
    np.testing.assert_allclose(got_left, a @ np.ones((3, 2)))
    np.testing.assert_allclose(got_right, np.ones((3, 2)) @ a)


def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.placeholder(tf.float32, [3, None])
        assert tf.matmul(x, w).shape.as_list() == [None, None]
        assert tf.matmul(x, tf.ones([3, 7])).shape.as_list() == [None, 7]
        bx = tf.placeholder(tf.float32, [None, 1, 2, 3])
        assert tf.matmul(bx, tf.ones([4, 3, 5])).shape.as_list() == [None, 4, 2, 5]
        assert tf.einsum("bi,ij->bj", x, w).shape.as_list() == [None, None]
        assert tf.einsum("...i,ij->...j", tf.placeholder(tf.float32), tf.ones([2, 5])) \
            .shape.ndims is None
        assert tf.einsum("ij,jk->ik", tf.placeholder(tf.float32), tf.ones([2, 5])) \
            .shape.as_list() == [None, 5]
        assert tf.tensordot(x, tf.ones([3, 2, 4]), 1).shape.as_list() == [None, 2, 4]
        two_unknown = tf.tensordot(tf.placeholder(tf.float32, [None, None, 3]),
                                   tf.ones([3, 2]), 1)
        assert two_unknown.shape.as_list() == [None, None, 2]


def test_tensordot_with_unknown_dims_runs():
    x = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
    w = np.random.RandomState(1).randn(3, 2).astype(np.float32)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, None, 3])
        q = tf.placeholder(tf.float32, [None, 4, 3])
        out, out_one = tf.tensordot(p, w, 1), tf.tensordot(q, w, [[2], [0]])
        got, got_one = _run([out, out_one], {p: x, q: x})
    np.testing.assert_allclose(got, np.tensordot(x, w, 1), rtol=1e-5)
    np.testing.assert_allclose(got_one, np.tensordot(x, w, 1), rtol=1e-5)


def test_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.matmul(tf.ones([2, 3]), tf.ones([4, 2]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 4, 2]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 3, 2]))
        with pytest.raises(ValueError, match="rank 2 but is rank 1"):
            tf.matmul(tf.placeholder(tf.float32, [3]), tf.ones([3, 2]))
        with pytest.raises(ValueError, match="Only one of `transpose_a` and `adjoint_a`"):
            tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), transpose_a=True, adjoint_a=True)
        with pytest.raises(TypeError, match="does not match"):
            tf.matmul(tf.ones([2, 3]), tf.ones([3, 2], tf.float64))
        with pytest.raises(TypeError, match="allowed values"):
            tf.matmul(tf.ones([2, 3], tf.int8), tf.ones([3, 2], tf.int8))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 4]))
        with pytest.raises(ValueError, match='Got 1 inputs for equation "ij,jk->ik", expecting 2'):
            tf.einsum("ij,jk->ik", tf.ones([2, 3]))
        with pytest.raises(ValueError, match="rank 3 but its einsum subscripts"):
            tf.einsum("ij->i", tf.ones([2, 3, 4]))
        with pytest.raises(ValueError, match="label k not present"):
            tf.einsum("ij->k", tf.ones([2, 3]))
        with pytest.raises(ValueError, match="labels are letters"):
            tf.einsum("i1->i", tf.ones([2, 3]))
        with pytest.raises(TypeError, match="Invalid keyword"):
            tf.einsum("ij->i", tf.ones([2, 3]), bad=1)
        with pytest.raises(ValueError, match="'axes' must be at least 0"):
            tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), -1)
        with pytest.raises(ValueError, match="must not be larger"):
            tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), 3)
        with pytest.raises(ValueError, match="Different number of contraction axes"):
            tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), [[1], [0, 1]])
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.tensordot(tf.ones([2, 3]), tf.ones([4, 2]), 1)


def test_runtime_shape_errors():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        x = tf.placeholder(tf.float32, [None, None, None])
        y = tf.placeholder(tf.float32, [None, None, None])
        e = tf.einsum("ij,jk->ik", a, b)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Matrix size-incompatible: In\\[0\\]: \\[2,3\\]"):
                sess.run(tf.matmul(a, b), {a: np.ones((2, 3)), b: np.ones((4, 2))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="compatible batch"):
                sess.run(tf.matmul(x, y), {x: np.ones((2, 2, 3)), y: np.ones((3, 3, 2))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Einsum"):
                sess.run(e, {a: np.ones((2, 3)), b: np.ones((4, 2))})
            # The kernel plans per input shapes: a second shape runs with its own plan.
            for n in (3, 5):
                got = sess.run(e, {a: np.ones((2, n)), b: np.ones((n, 2))})
                np.testing.assert_array_equal(got, np.full((2, 2), n))


def test_kernels_are_expensive():
    from tensorweave.kernels.registry import find_kernel
    attrs = {"T": tf.float32}
    for op_type in ("MatMul", "BatchMatMulV2", "Einsum"):
        assert find_kernel(op_type, "CPU", attrs).expensive


@pytest.mark.parametrize("shape", [(32, 512, 192), (16, 2048, 512), (128, 10, 784)],
                         ids=["rnn_input_grad", "long_sums", "short_sums"])
def test_transposed_right_operand_gives_numpys_product(shape):
    """a @ B^T, also where the kernel computes it as (B @ a^T)^T: NumPy's values up to float32
    rounding (oneDNN's kernels and OpenBLAS's differ in the last bits), C order."""
    m, k, n = shape
    rng = np.random.RandomState(0)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(n, k).astype(np.float32)
    with tf.Graph().as_default():
        product = tf.matmul(tf.constant(a), tf.constant(b), transpose_b=True)
        with tf.Session() as sess:
            got = sess.run(product)
    np.testing.assert_allclose(got, a @ b.T, rtol=1e-5, atol=1e-4)
    assert got.flags.c_contiguous
