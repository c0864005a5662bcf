"""Unary elementwise math, predicates and casts, plus what every elementwise table shares.

Each op is one row: `unary_op` defines a typed OpDef (TensorFlow's op type and allowed dtypes,
shape unchanged) and registers `fold_with_kernel` as its static-value rule; `unary_fn` makes
the TF1 wrapper `fn(x, name=None)` with a generated docstring. Wrappers with their own logic
(abs of complex numbers, round of integers, cast) are written out below the table.
`ops/math_ops.py` builds the binary ops and the Python operators on the same machinery.

Gradients follow TensorFlow's conventions: for complex x the gradient of f is grad * conj(f'(x)).
Most are a row of `_DERIVATIVES` (f' built from graph ops, so second derivatives work); Tanh,
Sigmoid, Sqrt, Rsqrt and Reciprocal use TensorFlow's fused helper ops (TanhGrad, ...), which
reuse the forward output, are defined here with their own gradients, and also let TensorFlow
training GraphDefs import.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, OpDef, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import register_static_value, static_values
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels.registry import find_kernel
from tensorweave.platform import tf_logging

__all__ = [
    "negative", "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log",
    "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "sigmoid", "erf", "floor", "ceil", "round", "rint", "is_nan", "is_inf",
    "is_finite", "logical_not", "conj", "cast", "to_float", "to_double", "to_int32", "to_int64",
    "to_bfloat16", "to_complex64", "to_complex128",
]

FLOAT = _dtypes.FLOATING
FLOAT_COMPLEX = _dtypes.FLOATING | _dtypes.COMPLEX
SIGNED = _dtypes.FLOATING | _dtypes.SIGNED_INTEGER | _dtypes.COMPLEX
NUMERIC = _dtypes.NUMERIC

# --- constant folding -------------------------------------------------------------------------
_FOLD_LIMIT = 1 << 12  # larger results are not worth computing while the graph is built


class _FoldContext:
    """The part of a KernelContext that elementwise kernels read (attrs, op type, xp)."""

    __slots__ = ("op_type", "node_name", "attrs", "xp")

    def __init__(self, op):
        self.op_type = op.type
        self.node_name = op.name
        self.attrs = op._attrs
        self.xp = np


def fold_with_kernel(op, index: int):
    """Static value of an elementwise op whose inputs are all known: its CPU kernel applied to
    them. TensorFlow's shape inference does the same for small constant subgraphs, which is
    how `tf.reshape(x, [-1, n * 2])` gets a static shape."""
    size = op._outputs[index].shape.num_elements()
    if size is None or size > _FOLD_LIMIT:
        return None
    values = static_values(op._inputs)
    if values is None:
        return None
    kdef = find_kernel(op.type, "CPU", op._attrs)
    if kdef is None:
        return None
    try:
        with np.errstate(all="ignore"):
            if kdef.pure:
                out = kdef.impl(*values)
            else:
                ctx = _FoldContext(op)
                fn = kdef.impl(ctx).compute if kdef.is_class else kdef.impl
                out = fn(ctx, *values)
    except Exception:  # noqa: BLE001 - e.g. division by zero: running the step reports it
        return None
    return np.asarray(out)


# --- table machinery --------------------------------------------------------------------------
def define_elementwise(op_type: str, inputs, allowed, out: str = "T", attrs=(),
                       shape_fn=shape_fns.broadcast, out_name: str | None = None,
                       **kwargs) -> OpDef:
    """An elementwise OpDef (output `y` of a unary op, `z` of a binary one, dtype `out`) whose
    static value folds through its kernel; `allowed` restricts its type attr T."""
    type_attrs = [TypeAttr("T", allowed)] if allowed is not None else []
    out_name = out_name or ("y" if len(inputs) == 1 else "z")
    op_def = define_op(op_type, inputs=inputs, outputs=[f"{out_name}: {out}"],
                       attrs=[*type_attrs, *attrs], shape_fn=shape_fn, **kwargs)
    register_static_value(op_type)(fold_with_kernel)
    return op_def


def unary_op(op_type: str, allowed, out: str = "T", not_differentiable: bool = False) -> OpDef:
    """A unary elementwise op: x -> y of x's shape (dtype T, or `out` for predicates)."""
    return define_elementwise(op_type, ["x: T"], allowed, out, shape_fn=shape_fns.unchanged,
                              not_differentiable=not_differentiable)


