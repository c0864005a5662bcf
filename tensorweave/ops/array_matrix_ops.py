"""Matrix structure: Diag, DiagPart, MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 and
MatrixBandPart, with the TF1 wrappers built on them (diag, diag_part, matrix_diag,
matrix_diag_part, matrix_set_diag, matrix_band_part, eye, trace, matrix_transpose).

The V3 diagonal ops address a band of diagonals `k = (k[0], k[1])` of the innermost matrices,
packed one diagonal per row of `[..., num_diags, max_diag_len]` (a single diagonal drops the
`num_diags` dimension); `align` says on which side shorter diagonals are padded. The rules
that decide sizes (`in_bounds`, `max_diag_len`, `matrix_size`) are shared with the kernels in
`kernels/array_matrix.py`. Gradients are TensorFlow's: each op's adjoint is another op of the
family (MatrixDiagV3 <-> MatrixDiagPartV3, Diag <-> DiagPart, MatrixBandPart is its own).

Where TensorFlow's static shapes are wrong or its shape functions reject a valid graph (an
unknown innermost diagonal length or diagonal count, a `k`, `num_rows` or `num_cols` that is not
a constant), the shape here has unknown dimensions instead.
"""
from __future__ import annotations

import numbers

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones, zeros, zeros_like
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import rank, transpose
from tensorweave.ops.math_ops import minimum
from tensorweave.ops.nn_conv_ops import check_string_attr
from tensorweave.ops.reduction_ops import reduce_sum

__all__ = ["diag", "diag_part", "eye", "matrix_band_part", "matrix_diag", "matrix_diag_part",
           "matrix_set_diag", "matrix_transpose", "trace"]

TensorShape = _ts.TensorShape
_DIAG_TYPES = _dtypes.FLOATING | _dtypes.COMPLEX | {_dtypes.int32, _dtypes.int64}
ALIGNMENTS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")


def _dims(shape: TensorShape):
    return shape._dims


def _at_least(dims, n: int):
    if dims is not None and len(dims) < n:
        raise ValueError(f"Shape must be at least rank {n} but is rank {len(dims)}")
    return dims


def _at_most(dims, n: int):
    if dims is not None and len(dims) > n:
        raise ValueError(f"Shape must be at most rank {n} but is rank {len(dims)}")
    return dims


# --- shared geometry (shape functions and kernels) ---------------------------------------------
def _diag_index(k) -> tuple[int, int]:
    """(lower, upper) from a static `k` of one or two elements; ValueError in the shape
    function's words otherwise."""
    values = np.ravel(k).tolist()
    if len(values) not in (1, 2):
        raise ValueError(f"diag_index must be a vector with one or two elements. It has "
                         f"{len(values)} elements.")
    lower, upper = values[0], values[-1]
    if lower > upper:
        raise ValueError("lower_diag_index is greater than upper_diag_index")
    return lower, upper


def in_bounds(index: int, rows: int, cols: int) -> bool:
    """Whether diagonal `index` exists in a rows x cols matrix (0 always does, even if empty)."""
    return index == 0 or -rows < index < cols


def max_diag_len(rows: int, cols: int, lower: int, upper: int) -> int:
    """The length of the longest diagonal in [lower, upper] of a rows x cols matrix."""
    return min(rows + min(upper, 0), cols - max(lower, 0))


def matrix_size(diag_len: int, lower: int, upper: int, num_rows: int, num_cols: int):
    """MatrixDiagV3's (rows, cols, problem): -1 asks for the smallest size that holds the
    diagonals (a square when both are -1); `problem` is None, "rows", "cols" or "inconsistent"
    (at least one side must be that smallest size)."""
    min_rows = diag_len - min(upper, 0)
    min_cols = diag_len + max(lower, 0)
    if num_rows != -1 and num_rows < min_rows:
        return num_rows, num_cols, "rows"
    if num_cols != -1 and num_cols < min_cols:
        return num_rows, num_cols, "cols"
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    if num_rows != min_rows and num_cols != min_cols:
        return num_rows, num_cols, "inconsistent"
    return num_rows, num_cols, None


