"""Elementwise math: every op against NumPy (OpCase rows), then names, errors, dtypes, static
shapes and values, and the TensorFlow semantics NumPy does not share."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.static_value import static_value
from tensorweave.kernels.math_unary import erf as erf_kernel
from tensorweave.ops import math_ops, math_unary_ops
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

FLOATS = (tf.float16, tf.float32, tf.float64)
F32_64 = (tf.float32, tf.float64)
SIGNED_INTS = (tf.int8, tf.int32, tf.int64)


def _randn(*shape, scale=1.0):
    return lambda rng, dt: (rng.randn(*shape) * scale).astype(dt)


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _ints(low, high, *shape):
    return lambda rng, dt: rng.randint(low, high, shape).astype(dt)


def _nonzero_ints(*shape):
    """Divisors: 1..5 with random signs."""
    return lambda rng, dt: (rng.randint(1, 6, shape) * rng.choice([-1, 1], shape)).astype(dt)


def _bools(*shape):
    return lambda rng, dt: rng.rand(*shape) > 0.5


def _special(rng, dt):
    """Values that exercise predicates and rounding: NaN, infinities, halves, zeros."""
    return np.array([[np.nan, np.inf, -np.inf, 0.0], [0.5, 1.5, 2.5, -0.5],
                     [-1.5, -2.5, 1e-3, 7.25]]).astype(dt)


def _strings(*values):
    return lambda rng, dt: np.array([v.encode() for v in values], dtype=object)


def _ref(fn, dtype=None):
    """A reference applied in float64, cast back to the input dtype (or `dtype`)."""
    def ref(x):
        return np.asarray(fn(x.astype(np.float64))).astype(dtype or x.dtype)
    return ref


_np_erf = np.vectorize(math.erf)

# name, wrapper, reference, input, dtypes
UNARY = [
    ("negative", tf.negative, np.negative, _randn(3, 4), FLOATS + SIGNED_INTS),
    ("neg_operator", lambda x: -x, np.negative, _randn(3, 4), F32_64 + (tf.int32,)),
    ("abs", tf.abs, np.abs, _randn(3, 4, scale=5), FLOATS + SIGNED_INTS),
    ("abs_builtin", abs, np.abs, _randn(2, 3, scale=5), (tf.float32, tf.int64)),
    ("sign", tf.sign, np.sign, _randn(3, 4, scale=3), F32_64 + SIGNED_INTS),
    ("square", tf.square, np.square, _randn(3, 4, scale=3), FLOATS + SIGNED_INTS + (tf.uint8,)),
    ("sqrt", tf.sqrt, np.sqrt, _uniform(0, 4, 3, 4), FLOATS),
    ("rsqrt", tf.rsqrt, _ref(lambda x: 1 / np.sqrt(x)), _uniform(0.1, 4, 3, 4), FLOATS),
    ("reciprocal", tf.reciprocal, _ref(lambda x: 1 / x), _uniform(0.5, 3, 3, 4), FLOATS),
    ("exp", tf.exp, np.exp, _randn(3, 4), FLOATS),
    ("expm1", tf.expm1, np.expm1, _randn(3, 4, scale=1e-3), F32_64),
    ("log", tf.log, np.log, _uniform(0.1, 5, 3, 4), FLOATS),
    ("log1p", tf.log1p, np.log1p, _uniform(-0.5, 5, 3, 4), F32_64),
    ("sin", tf.sin, np.sin, _randn(3, 4), F32_64),
    ("cos", tf.cos, np.cos, _randn(3, 4), F32_64),
    ("tan", tf.tan, np.tan, _uniform(-1, 1, 3, 4), F32_64),
    ("asin", tf.asin, np.arcsin, _uniform(-0.9, 0.9, 3, 4), F32_64),
    ("acos", tf.acos, np.arccos, _uniform(-0.9, 0.9, 3, 4), F32_64),
    ("atan", tf.atan, np.arctan, _randn(3, 4), F32_64),
    ("sinh", tf.sinh, np.sinh, _randn(3, 4), F32_64),
    ("cosh", tf.cosh, np.cosh, _randn(3, 4), F32_64),
    ("tanh", tf.tanh, np.tanh, _randn(3, 4, scale=3), FLOATS),
    ("asinh", tf.asinh, np.arcsinh, _randn(3, 4), F32_64),
    ("acosh", tf.acosh, np.arccosh, _uniform(1.1, 4, 3, 4), F32_64),
    ("atanh", tf.atanh, np.arctanh, _uniform(-0.9, 0.9, 3, 4), F32_64),
    ("sigmoid", tf.sigmoid, _ref(lambda x: 1 / (1 + np.exp(-x))), _randn(3, 4, scale=5),
     FLOATS),
    ("erf", tf.erf, _ref(_np_erf), _randn(3, 4, scale=2), FLOATS),
    ("floor", tf.floor, np.floor, _special, FLOATS),
    ("ceil", tf.ceil, np.ceil, _special, FLOATS),
    ("round", tf.round, np.round, _special, FLOATS),
    ("rint", tf.rint, np.rint, _special, F32_64),
    ("is_nan", tf.is_nan, np.isnan, _special, FLOATS),
    ("is_inf", tf.is_inf, np.isinf, _special, FLOATS),
    ("is_finite", tf.is_finite, np.isfinite, _special, FLOATS),
    ("logical_not", tf.logical_not, np.logical_not, _bools(3, 4), (tf.bool,)),
    ("invert_operator", lambda x: ~x, np.invert, _bools(3, 4), (tf.bool, tf.int8, tf.uint16)),
    ("invert_int", lambda x: ~x, np.invert, _ints(-9, 9, 3, 4), (tf.int32, tf.int8)),
    ("abs_complex", tf.abs, np.abs,
     lambda rng, dt: (rng.randn(3) + 1j * rng.randn(3)).astype(dt),
     (tf.complex64, tf.complex128)),
    ("sqrt_scalar", tf.sqrt, np.sqrt, lambda rng, dt: np.array(2.25, dt), FLOATS),
    ("sigmoid_scalar", tf.sigmoid, _ref(lambda x: 1 / (1 + np.exp(-x))),
     lambda rng, dt: np.array(-3.5, dt), FLOATS),
    ("rsqrt_empty", tf.rsqrt, _ref(lambda x: 1 / np.sqrt(x)), _uniform(1, 2, 0, 3),
     (tf.float32,)),
    ("erf_scalar", tf.erf, _ref(_np_erf), lambda rng, dt: np.array(0.3, dt), FLOATS),
]


# Rows whose inputs sit on kinks (NaN, halves) or that have no floating result.
_NO_GRAD = {"floor", "ceil", "round", "rint", "is_nan", "is_inf", "is_finite", "logical_not",
            "invert_operator", "invert_int", "abs_complex"}
CASES = [OpCase(name, lambda x, f=fn: f(x), ref, [gen], dtypes=dtypes, grad=name not in _NO_GRAD)
         for name, fn, ref, gen, dtypes in UNARY]
# float16 results are checked to float16 precision.
for _case in CASES:
    if tf.float16 in _case.dtypes:
        _case.rtol, _case.atol = 2e-3, 2e-3


def _trunc_div(x, y):
    return np.trunc(x.astype(np.float64) / y).astype(x.dtype)


def _floor_div_tf(x, y):
    """TensorFlow's float floor division: floor(x / y), not NumPy's floor_divide."""
    return np.floor(x / y).astype(x.dtype)


def _true_div(x, y):
    wide = np.float32 if x.dtype.itemsize <= 2 and x.dtype.kind in "iu" else np.float64
    if x.dtype.kind == "f":
        return (x / y).astype(x.dtype)
    return x.astype(wide) / y.astype(wide)


_XY = [_randn(3, 1, scale=3), _randn(1, 4, scale=3)]
_XY_POS_Y = [_randn(3, 1, scale=3), _uniform(0.5, 3, 1, 4)]
_INT_XY = [_ints(-20, 20, 3, 1), _nonzero_ints(1, 4)]

CASES += [
    OpCase("add", lambda x, y: tf.add(x, y), np.add, _XY, dtypes=FLOATS + SIGNED_INTS + (
        tf.uint8, tf.complex64)),
    OpCase("add_operator_scalar_rhs", lambda x: x + 2, lambda x: x + x.dtype.type(2),
           [_randn(3)], dtypes=F32_64 + (tf.int32,)),
    OpCase("radd_operator", lambda x: 2 + x, lambda x: x + x.dtype.type(2), [_randn(3)]),
    OpCase("add_strings", lambda x, y: x + y, np.add, [_strings("a", "bc"), _strings("d", "")],
           dtypes=(tf.string,), grad=False),
    OpCase("add_op_float", lambda x, y: apply_op(math_ops.Add, [x, y]), np.add, _XY,
           dtypes=F32_64),  # the pre-AddV2 op of older GraphDefs
    OpCase("add_scalars_int8", lambda x, y: x + y, np.add,
           [lambda rng, dt: np.array(100, dt), lambda rng, dt: np.array(100, dt)],
           dtypes=(tf.int8,)),
    OpCase("subtract", lambda x, y: tf.subtract(x, y), np.subtract, _XY,
           dtypes=F32_64 + (tf.int32, tf.uint8)),
    OpCase("rsub_operator", lambda x: 1.5 - x, lambda x: (1.5 - x).astype(x.dtype),
           [_randn(2, 2)], dtypes=F32_64),
    OpCase("multiply", lambda x, y: x * y, np.multiply, _XY, dtypes=FLOATS + (tf.int64,)),
    OpCase("truediv_float", lambda x, y: x / y, _true_div, _XY_POS_Y, dtypes=FLOATS),
    OpCase("truediv_int", lambda x, y: x / y, _true_div, _INT_XY,
           dtypes=(tf.int8, tf.uint8, tf.int16, tf.int32, tf.int64), grad=False),
    OpCase("rtruediv_operator", lambda x: 1.0 / x, lambda x: (1.0 / x).astype(x.dtype),
           [_uniform(0.5, 2, 4)], dtypes=F32_64),
    OpCase("realdiv", lambda x, y: tf.realdiv(x, y), lambda x, y: (x / y).astype(x.dtype),
           _XY_POS_Y, dtypes=F32_64),
    OpCase("div_float", lambda x, y: tf.div(x, y), lambda x, y: (x / y).astype(x.dtype),
           _XY_POS_Y),
    OpCase("div_int_floors", lambda x, y: tf.div(x, y), np.floor_divide, _INT_XY,
           dtypes=(tf.int32,), grad=False),
    OpCase("div_op_c_semantics", lambda x, y: apply_op(math_ops.Div, [x, y]), _trunc_div,
           _INT_XY, dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("div_op_float", lambda x, y: apply_op(math_ops.Div, [x, y]),
           lambda x, y: (x / y).astype(x.dtype), _XY_POS_Y),
    OpCase("divide", lambda x, y: tf.divide(x, y), _true_div, _INT_XY, dtypes=(tf.int32,),
           grad=False),
    OpCase("div_no_nan", lambda x, y: tf.div_no_nan(x, y),
           lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y)).astype(x.dtype),
           [_randn(3, 4), lambda rng, dt: np.array([0, 1.5, -2, 0], dt)], dtypes=F32_64,
           grad=False),  # y = 0 is a pole: the gradient there (0) is tested on its own
    OpCase("div_no_nan_nonzero", lambda x, y: tf.div_no_nan(x, y),
           lambda x, y: (x / y).astype(x.dtype), _XY_POS_Y, dtypes=F32_64),
    OpCase("floordiv_float", lambda x, y: x // y, _floor_div_tf, _XY_POS_Y, dtypes=FLOATS),
    OpCase("floordiv_int", lambda x, y: tf.floordiv(x, y), np.floor_divide, _INT_XY,
           dtypes=SIGNED_INTS + (tf.uint8,), grad=False),
    OpCase("floor_div", lambda x, y: tf.floor_div(x, y), np.floor_divide, _INT_XY,
           dtypes=(tf.int32,), grad=False),
    OpCase("rfloordiv_operator", lambda x: 7 // x, lambda x: np.floor_divide(7, x).astype(
        x.dtype), [_nonzero_ints(5)], dtypes=(tf.int32,), grad=False),
    OpCase("floormod_float", lambda x, y: x % y, np.mod, _XY, dtypes=FLOATS),
    OpCase("floormod_int", lambda x, y: tf.floormod(x, y), np.mod, _INT_XY,
           dtypes=SIGNED_INTS + (tf.uint16,), grad=False),
    OpCase("mod", lambda x, y: tf.mod(x, y), np.mod, _INT_XY, dtypes=(tf.int64,), grad=False),
    OpCase("rmod_operator", lambda x: 10 % x, lambda x: np.mod(10, x).astype(x.dtype),
           [_nonzero_ints(6)], dtypes=(tf.int32,), grad=False),
    OpCase("truncatediv_int", lambda x, y: tf.truncatediv(x, y), _trunc_div, _INT_XY,
           dtypes=SIGNED_INTS + (tf.uint8,), grad=False),
    OpCase("truncatediv_float", lambda x, y: tf.truncatediv(x, y),
           lambda x, y: np.trunc(x / y).astype(x.dtype), _XY_POS_Y),
    OpCase("truncatemod", lambda x, y: tf.truncatemod(x, y), np.fmod, _INT_XY,
           dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("truncatemod_float", lambda x, y: tf.truncatemod(x, y), np.fmod, _XY,
           dtypes=F32_64),
    OpCase("pow_float", lambda x, y: tf.pow(x, y), np.power,
           [_uniform(0.5, 2, 3, 1), _randn(1, 4)], dtypes=FLOATS, rtol=2e-3, atol=2e-3),
    OpCase("pow_int", lambda x, y: x ** y, np.power, [_ints(-4, 5, 3, 1), _ints(0, 4, 1, 4)],
           dtypes=SIGNED_INTS, grad=False),
    OpCase("rpow_operator", lambda x: 2.0 ** x, lambda x: (2.0 ** x).astype(x.dtype),
           [_randn(4)], dtypes=F32_64),
    OpCase("maximum", lambda x, y: tf.maximum(x, y), np.maximum, _XY,
           dtypes=FLOATS + (tf.int32, tf.uint8)),
    OpCase("minimum", lambda x, y: tf.minimum(x, y), np.minimum, _XY,
           dtypes=F32_64 + (tf.int64,)),
    OpCase("maximum_nan", lambda x, y: tf.maximum(x, y), np.maximum,
           [lambda rng, dt: np.array([np.nan, 1.0, 2.0], dt),
            lambda rng, dt: np.array([1.0, np.nan, 1.0], dt)], grad=False),
    OpCase("squared_difference", lambda x, y: tf.squared_difference(x, y),
           lambda x, y: np.square(x - y), _XY, dtypes=F32_64 + (tf.int32,)),
    OpCase("squared_difference_complex", lambda x, y: tf.squared_difference(x, y),
           lambda x, y: (x - y) * np.conj(x - y),
           [lambda rng, dt: np.array([1 + 2j, 3j], dt), lambda rng, dt: np.array([1j, 2], dt)],
           dtypes=(tf.complex64, tf.complex128), grad=False),
    OpCase("atan2", lambda y, x: tf.atan2(y, x), np.arctan2, _XY, dtypes=F32_64),
    OpCase("add_n", lambda a, b, c: tf.add_n([a, b, c]), lambda a, b, c: a + b + c,
           [_randn(2, 3), _randn(2, 3), _randn(2, 3)], dtypes=FLOATS + (tf.int32,)),
    OpCase("add_n_two_scalars", lambda a, b: tf.add_n([a, b]), np.add,
           [lambda rng, dt: np.array(1.5, dt), lambda rng, dt: np.array(2, dt)],
           dtypes=(tf.float16,)),
    OpCase("clip_by_value", lambda t: tf.clip_by_value(t, -0.5, 1.0),
           lambda t: np.clip(t, t.dtype.type(-0.5), t.dtype.type(1.0)), [_randn(3, 4)],
           dtypes=FLOATS),
    OpCase("clip_by_value_tensor_bounds", tf.clip_by_value, np.clip,
           [_ints(-9, 9, 2, 3), _ints(-5, -2, 2, 3), _ints(2, 5, 2, 3)], dtypes=(tf.int32,),
           grad=False),
    OpCase("clip_by_value_op", lambda t, lo, hi: apply_op(math_ops.ClipByValue, [t, lo, hi]),
           np.clip, [_randn(3, 4), lambda rng, dt: np.array(-0.2, dt),
                     lambda rng, dt: np.array(0.3, dt)], dtypes=F32_64),
    OpCase("clip_by_value_op_tensor_bounds",
           lambda t, lo, hi: apply_op(math_ops.ClipByValue, [t, lo, hi]), np.clip,
           [_uniform(-3, 3, 3, 4), _uniform(-1.5, -0.5, 3, 4), _uniform(0.5, 1.5, 3, 4)],
           dtypes=F32_64),
    OpCase("empty_broadcast", lambda x, y: x * y, np.multiply, [_randn(0, 1), _randn(1, 4)]),
]

_CMP_XY = [_ints(-2, 3, 3, 1), _ints(-2, 3, 1, 4)]
for _name, _fn, _ref_fn, _dtypes in (
        ("equal", tf.equal, np.equal, F32_64 + (tf.int32, tf.bool)),
        ("not_equal", tf.not_equal, np.not_equal, (tf.float32, tf.int64, tf.bool)),
        ("less", lambda x, y: x < y, np.less, FLOATS + (tf.int32, tf.uint8)),
        ("less_equal", lambda x, y: x <= y, np.less_equal, (tf.float32, tf.int16)),
        ("greater", lambda x, y: x > y, np.greater, (tf.float64, tf.int32)),
        ("greater_equal", lambda x, y: x >= y, np.greater_equal, (tf.float32, tf.int64)),
        ("less_fn", tf.less, np.less, (tf.float32,)),
        ("less_equal_fn", tf.less_equal, np.less_equal, (tf.float32,)),
        ("greater_fn", tf.greater, np.greater, (tf.float32,)),
        ("greater_equal_fn", tf.greater_equal, np.greater_equal, (tf.float32,)),
        ("logical_and", tf.logical_and, np.logical_and, (tf.bool,)),
        ("logical_or", tf.logical_or, np.logical_or, (tf.bool,)),
        ("logical_xor", tf.logical_xor, np.logical_xor, (tf.bool,)),
        ("and_operator", lambda x, y: x & y, np.bitwise_and, (tf.bool, tf.int32, tf.uint8)),
        ("or_operator", lambda x, y: x | y, np.bitwise_or, (tf.bool, tf.int64)),
        ("xor_operator", lambda x, y: x ^ y, np.bitwise_xor, (tf.bool, tf.int16)),
        # the same operators on integers build the Bitwise ops
        ("bitwise_and", lambda x, y: x & y, np.bitwise_and, (tf.int32, tf.uint8)),
        ("bitwise_or", lambda x, y: x | y, np.bitwise_or, (tf.int64,)),
        ("bitwise_xor", lambda x, y: x ^ y, np.bitwise_xor, (tf.int16,))):
    CASES.append(OpCase(_name, _fn, _ref_fn, _CMP_XY, dtypes=_dtypes, grad=False))
CASES += [
    OpCase("equal_strings", tf.equal, np.equal, [_strings("a", "b", "a"), _strings("a", "a", "c")],
           dtypes=(tf.string,), grad=False),
    OpCase("not_equal_strings", tf.not_equal, np.not_equal, [_strings("a", "b"), _strings("a")],
           dtypes=(tf.string,), grad=False),
]

# Casts: (name, destination, input generator, source dtypes)
_CASTS = [
    ("cast_float_to_int_truncates", tf.int32, _uniform(-5, 5, 3, 4), FLOATS),
    ("cast_float_to_int64", tf.int64, _uniform(-5, 5, 3, 4), (tf.float64,)),
    ("cast_int_to_float", tf.float32, _ints(-100, 100, 3, 4), SIGNED_INTS + (tf.uint8,)),
    ("cast_to_bool", tf.bool, _ints(-2, 3, 3, 4), (tf.int32, tf.float32)),
    ("cast_bool_to_float", tf.float64, _bools(3, 4), (tf.bool,)),
    ("cast_float_to_half", tf.float16, _randn(3, 4), (tf.float32,)),
    ("cast_int_to_uint8_wraps", tf.uint8, _ints(-300, 300, 3, 4), (tf.int32,)),
    ("cast_complex_to_real", tf.float32,
     lambda rng, dt: (rng.randn(3) + 1j * rng.randn(3)).astype(dt), (tf.complex64,)),
    ("cast_real_to_complex", tf.complex128, _randn(3), (tf.float32,)),
]
for _name, _dst, _gen, _srcs in _CASTS:
    _np_dst = _dst.as_numpy_dtype
    CASES.append(OpCase(
        _name, lambda x, d=_dst: tf.cast(x, d),
        lambda x, d=_np_dst: (np.real(x) if np.iscomplexobj(x) and d().dtype.kind != "c"
                              else x).astype(d),
        [_gen], dtypes=_srcs, grad=_dst in F32_64 and all(s in F32_64 for s in _srcs)))
CASES += [
    OpCase("to_float", tf.to_float, lambda x: x.astype(np.float32), [_ints(-9, 9, 4)],
           dtypes=(tf.int32,), grad=False),
    OpCase("to_double", tf.to_double, lambda x: x.astype(np.float64), [_randn(4)]),
    OpCase("to_int32", tf.to_int32, lambda x: x.astype(np.int32), [_randn(4, scale=9)],
           grad=False),
    OpCase("to_int64", tf.to_int64, lambda x: x.astype(np.int64), [_randn(4, scale=9)],
           grad=False),
    OpCase("saturate_cast_float_to_int32", lambda x: tf.saturate_cast(x, tf.int32),
           lambda x: np.array([-2**31, 2147483520, 3, -3], np.int32),
           [lambda rng, dt: np.array([-1e10, 1e10, 3.7, -3.7], dt)], grad=False),
    OpCase("saturate_cast_int_to_uint8", lambda x: tf.saturate_cast(x, tf.uint8),
           lambda x: np.clip(x, 0, 255).astype(np.uint8), [_ints(-400, 400, 3, 4)],
           dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("saturate_cast_complex", lambda x: tf.saturate_cast(x, tf.int8),
           lambda x: np.clip(x.real, -128, 127).astype(np.int8),
           [lambda rng, dt: np.array([1000 + 1j, -2.5 - 3j], dt)], dtypes=(tf.complex64,),
           grad=False),
]



def _off_integers(*shape):
    """n + u with u in [0.1, 0.4] of either sign: away from the jumps of floor, ceil, rint and
    round (integers and halves)."""
    return lambda rng, dt: (rng.randint(-3, 4, shape) + rng.uniform(0.1, 0.4, shape) *
                            rng.choice([-1, 1], shape)).astype(dt)


def _complex(*shape):
    return lambda rng, dt: (rng.uniform(0.3, 0.9, shape) + 1j * rng.uniform(-0.5, 0.5, shape)
                            ).astype(dt)


CASES += [
    OpCase(f"{name}_between_jumps", fn, ref, [_off_integers(3, 4)], dtypes=F32_64)
    for name, fn, ref in (("floor", tf.floor, np.floor), ("ceil", tf.ceil, np.ceil),
                          ("round", tf.round, np.round), ("rint", tf.rint, np.rint))]
CASES += [
    OpCase("conj", tf.conj, np.conj, [_complex(3, 2)], dtypes=(tf.complex64, tf.complex128),
           grad=False),
    OpCase("conj_of_real_is_identity", tf.conj, lambda x: x, [_randn(3)],
           dtypes=F32_64 + (tf.int32,)),
    OpCase("cast_through_complex", lambda x: tf.cast(tf.cast(x, tf.complex128), tf.float64) * x,
           np.square, [_randn(3, 2)], dtypes=(tf.float64,)),
]

# TensorFlow's fused gradient helpers z = f(y, dy): name, op, derivative from y, y's range
_GRAD_HELPERS = [
    ("tanh_grad", "TanhGrad", lambda y: 1 - y * y, (-0.9, 0.9)),
    ("sigmoid_grad", "SigmoidGrad", lambda y: y * (1 - y), (0.1, 0.9)),
    ("sqrt_grad", "SqrtGrad", lambda y: 0.5 / y, (0.5, 2.0)),
    ("rsqrt_grad", "RsqrtGrad", lambda y: -0.5 * y ** 3, (0.5, 2.0)),
    ("reciprocal_grad", "ReciprocalGrad", lambda y: -y * y, (0.5, 2.0)),
]
for _name, _op_type, _deriv, (_low, _high) in _GRAD_HELPERS:
    _op_def = getattr(math_unary_ops, _op_type)
    CASES += [
        OpCase(_name, lambda y, dy, d=_op_def: apply_op(d, [y, dy]),
               lambda y, dy, f=_deriv: (dy * np.conj(f(y))).astype(y.dtype),
               [_uniform(_low, _high, 3, 4), _randn(3, 4)], dtypes=FLOATS, rtol=2e-3, atol=2e-3),
        OpCase(f"{_name}_complex", lambda y, dy, d=_op_def: apply_op(d, [y, dy]),
               lambda y, dy, f=_deriv: (dy * np.conj(f(y))).astype(y.dtype),
               [_complex(2, 3), _complex(2, 3)], dtypes=(tf.complex64, tf.complex128),
               grad=False),
    ]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- values where TensorFlow and NumPy differ, and numerics --------------------------------------
def _run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


def test_float_floor_division_is_floor_of_quotient():
    with tf.Graph().as_default():
        x = tf.constant([1.0, -1.0, 7.0, 1.0, -1.0, 0.0], tf.float64)
        y = tf.constant([0.1, 0.1, 0.0, np.inf, 0.0, 0.0], tf.float64)
        floor_div, floor_mod = _run(x // y, x % y)
    # NumPy's floor_divide gives 9 for 1 // 0.1; TensorFlow computes floor(1 / 0.1) = 10.
    np.testing.assert_array_equal(floor_div, [10.0, -10.0, np.inf, 0.0, -np.inf, np.nan])
    np.testing.assert_allclose(floor_mod[:2], [0.1, 5.551115123125783e-17], rtol=1e-12)
    assert np.isnan(floor_mod[2:]).tolist() == [True, False, True, True]


def test_integer_division_family():
    with tf.Graph().as_default():
        x = tf.constant([7, -7, 7, -7])
        y = tf.constant([2, 2, -2, -2])
        got = _run(x // y, x % y, tf.truncatediv(x, y), tf.truncatemod(x, y), tf.div(x, y),
                   apply_op(math_ops.Div, [x, y]), x / y)
    expected = [[3, -4, -4, 3], [1, 1, -1, -1], [3, -3, -3, 3], [1, -1, 1, -1],
                [3, -4, -4, 3], [3, -3, -3, 3], [3.5, -3.5, -3.5, 3.5]]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert got[0].dtype == np.int32 and got[-1].dtype == np.float64


@pytest.mark.parametrize("build", [
    lambda x, y: x // y, lambda x, y: x % y, lambda x, y: apply_op(math_ops.Div, [x, y])])
def test_integer_division_by_zero_fails_at_run_time(build):
    with tf.Graph().as_default():
        out = build(tf.constant([4, 5]), tf.constant([2, 0]))
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            _run(out)


# TF 2.21: TruncateDiv/TruncateMod's functors do not report division errors, so a zero divisor
# reaches the BinaryOp's fallback, an InternalError, whether y is fed or constant (folded).
_TRUNCATE_BY_ZERO = ("Unexpected error in binary operator "
                     r"\(only integer div and mod should have errors\)")


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64], ids=lambda d: d.name)
@pytest.mark.parametrize("fn", [tf.truncatediv, tf.truncatemod], ids=lambda f: f.__name__)
@pytest.mark.parametrize("fed", ["both", "x", "none"])
def test_integer_truncating_division_by_zero_is_an_internal_error(fn, dtype, fed):
    with tf.Graph().as_default():
        x_val = np.array([7, -7], dtype.as_numpy_dtype)
        y_val = np.array([2, 0], dtype.as_numpy_dtype)
        x = tf.placeholder(dtype, [2]) if fed != "none" else tf.constant(x_val)
        y = tf.placeholder(dtype, [2]) if fed == "both" else tf.constant(y_val)
        feed = {t: v for t, v in ((x, x_val), (y, y_val)) if t.op.type == "Placeholder"}
        out = fn(x, y)
        with pytest.raises(errors.InternalError, match=_TRUNCATE_BY_ZERO) as info:
            _run(out, feed=feed)
    assert info.value.op is out.op


@pytest.mark.parametrize("fn", [tf.truncatediv, tf.truncatemod], ids=lambda f: f.__name__)
def test_integer_truncating_division_of_nothing_by_zero_is_empty(fn):
    """No element is divided, so TF 2.21 returns [] rather than failing."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None])
        (got,) = _run(fn(x, tf.constant(0)), feed={x: np.zeros([0], np.int32)})
    assert got.shape == (0,) and got.dtype == np.int32


