"""Kernels of the binary elementwise ops, AddN and ClipByValue.

Both inputs of a binary op have the same dtype (the OpDef says so), and NumPy keeps that dtype
for arrays and NumPy scalars alike, so `operator.add` and the ufuncs are registered directly
with `register_pure`. Where TensorFlow's meaning differs from NumPy's, the dtype picks a
kernel once: float floor division is floor(x / y) (1.0 // 0.1 is 10, not NumPy's 9); integer
division and modulo by zero raise InvalidArgumentError (InternalError for TruncateDiv and
TruncateMod, as in TensorFlow); truncating division of integers rounds toward zero; integer Pow
with a negative exponent raises InvalidArgumentError with TensorFlow's message.
"""
from __future__ import annotations

import operator

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel, register_pure

_FLOAT_COMPLEX = _dtypes.FLOATING | _dtypes.COMPLEX
_INTEGER = _dtypes.INTEGER


def scratch(y):
    """`y` when it is an ndarray the kernel just made (so it may be overwritten), else None."""
    return y if y.__class__ is np.ndarray else None


def _check_divisor(x, y) -> None:
    """Only a division actually done fails: x with no elements divides nothing."""
    if np.size(x) and not y.all():
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


def _check_truncate_divisor(x, y) -> None:
    """TF's TruncateDiv/TruncateMod functors, unlike Div's and FloorDiv's, do not declare that
    they report errors, so their division by zero falls through to the BinaryOp's InternalError
    (for every integer dtype, a constant or a fed divisor alike). Only a division actually done
    fails: an empty result (x has no elements) divides nothing, so a zero y is no error."""
    if np.size(x) and not y.all():
        raise errors.InternalError(None, None, "Unexpected error in binary operator (only "
                                   "integer div and mod should have errors)")


# --- arithmetic -------------------------------------------------------------------------------
for _op_type, _fn in (
        ("AddV2", operator.add), ("Add", operator.add), ("Sub", operator.sub),
        ("Mul", operator.mul), ("Maximum", np.maximum), ("Minimum", np.minimum),
        ("Atan2", np.arctan2)):
    register_pure(_op_type, _fn)


def _pow_int(x, y):
    """x ** y, wrapping on overflow; a negative exponent is an error, as in TensorFlow (when
    the result has elements)."""
    if np.size(x) and np.any(y < 0):
        raise errors.InvalidArgumentError(
            None, None, "Integers to negative integer powers are not allowed")
    return np.power(x, y)


register_pure("Pow", np.power, dtypes=_FLOAT_COMPLEX)
register_pure("Pow", _pow_int, dtypes=_INTEGER)


def _floor_div_float(x, y):
    """floor(x / y), TensorFlow's definition for floats."""
    q = operator.truediv(x, y)
    return np.floor(q, out=scratch(q))


def _truncate_div_float(x, y):
    q = operator.truediv(x, y)
    return np.trunc(q, out=scratch(q))


def _floor_div_int(x, y):
    _check_divisor(x, y)
    return np.floor_divide(x, y)


def _floor_mod_int(x, y):
    """Python's modulo: the result has the divisor's sign (TensorFlow's FloorMod)."""
    _check_divisor(x, y)
    return np.remainder(x, y)


def _floor_mod_float(x, y):
    """fmod corrected to the divisor's sign, as np.remainder, except that a zero result keeps
    fmod's sign, the dividend's (TensorFlow: floormod(-4., 2.) is -0.; NumPy gives +0.)."""
    r = np.remainder(x, y)
    return np.where(r == 0, np.copysign(r, x), r)


def _c_quotient(x, y):
    """x / y rounded toward zero: x - fmod(x, y) is an exact multiple of y, so floor division
    of it is exact and cannot overflow."""
    return np.floor_divide(x - np.fmod(x, y), y)


def _c_div_int(x, y):
    """Div of integers: C's division, InvalidArgumentError for a zero divisor."""
    _check_divisor(x, y)
    return _c_quotient(x, y)


def _truncate_div_int(x, y):
    """TruncateDiv of integers: C's division, InternalError for a zero divisor."""
    _check_truncate_divisor(x, y)
    return _c_quotient(x, y)


def _truncate_mod_int(x, y):
    """C's remainder: the result has the dividend's sign."""
    _check_truncate_divisor(x, y)
    return np.fmod(x, y)


def _div_no_nan(x, y):
    """x / y, and 0 where y is 0 (even for x 0 or inf)."""
    return np.where(y == 0, 0, operator.truediv(x, y))