def type_list(op_def: OpDef, attr: str = "T") -> str:
    """The allowed dtypes of a type attr (or the fixed input dtype), for docstrings."""
    if attr not in op_def.attrs:
        return op_def.inputs[0].dtype.name
    allowed = op_def.attrs[attr].allowed
    return "any type" if allowed is None else ", ".join(sorted(d.name for d in allowed))


_UNARY_DOC = """{summary}

    Args:
      x: A Tensor of type {types}.
      name: A name for the operation (default "{default}").

    Returns:
      A Tensor shaped like `x`, of {result}.

    Raises:
      TypeError: if `x` has a dtype the op does not accept.
    """


def unary_fn(op_def: OpDef, public_name: str, summary: str):
    """The TF1 wrapper `public_name(x, name=None)` of a unary op."""
    def wrapper(x, name=None):
        return apply_op(op_def, [x], name=name)
    out = op_def.outputs[0]
    result = f"type {out.dtype.name}" if out.dtype is not None else "the same type as `x`"
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _UNARY_DOC.format(summary=summary, types=type_list(op_def),
                                        default=op_def.name, result=result)
    return wrapper


# --- the unary ops ------------------------------------------------------------------------------
Neg = unary_op("Neg", SIGNED)
Abs = unary_op("Abs", _dtypes.FLOATING | _dtypes.SIGNED_INTEGER)
Sign = unary_op("Sign", SIGNED)
Square = unary_op("Square", NUMERIC)
Sqrt = unary_op("Sqrt", FLOAT_COMPLEX)
Rsqrt = unary_op("Rsqrt", FLOAT_COMPLEX)
Reciprocal = unary_op("Reciprocal", FLOAT_COMPLEX)
Exp = unary_op("Exp", FLOAT_COMPLEX)
Expm1 = unary_op("Expm1", FLOAT_COMPLEX)
Log = unary_op("Log", FLOAT_COMPLEX)
Log1p = unary_op("Log1p", FLOAT_COMPLEX)
Sin = unary_op("Sin", FLOAT_COMPLEX)
Cos = unary_op("Cos", FLOAT_COMPLEX)
Tan = unary_op("Tan", FLOAT_COMPLEX)
Asin = unary_op("Asin", FLOAT_COMPLEX)
Acos = unary_op("Acos", FLOAT_COMPLEX)
Atan = unary_op("Atan", FLOAT_COMPLEX)
Sinh = unary_op("Sinh", FLOAT_COMPLEX)
Cosh = unary_op("Cosh", FLOAT_COMPLEX)
Tanh = unary_op("Tanh", FLOAT_COMPLEX)
Asinh = unary_op("Asinh", FLOAT_COMPLEX)
Acosh = unary_op("Acosh", FLOAT_COMPLEX)
Atanh = unary_op("Atanh", FLOAT_COMPLEX)
Sigmoid = unary_op("Sigmoid", FLOAT_COMPLEX)
Erf = unary_op("Erf", FLOAT)
Floor = unary_op("Floor", FLOAT)
Ceil = unary_op("Ceil", FLOAT)
Rint = unary_op("Rint", FLOAT)
Round = unary_op("Round", SIGNED)
Conj = unary_op("Conj", _dtypes.COMPLEX)
IsNan = unary_op("IsNan", FLOAT, out="bool", not_differentiable=True)
IsInf = unary_op("IsInf", FLOAT, out="bool", not_differentiable=True)
IsFinite = unary_op("IsFinite", FLOAT, out="bool", not_differentiable=True)
LogicalNot = define_elementwise("LogicalNot", ["x: bool"], None, out="bool",
                                shape_fn=shape_fns.unchanged, not_differentiable=True)
