"""Matrix-structure ops (Diag, DiagPart, MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3,
MatrixBandPart) and the wrappers built on them (eye, trace, matrix_transpose): forward against
references written from TensorFlow's documented formulas, shape functions against the kernels,
gradients against central differences, TF's construction-time and run-time errors, default
names and op types."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.array_matrix import band_layout
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
DIAG_TYPES = (tf.float32, tf.float64, tf.int32, tf.int64, tf.complex64)
POD = (tf.float16, tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.complex64, tf.bool)
NUM = (tf.float32, tf.float64, tf.int32, tf.int64)
I32 = (None, tf.int32)
ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 3 + 1).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


# --- references, from the formulas in TensorFlow's docstrings ----------------------------------
def _band(k):
    return (k, k) if np.ndim(k) == 0 else (int(k[0]), int(k[-1]))


def _entries(rows, cols, k, length, align):
    """(packed row, packed column, matrix row, matrix column) of every band entry: packed row
    j holds diagonal d = upper - j; `align` pads short super-/subdiagonals in front when
    RIGHT."""
    lower, upper = _band(k)
    sup, sub = align.split("_")
    for j, d in enumerate(range(upper, lower - 1, -1)):
        diag_len = min(rows + min(d, 0), cols - max(d, 0))
        left = (d >= 0 and sup == "LEFT") or (d <= 0 and sub == "LEFT")
        offset = 0 if left else length - diag_len
        for n in range(diag_len):
            yield j, n + offset, n + max(-d, 0), n + max(d, 0)


def _packed(x, lower, upper):
    """A single diagonal's packed array gets a num_diags axis of 1."""
    return x if lower < upper else x[..., None, :]


def ref_diag_part(x, k=0, padding=0, align="RIGHT_LEFT"):
    lower, upper = _band(k)
    rows, cols = x.shape[-2:]
    length = min(rows + min(upper, 0), cols - max(lower, 0))
    out = np.full(x.shape[:-2] + (upper - lower + 1, length), padding, dtype=x.dtype)
    for j, n, r, c in _entries(rows, cols, k, length, align):
        out[..., j, n] = x[..., r, c]
    return out if lower < upper else out[..., 0, :]


def ref_matrix_diag(diag, k=0, rows=None, cols=None, padding=0, align="RIGHT_LEFT"):
    lower, upper = _band(k)
    length = diag.shape[-1]
    min_rows, min_cols = length - min(upper, 0), length + max(lower, 0)
    if rows in (None, -1) and cols in (None, -1):
        rows = cols = max(min_rows, min_cols)
    rows = min_rows if rows in (None, -1) else rows
    cols = min_cols if cols in (None, -1) else cols
    packed = _packed(diag, lower, upper)
    out = np.full(packed.shape[:-2] + (rows, cols), padding, dtype=diag.dtype)
    for j, n, r, c in _entries(rows, cols, k, length, align):
        out[..., r, c] = packed[..., j, n]
    return out


def ref_set_diag(x, diag, k=0, align="RIGHT_LEFT"):
    lower, upper = _band(k)
    out = x.copy()
    packed = _packed(diag, lower, upper)
    for j, n, r, c in _entries(*x.shape[-2:], k, diag.shape[-1], align):
        out[..., r, c] = packed[..., j, n]
    return out


def ref_band_part(x, lower, upper):
    rows, cols = x.shape[-2:]
    lower, upper = (rows if lower < 0 else lower), (cols if upper < 0 else upper)
    keep = np.tril(np.triu(np.ones((rows, cols), bool), -lower), upper)
    return np.where(keep, x, np.zeros((), x.dtype))


def ref_diag(x):
    out = np.zeros(x.shape + x.shape, dtype=x.dtype)
    for i in np.ndindex(*x.shape):
        out[i + i] = x[i]
    return out