def test_integer_pow_to_negative_power_fails_at_run_time():
    with tf.Graph().as_default():
        out = tf.pow(tf.constant([2, 3]), tf.constant([2, -1]))
        with pytest.raises(errors.InvalidArgumentError, match="negative integer powers"):
            _run(out)
        (ok,) = _run(tf.constant([2, -3], tf.int64) ** 3)
    np.testing.assert_array_equal(ok, [8, -27])
    assert ok.dtype == np.int64


def test_round_is_half_to_even_and_integers_pass_through():
    with tf.Graph().as_default():
        ints = tf.constant([1, 2])
        assert tf.round(ints) is ints
        (got,) = _run(tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999])))
    np.testing.assert_array_equal(got, [0.0, 2.0, 2.0, -0.0, -2.0, 2.0])


def test_sigmoid_is_stable_at_the_extremes():
    with tf.Graph().as_default():
        (got,) = _run(tf.sigmoid(tf.constant([-1000.0, -80.0, 0.0, 80.0, 1000.0])))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, [0.0, 1.8048513e-35, 0.5, 1.0, 1.0], rtol=1e-6)


def test_erf_matches_the_exact_function_to_float64_precision():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-300, 0.8, 3001)])
    exact = _np_erf(x)
    got = erf_kernel(x)
    assert got.dtype == np.float64
    ulps = np.abs(got - exact) / np.spacing(np.abs(exact))
    assert ulps.max() <= 3, ulps.max()  # math.erf itself is within 1 ulp
    special = erf_kernel(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310]))
    np.testing.assert_array_equal(special[:4], [0.0, -0.0, 1.0, -1.0])
    assert np.signbit(special[1]) and np.isnan(special[4]) and special[5] > 0
    assert erf_kernel(np.float32(0.5)).dtype == np.float32