Invert = unary_op("Invert", _dtypes.INTEGER, not_differentiable=True)
ComplexAbs = define_elementwise(
    "ComplexAbs", ["x: T"], _dtypes.COMPLEX, out="Tout", shape_fn=shape_fns.unchanged,
    attrs=[TypeAttr("Tout", {_dtypes.float32, _dtypes.float64}, _dtypes.float32)])

negative = unary_fn(Neg, "negative", "Computes -x element-wise (the unary `-` operator).")
sign = unary_fn(Sign, "sign", "Element-wise sign: -1 if x < 0, 0 if x == 0, 1 if x > 0 "
                "(NaN stays NaN; x / |x| for complex x).")
square = unary_fn(Square, "square", "Computes x * x element-wise.")
sqrt = unary_fn(Sqrt, "sqrt", "Computes the square root of x element-wise (NaN for x < 0).")
rsqrt = unary_fn(Rsqrt, "rsqrt", "Computes 1 / sqrt(x) element-wise.")
reciprocal = unary_fn(Reciprocal, "reciprocal", "Computes 1 / x element-wise.")
exp = unary_fn(Exp, "exp", "Computes e^x element-wise.")
expm1 = unary_fn(Expm1, "expm1", "Computes e^x - 1 element-wise, accurately for small x.")
log = unary_fn(Log, "log", "Computes the natural logarithm of x element-wise.")
log1p = unary_fn(Log1p, "log1p", "Computes log(1 + x) element-wise, accurately for small x.")
sin = unary_fn(Sin, "sin", "Computes the sine of x element-wise.")
cos = unary_fn(Cos, "cos", "Computes the cosine of x element-wise.")
tan = unary_fn(Tan, "tan", "Computes the tangent of x element-wise.")
asin = unary_fn(Asin, "asin", "Computes the inverse sine of x element-wise.")
acos = unary_fn(Acos, "acos", "Computes the inverse cosine of x element-wise.")
atan = unary_fn(Atan, "atan", "Computes the inverse tangent of x element-wise.")
sinh = unary_fn(Sinh, "sinh", "Computes the hyperbolic sine of x element-wise.")
cosh = unary_fn(Cosh, "cosh", "Computes the hyperbolic cosine of x element-wise.")
tanh = unary_fn(Tanh, "tanh", "Computes the hyperbolic tangent of x element-wise.")
asinh = unary_fn(Asinh, "asinh", "Computes the inverse hyperbolic sine of x element-wise.")
acosh = unary_fn(Acosh, "acosh", "Computes the inverse hyperbolic cosine of x element-wise.")
atanh = unary_fn(Atanh, "atanh", "Computes the inverse hyperbolic tangent of x element-wise.")
sigmoid = unary_fn(Sigmoid, "sigmoid", "Computes 1 / (1 + e^-x) element-wise; stable for "
                   "large |x| (exactly 0 or 1, never NaN).")
erf = unary_fn(Erf, "erf", "Computes the Gauss error function of x element-wise (within 2 "
               "ulp of the exact value in float64).")
floor = unary_fn(Floor, "floor", "Rounds x down to an integral value element-wise.")
ceil = unary_fn(Ceil, "ceil", "Rounds x up to an integral value element-wise.")
rint = unary_fn(Rint, "rint", "Rounds x to the nearest integral value element-wise, half to "
                "even.")
is_nan = unary_fn(IsNan, "is_nan", "Returns which elements of x are NaN.")
is_inf = unary_fn(IsInf, "is_inf", "Returns which elements of x are +inf or -inf.")
is_finite = unary_fn(IsFinite, "is_finite", "Returns which elements of x are finite.")
logical_not = unary_fn(LogicalNot, "logical_not", "Computes NOT x element-wise (`~` on bool "
                       "tensors).")
invert = unary_fn(Invert, "invert", "Flips every bit of integer x (`~` on integer tensors).")