def ref_tensor_diag_part(x):
    half = x.shape[:x.ndim // 2]
    out = np.zeros(half, dtype=x.dtype)
    for i in np.ndindex(*half):
        out[i] = x[i + i]
    return out


def ref_eye(rows, cols=None, batch=(), dtype=np.float32):
    return np.broadcast_to(np.eye(rows, cols, dtype=dtype), tuple(batch) + (rows, cols or rows))


def _swap(x):
    return np.swapaxes(x, -1, -2)


CASES = [
    # --- Diag / DiagPart
    OpCase("diag", tf.diag, ref_diag, [_randn(4)], dtypes=DIAG_TYPES),
    OpCase("diag_rank2", tf.diag, ref_diag, [_randn(2, 3)]),
    OpCase("diag_empty", tf.diag, ref_diag, [_randn(2, 0)]),
    OpCase("diag_part", tf.diag_part, ref_tensor_diag_part, [_randn(3, 3)], dtypes=DIAG_TYPES),
    OpCase("diag_part_rank4", tf.diag_part, ref_tensor_diag_part, [_randn(2, 3, 2, 3)]),
    OpCase("diag_part_empty", tf.diag_part, ref_tensor_diag_part, [_randn(0, 2, 0, 2)]),
    # --- MatrixDiagV3
    OpCase("matrix_diag", tf.matrix_diag, ref_matrix_diag, [_randn(2, 3)], dtypes=POD),
    OpCase("matrix_diag_superdiagonal", lambda d: tf.matrix_diag(d, k=2),
           lambda d: ref_matrix_diag(d, 2), [_randn(2, 3)], dtypes=NUM),
    OpCase("matrix_diag_rectangular",
           lambda d: tf.matrix_diag(d, k=-1, num_rows=3, num_cols=4, padding_value=9),
           lambda d: ref_matrix_diag(d, -1, 3, 4, 9), [_randn(2)], dtypes=NUM),
    OpCase("matrix_diag_rows_only", lambda d: tf.matrix_diag(d, k=-1, num_rows=3),
           lambda d: ref_matrix_diag(d, -1, rows=3), [_randn(2)]),
    OpCase("matrix_diag_cols_only", lambda d: tf.matrix_diag(d, k=1, num_cols=5),
           lambda d: ref_matrix_diag(d, 1, cols=5), [_randn(4, 3)]),
    *[OpCase(f"matrix_diag_band_{align.lower()}",
             lambda d, a=align: tf.matrix_diag(d, k=(-1, 2), num_cols=5, padding_value=-2,
                                               align=a),
             lambda d, a=align: ref_matrix_diag(d, (-1, 2), cols=5, padding=-2, align=a),
             [_randn(2, 4, 3)], dtypes=FLOAT + (tf.bool,)) for align in ALIGNS],
    OpCase("matrix_diag_fed_k", lambda d, k: tf.matrix_diag(d, k=k),
           lambda d, k: ref_matrix_diag(d, tuple(k)), [_randn(3, 2), _value([-1, 1])],
           fixed_dtypes=I32),
    OpCase("matrix_diag_fed_sizes", lambda d, r, c: tf.matrix_diag(d, k=1, num_rows=r,
                                                                   num_cols=c),
           lambda d, r, c: ref_matrix_diag(d, 1, int(r), int(c)),
           [_randn(2, 2), _value(4), _value(-1)], fixed_dtypes=(None, tf.int32, tf.int32)),
    OpCase("matrix_diag_empty", tf.matrix_diag, ref_matrix_diag, [_randn(0)]),
    OpCase("matrix_diag_empty_band", lambda d: tf.matrix_diag(d, k=(0, 1)),
           lambda d: ref_matrix_diag(d, (0, 1)), [_randn(0, 2, 3)]),
    # --- MatrixDiagPartV3
    OpCase("matrix_diag_part", tf.matrix_diag_part, ref_diag_part, [_randn(2, 3, 4)],
           dtypes=POD),
    OpCase("matrix_diag_part_superdiagonal", lambda x: tf.matrix_diag_part(x, k=2),
           lambda x: ref_diag_part(x, 2), [_randn(3, 4)], dtypes=NUM),
    OpCase("matrix_diag_part_subdiagonal", lambda x: tf.matrix_diag_part(x, k=-2),
           lambda x: ref_diag_part(x, -2), [_randn(2, 4, 3)]),
    *[OpCase(f"matrix_diag_part_band_{align.lower()}",
             lambda x, a=align: tf.matrix_diag_part(x, k=(-1, 2), padding_value=7, align=a),
             lambda x, a=align: ref_diag_part(x, (-1, 2), 7, a), [_randn(2, 3, 4)],
             dtypes=FLOAT + (tf.bool,)) for align in ALIGNS],
    OpCase("matrix_diag_part_tall_band", lambda x: tf.matrix_diag_part(x, k=(-3, -1)),
           lambda x: ref_diag_part(x, (-3, -1)), [_randn(5, 2)]),
    OpCase("matrix_diag_part_fed_k", lambda x, k: tf.matrix_diag_part(x, k=k),
           lambda x, k: ref_diag_part(x, tuple(k)), [_randn(2, 3, 3), _value([-1, 1])],
           fixed_dtypes=I32),
    OpCase("matrix_diag_part_empty", tf.matrix_diag_part, ref_diag_part, [_randn(0, 4)]),
    OpCase("matrix_diag_part_empty_band", lambda x: tf.matrix_diag_part(x, k=(0, 1)),
           lambda x: ref_diag_part(x, (0, 1)), [_randn(2, 0, 3)]),
    # --- MatrixSetDiagV3
    OpCase("matrix_set_diag", tf.matrix_set_diag, ref_set_diag, [_randn(2, 3, 4), _randn(2, 3)],
           dtypes=POD),
    OpCase("matrix_set_diag_subdiagonal", lambda x, d: tf.matrix_set_diag(x, d, k=-1),
           ref=lambda x, d: ref_set_diag(x, d, -1), inputs=[_randn(4, 3), _randn(3)]),
    *[OpCase(f"matrix_set_diag_band_{align.lower()}",
             lambda x, d, a=align: tf.matrix_set_diag(x, d, k=(-1, 2), align=a),
             lambda x, d, a=align: ref_set_diag(x, d, (-1, 2), a),
             [_randn(2, 3, 4), _randn(2, 4, 3)], dtypes=FLOAT + (tf.int64,)) for align in ALIGNS],
    OpCase("matrix_set_diag_fed_k", lambda x, d, k: tf.matrix_set_diag(x, d, k=k),
           lambda x, d, k: ref_set_diag(x, d, tuple(k)),
           [_randn(3, 3), _randn(2, 2), _value([1, 2])], fixed_dtypes=(None, None, tf.int32)),
    OpCase("matrix_set_diag_empty", tf.matrix_set_diag, ref_set_diag,
           [_randn(0, 2, 3), _randn(0, 2)]),
    # --- MatrixBandPart
    *[OpCase(f"matrix_band_part_{lo}_{hi}".replace("-", "m"),
             lambda x, lo=lo, hi=hi: tf.matrix_band_part(x, lo, hi),
             lambda x, lo=lo, hi=hi: ref_band_part(x, lo, hi), [_randn(2, 3, 4)], dtypes=POD)
      for lo, hi in ((1, 0), (-1, 0), (0, -1), (0, 0), (3, 4))],
    OpCase("matrix_band_part_fed", tf.matrix_band_part,
           lambda x, lo, hi: ref_band_part(x, int(lo), int(hi)),
           [_randn(4, 3), _value(2), _value(-1)], fixed_dtypes=(None, tf.int32, tf.int32)),
    OpCase("matrix_band_part_empty", lambda x: tf.matrix_band_part(x, 0, 1),
           lambda x: ref_band_part(x, 0, 1), [_randn(0, 4)]),
    # --- trace, matrix_transpose, eye
    OpCase("trace", tf.trace, lambda x: np.trace(x, axis1=-2, axis2=-1), [_randn(2, 3, 4)],
           dtypes=NUM + (tf.complex64,)),
    OpCase("trace_matrix", tf.trace, lambda x: np.trace(x), [_randn(3, 3)]),
    OpCase("matrix_transpose", tf.matrix_transpose, _swap, [_randn(2, 3, 4)],
           dtypes=NUM + (tf.bool,)),
    OpCase("matrix_transpose_conjugate", lambda x: tf.matrix_transpose(x, conjugate=True),
           lambda x: np.conj(_swap(x)), [lambda rng, dt: (rng.randn(3, 2) + 1j).astype(dt)],
           dtypes=(tf.complex64, tf.complex128), grad=False),
    OpCase("eye", lambda: tf.eye(3), lambda: ref_eye(3), [], grad=False),
    OpCase("eye_rectangular_batch", lambda: tf.eye(2, 3, batch_shape=[2], dtype=tf.int32),
           lambda: ref_eye(2, 3, [2], np.int32), [], grad=False),
    OpCase("eye_large", lambda: tf.eye(40, 30), lambda: ref_eye(40, 30), [], grad=False),
    OpCase("eye_fed_rows", lambda n: tf.eye(n, 2, batch_shape=[2], dtype=tf.float64),
           lambda n: ref_eye(int(n), 2, [2], np.float64), [_value(3)],
           fixed_dtypes=(tf.int32,), grad=False),
    OpCase("eye_fed_batch", lambda b: tf.eye(2, batch_shape=b, dtype=tf.bool),
           lambda b: ref_eye(2, None, b, bool), [_value([2, 1])], fixed_dtypes=(tf.int32,),
           grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- the kernel layout agrees with the reference's ----------------------------------------------
@pytest.mark.parametrize("rows,cols,k", [(3, 4, (-2, 3)), (4, 2, (-3, 1)), (1, 5, (0, 4))])
@pytest.mark.parametrize("align", ALIGNS)
def test_band_layout_lists_every_band_entry_once(rows, cols, k, align):
    length = min(rows + min(k[1], 0), cols - max(k[0], 0))
    row, col, slot = band_layout(rows, cols, k[0], k[1], length, align)
    expected = sorted((j * length + n, r, c) for j, n, r, c in
                      _entries(rows, cols, k, length, align))
    assert sorted(zip(slot.tolist(), row.tolist(), col.tolist())) == expected
    assert not row.flags.writeable   # cached and shared between calls


# --- static shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize("build,shape", [
    (lambda ph: tf.diag(ph([None, 2])), [None, 2, None, 2]),
    (lambda ph: tf.diag_part(ph([None, 3, 2, None])), [2, 3]),
    (lambda ph: tf.matrix_diag(ph([2, None])), [2, None, None]),
    (lambda ph: tf.matrix_diag(ph([2, None]), k=1), [2, None, None]),
    (lambda ph: tf.matrix_diag(ph([None, 2, None]), k=(0, 1), num_rows=3), [None, 3, None]),
    (lambda ph: tf.matrix_diag(ph([2, None, 3]), k=(0, 1)), [2, 3, 3]),
    (lambda ph: tf.matrix_diag(ph([3]), num_rows=ph([], tf.int32)), [None, None]),
    (lambda ph: tf.matrix_diag(ph([3]), k=ph([], tf.int32)), None),
    (lambda ph: tf.matrix_diag_part(ph([2, None, 4]), k=(-1, 2)), [2, 4, None]),
    (lambda ph: tf.matrix_diag_part(ph([None, 4]), k=9), [None]),
    (lambda ph: tf.matrix_set_diag(ph([None, None, 4]), ph([5, None])), [5, None, 4]),
    (lambda ph: tf.matrix_set_diag(ph([None, None, 4]), ph([5, 2, None]), k=(0, 1)),
     [5, None, 4]),
    (lambda ph: tf.matrix_set_diag(ph([None, 3, 4]), ph([2, 2, 3]), k=ph(None, tf.int32)),
     [2, 3, 4]),
    (lambda ph: tf.matrix_set_diag(ph(None), ph([5, 2, 3]), k=(0, 1)), [5, None, None]),
    (lambda ph: tf.matrix_band_part(ph([None, 3]), 1, 1), [None, 3]),
    (lambda ph: tf.trace(ph([None, None, None])), [None]),
    (lambda ph: tf.matrix_transpose(ph([2, None, 4])), [2, 4, None]),
    (lambda ph: tf.eye(ph([], tf.int32), 3), [None, 3]),
    (lambda ph: tf.eye(2, batch_shape=ph([2], tf.int32)), [None, None, 2, 2]),
])
def test_static_shapes_with_unknown_dimensions(build, shape):
    """TF 2.21's shapes, except where TF's are wrong or it rejects the graph (an unknown
    diagonal length, diagonal count or k): there the dimensions are unknown here."""
    with tf.Graph().as_default():
        out = build(lambda s, dtype=tf.float32: tf.placeholder(dtype, s))
        assert out.shape.as_list() == shape if shape is not None else out.shape.ndims is None


# --- graph-construction errors -------------------------------------------------------------------
@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.diag(1.0), ValueError, "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.diag([True]), TypeError, "DataType bool not in list of allowed values"),
    (lambda: tf.diag_part(tf.ones([2, 3, 2])), ValueError,
     "Input must have even and non-zero rank, input rank is 3"),
    (lambda: tf.diag_part(tf.ones([2, 3, 2, 4])), ValueError,
     "Dimensions must be equal, but are 3 and 4"),
    (lambda: tf.matrix_diag(1.0), ValueError, "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.matrix_diag(tf.ones([2, 2]), k=(-1, 1)), ValueError,
     "The number of rows of `diagonal` doesn't match the number of diagonals implied"),
    (lambda: tf.matrix_diag(tf.ones([3]), k=(0, 1)), ValueError,
     "The number of rows of `diagonal` doesn't match"),
    (lambda: tf.matrix_diag([1., 2.], num_rows=1), ValueError, "num_rows is too small"),
    (lambda: tf.matrix_diag([1., 2.], num_cols=1), ValueError, r"num_cols is too small\."),
    (lambda: tf.matrix_diag([1., 2.], num_rows=3, num_cols=3), ValueError,
     "num_rows and num_cols are not consistent with lower_diag_index, upper_diag_index, and "
     "the length of the given diagonals."),
    (lambda: tf.matrix_diag([1., 2.], k=[0, 1, 2]), ValueError,
     r"diag_index must be a vector with one or two elements\. It has 3 elements\."),
    (lambda: tf.matrix_diag(tf.ones([2, 2]), k=[1, 0]), ValueError,
     "lower_diag_index is greater than upper_diag_index"),
    (lambda: tf.matrix_diag([1.], k=[[0]]), ValueError,
     "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.matrix_diag([1.], num_rows=[3]), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.matrix_diag([1., 2.], align="UP"), ValueError,
     "Attr 'align' of 'MatrixDiagV3' Op passed string 'UP' not in: \"LEFT_RIGHT\", "
     "\"RIGHT_LEFT\", \"LEFT_LEFT\", \"RIGHT_RIGHT\"."),
    (lambda: tf.matrix_diag([1., 2.], k=tf.constant(1, tf.int64)), TypeError,
     "Input 'k' of 'MatrixDiagV3' Op has type int64 that does not match expected type of "
     "int32."),
    (lambda: tf.matrix_diag_part(tf.ones([3])), ValueError,
     "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.matrix_diag_part(tf.ones([2, 3, 4]), k=4), ValueError,
     r"lower_diag_index is out of bound\."),
    (lambda: tf.matrix_diag_part(tf.ones([2, 3, 4]), k=(0, 4)), ValueError,
     r"upper_diag_index is out of bound\."),
    (lambda: tf.matrix_diag_part(tf.ones([3, 3]), k=(1, 0)), ValueError,
     "lower_diag_index is greater than upper_diag_index"),
    (lambda: tf.matrix_diag_part(tf.ones([3, 3]), padding_value=[1.]), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.matrix_diag_part(tf.ones([3, 3]), align="LEFT"), ValueError,
     "Attr 'align' of 'MatrixDiagPartV3' Op passed string 'LEFT' not in"),
    (lambda: tf.matrix_set_diag(tf.ones([2, 3, 4]), tf.ones([3])), ValueError,
     "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.matrix_set_diag(tf.ones([3, 4]), tf.ones([1, 2, 3])), ValueError,
     "Shape must be at most rank 2 but is rank 3"),
    (lambda: tf.matrix_set_diag(tf.ones([3, 4]), tf.ones([2, 3])), ValueError,
     "Shape must be rank 1 but is rank 2"),
    (lambda: tf.matrix_set_diag(tf.ones([3, 4]), tf.ones([3]), k=4), ValueError,
     r"lower_diag_index is out of bound\."),
    (lambda: tf.matrix_set_diag(tf.ones([3, 4]), tf.ones([3]), k=[[0]]), ValueError,
     "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.matrix_band_part(tf.ones([3, 3]), 1.0, 1), TypeError,
     "Value passed to parameter 'num_lower' has DataType float32 not in list of allowed "
     "values: int32, int64"),
    (lambda: tf.matrix_band_part(tf.ones([3, 3]), tf.constant(1, tf.int64),
                                 tf.constant(1, tf.int32)), TypeError,
     "Input 'num_upper' of 'MatrixBandPart' Op has type int32 that does not match type "
     "int64 of argument 'num_lower'."),
    (lambda: tf.matrix_transpose(tf.ones([3])), ValueError,
     r"Argument `a` should be a \(batch\) matrix with rank >= 2\.  Received `a` = "
     r"Tensor\(\"ones:0\", shape=\(3,\), dtype=float32\) with shape: \(3,\)"),
    (lambda: tf.trace(tf.ones([3])), ValueError, "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.eye(2.0), TypeError,
     r"Arguments `num_rows` and `num_columns` must be positive integer values\. Received: "
     r"num_rows=2\.0, num_columns=2\.0"),
    (lambda: tf.eye(2, dtype=tf.string), TypeError, "Expected string"),
])
def test_construction_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            build()


