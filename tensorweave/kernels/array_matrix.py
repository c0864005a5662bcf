"""Kernels of the matrix-structure ops (ops/array_matrix_ops.py): Diag, DiagPart, MatrixDiagV3,
MatrixDiagPartV3, MatrixSetDiagV3 and MatrixBandPart.

The three V3 diagonal kernels share one layout: for a matrix size, a band of diagonals
[lower, upper], a packed diagonal length and an alignment, `band_layout` lists the (row, col)
of every band entry and its slot in the packed [num_diags * max_diag_len] diagonals. Each kernel
then moves all values of all batch entries with one fancy-indexing assignment. Layouts are
cached per geometry, so a step of a fixed-shape graph computes none. Checks and messages are
TensorFlow's kernels', in their order.
"""
from __future__ import annotations

import functools

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.ops.array_matrix_ops import in_bounds, matrix_size, max_diag_len

# TensorFlow registers these kernels for every plain-old-data type: numbers and bool.
DIAG_TYPES = _dtypes.NUMERIC | {_dtypes.bool}

_SIZE_ERRORS = {
    "rows": "The number of rows is too small.",
    "cols": "The number of columns is too small.",
    "inconsistent": "The number of rows or columns is not consistent with the specified "
                    "d_lower, d_upper, and diagonal.",
}


# --- Diag, DiagPart ----------------------------------------------------------------------------
@kernel("Diag")
def _diag(ctx, x):
    """[D1..Dk] -> [D1..Dk, D1..Dk]: the flattened diagonal of an n x n matrix, n = x.size."""
    if x.ndim < 1:
        raise invalid_argument(f"Input must be at least rank 1, got {x.ndim}")
    n = x.size
    out = np.zeros((n, n), dtype=x.dtype)
    out.flat[::n + 1] = x.ravel()
    return out.reshape(x.shape + x.shape)


@kernel("DiagPart")
def _diag_part(ctx, x):
    """[D1..Dk, D1..Dk] -> [D1..Dk]: the diagonal of x seen as an n x n matrix."""
    if x.ndim % 2:
        # TensorFlow's message carries the indentation of its source line.
        raise invalid_argument("The rank of the tensor should be" + " " * 42 +
                               f"even and positive, got shape {dims_text(x.shape)}")
    half = x.ndim // 2
    for i in range(half):
        if x.shape[i] != x.shape[i + half]:
            raise invalid_argument(f"Invalid shape {dims_text(x.shape)}: dimensions {i} and "
                                   f"{i + half} do not match.")
    n = int(np.prod(x.shape[:half]))
    return x.reshape(n, n).diagonal().reshape(x.shape[:half]).copy()


# --- the band layout of the V3 diagonal ops ----------------------------------------------------
@functools.lru_cache(maxsize=256)
def band_layout(rows: int, cols: int, lower: int, upper: int, length: int, align: str):
    """(row, col, slot) index arrays: band entry (row[i], col[i]) of a rows x cols matrix is
    packed at flat position slot[i] of [num_diags, length], where packed row j holds diagonal
    `upper - j`, left-aligned or right-aligned (padded in front) as `align` says for super-
    (first word) and subdiagonals (second word)."""
    left_super, left_sub = (side == "LEFT" for side in align.split("_"))
    d = upper - np.arange(upper - lower + 1)
    diag_len = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    left = ((d >= 0) & left_super) | ((d <= 0) & left_sub)
    offset = np.where(left, 0, length - diag_len)
    n = np.arange(length)[None, :] - offset[:, None]        # position along the diagonal
    valid = (n >= 0) & (n < diag_len[:, None])
    row = (n + np.maximum(-d, 0)[:, None])[valid]
    col = (n + np.maximum(d, 0)[:, None])[valid]
    slot = np.flatnonzero(valid)
    for a in (row, col, slot):
        a.flags.writeable = False   # shared by every call with this geometry
    return row, col, slot