def _align(ctx) -> str:
    return check_string_attr(ctx.op_type, "align", ctx.attr("align"), ALIGNMENTS)


def _static_k(ctx, i: int):
    """(lower, upper) if input i (k, already checked to have rank <= 1) is a constant."""
    k = ctx.static_value(i)
    return None if k is None else _diag_index(k)


def _static_size(ctx, i: int):
    """A num_rows/num_cols scalar: its constant value (-1: not given), or None if unknown."""
    dims_with_rank(_dims(ctx.input_shape(i)), 0)
    value = ctx.static_value(i)
    return None if value is None else int(value)


# --- Diag, DiagPart ----------------------------------------------------------------------------
def _diag_shape(ctx):
    dims = _at_least(_dims(ctx.input_shape(0)), 1)
    return _ts.unknown_shape() if dims is None else TensorShape(dims + dims)


def _diag_part_shape(ctx):
    dims = _dims(ctx.input_shape(0))
    if dims is None:
        return _ts.unknown_shape()
    if len(dims) % 2 or not dims:
        raise ValueError(f"Input must have even and non-zero rank, input rank is {len(dims)}")
    half = len(dims) // 2
    out = []
    for a, b in zip(dims[:half], dims[half:]):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
        out.append(b if a is None else a)
    return TensorShape(out)


Diag = define_op("Diag", inputs=["diagonal: T"], outputs=["output: T"],
                 attrs=[TypeAttr("T", _DIAG_TYPES)], shape_fn=_diag_shape)
DiagPart = define_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                     attrs=[TypeAttr("T", _DIAG_TYPES)], shape_fn=_diag_part_shape)


@Diag.gradient
def _diag_grad(op, grad):
    return [diag_part(grad)]


@DiagPart.gradient
def _diag_part_grad(op, grad):
    return [diag(grad)]


def diag(diagonal, name=None):
    """Returns a tensor with `diagonal` on its diagonal and zeros elsewhere (TF1's tf.diag).

    For `diagonal` of shape [D1, ..., Dk] the output has shape [D1, ..., Dk, D1, ..., Dk] with
    `output[i1, ..., ik, i1, ..., ik] = diagonal[i1, ..., ik]`.

    Args:
      diagonal: a Tensor of rank >= 1 (float, complex, int32 or int64).
      name: the op name (default "Diag").

    Returns:
      A Tensor of twice the rank, of `diagonal`'s dtype.

    Raises:
      ValueError: if `diagonal` is statically a scalar.
      TypeError: for an unsupported dtype.
    """
    return apply_op(Diag, [diagonal], name=name)


def diag_part(input, name=None):  # noqa: A002 - TF1's argument name
    """Returns the diagonal part of a tensor, the inverse of `diag` (TF1's tf.diag_part).

    For `input` of shape [D1, ..., Dk, D1, ..., Dk] the output has shape [D1, ..., Dk] with
    `output[i1, ..., ik] = input[i1, ..., ik, i1, ..., ik]`.

    Args:
      input: a Tensor of even, non-zero rank 2k whose dimension i equals dimension i + k.
      name: the op name (default "DiagPart").

    Returns:
      A Tensor of rank k, of `input`'s dtype.

    Raises:
      ValueError: if the rank is statically odd or zero, or paired dimensions differ.
      TypeError: for an unsupported dtype.
    """
    return apply_op(DiagPart, [input], name=name)