def test_saturate_cast_clamps_in_the_source_type():
    with tf.Graph().as_default() as g:
        out = tf.saturate_cast(tf.constant([-1e10, 1e10, 3.7]), tf.int32)
        clamp = g.get_operation_by_name("saturate_cast/clamp")
        low, high = (static_value(t) for t in clamp.inputs[1:])
        (got,) = _run(out)
    assert out.op.type == "Cast" and out.op.name == "saturate_cast"
    assert clamp.type == "ClipByValue" and high == np.float32(2147483520) and low == -2**31
    np.testing.assert_array_equal(got, [-2**31, 2147483520, 3])


def test_cast_string_is_unimplemented_at_run_time():
    with tf.Graph().as_default():
        out = tf.cast(tf.constant(["1"]), tf.float32)
        with pytest.raises(errors.UnimplementedError, match="Cast string to float"):
            _run(out)


def test_add_n_sums_left_to_right_and_checks_shapes_at_run_time():
    with tf.Graph().as_default():
        values = [np.float32(1e8), np.float32(1.0), np.float32(-1e8), np.float32(1.0)]
        (got,) = _run(tf.add_n([tf.constant(v) for v in values]))
        assert got == ((values[0] + values[1]) + values[2]) + values[3]
        a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        with pytest.raises(errors.InvalidArgumentError, match="same size and shape"):
            _run(tf.add_n([a, b]), feed={a: [1.0, 2.0], b: [1.0]})


