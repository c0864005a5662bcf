"""Binary elementwise math, comparisons and logic, AddN, clipping, and the Python operators.

Binary ops broadcast like NumPy (`shape_fns.broadcast`: a ValueError naming both shapes when
static shapes cannot broadcast) and require both operands to have one dtype: `int32 + float32`
is a TypeError at graph construction, as in TensorFlow. Each op is a table row built by
`define_elementwise` (from `math_unary_ops`), each plain wrapper a `binary_fn` row; wrappers with
TensorFlow-specific logic (add of strings, true division of integers, add_n, clip_by_value,
saturate_cast) are written out. The operators installed on Tensor at the bottom follow TF1: `a +
b` opens a name scope "add", converts a Python operand there (as "add/y", with the tensor's
dtype) and names the op "add"; `/` is true division (int32 / int32 is float64); `&`, `|`, `^`,
`~` are logical on bool tensors and bitwise on integers; `==` stays identity.

Gradients follow TensorFlow: a broadcasting op's input gradient is summed back to the input's
shape by `reduce_to_shape_of`; complex inputs get conjugated partial derivatives; Maximum and
Minimum send a tie's gradient to x; FloorDiv and TruncateDiv have none.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, OpDef, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import register_static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.ops.math_unary_ops import (
    FLOAT,
    FLOAT_COMPLEX,
    NUMERIC,
    SIGNED,
    Neg,
    cast,
    conj,
    define_elementwise,
    fold_with_kernel,
    invert,
    logical_not,
    negative,
    square,
    type_list,
)
from tensorweave.ops.math_unary_ops import abs as _abs

__all__ = [
    "add", "subtract", "multiply", "div", "divide", "truediv", "realdiv", "floordiv",
    "floor_div", "floormod", "mod", "truncatediv", "truncatemod", "pow", "maximum", "minimum",
    "squared_difference", "atan2", "div_no_nan", "scalar_mul", "add_n", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "clip_by_value", "saturate_cast",
]

REAL_NUMERIC = _dtypes.REAL_NUMERIC
_FLOAT_INDEX = _dtypes.FLOATING | _dtypes.INDEX


def binary_op(op_type: str, allowed, out: str = "T", **kwargs) -> OpDef:
    """A binary elementwise op z = f(x, y) with broadcasting."""
    return define_elementwise(op_type, ["x: T", "y: T"], allowed, out, **kwargs)


def _equal_shape(ctx):
    """Broadcast; with incompatible_shape_error=False, shapes that cannot broadcast give a
    result of unknown shape (the kernel then returns a scalar) instead of an error."""
    try:
        return shape_fns.broadcast(ctx)
    except ValueError:
        if ctx.attrs["incompatible_shape_error"]:
            raise
        return _ts.unknown_shape()


def _compare(op_type: str, allowed=REAL_NUMERIC, **kwargs) -> OpDef:
    return binary_op(op_type, allowed, out="bool", not_differentiable=True, **kwargs)


# --- the binary ops -----------------------------------------------------------------------------
AddV2 = binary_op("AddV2", NUMERIC, is_commutative=True)
# Add: strings and old graphs. Not commutative, as in TensorFlow's registry: it concatenates
# strings, and "a" + "b" is not "b" + "a".
Add = binary_op("Add", NUMERIC | {_dtypes.string})
Sub = binary_op("Sub", NUMERIC)
Mul = binary_op("Mul", NUMERIC, is_commutative=True)
Div = binary_op("Div", NUMERIC)  # TF1 graphs: true division of floats, C division of ints
RealDiv = binary_op("RealDiv", NUMERIC)
DivNoNan = binary_op("DivNoNan", FLOAT_COMPLEX)
FloorDiv = binary_op("FloorDiv", NUMERIC, not_differentiable=True)
FloorMod = binary_op("FloorMod", REAL_NUMERIC)
TruncateDiv = binary_op("TruncateDiv", NUMERIC, not_differentiable=True)
TruncateMod = binary_op("TruncateMod", _FLOAT_INDEX)
Pow = binary_op("Pow", SIGNED)
Maximum = binary_op("Maximum", REAL_NUMERIC)
Minimum = binary_op("Minimum", REAL_NUMERIC)
SquaredDifference = binary_op("SquaredDifference", _FLOAT_INDEX | _dtypes.COMPLEX,
                              is_commutative=True)
Atan2 = define_elementwise("Atan2", ["y: T", "x: T"], FLOAT)
Less = _compare("Less")
LessEqual = _compare("LessEqual")
Greater = _compare("Greater")
GreaterEqual = _compare("GreaterEqual")
Equal, NotEqual = (_compare(t, None, attrs=[Attr("incompatible_shape_error", "bool", True)],
                            shape_fn=_equal_shape, is_commutative=True)
                   for t in ("Equal", "NotEqual"))
LogicalAnd, LogicalOr = (
    define_elementwise(t, ["x: bool", "y: bool"], None, out="bool", is_commutative=True,
                       not_differentiable=True) for t in ("LogicalAnd", "LogicalOr"))
BitwiseAnd, BitwiseOr, BitwiseXor = (
    binary_op(t, _dtypes.INTEGER, is_commutative=True, not_differentiable=True)
    for t in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"))

_BINARY_DOC = """{summary}

    Args:
      {a}: A Tensor of type {types}.
      {b}: A Tensor of the same type as `{a}` (or a value convertible to it), broadcastable
        with `{a}`.
      name: A name for the operation (default "{default}").

    Returns:
      A Tensor of {result}, shaped like `{a}` and `{b}` broadcast together.

    Raises:
      TypeError: if the operands' dtypes differ or are not accepted.
      ValueError: if their static shapes cannot broadcast.
    """


def binary_fn(op_def: OpDef, public_name: str, summary: str, default_name: str | None = None):
    """The TF1 wrapper `public_name(x, y, name=None)` (or `(y, x, ...)` for Atan2)."""
    default = default_name or op_def.name
    a, b = (arg.name for arg in op_def.inputs)

    if a == "y":
        def wrapper(y, x, name=None):  # atan2's argument order
            return apply_op(op_def, [y, x], name=name or default)
    else:
        def wrapper(x, y, name=None):
            return apply_op(op_def, [x, y], name=name or default)
    out = op_def.outputs[0]
    result = f"type {out.dtype.name}" if out.dtype is not None else f"the type of `{a}`"
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _BINARY_DOC.format(summary=summary, a=a, b=b, types=type_list(op_def),
                                         default=default, result=result)
    return wrapper


subtract = binary_fn(Sub, "subtract", "Returns x - y element-wise.")
multiply = binary_fn(Mul, "multiply", "Returns x * y element-wise.")
realdiv = binary_fn(RealDiv, "realdiv", "Returns x / y element-wise for real types.")
floordiv = binary_fn(FloorDiv, "floordiv", "Returns floor(x / y) element-wise (the `//` "
                     "operator); integer division by zero fails at run time.", "floordiv")
floor_div = binary_fn(FloorDiv, "floor_div", "Returns floor(x / y) element-wise.")
floormod = binary_fn(FloorMod, "floormod", "Returns x - floor(x / y) * y element-wise: the "
                     "remainder with the divisor's sign, like Python's `%`.")
mod = binary_fn(FloorMod, "mod", "Returns x - floor(x / y) * y element-wise (the `%` "
                "operator).")
truncatediv = binary_fn(TruncateDiv, "truncatediv", "Returns x / y rounded toward zero "
                        "element-wise (C's integer division).")
truncatemod = binary_fn(TruncateMod, "truncatemod", "Returns the remainder of truncating "
                        "division element-wise: it has the dividend's sign, like C's `%`.")
pow = binary_fn(Pow, "pow", "Returns x ** y element-wise; integers to negative integer powers "  # noqa: A001
                "fail at run time.")
maximum = binary_fn(Maximum, "maximum", "Returns max(x, y) element-wise (NaN if either is "
                    "NaN).")
minimum = binary_fn(Minimum, "minimum", "Returns min(x, y) element-wise (NaN if either is "
                    "NaN).")
squared_difference = binary_fn(SquaredDifference, "squared_difference",
                               "Returns (x - y) * (x - y) element-wise.")
atan2 = binary_fn(Atan2, "atan2", "Returns the angle of the point (x, y): arctan(y / x) in the "
                  "right quadrant, element-wise.")
equal = binary_fn(Equal, "equal", "Returns x == y element-wise.")
not_equal = binary_fn(NotEqual, "not_equal", "Returns x != y element-wise.")
less = binary_fn(Less, "less", "Returns x < y element-wise (the `<` operator).")
less_equal = binary_fn(LessEqual, "less_equal", "Returns x <= y element-wise.")
greater = binary_fn(Greater, "greater", "Returns x > y element-wise.")
greater_equal = binary_fn(GreaterEqual, "greater_equal", "Returns x >= y element-wise.")
logical_and = binary_fn(LogicalAnd, "logical_and", "Returns x AND y element-wise.")
logical_or = binary_fn(LogicalOr, "logical_or", "Returns x OR y element-wise.")
bitwise_and = binary_fn(BitwiseAnd, "bitwise_and", "Returns x & y bitwise, element-wise.")
bitwise_or = binary_fn(BitwiseOr, "bitwise_or", "Returns x | y bitwise, element-wise.")
bitwise_xor = binary_fn(BitwiseXor, "bitwise_xor", "Returns x ^ y bitwise, element-wise.")


def add(x, y, name=None):
    """Returns x + y element-wise, with broadcasting (TF1's tf.add; `+` on tensors).

    Args:
      x: A Tensor of a numeric or string type (or a value convertible to one).
      y: A Tensor of the same type as `x`, or a value convertible to it.
      name: A name for the operation (default "Add").

    Returns:
      A Tensor of x's type: an AddV2 op, or Add (concatenation) for strings.

    Raises:
      TypeError: if the operands' dtypes differ.
      ValueError: if their static shapes cannot broadcast.
    """
    with name_scope(name, "Add", [x]) as scope:   # TF's values: x alone picks the graph
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        op_def = Add if x.dtype.base_dtype == _dtypes.string else AddV2
        return apply_op(op_def, [x, y], name=scope)


# Integer true division converts to a float wide enough for the integers (TF's table).
_TRUEDIV_CAST = {_dtypes.int8: _dtypes.float32, _dtypes.uint8: _dtypes.float32,
                 _dtypes.int16: _dtypes.float32, _dtypes.uint16: _dtypes.float32,
                 _dtypes.int32: _dtypes.float64, _dtypes.uint32: _dtypes.float64,
                 _dtypes.int64: _dtypes.float64, _dtypes.uint64: _dtypes.float64}
_TRUEDIV_TYPES = frozenset(_TRUEDIV_CAST) | FLOAT_COMPLEX


def truediv(x, y, name=None):
    """Divides x by y element-wise with Python 3 semantics (the `/` operator).

    Integers are cast to floating point first: 8- and 16-bit ones to float32, 32- and 64-bit
    ones to float64, so `tf.constant(7) / tf.constant(2)` is the float64 3.5.

    Args:
      x: A Tensor of a numeric type (or a value convertible to one).
      y: A Tensor of the same type as `x`, or a value convertible to it.
      name: A name for the operation (default "truediv").

    Returns:
      A floating (or complex) Tensor.

    Raises:
      TypeError: if x and y have different dtypes, or a non-numeric one.
    """
    with name_scope(name, "truediv", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        x, y = _truediv_operands(x, y, "__truediv__")
        return apply_op(RealDiv, [x, y], name=scope)


def _truediv_operands(x, y, what):
    """x and y cast as truediv casts them (integers to float32 or float64); TypeError unless
    they share a dtype that truediv accepts."""
    x_dtype, y_dtype = x.dtype.base_dtype, y.dtype.base_dtype
    if x_dtype != y_dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x_dtype!r} != "
                        f"{y_dtype!r}.")
    if x_dtype not in _TRUEDIV_TYPES:
        expected = ", ".join(repr(d) for d in sorted(_TRUEDIV_TYPES, key=lambda d: d.name))
        raise TypeError(f"Invalid dtype {x_dtype!r} in {what}. Expected one of "
                        f"{{{expected}}}.")
    wide = _TRUEDIV_CAST.get(x_dtype)
    if wide is not None:
        x, y = cast(x, wide), cast(y, wide)
    return x, y


def divide(x, y, name=None):
    """Computes Python-style division x / y (tf.divide): the same as `truediv`.

    Args:
      x: A Tensor or a value convertible to one (with y's dtype when y is a Tensor).
      y: A Tensor or a value convertible to one.
      name: A name for the operation (default "truediv").

    Returns:
      A floating (or complex) Tensor.
    """
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype)
    return truediv(x, y, name)


def div(x, y, name=None):
    """Divides x by y with Python 2 semantics (deprecated TF1 tf.div).

    Floating and complex operands are divided exactly (RealDiv); integers are floor-divided
    (FloorDiv), so tf.div(-7, 2) is -4.

    Args:
      x: A Tensor or a value convertible to one.
      y: A Tensor of x's dtype, or a value convertible to it.
      name: A name for the operation (default "div").

    Returns:
      A Tensor of x's type.
    """
    with name_scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        exact = x.dtype.is_floating or x.dtype.is_complex
        return apply_op(RealDiv if exact else FloorDiv, [x, y], name=scope)


def div_no_nan(x, y, name=None):
    """Computes x / y element-wise, and 0 wherever y is 0.

    Integers are cast to floating point first, as by `truediv` (int32 to float64).

    Args:
      x: A Tensor of a floating, complex or integer dtype.
      y: A Tensor of x's dtype, or a value convertible to it.
      name: A name for the operation (default "div_no_nan").

    Returns:
      A Tensor of x's type, or of the floating type integers are cast to.

    Raises:
      TypeError: if x and y have different dtypes, or one truediv does not accept.
    """
    with name_scope(name, "div_no_nan", [x, y]) as scope:
        if not is_tensor_like(x) and is_tensor_like(y):
            y = convert_to_tensor(y, name="y")
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
        else:
            x = convert_to_tensor(x, name="x")
            y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        x, y = _truediv_operands(x, y, "tf.math.divide_no_nan")
        return apply_op(DivNoNan, [x, y], name=scope)


def scalar_mul(scalar, x, name=None):
    """Multiplies a scalar by a tensor.

    Args:
      scalar: A 0-D Tensor or a Python number, converted to x's dtype.
      x: A Tensor.
      name: A name for the operation (default "Mul").

    Returns:
      `scalar * x`, of x's type.

    Raises:
      ValueError: if `scalar` is not 0-D.
    """
    x = convert_to_tensor(x, name="x")
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {scalar.shape}.")
    return multiply(scalar, x, name)


# --- AddN -------------------------------------------------------------------------------------
AddN = define_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
                 attrs=[TypeAttr("T", NUMERIC)], shape_fn=shape_fns.merged,
                 is_commutative=True)
register_static_value("AddN")(fold_with_kernel)

_ADD_N_EMPTY = ("Inputs must be an iterable of at least one Tensor/IndexedSlices with the same "
                "dtype and shape.")


def add_n(inputs, name=None):
    """Adds all input tensors element-wise.

    Unlike `add`, there is no broadcasting: every input must have the same shape and dtype.
    The sum is taken left to right, so results are deterministic.

    Args:
      inputs: A list of Tensors (or values convertible to them) of one shape and dtype.
      name: A name for the operation (default "AddN").

    Returns:
      A Tensor shaped like the inputs; the single input itself when there is only one (an
      Identity of it if `name` is given).

    Raises:
      ValueError: if `inputs` is empty or not a list, or the shapes are incompatible.
      TypeError: if the inputs do not all have one dtype.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(_ADD_N_EMPTY)
    inputs = [convert_to_tensor(x) for x in inputs]
    dtypes = [x.dtype.base_dtype for x in inputs]
    if any(d != dtypes[0] for d in dtypes):
        raise TypeError(f"Tensors in list passed to 'inputs' of 'AddN' Op have types "
                        f"[{', '.join(d.name for d in dtypes)}] that don't all match.")
    if len(inputs) == 1:
        if name:
            from tensorweave.ops.array_ops import identity
            return identity(inputs[0], name=name)
        return inputs[0]
    return apply_op(AddN, [inputs], name=name)


# --- clipping -----------------------------------------------------------------------------------
def _clip_shape(ctx):
    """Shaped like t; each bound must be a scalar or shaped like t."""
    t_shape = ctx.input_shape(0)
    for i in (1, 2):
        bound = ctx.input_shape(i)
        if bound.ndims not in (None, 0) and not bound.is_compatible_with(t_shape):
            raise ValueError(f"clip_value_min and clip_value_max must be scalars or shaped "
                             f"like t, but t is {t_shape} and a bound is {bound}")
    return t_shape


ClipByValue = define_elementwise(
    "ClipByValue", ["t: T", "clip_value_min: T", "clip_value_max: T"], NUMERIC,
    shape_fn=_clip_shape, out_name="output")


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips tensor values to [clip_value_min, clip_value_max] (as Minimum, then Maximum).

    Args:
      t: A Tensor.
      clip_value_min: The lower bound: a scalar or a Tensor broadcastable to t's shape.
      clip_value_max: The upper bound: a scalar or a Tensor broadcastable to t's shape.
      name: A name for the operation (default "clip_by_value").

    Returns:
      A Tensor shaped and typed like `t`.

    Raises:
      ValueError: if a bound would broadcast `t` to a different shape.
    """
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return t_max


def _exact(dtype, value):
    """`value` as a Python int or float, which compare exactly with each other."""
    return int(value) if dtype.is_integer else float(value)


def _saturation_bounds(in_dtype, out_dtype):
    """The range of out_dtype expressed in in_dtype, rounded inward where in_dtype cannot hold
    a limit exactly (int32's max as a float32 is 2147483520, not 2**31 which would wrap)."""
    np_type = in_dtype.as_numpy_dtype
    out_min, out_max = _exact(out_dtype, out_dtype.min), _exact(out_dtype, out_dtype.max)
    low = np_type(max(_exact(in_dtype, in_dtype.min), out_min))
    if _exact(out_dtype, low) < out_min:
        low = np.nextafter(low, np_type(0))
    high = np_type(min(_exact(in_dtype, in_dtype.max), out_max))
    if _exact(out_dtype, high) > out_max:
        high = np.nextafter(high, np_type(0))
    return low, high


def saturate_cast(value, dtype, name=None):
    """Casts `value` to `dtype`, clamping it to the range of `dtype` first so nothing wraps.

    Args:
      value: A Tensor.
      dtype: The destination type.
      name: A name for the operation (default "saturate_cast").

    Returns:
      `value` cast to `dtype`, with out-of-range values saturated at dtype's min or max.
    """
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if value.dtype.is_complex:
            if dtype.is_complex:
                return cast(value, dtype, name=scope)
            value = cast(value, value.dtype.real_dtype)  # keeps the real part
        low, high = _saturation_bounds(value.dtype.base_dtype, dtype.real_dtype)
        value = apply_op(ClipByValue, [value, low, high], name="clamp")
        return cast(value, dtype, name=scope)


def logical_xor(x, y, name="LogicalXor"):
    """Returns x XOR y element-wise, as (x OR y) AND NOT (x AND y) (`^` on bool tensors).

    Args:
      x: A bool Tensor.
      y: A bool Tensor broadcastable with `x`.
      name: A name for the final LogicalAnd op.

    Returns:
      A bool Tensor.
    """
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


# --- gradients ----------------------------------------------------------------------------------
def _reduced(op, gx, gy):
    """[gx, gy] summed back to the shapes of op's two inputs (None stays None)."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    x, y = op.inputs
    return [None if gx is None else reduce_to_shape_of(gx, x),
            None if gy is None else reduce_to_shape_of(gy, y)]


def _where(condition, x, y):
    from tensorweave.ops.array_index_ops import where_v2
    return where_v2(condition, x, y)


def _zeros_like(x):
    from tensorweave.ops.array_creation_ops import zeros_like
    return zeros_like(x)


@AddV2.gradient
@Add.gradient
def _add_grad(op, grad):
    return _reduced(op, grad, grad)


@Sub.gradient
def _sub_grad(op, grad):
    return _reduced(op, grad, negative(grad))


@Mul.gradient
def _mul_grad(op, grad):
    x, y = op.inputs
    return _reduced(op, multiply(grad, conj(y)), multiply(conj(x), grad))


@Div.gradient
@RealDiv.gradient
def _real_div_grad(op, grad):
    """d(x / y) = dx / y - x dy / y^2."""
    x, y = (conj(t) for t in op.inputs)
    return _reduced(op, grad / y, grad * (-x / y / y))


@DivNoNan.gradient
def _div_no_nan_grad(op, grad):
    """As RealDiv's, with every quotient 0 where y is 0."""
    x, y = (conj(t) for t in op.inputs)
    return _reduced(op, div_no_nan(grad, y), grad * div_no_nan(div_no_nan(-x, y), y))


@FloorMod.gradient
def _floor_mod_grad(op, grad):
    """x mod y = x - floor(x / y) y: d/dx = 1, d/dy = -floor(x / y) (away from the jumps)."""
    x, y = op.inputs
    return _reduced(op, grad, grad * negative(floor_div(x, y)))


@TruncateMod.gradient
def _truncate_mod_grad(op, grad):
    """x tmod y = x - trunc(x / y) y: d/dx = 1, d/dy = -trunc(x / y). (TensorFlow has none.)"""
    x, y = op.inputs
    return _reduced(op, grad, grad * negative(truncatediv(x, y)))


@Pow.gradient
def _pow_grad(op, grad):
    """d(x^y) = y x^(y-1) dx + x^y log(x) dy, with log(x) taken as 0 where x <= 0 (x == 0 for
    complex x), so a negative base with an integral exponent has a finite gradient."""
    from tensorweave.ops.math_unary_ops import log
    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * conj(y * pow(x, y - 1))
    positive = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    ones = _where(positive, x, 1)
    log_x = _where(positive, log(ones), _zeros_like(x))
    return _reduced(op, gx, grad * conj(z * log_x))


def _selecting_grad(select_x):
    """Maximum / Minimum: the gradient goes to x where `select_x(x, y)` holds, else to y."""
    def grad_fn(op, grad):
        x, y = op.inputs
        mask = select_x(x, y)
        zeros = _zeros_like(grad)
        return _reduced(op, _where(mask, grad, zeros), _where(mask, zeros, grad))
    return grad_fn


Maximum.gradient(_selecting_grad(greater_equal))
Minimum.gradient(_selecting_grad(less_equal))


@SquaredDifference.gradient
def _squared_difference_grad(op, grad):
    """d(x - y)^2 = 2 (x - y) (dx - dy)."""
    x, y = op.inputs
    twice = grad * (x - y) * 2
    return _reduced(op, twice, negative(twice))


@Atan2.gradient
def _atan2_grad(op, grad):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2); the inputs are (y, x)."""
    y, x = op.inputs
    scaled = grad / (square(x) + square(y))
    return _reduced(op, x * scaled, negative(y) * scaled)


@AddN.gradient
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@ClipByValue.gradient
def _clip_by_value_grad(op, grad):
    """t's gradient where t lies within the bounds; the bound's gradient where it clipped."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    t, low, high = op.inputs
    below, above = less(t, low), greater(t, high)
    zeros = _zeros_like(grad)
    return [_where(logical_or(below, above), zeros, grad),
            reduce_to_shape_of(_where(below, grad, zeros), low),
            reduce_to_shape_of(_where(above, grad, zeros), high)]


# --- Python operators on Tensor -----------------------------------------------------------------
def _install_binary_operator(scope_name: str, fn) -> None:
    """Installs `__<scope_name>__` and its reflected form; `fn(x, y, name)` builds the op."""
    def forward(x, y):
        with name_scope(None, scope_name, [x, y]) as scope:
            y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
            return fn(x, y, scope)

    def reflected(y, x):
        with name_scope(None, scope_name, [x, y]) as scope:
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return fn(x, y, scope)
    forward.__name__ = f"__{scope_name}__"
    reflected.__name__ = f"__r{scope_name}__"
    Tensor._override_operator(forward.__name__, forward)
    Tensor._override_operator(reflected.__name__, reflected)


def _by_dtype(logical, bitwise):
    """`&`, `|`, `^`: logical for bool tensors, bitwise (default op names) for integers."""
    def apply(x, y, name):
        if x.dtype.base_dtype == _dtypes.bool:
            return logical(x, y, name=name)
        return bitwise(x, y)
    return apply


for _scope, _fn in (
        ("add", add), ("sub", subtract), ("mul", multiply), ("truediv", truediv),
        ("floordiv", floordiv), ("mod", floormod), ("pow", pow),
        ("and", _by_dtype(logical_and, bitwise_and)), ("or", _by_dtype(logical_or, bitwise_or)),
        ("xor", _by_dtype(logical_xor, bitwise_xor))):
    _install_binary_operator(_scope, _fn)

for _dunder, _op_def in (("__lt__", Less), ("__le__", LessEqual), ("__gt__", Greater),
                         ("__ge__", GreaterEqual)):
    Tensor._override_operator(_dunder, lambda x, y, _op_def=_op_def: apply_op(_op_def, [x, y]))
Tensor._override_operator("__neg__", lambda x: apply_op(Neg, [x]))
Tensor._override_operator("__abs__", lambda x: _abs(x))
Tensor._override_operator(
    "__invert__", lambda x: logical_not(x) if x.dtype.base_dtype == _dtypes.bool else invert(x))