def abs(x, name=None):  # noqa: A001 - TF1's name
    """Computes |x| element-wise (the `abs()` builtin on tensors).

    Args:
      x: A Tensor of a floating, signed integer or complex type.
      name: A name for the operation (default "Abs").

    Returns:
      A Tensor shaped like `x`: of x's type, or for complex x its real type (ComplexAbs).

    Raises:
      TypeError: for unsigned, bool or string tensors.
    """
    with name_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op(ComplexAbs, [x], {"Tout": x.dtype.real_dtype}, name=scope)
        return apply_op(Abs, [x], name=scope)


def round(x, name=None):  # noqa: A001 - TF1's name
    """Rounds x to the nearest integer element-wise, half to even (tf.round(2.5) is 2.0).

    Args:
      x: A Tensor of a floating, signed integer or complex type.
      name: A name for the operation (default "Round").

    Returns:
      A Tensor like `x`; an integer `x` is returned unchanged.
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return apply_op(Round, [x], name=name)


def conj(x, name=None):
    """Returns the complex conjugate of x element-wise; real numbers are their own conjugate.

    Args:
      x: A Tensor (or a value convertible to one) of a numeric type.
      name: A name for the operation (default "Conj").

    Returns:
      For complex x, a Conj op's result; for real numeric x, `x` itself.

    Raises:
      TypeError: if `x` is not numeric (bool, string).
    """
    if isinstance(x, Tensor) and x.dtype.base_dtype in NUMERIC and not x.dtype.is_complex:
        return x  # no name scope is opened, as in TensorFlow
    with name_scope(name, "Conj", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op(Conj, [x], name=scope)
        if x.dtype.base_dtype not in NUMERIC:
            raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}.")
        return x


# --- casts ------------------------------------------------------------------------------------
Cast = define_elementwise("Cast", ["x: SrcT"], None, out="DstT", shape_fn=shape_fns.unchanged,
                          attrs=[TypeAttr("SrcT"), TypeAttr("DstT"),
                                 Attr("Truncate", "bool", False)])


def cast(x, dtype, name=None):
    """Casts a tensor to a new type (TF1's tf.cast).

    Floating values cast to integers are truncated toward zero (-1.7 -> -1); complex values cast
    to real types keep their real part; nonzero values cast to bool are True.

    Args:
      x: A Tensor or a value convertible to one.
      dtype: The destination type.
      name: A name for the operation (default "Cast").

    Returns:
      A Tensor of type `dtype` shaped like `x`; `x` itself if it already has that type.
    """
    base = _dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == base:
        return x
    with name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex and base.is_floating:
            tf_logging.warning("You are casting an input of type complex to an incompatible "
                               "dtype float. This will discard the imaginary part and may not "
                               "be what you intended.")
        if x.dtype.base_dtype != base:
            x = apply_op(Cast, [x], {"DstT": base}, name=scope)
        return x


def _cast_to(dtype, public_name: str, default_name: str):
    """TF1's deprecated `to_<type>(x, name=...)` shorthands for `cast`."""
    def wrapper(x, name=default_name):
        return cast(x, dtype, name=name)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = f"""Casts `x` to {dtype.name} (deprecated: use `tf.cast`).

    Args:
      x: A Tensor or a value convertible to one.
      name: A name for the operation (default "{default_name}").

    Returns:
      A {dtype.name} Tensor shaped like `x` (`x` itself if it already is {dtype.name}).
    """
    return wrapper


to_float = _cast_to(_dtypes.float32, "to_float", "ToFloat")
to_double = _cast_to(_dtypes.float64, "to_double", "ToDouble")
to_int32 = _cast_to(_dtypes.int32, "to_int32", "ToInt32")
to_int64 = _cast_to(_dtypes.int64, "to_int64", "ToInt64")
to_bfloat16 = _cast_to(_dtypes.bfloat16, "to_bfloat16", "ToBFloat16")
to_complex64 = _cast_to(_dtypes.complex64, "to_complex64", "ToComplex64")
to_complex128 = _cast_to(_dtypes.complex128, "to_complex128", "ToComplex128")


# --- gradients ----------------------------------------------------------------------------------
# TensorFlow's fused gradient helpers z = f(y, dy), y being the forward op's output.
TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad = (
    define_elementwise(t, ["y: T", "dy: T"], FLOAT_COMPLEX, shape_fn=shape_fns.merged)
    for t in ("TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"))


def _grad_op_fn(op_def: OpDef, formula: str):
    """The internal wrapper `fn(y, dy, name=None)` of a fused gradient helper."""
    def wrapper(y, dy, name=None):
        return apply_op(op_def, [y, dy], name=name)
    wrapper.__name__ = wrapper.__qualname__ = f"_{op_def.name}"
    wrapper.__doc__ = f"""Computes {formula} element-wise (op {op_def.name}).

    Args:
      y: The forward op's output, a floating or complex Tensor.
      dy: The gradient flowing into that output, of y's shape and type.
      name: A name for the operation (default "{op_def.name}").

    Returns:
      The gradient of the forward op's input, shaped and typed like `y`.
    """
    return wrapper


tanh_grad = _grad_op_fn(TanhGrad, "dy * conj(1 - y^2), the gradient of tanh")
sigmoid_grad = _grad_op_fn(SigmoidGrad, "dy * conj(y * (1 - y)), the gradient of sigmoid")
sqrt_grad = _grad_op_fn(SqrtGrad, "0.5 * dy / conj(y), the gradient of sqrt")
rsqrt_grad = _grad_op_fn(RsqrtGrad, "-0.5 * dy * conj(y)^3, the gradient of rsqrt")
reciprocal_grad = _grad_op_fn(ReciprocalGrad, "-dy * conj(y)^2, the gradient of 1/x")


def _conj(x):
    """conj(x) for complex tensors, x itself for real ones (TF's gradients conjugate f')."""
    return apply_op(Conj, [x]) if x.dtype.is_complex else x


# f'(x) from (x, y = f(x)); the gradient is grad * conj(f'(x)).
_DERIVATIVES = [
    (Abs, lambda x, y: sign(x)),
    (Square, lambda x, y: x * 2),
    (Exp, lambda x, y: y),
    (Expm1, lambda x, y: exp(x)),
    (Log, lambda x, y: reciprocal(x)),
    (Log1p, lambda x, y: reciprocal(1 + x)),
    (Sin, lambda x, y: cos(x)),
    (Cos, lambda x, y: -sin(x)),
    (Tan, lambda x, y: square(reciprocal(cos(x)))),
    (Asin, lambda x, y: rsqrt(1 - square(x))),
    (Acos, lambda x, y: -rsqrt(1 - square(x))),
    (Atan, lambda x, y: reciprocal(1 + square(x))),
    (Sinh, lambda x, y: cosh(x)),
    (Cosh, lambda x, y: sinh(x)),
    (Asinh, lambda x, y: reciprocal(cosh(y))),
    (Acosh, lambda x, y: reciprocal(sinh(y))),
    (Atanh, lambda x, y: reciprocal(1 - square(x))),
    (Erf, lambda x, y: exp(-square(x)) * (2 / np.sqrt(np.pi))),
]


def _register_chain_rule(op_def: OpDef, derivative) -> None:
    def grad_fn(op, grad):
        return [grad * _conj(derivative(op.inputs[0], op.outputs[0]))]
    grad_fn.__name__ = grad_fn.__qualname__ = f"_{op_def.name.lower()}_grad"
    grad_fn.__doc__ = f"Chain rule through {op_def.name}: grad * conj(f'(x))."
    op_def.gradient(grad_fn)


for _op_def, _derivative in _DERIVATIVES:
    _register_chain_rule(_op_def, _derivative)

# d tanh = 1 - y^2, d sigmoid = y (1 - y), d sqrt = 1 / (2 y), d rsqrt = -y^3 / 2, d 1/x = -y^2:
# all from the forward output y, by the fused helpers.
for _op_def, _helper in ((Tanh, tanh_grad), (Sigmoid, sigmoid_grad), (Sqrt, sqrt_grad),
                         (Rsqrt, rsqrt_grad), (Reciprocal, reciprocal_grad)):
    _op_def.gradient(lambda op, grad, _helper=_helper: [_helper(op.outputs[0], grad)])


@Neg.gradient
def _neg_grad(op, grad):
    return [negative(grad)]


@Floor.gradient
@Ceil.gradient
@Rint.gradient
@Round.gradient
def _rounding_grad(op, grad):
    """Zero almost everywhere; TensorFlow returns None (no gradient) rather than zeros."""
    return [None]


@Sign.gradient
def _sign_grad(op, grad):
    """Zero for real x. For complex x, sign(x) = x / |x| moves only along the unit circle:
    the gradient is (grad - conj(grad) * sign(x)^2) / (2 |x|), and 0 at x = 0."""
    x = op.inputs[0]
    if not x.dtype.is_complex:
        from tensorweave.ops.array_creation_ops import zeros_like
        return [zeros_like(x)]
    from tensorweave.ops.math_ops import div_no_nan
    s = op.outputs[0]
    twice_abs = cast(abs(x) * 2, x.dtype.base_dtype)
    return [div_no_nan(grad - _conj(grad) * square(s), twice_abs)]


@ComplexAbs.gradient
def _complex_abs_grad(op, grad):
    """d|x| is x / |x| (and 0 at x = 0), carried back as a complex gradient."""
    from tensorweave.ops.math_ops import div_no_nan
    x = op.inputs[0]
    dtype = x.dtype.base_dtype
    return [div_no_nan(cast(grad, dtype) * x, cast(op.outputs[0], dtype))]


@Conj.gradient
def _conj_grad(op, grad):
    return [conj(grad)]


@TanhGrad.gradient
def _tanh_grad_grad(op, grad):
    """z = dy (1 - y^2): dz/dy = -2 dy y, dz/d(dy) = 1 - y^2."""
    y, dy = op.inputs
    return [grad * _conj(dy * y) * -2, tanh_grad(y, grad)]


@SigmoidGrad.gradient
def _sigmoid_grad_grad(op, grad):
    """z = dy y (1 - y): dz/dy = dy (1 - 2 y), dz/d(dy) = y (1 - y)."""
    y, dy = op.inputs
    return [grad * _conj(dy * (1 - y * 2)), sigmoid_grad(y, grad)]


@SqrtGrad.gradient
def _sqrt_grad_grad(op, grad):
    """z = dy / (2 y): dz/dy = -z / y, dz/d(dy) = 1 / (2 y)."""
    y = op.inputs[0]
    over_y = grad / y
    return [-_conj(over_y) * op.outputs[0], over_y * 0.5]


@RsqrtGrad.gradient
def _rsqrt_grad_grad(op, grad):
    """z = -dy y^3 / 2: dz/dy = -3 dy y^2 / 2, dz/d(dy) = -y^3 / 2."""
    y, dy = op.inputs
    return [grad * _conj(dy * square(y)) * -1.5, rsqrt_grad(y, grad)]


@ReciprocalGrad.gradient
def reciprocal_grad_grad(op, grad):
    """z = -dy y^2: dz/dy = -2 dy y, dz/d(dy) = -y^2."""
    y, dy = op.inputs
    return [grad * _conj(dy * y) * -2, reciprocal_grad(y, grad)]


# Casts between floating and complex types pass the gradient back (cast to the source type);
# integer and bool ends stop it.
_CASTABLE_GRAD = _dtypes.FLOATING | _dtypes.COMPLEX


@Cast.gradient
def _cast_grad(op, grad):
    src = op.inputs[0].dtype.base_dtype
    if src not in _CASTABLE_GRAD or op.outputs[0].dtype.base_dtype not in _CASTABLE_GRAD:
        return [None]
    from tensorweave.framework.indexed_slices import IndexedSlices
    if isinstance(grad, IndexedSlices):
        return [IndexedSlices(cast(grad.values, src), grad.indices, grad.dense_shape)]
    return [cast(grad, src)]