# --- MatrixDiagV3 ------------------------------------------------------------------------------
def _matrix_diag_shape(ctx):
    """[..., (num_diags,) max_diag_len] -> [..., num_rows, num_cols]."""
    _align(ctx)
    dims = _at_least(_dims(ctx.input_shape(0)), 1)
    _at_most(_dims(ctx.input_shape(1)), 1)
    for i in (2, 3, 4):
        dims_with_rank(_dims(ctx.input_shape(i)), 0)
    k = _static_k(ctx, 1)
    if dims is None or k is None:
        return _ts.unknown_shape()
    lower, upper = k
    batch = dims[:-1]
    if lower < upper:
        num_diags = dims[-2] if len(dims) >= 2 else -1
        if num_diags is not None and num_diags != upper - lower + 1:
            raise ValueError("The number of rows of `diagonal` doesn't match the number of "
                             "diagonals implied from `d_lower` and `d_upper`.")
        batch = dims[:-2]
    num_rows, num_cols = _static_size(ctx, 2), _static_size(ctx, 3)
    if dims[-1] is None or num_rows is None or num_cols is None:
        return TensorShape(batch + (_given(num_rows), _given(num_cols)))
    rows, cols, problem = matrix_size(dims[-1], lower, upper, num_rows, num_cols)
    if problem == "rows":
        raise ValueError("num_rows is too small")
    if problem == "cols":
        raise ValueError("num_cols is too small.")
    if problem == "inconsistent":
        raise ValueError("num_rows and num_cols are not consistent with lower_diag_index, "
                         "upper_diag_index, and the length of the given diagonals.")
    return TensorShape(batch + (rows, cols))


def _given(size):
    """A static output dimension from an explicit num_rows/num_cols (None: not known)."""
    return None if size is None or size == -1 else size


MatrixDiagV3 = define_op(
    "MatrixDiagV3",
    inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
            "padding_value: T"],
    outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("align", "string", "RIGHT_LEFT")],
    shape_fn=_matrix_diag_shape)


@MatrixDiagV3.gradient
def _matrix_diag_grad(op, grad):
    """The diagonals read back out of the gradient; padding positions get none."""
    return [matrix_diag_part(grad, k=op.inputs[1], align=op.get_attr("align")),
            None, None, None, None]


def _padding(tensor, padding_value):
    """TF's wrappers make the default padding False for a boolean tensor."""
    if getattr(tensor, "dtype", None) is not None and \
            _dtypes.as_dtype(tensor.dtype).base_dtype == _dtypes.bool:
        return bool(padding_value)
    return padding_value


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT"):
    """Returns batched matrices with the given batched diagonals (TF1's tf.matrix_diag).

    With a single diagonal (`k` an int or k[0] == k[1]), `diagonal` [..., L] gives
    [..., num_rows, num_cols] with `output[..., m, m + k] = diagonal[..., m - max(-k, 0)]`.
    With a band k = (lower, upper), `diagonal` is [..., upper - lower + 1, L]: row j holds
    diagonal `upper - j`, and shorter diagonals are padded on the side `align` names
    ("RIGHT_LEFT": superdiagonals aligned right, subdiagonals left). Everything off the
    diagonals is `padding_value`.

    Args:
      diagonal: a Tensor of rank >= 1 (rank >= 2 for a band).
      name: the op name (default "diag").
      k: the diagonal offset (positive: above the main diagonal) or a (lower, upper) pair;
        an int32 scalar or vector.
      num_rows: rows of each output matrix; -1 infers the smallest that fits.
      num_cols: columns of each output matrix; -1 infers the smallest that fits (with both
        -1 the matrices are square).
      padding_value: the value outside the diagonals.
      align: "RIGHT_LEFT" (default), "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A Tensor of `diagonal`'s dtype.

    Raises:
      ValueError: for a bad `align`, `k` with more than two entries or k[0] > k[1], a diagonal
        count that does not match `k`, or `num_rows`/`num_cols` too small or inconsistent.
    """
    return apply_op(MatrixDiagV3, [diagonal, k, num_rows, num_cols,
                                   _padding(diagonal, padding_value)],
                    {"align": align}, name=name)