def test_clip_by_value_op_rejects_non_scalar_bound_of_other_shape_at_run_time():
    with tf.Graph().as_default():
        lo = tf.placeholder(tf.float32)
        out = apply_op(math_ops.ClipByValue, [tf.constant([1.0, 2.0]), lo, 3.0])
        with pytest.raises(errors.InvalidArgumentError, match="scalars or have the same shape"):
            _run(out, feed={lo: [0.0, 1.0, 2.0]})


def test_equal_without_incompatible_shape_error():
    with tf.Graph().as_default():
        x, y = tf.constant([1, 2]), tf.constant([1, 2, 3])
        eq = apply_op(math_ops.Equal, [x, y], {"incompatible_shape_error": False})
        ne = apply_op(math_ops.NotEqual, [x, y], {"incompatible_shape_error": False})
        same = apply_op(math_ops.Equal, [x, tf.constant(2)], {"incompatible_shape_error": False})
        assert eq.shape.ndims is None and same.shape.as_list() == [2]
        got = _run(eq, ne, same)
    assert np.shape(got[0]) == () and not got[0]
    assert np.shape(got[1]) == () and got[1]
    np.testing.assert_array_equal(got[2], [False, True])


# --- graph construction: names, dtypes, errors ---------------------------------------------------
def _names_cases():
    f = tf.constant([1.0, 2.0], name="f")
    i = tf.constant([7, -7], name="i")
    b = tf.constant([True, False], name="b")
    return [
        # (tensor, op name, op type, input names): as TensorFlow 2.21 compat.v1 names them
        (f + f, "add", "AddV2", ["f", "f"]),
        (f + 2, "add_1", "AddV2", ["f", "add_1/y"]),
        (2.0 - f, "sub", "Sub", ["sub/x", "f"]),
        (f * f, "mul", "Mul", None),
        (f / f, "truediv", "RealDiv", None),
        (i / i, "truediv_1", "RealDiv", ["truediv_1/Cast", "truediv_1/Cast_1"]),
        (f // f, "floordiv", "FloorDiv", None),
        (f % f, "mod", "FloorMod", None),
        (f ** 2.0, "pow", "Pow", ["f", "pow/y"]),
        (-f, "Neg", "Neg", None),
        (abs(f), "Abs", "Abs", None),
        (f < f, "Less", "Less", None),
        (f <= f, "LessEqual", "LessEqual", None),
        (f > f, "Greater", "Greater", None),
        (f >= f, "GreaterEqual", "GreaterEqual", None),
        (b & b, "and", "LogicalAnd", None),
        (True | b, "or", "LogicalOr", ["or/x", "b"]),
        (b ^ b, "xor", "LogicalAnd", ["xor/LogicalOr", "xor/LogicalNot"]),
        (~b, "LogicalNot", "LogicalNot", None),
        (i & i, "and_1/BitwiseAnd", "BitwiseAnd", None),
        (~i, "Invert", "Invert", None),
        (tf.constant(["a"]) + "b", "add_2", "Add", None),
        (tf.add(f, f), "Add_3", "AddV2", None),
        (tf.subtract(f, f), "Sub_1", "Sub", None),
        (tf.multiply(f, f), "Mul_1", "Mul", None),
        (tf.div(i, i), "div", "FloorDiv", None),
        (tf.div(f, f), "div_1", "RealDiv", None),
        (tf.divide(f, f), "truediv_2", "RealDiv", None),
        (tf.truediv(f, f), "truediv_3", "RealDiv", None),
        (tf.realdiv(f, f), "RealDiv", "RealDiv", None),
        (tf.floordiv(f, f), "floordiv_1", "FloorDiv", None),
        (tf.floor_div(f, f), "FloorDiv_2", "FloorDiv", None),
        (tf.mod(f, f), "FloorMod", "FloorMod", None),
        (tf.pow(f, f), "Pow_1", "Pow", None),
        (tf.add_n([f, f]), "AddN", "AddN", None),
        (tf.negative(f), "Neg_1", "Neg", None),
        (tf.abs(tf.constant([1j], name="c")), "Abs_1", "ComplexAbs", None),
        (tf.logical_xor(b, b), "LogicalXor", "LogicalAnd", ["LogicalOr", "LogicalNot_1"]),
        (tf.cast(i, tf.float32), "Cast", "Cast", None),
        (tf.to_float(i), "ToFloat", "Cast", None),
        (tf.to_int64(f), "ToInt64", "Cast", None),
        (tf.clip_by_value(f, 0.0, 1.0), "clip_by_value", "Maximum",
         ["clip_by_value/Minimum", None]),
        (tf.div_no_nan(f, f), "div_no_nan", "DivNoNan", None),
        (tf.scalar_mul(2.0, f), "Mul_2", "Mul", ["scalar", "f"]),
        (tf.sigmoid(f, name="s"), "s", "Sigmoid", None),
    ]


def test_default_op_names_types_and_operand_constants():
    with tf.Graph().as_default():
        for tensor, name, op_type, inputs in _names_cases():
            assert (tensor.op.name, tensor.op.type) == (name, op_type)
            if inputs is not None:
                got = [t.op.name for t in tensor.op.inputs]
                assert [g if e is not None else None for g, e in zip(got, inputs)] == inputs


def test_cast_attrs_and_identity_when_already_of_the_type():
    with tf.Graph().as_default():
        f = tf.constant([1.5])
        assert tf.cast(f, tf.float32) is f and tf.to_float(f) is f
        c = tf.cast(f, tf.int32, name="c")
        assert c.op.get_attr("SrcT") == tf.float32 and c.op.get_attr("DstT") == tf.int32
        assert c.op.get_attr("Truncate") is False and c.op.name == "c"
        assert tf.cast([1, 2], tf.float32).op.inputs[0].dtype == tf.int32
        eq = tf.equal(f, 1.5)
        assert eq.op.get_attr("incompatible_shape_error") is True


def test_conj_is_identity_for_real_tensors_and_rejects_non_numeric_ones():
    with tf.Graph().as_default():
        f, i = tf.constant([1.5]), tf.constant([2])
        assert tf.conj(f) is f and tf.conj(i) is i
        c = tf.conj(tf.constant([1 + 2j]))
        assert (c.op.name, c.op.type, c.dtype) == ("Conj", "Conj", tf.complex128)
        with pytest.raises(TypeError, match="Expected numeric or variant tensor, got dtype "
                           "tf.string"):
            tf.conj(tf.constant(["a"]))
        assert _run(c)[0].tolist() == [1 - 2j]


@pytest.mark.parametrize("src,expected", [
    (tf.int8, tf.float32), (tf.uint8, tf.float32), (tf.int16, tf.float32),
    (tf.uint16, tf.float32), (tf.int32, tf.float64), (tf.int64, tf.float64),
    (tf.float16, tf.float16), (tf.float32, tf.float32), (tf.complex64, tf.complex64)])
def test_true_division_result_dtypes(src, expected):
    with tf.Graph().as_default():
        x = tf.constant(np.array([7, 2]).astype(src.as_numpy_dtype))
        out = x / x
        assert out.dtype == expected
        (got,) = _run(out)
    assert got.dtype == expected.as_numpy_dtype


def test_seven_over_two_is_float64():
    with tf.Graph().as_default():
        q = tf.constant(7) / tf.constant(2)
        r = 7 / tf.constant(2)
        assert q.dtype == r.dtype == tf.float64
        assert _run(q, r) == [3.5, 3.5]


@pytest.mark.parametrize("build,match", [
    (lambda: tf.constant(1) + tf.constant(1.0), "does not match type int32"),
    (lambda: tf.constant([1]) + 2.5, "AddV2"),
    (lambda: 2.5 - tf.constant([1]), "int32"),
    (lambda: tf.subtract(tf.constant([1.0]), tf.constant([1])), "Sub"),
    (lambda: tf.constant([1]) < tf.constant([1.0]), "Less"),
    (lambda: tf.constant([1]) / tf.constant([1.0]), "same dtype"),
    (lambda: tf.constant([True]) / tf.constant([True]), "Invalid dtype tf.bool"),
    (lambda: tf.sqrt(tf.constant([4])), "not in list of allowed values"),
    (lambda: -tf.constant([1], tf.uint8), "not in list of allowed values"),
    (lambda: abs(tf.constant([True])), "not in list of allowed values"),
    (lambda: tf.logical_and(tf.constant([1]), tf.constant([1])), "expected type of bool"),
    (lambda: tf.constant([1.0]) & tf.constant([1.0]), "not in list of allowed values"),
    (lambda: ~tf.constant([1.0]), "not in list of allowed values"),
    (lambda: tf.less(tf.constant(["a"]), "b"), "not in list of allowed values"),
    (lambda: tf.add_n([tf.constant([1.0]), tf.constant([1])]), "don't all match"),
    (lambda: tf.constant(["a"]) + 1.0, "does not match type string"),
])
def test_type_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=match):
            build()


