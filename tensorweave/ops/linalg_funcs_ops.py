"""Matrix functions: tf.linalg.expm (TensorFlow's scaling-and-squaring Padé composite), the
MatrixSquareRoot and MatrixLogarithm ops, and the small composites matvec and normalize.

expm is built, as in TensorFlow, from matmuls, one matrix_solve and a while_loop of squarings,
so its gradient is that of the graph. MatrixSquareRoot's gradient solves TensorFlow's Sylvester
equation through a Kronecker-product system; MatrixLogarithm has none in TensorFlow (a
LookupError here too). Kernels: `kernels/linalg_extra.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, reshape, shape, squeeze
from tensorweave.ops.linalg_decomp_ops import LINALG_TYPES, batch_shape, square_dims
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.reduction_ops import reduce_max, reduce_sum, tf_op

__all__ = ["matrix_square_root"]

_COMPLEX = frozenset({_dtypes.complex64, _dtypes.complex128})


def _square_shape(ctx):
    batch, n = square_dims(ctx.input_shape(0))
    return batch_shape(batch, n, n)


MatrixSquareRoot = define_op("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"],
                             attrs=[TypeAttr("T", LINALG_TYPES)], shape_fn=_square_shape)
MatrixLogarithm = define_op("MatrixLogarithm", inputs=["input: T"], outputs=["output: T"],
                            attrs=[TypeAttr("T", _COMPLEX)], shape_fn=_square_shape)


def _kronecker(b1, b2, batch, n):
    """kron(b1, b2) of each pair of n x n matrices: [..., n*n, n*n]."""
    b1 = reshape(b1, concat([batch, [n, 1, n, 1]], 0))
    b2 = reshape(b2, concat([batch, [1, n, 1, n]], 0))
    return reshape(b1 * b2, concat([batch, [n * n, n * n]], 0))


@MatrixSquareRoot.gradient
def _matrix_square_root_grad(op, grad):
    """A = R R, so dA = R dR + dR R: TensorFlow solves this Sylvester equation in vectorized
    form, (kron(I, R^T) + kron(R, I)) vec(dR^T) = vec(g^T), and returns dR."""
    from tensorweave.ops.array_matrix_ops import eye, matrix_transpose
    from tensorweave.ops.linalg_solve_ops import matrix_solve
    root = op.outputs[0]
    dims = shape(root)
    batch, n = dims[:-2], dims[-1]
    identity = eye(n, batch_shape=batch, dtype=root.dtype)
    ksum = _kronecker(identity, matrix_transpose(root), batch, n) + \
        _kronecker(root, identity, batch, n)
    vec_grad = reshape(matrix_transpose(grad), concat([batch, [n * n, 1]], 0))
    vec_d = matrix_solve(ksum, vec_grad)
    return [matrix_transpose(reshape(vec_d, dims))]


def matrix_square_root(input, name=None):  # noqa: A002 - TF's argument name
    """Computes the principal square root of one or more square matrices (tf.linalg.sqrtm).

    `matmul(sqrtm(A), sqrtm(A)) = A`. The principal root's eigenvalues have non-negative real
    parts; it exists for matrices without eigenvalues on the closed negative real axis. A real
    matrix with no real square root gives NaN (TensorFlow's Eigen kernel).

    Args:
      input: a Tensor of float32, float64, complex64 or complex128 (float16 is accepted by the
        op but has no kernel, as in TensorFlow), shape `[..., M, M]`.
      name: a name for the operation (default "MatrixSquareRoot").

    Returns:
      A Tensor like `input`: the square roots.

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype.
    """
    return apply_op(MatrixSquareRoot, [input], name=name)


def matrix_logarithm(input, name=None):  # noqa: A002
    """Computes the principal logarithm of one or more square complex matrices (tf.linalg.logm).

    `expm(logm(A)) = A`. A matrix with a zero eigenvalue has no finite logarithm: NaN.

    Args:
      input: a complex64 or complex128 Tensor, shape `[..., M, M]`.
      name: a name for the operation (default "MatrixLogarithm").

    Returns:
      A Tensor like `input`: the logarithms.

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for a real or another dtype.
    """
    return apply_op(MatrixLogarithm, [input], name=name)


# --- expm ---------------------------------------------------------------------------------------
# Padé coefficients b_0..b_m of the [m/m] approximant (Higham 2005, Table 10.4).
_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0],
}
# (largest l1 norm for Padé 3, 5, 7[, 9]; theta of the scaled top degree): single, double.
_SINGLE = ((4.258730016922831e-001, 1.880152677804762e+000), 3.925724783138660, (3, 5, 7))
_DOUBLE = ((1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
            2.097847961257068e+000), 5.371920351148152, (3, 5, 7, 9, 13))


def _pade(matrix, degree: int):
    """(U, V) with exp(A) ~ (V - U)^-1 (V + U): U holds the odd powers, V the even ones."""
    from tensorweave.ops.array_matrix_ops import eye
    b = _PADE[degree]
    dims = shape(matrix)
    ident = eye(dims[-2], batch_shape=dims[:-2], dtype=matrix.dtype)
    powers = [ident, matmul(matrix, matrix)]               # A^0, A^2, A^4, A^6, ...
    for _ in range(2, min(degree, 7) // 2 + 1 + (degree == 9)):
        powers.append(matmul(powers[-1], powers[1]))
    if degree == 13:  # Higham's evaluation: A^8..A^12 through one more product with A^6
        a6 = powers[3]
        u_high = matmul(a6, a6 + b[11] * powers[2] + b[9] * powers[1])
        v_high = matmul(a6, b[12] * a6 + b[10] * powers[2] + b[8] * powers[1])
        return (matmul(matrix, _combine(u_high, b[1::2], powers[:4])),
                _combine(v_high, b[0::2], powers[:4]))
    top = degree // 2
    u = _combine(powers[top], b[1::2], powers[:top])
    v = _combine(b[2 * top] * powers[top], b[0::2], powers[:top])
    return matmul(matrix, u), v


def _combine(lead, coefficients, powers):
    """lead + sum_k coefficients[k] powers[k], added from the highest power down (TF's order)."""
    for k in range(len(powers) - 1, -1, -1):
        lead = lead + coefficients[k] * powers[k]
    return lead


def matrix_exponential(input, name=None):  # noqa: A002
    """Computes the matrix exponential of one or more square matrices (tf.linalg.expm).

    TensorFlow's method (Higham, "The scaling and squaring method for the matrix exponential
    revisited", 2005): by each matrix's l1 norm, a Padé approximant of degree 3, 5 or 7
    (single precision; 3, 5, 7, 9 or 13 in double), the top degree of the matrix scaled by
    2^-s, then s squarings. Non-finite input gives NaN matrices.

    Args:
      input: a Tensor of float16, float32, float64, complex64 or complex128, `[..., M, M]`.
      name: a name for the scope (default "matrix_exponential").

    Returns:
      The matrix exponentials, like `input`.

    Raises:
      ValueError: for another dtype, or matrices that are statically not square.
    """
    from tensorweave.ops.array_creation_ops import fill
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.cond import cond
    from tensorweave.ops.linalg_solve_ops import matrix_solve
    from tensorweave.ops.while_loop import while_loop
    with name_scope(name, "matrix_exponential", [input]):
        matrix = convert_to_tensor(input, name="input")
        if matrix.shape[-2:] == [0, 0]:
            return matrix
        if matrix.dtype in (_dtypes.float16, _dtypes.float32, _dtypes.complex64):
            bounds, maxnorm, degrees = _SINGLE
        elif matrix.dtype in (_dtypes.float64, _dtypes.complex128):
            bounds, maxnorm, degrees = _DOUBLE
        else:
            raise ValueError(f"tf.linalg.expm does not support matrices of type "
                             f"{matrix.dtype}")
        batch = matrix.shape[:-2]
        if not batch.is_fully_defined():
            batch = shape(matrix)[:-2]
        matrix = reshape(matrix, concat([[-1], shape(matrix)[-2:]], 0))
        l1_norm = expand_dims(expand_dims(reduce_max(
            reduce_sum(tf_op("ComplexAbs" if matrix.dtype.is_complex else "Abs", [matrix]),
                       axis=1), axis=-1), -1), -1)
        real = l1_norm.dtype

        def const(x):
            return convert_to_tensor(np.asarray(x, real.as_numpy_dtype))

        squarings = tf_op("Maximum", [tf_op("Floor", [
            tf_op("Log", [l1_norm / maxnorm]) / const(np.log(2.0))]), const(0.0)])
        scale = tf_op("Cast", [tf_op("Pow", [const(2.0), squarings])], {"DstT": matrix.dtype})
        approximants = [_pade(matrix, d) for d in degrees[:-1]]
        approximants.append(_pade(matrix / scale, degrees[-1]))
        u, v = approximants[-1]
        for bound, (u_low, v_low) in zip(bounds[::-1], approximants[-2::-1]):
            low = tf_op("Less", [l1_norm, const(bound)])
            u, v = where_v2(low, u_low, u), where_v2(low, v_low, v)
        is_finite = tf_op("IsFinite", [reduce_max(l1_norm)])
        nan = convert_to_tensor(np.asarray(np.nan, matrix.dtype.as_numpy_dtype))
        result = cond(is_finite, lambda: matrix_solve(-u + v, u + v),
                      lambda: fill(shape(matrix), nan))
        max_squarings = reduce_max(squarings)

        def more(i, _):
            return cond(is_finite, lambda: tf_op("Less", [i, max_squarings]),
                        lambda: convert_to_tensor(False))

        def square(i, r):
            return i + 1, where_v2(tf_op("Less", [i, squarings]), matmul(r, r), r)

        _, result = while_loop(more, square, [const(0.0), result])
        if not matrix.shape.is_fully_defined():
            return reshape(result, concat([batch, shape(result)[-2:]], 0))
        return reshape(result, batch.concatenate(result.shape[-2:]))


# --- matvec, normalize --------------------------------------------------------------------------
def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """Multiplies matrices by vectors: `a @ b[..., None]`, squeezed (tf.linalg.matvec).

    Args:
      a: a Tensor `[..., M, N]` of a type matmul supports.
      b: a Tensor of the same type, `[..., N]` (`[..., M]` when `a` is transposed).
      transpose_a: if True, `a` is transposed before the product.
      adjoint_a: if True, `a` is conjugated and transposed before the product.
      a_is_sparse: a hint passed to matmul.
      b_is_sparse: a hint passed to matmul.
      name: a name for the scope (default "MatVec").

    Returns:
      The products, `[..., M]`.

    Raises:
      ValueError: if both `transpose_a` and `adjoint_a` are set, or the shapes do not match.
    """
    with name_scope(name, "MatVec", [a, b]):
        product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a,
                         a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse)
        return squeeze(product, axis=-1)


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """Normalizes `tensor` by its norm along `axis` (tf.linalg.normalize).

    Args:
      tensor: a float or complex Tensor.
      ord: the norm's order, as for `tf.norm`.
      axis: None (the whole tensor as a vector), an int (vectors) or a pair (matrices).
      name: a name for the scope (default "normalize").

    Returns:
      `(normalized, norm)`: `tensor / norm` and the norm, kept with size-1 reduced dims.

    Raises:
      ValueError: for an unsupported `ord` or `axis` (see `tf.norm`).
    """
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.norm_ops import norm as _norm
    with name_scope(name, "normalize", [tensor]):
        tensor = convert_to_tensor(tensor)
        norm = cast(_norm(tensor, ord, axis, keepdims=True), tensor.dtype)
        return tensor / norm, norm