# --- MatrixDiagPartV3 --------------------------------------------------------------------------
def _matrix_diag_part_shape(ctx):
    """[..., M, N] -> [..., (num_diags,) max_diag_len]."""
    _align(ctx)
    dims = _at_least(_dims(ctx.input_shape(0)), 2)
    _at_most(_dims(ctx.input_shape(1)), 1)
    dims_with_rank(_dims(ctx.input_shape(2)), 0)
    k = _static_k(ctx, 1)
    if dims is None or k is None:
        return _ts.unknown_shape()
    lower, upper = k
    rows, cols = dims[-2:]
    length = None
    if rows is not None and cols is not None:
        _check_bounds(lower, upper, rows, cols)
        length = max_diag_len(rows, cols, lower, upper)
    band = (upper - lower + 1,) if lower < upper else ()
    return TensorShape(dims[:-2] + band + (length,))


def _check_bounds(lower, upper, rows, cols) -> None:
    if not in_bounds(lower, rows, cols):
        raise ValueError("lower_diag_index is out of bound.")
    if not in_bounds(upper, rows, cols):
        raise ValueError("upper_diag_index is out of bound.")


MatrixDiagPartV3 = define_op(
    "MatrixDiagPartV3", inputs=["input: T", "k: int32", "padding_value: T"],
    outputs=["diagonal: T"], attrs=[TypeAttr("T"), Attr("align", "string", "RIGHT_LEFT")],
    shape_fn=_matrix_diag_part_shape)


@MatrixDiagPartV3.gradient
def _matrix_diag_part_grad(op, grad):
    """The gradient put back on the diagonals: MatrixDiagV3 when the matrix size is static,
    else written into zeros shaped like the input. No gradient flows to padding_value."""
    x, k = op.inputs[:2]
    align = op.get_attr("align")
    matrix = x.shape[-2:]   # unknown rank slices to an unknown shape
    if matrix.is_fully_defined():
        rows, cols = matrix.as_list()
        return [matrix_diag(grad, k=k, num_rows=rows, num_cols=cols, align=align), None, None]
    return [matrix_set_diag(zeros_like(x), grad, k=k, align=align), None, None]


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0,  # noqa: A002 - TF1 name
                     align="RIGHT_LEFT"):
    """Returns the batched diagonals of batched matrices (TF1's tf.matrix_diag_part).

    For `input` [..., M, N] and a single diagonal `k`, the output is [..., max_diag_len] with
    `output[..., n] = input[..., n + max(-k, 0), n + max(k, 0)]`. For a band k = (lower,
    upper) it is [..., upper - lower + 1, max_diag_len], row j holding diagonal `upper - j`;
    shorter diagonals are padded with `padding_value` on the side `align` names.

    Args:
      input: a Tensor of rank >= 2.
      name: the op name (default "diag_part").
      k: the diagonal offset or a (lower, upper) pair; an int32 scalar or vector. Offsets
        must lie in (-M, N) (0 is always allowed).
      padding_value: the value that pads shorter diagonals of a band.
      align: "RIGHT_LEFT" (default), "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A Tensor of `input`'s dtype.

    Raises:
      ValueError: for a bad `align`, rank < 2, or `k` statically out of bounds or reversed.
    """
    return apply_op(MatrixDiagPartV3, [input, k, _padding(input, padding_value)],
                    {"align": align}, name=name)


# --- MatrixSetDiagV3 ---------------------------------------------------------------------------
def _matrix_set_diag_shape(ctx):
    """The input's shape, with batch dimensions filled in from the diagonal's."""
    _align(ctx)
    dims = _at_least(_dims(ctx.input_shape(0)), 2)
    diag_dims = _at_least(_dims(ctx.input_shape(1)), 1)
    _at_most(_dims(ctx.input_shape(2)), 1)
    if dims is not None:   # TensorFlow checks this range before it reads k
        _at_most(_at_least(diag_dims, len(dims) - 1), len(dims))
    k = _static_k(ctx, 2)
    single = None if k is None else k[0] == k[1]
    if dims is not None and k is not None:
        want = len(dims) - 1 if single else len(dims)
        if diag_dims is not None and len(diag_dims) != want:
            raise ValueError(f"Shape must be rank {want} but is rank {len(diag_dims)}")
        rows, cols = dims[-2:]
        if rows is not None and cols is not None:
            _check_bounds(*k, rows, cols)
    elif dims is not None and diag_dims is not None:
        single = len(diag_dims) == len(dims) - 1
    if diag_dims is None or single is None:
        return TensorShape(dims) if dims is not None else _ts.unknown_shape()
    batch = diag_dims[:len(diag_dims) - (1 if single else 2)]
    return TensorShape(merge_dims(dims, batch + (None, None)))