register_pure("RealDiv", operator.truediv, dtypes=_FLOAT_COMPLEX)
register_pure("Div", operator.truediv, dtypes=_FLOAT_COMPLEX)
register_pure("Div", _c_div_int, dtypes=_INTEGER)  # C division for integers
register_pure("DivNoNan", _div_no_nan, dtypes=_FLOAT_COMPLEX)
register_pure("FloorDiv", _floor_div_float, dtypes=_dtypes.FLOATING)
register_pure("FloorDiv", _floor_div_int, dtypes=_INTEGER)
register_pure("FloorMod", _floor_mod_float, dtypes=_dtypes.FLOATING)
register_pure("FloorMod", _floor_mod_int, dtypes=_INTEGER)
register_pure("TruncateDiv", _truncate_div_float, dtypes=_dtypes.FLOATING)
register_pure("TruncateDiv", _truncate_div_int, dtypes=_INTEGER)
register_pure("TruncateMod", np.fmod, dtypes=_dtypes.FLOATING)
register_pure("TruncateMod", _truncate_mod_int, dtypes=_INTEGER)


def _squared_difference(x, y):
    d = operator.sub(x, y)
    return np.multiply(d, d, out=scratch(d))


def _squared_difference_complex(x, y):
    """(x - y) * conj(x - y), TensorFlow's definition for complex inputs."""
    d = operator.sub(x, y)
    return d * np.conj(d)


register_pure("SquaredDifference", _squared_difference, dtypes=_dtypes.REAL_NUMERIC)
register_pure("SquaredDifference", _squared_difference_complex, dtypes=_dtypes.COMPLEX)


def add_n_head(n: int) -> int:
    """How many of AddN's n inputs TensorFlow's kernel adds first, left to right: n % 8, or
    8 + n % 8 when that is 0 or 1. Each following block of 8 is summed on its own, left to
    right, and then added to the total (Eigen's out += in1 + ... + in8), which rounds
    differently from one long left-to-right sum once n >= 10."""
    head = n % 8
    return head + 8 if head < 2 else head


def _add_n(*inputs):
    """Sums as TensorFlow's AddN kernel does (`add_n_head`); shapes must match."""
    shape = np.shape(inputs[0])
    for x in inputs:
        if np.shape(x) != shape:
            raise errors.InvalidArgumentError(
                None, None, f"Inputs to operation AddN must have the same size and shape. "
                f"Input 0: {list(shape)} != input: {list(np.shape(x))}")
    if len(inputs) == 1:
        return np.copy(inputs[0])
    head = add_n_head(len(inputs))
    total = operator.add(inputs[0], inputs[1])
    out = scratch(total)
    for x in inputs[2:head]:
        total = np.add(total, x, out=out)
    for start in range(head, len(inputs), 8):
        block = operator.add(inputs[start], inputs[start + 1])
        for x in inputs[start + 2:start + 8]:
            block = np.add(block, x, out=scratch(block))
        total = np.add(total, block, out=out)
    return total


register_pure("AddN", _add_n)


def _clip_by_value(t, low, high):
    """min(max(t, low), high); the bounds are scalars or shaped like t."""
    t_shape = np.shape(t)
    for bound in (low, high):
        shape = np.shape(bound)
        if shape and shape != t_shape:
            raise errors.InvalidArgumentError(
                None, None, f"clip_value_min and clip_value_max must be either scalars or have "
                f"the same shape as t: t {list(t_shape)}, bound {list(shape)}")
    return np.minimum(np.maximum(t, low), high)


register_pure("ClipByValue", _clip_by_value)

# --- comparisons and logic -------------------------------------------------------------------
for _op_type, _fn in (
        ("Less", np.less), ("LessEqual", np.less_equal), ("Greater", np.greater),
        ("GreaterEqual", np.greater_equal), ("LogicalAnd", np.logical_and),
        ("LogicalOr", np.logical_or), ("BitwiseAnd", np.bitwise_and),
        ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
    register_pure(_op_type, _fn)


@kernel(("Equal", "NotEqual"))
class EqualKernel:
    """np.equal / np.not_equal; with incompatible_shape_error=False, shapes that do not
    broadcast compare as wholly unequal (a scalar False for Equal, True for NotEqual)."""

    def __init__(self, ctx):
        fn = np.equal if ctx.op_type == "Equal" else np.not_equal
        if ctx.attrs.get("incompatible_shape_error", True):
            self.compute = lambda ctx, x, y: fn(x, y)
            return
        unequal = np.bool_(ctx.op_type == "NotEqual")

        def compute(ctx, x, y):
            try:
                np.broadcast_shapes(np.shape(x), np.shape(y))
            except ValueError:
                return unequal
            return fn(x, y)
        self.compute = compute