@pytest.mark.parametrize("build,match", [
    (lambda: tf.constant([1, 2, 3]) + tf.constant([1, 2]),
     r"Dimensions must be equal, but are 3 and 2.*input shapes: \[3\], \[2\]"),
    (lambda: tf.equal(tf.zeros_like if False else tf.constant([[1.0, 2.0]]),
                      tf.constant([1.0, 2.0, 3.0])), r"\[1,2\], \[3\]"),
    (lambda: tf.add_n([tf.constant([1.0, 2.0]), tf.constant([[1.0]])]), "Shapes must be equal"),
    (lambda: tf.add_n([]), "at least one Tensor"),
    (lambda: tf.add_n(tf.constant([1.0])), "at least one Tensor"),
    (lambda: tf.scalar_mul(tf.constant([2.0]), tf.constant([1.0])), "must be a 0-D value"),
    (lambda: tf.clip_by_value(tf.constant([1.0, 2.0]), [[0.0], [1.0]], 3.0), "incompatible"),
    (lambda: apply_op(math_ops.ClipByValue, [tf.constant([1.0, 2.0]), [0.0, 1.0, 2.0], 3.0]),
     "scalars or shaped like t"),
    (lambda: tf.div(tf.constant([1]), tf.constant([1.0])), "requested dtype int32"),
])
def test_value_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build()