MatrixSetDiagV3 = define_op(
    "MatrixSetDiagV3", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("align", "string", "RIGHT_LEFT")],
    shape_fn=_matrix_set_diag_shape)


@MatrixSetDiagV3.gradient
def _matrix_set_diag_grad(op, grad):
    """The input gets the gradient with the diagonals zeroed; the diagonals get the gradient's
    diagonals."""
    diagonal, k = op.inputs[1:]
    align = op.get_attr("align")
    if diagonal.shape.is_fully_defined():
        zero = zeros(diagonal.shape.as_list(), dtype=grad.dtype)
    else:
        zero = zeros_like(diagonal)
    return [matrix_set_diag(grad, zero, k=k, align=align),
            matrix_diag_part(grad, k=k, align=align), None]


def matrix_set_diag(input, diagonal, name="set_diag", k=0,  # noqa: A002 - TF1's name
                    align="RIGHT_LEFT"):
    """Returns batched matrices with new batched diagonals (TF1's tf.matrix_set_diag).

    The output equals `input` [..., M, N] except on the diagonals `k` names, which get the
    values of `diagonal`, laid out as `matrix_diag_part` returns them: [..., max_diag_len] for
    a single diagonal, [..., upper - lower + 1, max_diag_len] for a band k = (lower, upper).

    Args:
      input: a Tensor of rank >= 2.
      diagonal: a Tensor of `input`'s dtype and rank - 1 (single) or rank (band).
      name: the op name (default "set_diag").
      k: the diagonal offset or a (lower, upper) pair; an int32 scalar or vector.
      align: "RIGHT_LEFT" (default), "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A Tensor shaped like `input`.

    Raises:
      ValueError: for a bad `align`, ranks that do not fit, or `k` statically out of bounds
        or reversed.
    """
    return apply_op(MatrixSetDiagV3, [input, diagonal, k], {"align": align}, name=name)


# --- MatrixBandPart ----------------------------------------------------------------------------
MatrixBandPart = define_op(
    "MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
    outputs=["band: T"],
    attrs=[TypeAttr("T"), TypeAttr("Tindex", _dtypes.INDEX, _dtypes.int64)],
    shape_fn=lambda ctx: ctx.input_shape(0))