# --- run-time errors -----------------------------------------------------------------------------
_F = np.float32


def _i32(v):
    return np.asarray(v, np.int32)


@pytest.mark.parametrize("build,feeds,message", [
    (tf.diag, [_F(1)], "Input must be at least rank 1, got 0"),
    (tf.diag_part, [np.ones([2, 3, 2], _F)],
     "The rank of the tensor should be" + " " * 42 + r"even and positive, got shape \[2,3,2\]"),
    (tf.diag_part, [np.ones([2, 3, 2, 2], _F)],
     r"Invalid shape \[2,3,2,2\]: dimensions 1 and 3 do not match\."),
    (tf.matrix_diag, [_F(1)], r"diagonal must be at least 1-dim, received shape: \[\]"),
    (lambda d, k: tf.matrix_diag(d, k=k), [np.ones([2], _F), _i32([0, 1, 2])],
     r"diag_index must have only one or two elements, received 3 elements\."),
    (lambda d, k: tf.matrix_diag(d, k=k), [np.ones([2], _F), _i32([[0, 1]])],
     r"diag_index must be a scalar or vector, received shape: \[1,2\]"),
    (lambda d, k: tf.matrix_diag(d, k=k), [np.ones([2], _F), _i32([])],
     "Expected diag_index to have at least 1 element"),
    (lambda d, k: tf.matrix_diag(d, k=k), [np.ones([2, 2], _F), _i32([1, 0])],
     "lower_diag_index must not be larger than upper_diag_index: 1 > 0"),
    (lambda d, k: tf.matrix_diag(d, k=k), [np.ones([3, 2], _F), _i32([0, 1])],
     "The number of diagonals provided in the input does not match the lower_diag_index and "
     r"upper_diag_index range\."),
    (lambda d, r: tf.matrix_diag(d, num_rows=r), [np.ones([2], _F), _i32(1)],
     r"The number of rows is too small\."),
    (lambda d, c: tf.matrix_diag(d, num_cols=c), [np.ones([2], _F), _i32(1)],
     r"The number of columns is too small\."),
    (lambda d, r: tf.matrix_diag(d, num_rows=r, num_cols=r), [np.ones([2], _F), _i32(3)],
     "The number of rows or columns is not consistent with the specified d_lower, d_upper, "
     r"and diagonal\."),
    (lambda d, r: tf.matrix_diag(d, num_rows=r), [np.ones([2], _F), _i32([3])],
     "num_rows must be a scalar"),
    (lambda d, c: tf.matrix_diag(d, num_cols=c), [np.ones([2], _F), _i32([3])],
     "num_cols must be a scalar"),
    (lambda d, p: tf.matrix_diag(d, padding_value=p), [np.ones([2], _F), np.ones([1], _F)],
     "padding_value must be a scalar"),
    (tf.matrix_diag_part, [np.ones([3], _F)],
     r"input must be at least 2-dim, received shape: \[3\]"),
    (lambda x, k: tf.matrix_diag_part(x, k=k), [np.ones([3, 4], _F), _i32(4)],
     r"lower_diag_index is out of bound: 4\. It must be between -3 and 4"),
    (lambda x, k: tf.matrix_diag_part(x, k=k), [np.ones([3, 4], _F), _i32([0, 4])],
     "upper_diag_index is out of bound: 4 It must be between -3 and 4"),
    (lambda x, k: tf.matrix_diag_part(x, k=k), [np.ones([0, 0], _F), _i32([-1, 1])],
     r"lower_diag_index is out of bound: -1\. It must be between 0 and 0"),
    (lambda x, k: tf.matrix_diag_part(x, k=k), [np.ones([3, 4], _F), _i32([1, 0])],
     "lower_diag_index must not be larger than upper_diag_index: 1 > 0"),
    (lambda x, p: tf.matrix_diag_part(x, padding_value=p), [np.ones([3, 4], _F),
                                                            np.ones([2], _F)],
     r"Padding must be scalar\."),
    (tf.matrix_set_diag, [np.ones([3], _F), _F(1)],
     r"input must be at least 2-dim, received shape: \[3\]"),
    (tf.matrix_set_diag, [np.ones([3, 4], _F), _F(1)],
     r"diagonal must be at least 1-dim, received shape: \[\]"),
    (lambda x, d, k: tf.matrix_set_diag(x, d, k=k), [np.ones([3, 4], _F), np.ones([1], _F),
                                                     _i32(4)],
     "lower_diag_index is out of bound: 4 It must be between -3 and 4"),
    (lambda x, d, k: tf.matrix_set_diag(x, d, k=k), [np.ones([3, 4], _F), np.ones([3], _F),
                                                     _i32([])],
     "diag_index must have at least one element"),
    (lambda x, d: tf.matrix_set_diag(x, d, k=(0, 1)), [np.ones([3, 4], _F),
                                                       np.ones([3, 3], _F)],
     "The number of diagonals provided in `diag` is not consistent with `lower_diag_index` "
     "and `upper_diag_index`"),
    (lambda x, d: tf.matrix_set_diag(x, d, k=(0, 1)), [np.ones([2, 3, 4], _F),
                                                       np.ones([3], _F)],
     "Diagonal tensor rank must be large enough to contain a diagonal-count dimension. "
     "Input rank: 3, Expected diagonal rank >= 2, Received diagonal rank: 1"),
    (tf.matrix_set_diag, [np.ones([2, 3, 4], _F), np.ones([3, 3], _F)],
     r"Either first dimensions of diagonal don't match input.shape\[:-2\], or "
     r"diagonal.shape\[:-1\] is not equal to the longests diagonal in range "
     r"\[lower_diag_index:upper_diag_index\]\.\nInput shape: \[2,3,4\]\nDiagonal shape: "
     r"\[3,3\]\nExpected diagonal shape: \[2,3\]"),
    (lambda x: tf.matrix_band_part(x, 1, 1), [np.ones([3], _F)],
     r"input must be at least 2-dim, received shape: \[3\]"),
    (tf.matrix_band_part, [np.ones([3, 3], _F), _i32([1]), _i32(1)],
     r"num_lower must be scalar, got shape \[1\]"),
    (tf.matrix_band_part, [np.ones([3, 3], _F), _i32(1), _i32([1])],
     r"num_upper must be scalar, got shape \[1\]"),
    (lambda x: tf.matrix_band_part(x, 5, 7), [np.ones([3, 4], _F)],
     r"num_lower must be negative or less or equal to number of rows \(3\) got: 5"),
    (lambda x: tf.matrix_band_part(x, 1, 5), [np.ones([3, 4], _F)],
     r"num_upper must be negative or less or equal to number of columns \(4\) got: 5"),
])
def test_run_time_errors(build, feeds, message):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.as_dtype(v.dtype)) for v in feeds]
        out = build(*holders)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(out, dict(zip(holders, feeds)))