def test_equality_operator_stays_identity():
    with tf.Graph().as_default() as g:
        a, b = tf.constant(1.0), tf.constant(1.0)
        n = len(g.get_operations())
        assert (a == a) is True and (a == b) is False and (a != b) is True
        assert len(g.get_operations()) == n


def test_add_n_of_one_tensor():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.add_n([x]) is x
        if hasattr(tf, "identity"):
            named = tf.add_n([x], name="total")
            assert named.op.type == "Identity" and named.op.name == "total"


# --- static shapes and values ------------------------------------------------------------------
def test_static_broadcast_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 1])
        q = tf.placeholder(tf.float32, [None, 3, None])
        r = tf.placeholder(tf.float32)
        assert (p + tf.constant([1.0, 2.0, 3.0, 4.0])).shape.as_list() == [None, 4]
        assert (p * q).shape.as_list() == [None, 3, None]
        assert (q < tf.constant(1.0)).shape.as_list() == [None, 3, None]
        assert (p + r).shape.ndims is None
        assert tf.add_n([p, tf.placeholder(tf.float32, [5, None])]).shape.as_list() == [5, 1]
        assert tf.cast(q, tf.int32).shape.as_list() == [None, 3, None]
        assert tf.clip_by_value(q, 0.0, 1.0).shape.as_list() == [None, 3, None]
        (got,) = _run(p + tf.constant([1.0, 2.0]), feed={p: [[1.0], [2.0], [3.0]]})
    np.testing.assert_array_equal(got, [[2, 3], [3, 4], [4, 5]])


def test_static_values_fold_through_the_kernels():
    with tf.Graph().as_default():
        n = tf.constant(3)
        assert static_value(n * 2 + 1) == 7
        assert static_value(tf.cast(n, tf.float32)).dtype == np.float32
        np.testing.assert_array_equal(static_value(tf.equal(tf.constant([1, 2]), 2)),
                                      [False, True])
        assert static_value(tf.constant(7) / tf.constant(2)) == 3.5
        assert static_value(tf.constant(1) // tf.constant(0)) is None  # fails when run instead
        assert static_value(n + tf.placeholder(tf.int32)) is None
        big = tf.constant(np.ones(5000, np.float32))
        assert static_value(big * big) is None  # too large to be worth folding
        assert static_value(tf.add_n([n, n, n])) == 9