@MatrixBandPart.gradient
def _matrix_band_part_grad(op, grad):
    """The band part is a mask: the gradient is masked the same way."""
    return [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002 - TF1's name
    """Keeps a band around the diagonal of batched matrices, zeroing the rest
    (TF1's tf.matrix_band_part).

    `output[..., m, n] = input[..., m, n]` where `(num_lower < 0 or m - n <= num_lower) and
    (num_upper < 0 or n - m <= num_upper)`, else 0. `matrix_band_part(x, 0, -1)` is the upper
    triangle, `(x, -1, 0)` the lower triangle, `(x, 0, 0)` the diagonal.

    Args:
      input: a Tensor of rank >= 2 (checked when the op runs, as in TensorFlow).
      num_lower: an int32/int64 scalar: subdiagonals to keep (negative: all).
      num_upper: a scalar of the same dtype: superdiagonals to keep (negative: all).
      name: the op name (default "MatrixBandPart").

    Returns:
      A Tensor shaped like `input`.

    Raises:
      TypeError: if `num_lower`/`num_upper` are not int32/int64 or differ in dtype.
    """
    return apply_op(MatrixBandPart, [input, num_lower, num_upper], name=name)


# --- composites: eye, trace, matrix_transpose --------------------------------------------------
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """Constructs an identity matrix, or a batch of them (TF1's tf.eye).

    Built like TensorFlow's: `matrix_diag` of ones for a square matrix, else `matrix_set_diag`
    of ones into zeros. Sizes given as Tensors are resolved when the graph runs.

    Args:
      num_rows: a non-negative int or int32 scalar Tensor: rows of each matrix.
      num_columns: an optional int or int32 scalar Tensor: columns (default `num_rows`).
      batch_shape: an optional list of ints or 1-D int32 Tensor of leading batch dimensions.
      dtype: the element type.
      name: a name scope for the ops (default "eye").

    Returns:
      A Tensor of shape `batch_shape + [num_rows, num_columns]`.

    Raises:
      TypeError: if `num_rows` or `num_columns` is neither an integer nor a Tensor.
    """
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        is_square = num_columns is None
        batch_shape = [] if batch_shape is None else batch_shape
        num_columns = num_rows if num_columns is None else num_columns
        if isinstance(num_rows, Tensor) or isinstance(num_columns, Tensor):
            diag_size = minimum(num_rows, num_columns)
        else:
            if not _is_integer(num_rows) or not _is_integer(num_columns):
                raise TypeError("Arguments `num_rows` and `num_columns` must be positive integer "
                                f"values. Received: num_rows={num_rows}, "
                                f"num_columns={num_columns}")
            is_square = num_rows == num_columns
            diag_size = min(num_rows, num_columns)
        if isinstance(batch_shape, Tensor) or isinstance(diag_size, Tensor):
            batch_shape = convert_to_tensor(batch_shape, dtype=_dtypes.int32, name="shape")
            diag_shape = concat((batch_shape, [diag_size]), axis=0)
            shape = None if is_square else concat((batch_shape, [num_rows, num_columns]), 0)
        else:
            batch_shape = list(batch_shape)
            diag_shape = batch_shape + [diag_size]
            shape = None if is_square else batch_shape + [num_rows, num_columns]
        diag_ones = ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(diag_ones)
        return matrix_set_diag(zeros(shape, dtype=dtype), diag_ones)


def _is_integer(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer))


def trace(x, name=None):
    """Computes the sum along the main diagonal of each innermost matrix (TF1's tf.trace).

    Args:
      x: a Tensor of rank >= 2 and shape [..., M, N].
      name: the name of the resulting Sum op (default "Trace").

    Returns:
      A Tensor of shape [...] and `x`'s dtype.

    Raises:
      ValueError: if `x` is statically of rank < 2.
    """
    with name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return reduce_sum(matrix_diag_part(x), [-1], name=scope)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of `a` (TF1's tf.matrix_transpose).

    Args:
      a: a Tensor of rank >= 2.
      name: a name scope for the ops (default "matrix_transpose").
      conjugate: if true, complex entries are also conjugated (ConjugateTranspose).

    Returns:
      The transposed batch of matrices: shape [..., N, M] for `a` of shape [..., M, N].

    Raises:
      ValueError: if `a` is statically of rank < 2.
    """
    with name_scope(name, "matrix_transpose", [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError("Argument `a` should be a (batch) matrix with rank >= 2.  "
                                 f"Received `a` = {a} with shape: {a.shape}")
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            a_rank = rank(a)
            perm = concat((_range(0, a_rank - 2, 1), [a_rank - 1, a_rank - 2]), 0)
        return transpose(a, perm=perm, conjugate=conjugate)


def adjoint(matrix, name=None):
    """Conjugates and transposes the last two dimensions of `matrix` (TF's tf.linalg.adjoint).

    Args:
      matrix: a Tensor of rank >= 2.
      name: a name scope for the ops (default "adjoint").

    Returns:
      The adjoint (Hermitian transpose) of each innermost matrix.

    Raises:
      ValueError: if `matrix` is statically of rank < 2.
    """
    with name_scope(name, "adjoint", [matrix]):
        matrix = convert_to_tensor(matrix, name="matrix")
        return matrix_transpose(matrix, conjugate=True)