def test_string_tensors_have_no_kernel():
    """TensorFlow registers these kernels for numbers and bool only."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [2])
        out = tf.matrix_diag(x, padding_value="")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixDiagV3"):
                sess.run(out, {x: np.array([b"a", b"b"], dtype=object)})


# --- default names, op types, dtypes, gradients' ops -----------------------------------------
def test_default_names_and_op_types():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 3])
        made = [
            (tf.diag([1., 2.]), "Diag", "Diag"),
            (tf.diag_part(tf.ones([2, 2])), "DiagPart", "DiagPart"),
            # Names are unique regardless of case, as in TensorFlow: "diag" follows "Diag".
            (tf.matrix_diag([1., 2.]), "diag_1", "MatrixDiagV3"),
            (tf.matrix_diag_part(x), "diag_part", "MatrixDiagPartV3"),
            (tf.matrix_set_diag(x, tf.ones([2, 3])), "set_diag", "MatrixSetDiagV3"),
            (tf.matrix_band_part(x, 0, -1), "MatrixBandPart", "MatrixBandPart"),
            (tf.trace(x), "Trace", "Sum"),
            (tf.matrix_transpose(x), "matrix_transpose/transpose", "Transpose"),
            (tf.eye(2), "eye/diag", "MatrixDiagV3"),
            (tf.eye(2, 3), "eye_1/set_diag", "MatrixSetDiagV3"),
            (tf.matrix_transpose(tf.ones([2, 1], tf.complex64), conjugate=True),
             "matrix_transpose_1/transpose", "ConjugateTranspose"),
        ]
        for tensor, name, op_type in made:
            assert (tensor.op.name, tensor.op.type) == (name, op_type)
        md = tf.matrix_diag([1., 2.], name="md")
        assert [t.op.name for t in md.op.inputs[1:]] == \
            ["md/k", "md/num_rows", "md/num_cols", "md/padding_value"]
        assert md.op.get_attr("align") in (b"RIGHT_LEFT", "RIGHT_LEFT")
        assert tf.trace(x).op.inputs[0].op.name == "Trace_1/diag_part"
        band = tf.matrix_band_part(x, tf.constant(1), tf.constant(-1))
        assert band.op.get_attr("Tindex") == tf.int32
        assert tf.matrix_diag(tf.constant([True, False])).dtype == tf.bool


@pytest.mark.parametrize("build,op_types", [
    (lambda x: tf.diag(x[0]), {"DiagPart"}),
    (lambda x: tf.diag_part(x[0]), {"Diag"}),
    (lambda x: tf.matrix_diag(x[:, :2], k=(0, 1)), {"MatrixDiagPartV3"}),
    (lambda x: tf.matrix_diag_part(x, k=(0, 1)), {"MatrixDiagV3"}),
    (lambda x: tf.matrix_set_diag(x, x[:, :2] * 2.0, k=(0, 1)), {"MatrixSetDiagV3",
                                                                 "MatrixDiagPartV3"}),
    (lambda x: tf.matrix_band_part(x, 1, 0), {"MatrixBandPart"}),
])
def test_gradients_use_tensorflows_ops(build, op_types):
    """Each gradient is built from the op family, as TensorFlow registers it."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float64, [2, 3, 3])
        y = build(x)
        before = {op.name for op in g.get_operations()}
        tf.gradients(y, x)
        added = {op.type for op in g.get_operations() if op.name not in before}
        assert op_types <= added


def test_diag_part_gradient_of_unknown_matrix_size_sets_zeros():
    """With an unknown matrix size the gradient writes into zeros like the input (the branch
    TensorFlow takes), and works for a band, where TF 2.21's shape function fails."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None, 4])
        y = tf.matrix_diag_part(x, k=(-1, 1))
        (g,) = tf.gradients(tf.reduce_sum(y * 2.0), x)
        assert g.op.type == "MatrixSetDiagV3"
        value = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
        with tf.Session() as sess:
            got = sess.run(g, {x: value})
    expected = 2.0 * ref_band_part(np.ones_like(value), 1, 1)
    np.testing.assert_array_equal(got, expected)