class _BandKernel:
    """The V3 diagonal kernels: the alignment attr, parsed once per node."""

    def __init__(self, ctx):
        align = ctx.attrs["align"]
        self.align = align.decode() if isinstance(align, bytes) else align


def _check_rank(x, rank: int, what: str) -> None:
    if x.ndim < rank:
        raise invalid_argument(f"{what} must be at least {rank}-dim, received shape: "
                               f"{dims_text(x.shape)}")


def _read_k(k, empty_message: str) -> tuple[int, int]:
    """(lower, upper) from the k input, with TensorFlow's checks."""
    if k.ndim > 1:
        raise invalid_argument(f"diag_index must be a scalar or vector, received shape: "
                               f"{dims_text(k.shape)}")
    if k.size == 0:
        raise invalid_argument(empty_message)
    if k.size > 2:
        raise invalid_argument(f"diag_index must have only one or two elements, received {k.size} "
                               "elements.")
    values = k.ravel().tolist()
    return values[0], values[-1]


def _check_bounds(lower: int, upper: int, rows: int, cols: int, lower_stop: str) -> None:
    """k inside (-rows, cols); DiagPart ends the lower message with a period, SetDiag not."""
    if not in_bounds(lower, rows, cols):
        raise invalid_argument(f"lower_diag_index is out of bound: {lower}{lower_stop} It must be "
                               f"between {-rows} and {cols}")
    if not in_bounds(upper, rows, cols):
        raise invalid_argument(f"upper_diag_index is out of bound: {upper} It must be between "
                               f"{-rows} and {cols}")


def _check_order(lower: int, upper: int) -> None:
    if lower > upper:
        raise invalid_argument("lower_diag_index must not be larger than upper_diag_index: "
                               f"{lower} > {upper}")


def _packed_shape(batch: tuple, num_diags: int, length: int) -> tuple:
    return batch + ((num_diags,) if num_diags > 1 else ()) + (length,)


# --- MatrixDiagV3 ------------------------------------------------------------------------------
@kernel("MatrixDiagV3", dtypes=DIAG_TYPES)
class MatrixDiagKernel(_BandKernel):
    """Batched matrices of `padding_value` with the packed diagonals written on the band."""

    def compute(self, ctx, diagonal, k, num_rows, num_cols, padding_value):
        lower, upper = _read_k(k, "Expected diag_index to have at least 1 element")
        for name, value in (("num_rows", num_rows), ("num_cols", num_cols),
                            ("padding_value", padding_value)):
            if value.ndim != 0:
                raise invalid_argument(f"{name} must be a scalar")
        _check_rank(diagonal, 1, "diagonal")
        _check_order(lower, upper)
        num_diags = upper - lower + 1
        if num_diags > 1 and (diagonal.ndim < 2 or diagonal.shape[-2] != num_diags):
            raise invalid_argument("The number of diagonals provided in the input does not match "
                                   "the lower_diag_index and upper_diag_index range.")
        length = diagonal.shape[-1]
        rows, cols, problem = matrix_size(length, lower, upper, int(num_rows), int(num_cols))
        if problem is not None:
            raise invalid_argument(_SIZE_ERRORS[problem])
        batch = diagonal.shape[:diagonal.ndim - (1 if num_diags == 1 else 2)]
        row, col, slot = band_layout(rows, cols, lower, upper, length, self.align)
        out = np.full(batch + (rows, cols), padding_value, dtype=diagonal.dtype)
        out[..., row, col] = diagonal.reshape(batch + (num_diags * length,))[..., slot]
        return out


