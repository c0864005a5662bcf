"""Arithmetic on SparseTensors: SparseAdd (+SparseAddGrad), SparseTensorDenseAdd,
SparseTensorDenseMatMul; tf.sparse_mask (on IndexedSlices); and SparseMatMul, TF1's
tf.sparse_matmul: a dense float32/bfloat16 matrix product whose hints say which operand has
many zeros (TensorFlow picks a sparse algorithm; NumPy multiplies densely).

Gradients flow to the values and dense operands only (indices and shapes are integers):
SparseAdd's value gradient picks each input entry's slot in the sum (SparseAddGrad);
SparseTensorDenseAdd passes the dense gradient through and gathers it at the sparse indices;
SparseTensorDenseMatMul's dense-operand gradient is another sparse-dense product with A
adjointed, and its value gradient is the dot product of the gradient row and operand row each
entry couples. Kernels: kernels/sparse_math.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.sparse_reshape_ops import (
    as_sparse_input,
    deprecated_alias,
    sparse_components,
)

__all__ = ["sparse_add", "sparse_tensor_dense_matmul", "sparse_mask", "sparse_matmul"]

TensorShape = _ts.TensorShape
_SPARSE = (SparseTensor, SparseTensorValue)


def _add_shape(ctx):
    _, rank = sparse_components(ctx)
    _, b_rank = sparse_components(ctx, 3)
    shape_with_rank(ctx.input_shape(6), 0)
    rank = rank if rank is not None else b_rank
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


SparseAdd = define_op(
    "SparseAdd",
    inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
            "b_values: T", "b_shape: int64", "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC), TypeAttr("Treal", _dtypes.REAL_NUMERIC)],
    shape_fn=_add_shape)


def _add_grad_shape(ctx):
    shape_with_rank(ctx.input_shape(0), 1)
    a = shape_with_rank(ctx.input_shape(1), 2)
    b = shape_with_rank(ctx.input_shape(2), 2)
    shape_with_rank(ctx.input_shape(3), 2)
    return [TensorShape(a.as_list()[:1]), TensorShape(b.as_list()[:1])]


SparseAddGrad = define_op(
    "SparseAddGrad",
    inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
            "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"], attrs=[TypeAttr("T", _dtypes.NUMERIC)],
    shape_fn=_add_grad_shape, not_differentiable=True,
    doc="SparseAdd's value gradients: each input entry takes its sum entry's gradient.")


@SparseAdd.gradient
def _sparse_add_grad(op, _indices_grad, values_grad, _shape_grad):
    a_grad, b_grad = apply_op(SparseAddGrad, [values_grad, op.inputs[0], op.inputs[3],
                                              op.outputs[0]])
    a_grad.set_shape(op.inputs[1].shape)
    b_grad.set_shape(op.inputs[4].shape)
    return [None, a_grad, None, None, b_grad, None, None]


def _dense_add_shape(ctx):
    sparse_components(ctx)
    return ctx.input_shape(3)


SparseTensorDenseAdd = define_op(
    "SparseTensorDenseAdd",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC), TypeAttr("Tindices", _dtypes.INDEX)],
    shape_fn=_dense_add_shape)


@SparseTensorDenseAdd.gradient
def _sparse_tensor_dense_add_grad(op, grad):
    from tensorweave.ops.array_index_ops import gather_nd
    return [None, gather_nd(grad, op.inputs[0]), None, grad]


def _matmul_shape(ctx):
    """[rows of op(A), columns of op(B)]; the inner dimensions must agree."""
    indices = shape_with_rank(ctx.input_shape(0), 2)
    merge_shapes(TensorShape(indices.as_list()[:1]), shape_with_rank(ctx.input_shape(1), 1))
    shape_with_rank(ctx.input_shape(2), 1).merge_with(TensorShape([2]))
    b = shape_with_rank(ctx.input_shape(3), 2).as_list()
    a = ctx.static_shape(2)
    a = a.as_list() if a.ndims == 2 else [None, None]
    return _product_shape(a, b, ctx.attr("adjoint_a"), ctx.attr("adjoint_b"))


def _product_shape(a: list, b: list, flip_a: bool, flip_b: bool) -> TensorShape:
    """[rows of op(a), columns of op(b)] for [2] dims lists; the inner dimensions agree."""
    a, b = (a[::-1] if flip_a else a), (b[::-1] if flip_b else b)
    if a[1] is not None and b[0] is not None and a[1] != b[0]:
        raise ValueError(f"Dimensions must be equal, but are {a[1]} and {b[0]}")
    return TensorShape([a[0], b[1]])


SparseTensorDenseMatMul = define_op(
    "SparseTensorDenseMatMul",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"],
    attrs=[TypeAttr("T"), TypeAttr("Tindices", _dtypes.INDEX, _dtypes.int64),
           Attr("adjoint_a", "bool", False), Attr("adjoint_b", "bool", False)],
    shape_fn=_matmul_shape)


@SparseTensorDenseMatMul.gradient
def _sparse_tensor_dense_matmul_grad(op, grad):
    """dB = op(A)^H grad (adjointed back if B was); d a_values[i] = <grad row, B row> for the
    rows entry i couples, conjugated as the adjoints ask."""
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_matrix_ops import matrix_transpose
    from tensorweave.ops.array_ops import transpose
    from tensorweave.ops.math_unary_ops import conj
    from tensorweave.ops.reduction_ops import reduce_sum
    indices, values, shape, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = apply_op(SparseTensorDenseMatMul, [indices, values, shape, grad],
                      {"adjoint_a": not adj_a})
    if adj_b:
        b_grad = matrix_transpose(b_grad, conjugate=True)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = gather(grad, cols if adj_a else rows)
    parts_b = gather(transpose(b) if adj_b else b, rows if adj_a else cols)
    if values.dtype.is_complex:
        parts_a = conj(parts_a) if adj_a else parts_a
        parts_b = parts_b if adj_a != adj_b else conj(parts_b)
    return [None, reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


def _matmul_shape_2d(ctx):
    return _product_shape(shape_with_rank(ctx.input_shape(0), 2).as_list(),
                          shape_with_rank(ctx.input_shape(1), 2).as_list(),
                          ctx.attr("transpose_a"), ctx.attr("transpose_b"))


_SPARSE_MATMUL_TYPES = [_dtypes.float32, _dtypes.bfloat16]
SparseMatMul = define_op(
    "SparseMatMul", inputs=["a: Ta", "b: Tb"], outputs=["product: float32"],
    attrs=[Attr("transpose_a", "bool", False), Attr("transpose_b", "bool", False),
           Attr("a_is_sparse", "bool", False), Attr("b_is_sparse", "bool", False),
           TypeAttr("Ta", _SPARSE_MATMUL_TYPES, _dtypes.float32),
           TypeAttr("Tb", _SPARSE_MATMUL_TYPES, _dtypes.float32)],
    shape_fn=_matmul_shape_2d)


@SparseMatMul.gradient
def _sparse_matmul_grad(op, grad):
    """TF's rule: the products of the usual matmul gradient, each a SparseMatMul when one of
    its operands is hinted sparse (a ReluGrad output counts as sparse), else a MatMul."""
    from tensorweave.ops.array_ops import transpose
    from tensorweave.ops.linalg_ops import matmul
    from tensorweave.ops.math_unary_ops import cast
    a, b = op.inputs
    hints = {id(a): op.get_attr("a_is_sparse"), id(b): op.get_attr("b_is_sparse"),
             id(grad): grad.op.type == "ReluGrad"}

    def product(t1, t2, out_dtype, transpose_a=False, transpose_b=False):
        s1, s2 = hints.get(id(t1), False), hints.get(id(t2), False)
        if transpose_b:
            t2 = transpose(t2)
        if (s1 or s2) and t1.dtype in _SPARSE_MATMUL_TYPES and \
                t2.dtype in _SPARSE_MATMUL_TYPES:
            prod = sparse_matmul(t1, t2, transpose_a=transpose_a, a_is_sparse=s1,
                                 b_is_sparse=s2)
        else:
            prod = matmul(t1, t2, transpose_a=transpose_a)
        return prod if prod.dtype == out_dtype else cast(prod, out_dtype)

    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not t_a and not t_b:
        return [product(grad, b, a.dtype, transpose_b=True),
                product(a, grad, b.dtype, transpose_a=True)]
    if not t_a and t_b:
        return [product(grad, b, a.dtype), product(grad, a, b.dtype, transpose_a=True)]
    if t_a and not t_b:
        return [product(b, grad, a.dtype, transpose_b=True), product(a, grad, b.dtype)]
    return [product(b, grad, a.dtype, transpose_a=True, transpose_b=True),
            product(grad, a, b.dtype, transpose_a=True, transpose_b=True)]


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None):
    """The float32 matrix product of float32/bfloat16 matrices, with hints that an operand has
    many zeros (TF1's tf.sparse_matmul, deprecated in favour of tf.matmul).

    Args:
      a: a float32 or bfloat16 matrix.
      b: a float32 or bfloat16 matrix.
      transpose_a: multiply by the transpose of `a`.
      transpose_b: multiply by the transpose of `b`.
      a_is_sparse: hint that `a` is mostly zeros.
      b_is_sparse: hint that `b` is mostly zeros.
      name: the op name (default "SparseMatMul").

    Returns:
      A float32 matrix.

    Raises:
      ValueError: for operands that are not matrices or whose inner dimensions differ.
      TypeError: for operands of another dtype.
    """
    return apply_op(SparseMatMul, [a, b],
                    {"transpose_a": transpose_a, "transpose_b": transpose_b,
                     "a_is_sparse": a_is_sparse, "b_is_sparse": b_is_sparse}, name=name)


def sparse_add(a, b, threshold=None, thresh=None):
    """Adds two SparseTensors, or a SparseTensor and a dense Tensor (TF1's tf.sparse.add).

    Two sparse operands give a SparseTensor in row-major order; an entry present in both whose
    sum has magnitude below `threshold` is dropped. A dense operand gives a dense Tensor.

    Args:
      a: a SparseTensor or dense Tensor (at least one of `a`, `b` is sparse).
      b: a SparseTensor or dense Tensor of the same shape.
      threshold: a real scalar, the smallest magnitude of a sum kept (default 0).
      thresh: deprecated alias of `threshold`.

    Returns:
      A SparseTensor (two sparse operands) or a dense Tensor.

    Raises:
      TypeError: if neither operand is sparse.
      ValueError: if the static shapes differ.
      InvalidArgumentError: at run time, for shapes that differ.
    """
    threshold = deprecated_alias("threshold", threshold, "thresh", thresh)
    threshold = 0 if threshold is None else threshold
    if not isinstance(a, _SPARSE) and not isinstance(b, _SPARSE):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add()?")
    if isinstance(a, _SPARSE) and isinstance(b, _SPARSE):
        a, b = as_sparse_input(a), as_sparse_input(b)
        thresh_t = convert_to_tensor(threshold, dtype=a.values.dtype.real_dtype.base_dtype,
                                     name="threshold")
        indices, values, shape = apply_op(
            SparseAdd, [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape,
                        thresh_t])
        a.shape.assert_is_compatible_with(b.shape)
        static = a.shape.merge_with(b.shape)
        return SparseTensor(indices, values,
                            static.as_list() if static.is_fully_defined() else shape)
    if isinstance(b, _SPARSE):
        a, b = b, a
    a = as_sparse_input(a)
    return apply_op(SparseTensorDenseAdd, [a.indices, a.values, a.dense_shape, b])


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The matrix product of a rank-2 SparseTensor and a dense matrix (TF1's
    tf.sparse.sparse_dense_matmul); with a sparse `b` and dense `sp_a`, (b^T a^T)^T.

    Args:
      sp_a: a rank-2 SparseTensor (or a dense matrix when `b` is sparse).
      b: a dense matrix of the same dtype (or a SparseTensor).
      adjoint_a: use the conjugate transpose of `sp_a`.
      adjoint_b: use the conjugate transpose of `b`.
      name: the name scope (default "SparseTensorDenseMatMul").

    Returns:
      A dense matrix of shape [rows of op(sp_a), columns of op(b)].

    Raises:
      ValueError: for operands that are not matrices or whose inner dimensions differ.
      TypeError: for operands of different dtypes.
      InvalidArgumentError: at run time for an index out of bounds or mismatched dimensions.
    """
    from tensorweave.ops.array_ops import transpose
    if isinstance(b, _SPARSE):
        if adjoint_a != adjoint_b:
            return transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a, adjoint_b))
        return transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a=not adjoint_a,
                                                    adjoint_b=not adjoint_b))
    sp_a = as_sparse_input(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul"):
        b = convert_to_tensor(b, name="b")
        return apply_op(SparseTensorDenseMatMul, [sp_a.indices, sp_a.values, sp_a.dense_shape,
                                                  b],
                        {"adjoint_a": adjoint_a, "adjoint_b": adjoint_b})


def sparse_mask(a, mask_indices, name=None):
    """The slices of an IndexedSlices whose indices are not in `mask_indices`
    (TF1's tf.sparse_mask).

    Args:
      a: an IndexedSlices.
      mask_indices: 1-D indices of the slices to drop.
      name: the name scope (default "sparse_mask").

    Returns:
      An IndexedSlices with the remaining slices, in their order in `a`.
    """
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.counting_ops import setdiff1d
    with name_scope(name, "sparse_mask") as scope:
        out_indices, to_gather = setdiff1d(a.indices, mask_indices)
        out_values = gather(a.values, to_gather, name=scope)
        return IndexedSlices(out_values, out_indices, a.dense_shape)