# --- MatrixDiagPartV3 --------------------------------------------------------------------------
@kernel("MatrixDiagPartV3", dtypes=DIAG_TYPES)
class MatrixDiagPartKernel(_BandKernel):
    """The band's diagonals packed into rows, shorter ones padded with `padding_value`."""

    def compute(self, ctx, x, k, padding_value):
        lower, upper = _read_k(k, "Expected diag_index to have at least 1 element")
        if padding_value.size != 1:
            raise invalid_argument("Padding must be scalar.")
        _check_rank(x, 2, "input")
        rows, cols = x.shape[-2:]
        _check_bounds(lower, upper, rows, cols, ".")
        _check_order(lower, upper)
        num_diags = upper - lower + 1
        length = max_diag_len(rows, cols, lower, upper)
        row, col, slot = band_layout(rows, cols, lower, upper, length, self.align)
        batch = x.shape[:-2]
        out = np.full(batch + (num_diags * length,), padding_value.reshape(()), dtype=x.dtype)
        out[..., slot] = x[..., row, col]
        return out.reshape(_packed_shape(batch, num_diags, length))


# --- MatrixSetDiagV3 ---------------------------------------------------------------------------
@kernel("MatrixSetDiagV3", dtypes=DIAG_TYPES)
class MatrixSetDiagKernel(_BandKernel):
    """A copy of the input with the packed diagonals written on the band."""

    def compute(self, ctx, x, diagonal, k):
        lower, upper = _read_k(k, "diag_index must have at least one element")
        _check_rank(x, 2, "input")
        _check_rank(diagonal, 1, "diagonal")
        rows, cols = x.shape[-2:]
        _check_bounds(lower, upper, rows, cols, "")
        _check_order(lower, upper)
        num_diags = upper - lower + 1
        if num_diags > 1:
            if diagonal.ndim < x.ndim - 1:
                raise invalid_argument("Diagonal tensor rank must be large enough to contain a "
                                       f"diagonal-count dimension. Input rank: {x.ndim}, Expected "
                                       f"diagonal rank >= {x.ndim - 1}, Received diagonal rank: "
                                       f"{diagonal.ndim}")
            if diagonal.shape[x.ndim - 2] != num_diags:
                raise invalid_argument("The number of diagonals provided in `diag` is not "
                                       "consistent with `lower_diag_index` and `upper_diag_index`")
        length = max_diag_len(rows, cols, lower, upper)
        batch = x.shape[:-2]
        expected = _packed_shape(batch, num_diags, length)
        if diagonal.shape != expected:
            raise invalid_argument("Either first dimensions of diagonal don't match "
                                   "input.shape[:-2], or diagonal.shape[:-1] is not equal to the "
                                   "longests diagonal in range "
                                   "[lower_diag_index:upper_diag_index].\nInput shape: "
                                   f"{dims_text(x.shape)}\nDiagonal shape: "
                                   f"{dims_text(diagonal.shape)}\nExpected diagonal shape: "
                                   f"{dims_text(expected)}")
        row, col, slot = band_layout(rows, cols, lower, upper, length, self.align)
        out = x.copy()
        out[..., row, col] = diagonal.reshape(batch + (num_diags * length,))[..., slot]
        return out


# --- MatrixBandPart ----------------------------------------------------------------------------
def _band_limit(value, name: str, size: int, what: str) -> int:
    """num_lower/num_upper as an int, checked like TensorFlow (negative keeps everything)."""
    if value.ndim != 0:
        raise invalid_argument(f"{name} must be scalar, got shape {dims_text(value.shape)}")
    limit = int(value)
    if limit > size:
        raise invalid_argument(f"{name} must be negative or less or equal to number of {what} "
                               f"({size}) got: {limit}")
    return limit


@kernel("MatrixBandPart", dtypes=DIAG_TYPES)
def _matrix_band_part(ctx, x, num_lower, num_upper):
    """Entries with m - n <= num_lower and n - m <= num_upper kept, the rest zero."""
    _check_rank(x, 2, "input")
    rows, cols = x.shape[-2:]
    lower = _band_limit(num_lower, "num_lower", rows, "rows")
    upper = _band_limit(num_upper, "num_upper", cols, "columns")
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]   # n - m
    keep = np.ones((rows, cols), dtype=bool)
    if lower >= 0:
        keep &= -offset <= lower
    if upper >= 0:
        keep &= offset <= upper
    return np.where(keep, x, np.zeros((), dtype=x.dtype))
