"""Special functions: the gamma family, erfc/erfinv/ndtri, scaled Bessel functions, the
incomplete beta function, Hurwitz zeta, polygamma, xlogy/xdivy/xlog1py, and the composites
lbeta, log_sigmoid and erfcinv.

Every op is an elementwise table row (`unary_op`, `binary_op`, `define_elementwise`), so binary
ops broadcast like the arithmetic ones and fold statically through their kernels
(`kernels/math_special.py`). Betainc is the exception TensorFlow makes: its inputs must have one
shape or be scalars. Gradients are TensorFlow's: Igamma/Igammac through IgammaGradA for `a`;
Betainc only for `x`; Zeta and Polygamma only for their second argument (the first gets None).
IgammaGradA has no gradient, as in TensorFlow.

The tf.math-only names (erfinv, ndtri, bessel_i0e, bessel_i1e, xlogy, xdivy, xlog1py, erfcinv)
are not in `__all__`: `tensorweave/math.py` re-exports them.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math_ops import binary_fn, binary_op, equal, not_equal
from tensorweave.ops.math_unary_ops import (
    FLOAT,
    FLOAT_COMPLEX,
    Neg,
    cast,
    define_elementwise,
    exp,
    log,
    reciprocal,
    sign,
    square,
    type_list,
    unary_fn,
    unary_op,
)

__all__ = ["betainc", "digamma", "erfc", "igamma", "igammac", "lbeta", "lgamma", "log_sigmoid",
           "polygamma", "zeta"]

_SINGLE_DOUBLE = frozenset({_dtypes.float32, _dtypes.float64})


def _betainc_shape(ctx):
    """TensorFlow's rule: non-scalar inputs must have one shape (merged); scalars broadcast."""
    merged, scalars, non_scalar = None, 0, _ts.unknown_shape()
    for shape in ctx.input_shapes:
        if shape.ndims is None:
            non_scalar = shape
        elif shape.ndims == 0:
            scalars += 1
        else:
            merged = merge_dims(merged, tuple(shape.as_list()))
            non_scalar = _ts.TensorShape(merged)
    if scalars == 2:
        return non_scalar
    if scalars == 3:
        return ctx.input_shape(0)
    return _ts.TensorShape(merged)


# --- the ops ------------------------------------------------------------------------------------
Lgamma = unary_op("Lgamma", FLOAT)
Digamma = unary_op("Digamma", FLOAT)
Erfc = unary_op("Erfc", FLOAT)
Erfinv = unary_op("Erfinv", FLOAT)
Ndtri = unary_op("Ndtri", FLOAT)
BesselI0e = unary_op("BesselI0e", FLOAT)
BesselI1e = unary_op("BesselI1e", FLOAT)
Igamma = define_elementwise("Igamma", ["a: T", "x: T"], FLOAT)
Igammac = define_elementwise("Igammac", ["a: T", "x: T"], FLOAT)
IgammaGradA = define_elementwise("IgammaGradA", ["a: T", "x: T"], _SINGLE_DOUBLE)
Polygamma = define_elementwise("Polygamma", ["a: T", "x: T"], _SINGLE_DOUBLE)
Zeta = define_elementwise("Zeta", ["x: T", "q: T"], _SINGLE_DOUBLE)
Betainc = define_elementwise("Betainc", ["a: T", "b: T", "x: T"], _SINGLE_DOUBLE,
                             shape_fn=_betainc_shape)
Xlogy = binary_op("Xlogy", FLOAT_COMPLEX)
Xlog1py = binary_op("Xlog1py", FLOAT_COMPLEX)
Xdivy = binary_op("Xdivy", FLOAT_COMPLEX)

# --- wrappers -----------------------------------------------------------------------------------
lgamma = unary_fn(Lgamma, "lgamma", "Computes log(|Gamma(x)|) element-wise (+inf at the poles "
                  "0, -1, -2, ...).")
digamma = unary_fn(Digamma, "digamma", "Computes psi(x), the derivative of lgamma, element-wise "
                   "(NaN at the poles 0, -1, -2, ...).")
erfc = unary_fn(Erfc, "erfc", "Computes the complementary error function 1 - erf(x) "
                "element-wise, accurately where erf(x) is close to 1.")
xlogy = binary_fn(Xlogy, "xlogy", "Returns x * log(y) element-wise, and 0 wherever x is 0.")

_TYPE_ERRORS = """
    Raises:
      TypeError: if a dtype is not accepted (or two inputs' dtypes differ).
"""
_BROADCAST_ERRORS = _TYPE_ERRORS + "      ValueError: if the static shapes cannot broadcast.\n"
_SCOPED_DOC = """{summary}

    Args:
      x: A Tensor of type {types}.{y_arg}
      name: A name scope for the operation (default "{scope}"; the op is "{scope}/{op}").

    Returns:
      A Tensor of x's type, shaped like {shape}.
"""


def scoped_fn(op_def, public_name: str, summary: str):
    """A tf.math wrapper `public_name(x[, y], name=None)` that opens a name scope, as TF's
    does: the op is named "<public_name>/<OpType>"."""
    if len(op_def.inputs) == 1:
        def wrapper(x, name=None):
            with name_scope(name, public_name, [x]):
                return apply_op(op_def, [x])
        y_arg, shape, errors = "", "`x`", _TYPE_ERRORS
    else:
        def wrapper(x, y, name=None):
            with name_scope(name, public_name, [x]):
                return apply_op(op_def, [x, y])
        y_arg = "\n      y: A Tensor of the same type, broadcastable with `x`."
        shape, errors = "`x` and `y` broadcast together", _BROADCAST_ERRORS
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _SCOPED_DOC.format(
        summary=summary, types=type_list(op_def), y_arg=y_arg, scope=public_name,
        op=op_def.name, shape=shape) + errors
    return wrapper


erfinv = scoped_fn(Erfinv, "erfinv", "Computes the inverse error function element-wise: "
                   "erf(erfinv(x)) = x on (-1, 1), +-inf at +-1, NaN outside.")
ndtri = scoped_fn(Ndtri, "ndtri", "Computes the standard normal quantile function "
                  "element-wise: the inverse of the normal CDF on [0, 1].")
bessel_i0e = scoped_fn(BesselI0e, "bessel_i0e", "Computes exp(-|x|) * I0(x), the "
                       "exponentially scaled modified Bessel function of order 0.")
bessel_i1e = scoped_fn(BesselI1e, "bessel_i1e", "Computes exp(-|x|) * I1(x), the "
                       "exponentially scaled modified Bessel function of order 1.")
xdivy = scoped_fn(Xdivy, "xdivy", "Returns x / y element-wise, and 0 wherever x is 0.")
xlog1py = scoped_fn(Xlog1py, "xlog1py", "Returns x * log1p(y) element-wise, and 0 wherever "
                    "x is 0.")

_A_X_DOC = """{summary}

    Args:
      a: A Tensor of type {types}.
      x: A Tensor of the same type, broadcastable with `a`.
      name: A name for the operation (default "{op}").

    Returns:
      A Tensor of a's type, shaped like `a` and `x` broadcast together.
"""


def _a_x_fn(op_def, public_name: str, summary: str):
    """The TF1 wrapper `public_name(a, x, name=None)` of Igamma, Igammac or Polygamma."""
    def wrapper(a, x, name=None):
        return apply_op(op_def, [a, x], name=name)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _A_X_DOC.format(summary=summary, types=type_list(op_def),
                                      op=op_def.name) + _BROADCAST_ERRORS
    return wrapper


igamma = _a_x_fn(Igamma, "igamma", "Computes the regularized lower incomplete gamma function "
                 "P(a, x) = 1/Gamma(a) * integral_0^x t^(a-1) e^-t dt element-wise: 0 at x = 0, "
                 "NaN for a <= 0 or x < 0.")
igammac = _a_x_fn(Igammac, "igammac", "Computes the regularized upper incomplete gamma "
                  "function Q(a, x) = 1 - P(a, x) element-wise (NaN for a <= 0 or x < 0).")
polygamma = _a_x_fn(Polygamma, "polygamma", "Computes the polygamma function psi^(a)(x), the "
                    "a-th derivative of digamma, for non-negative integral orders `a` (other "
                    "orders give NaN).")


def zeta(x, q, name=None):
    """Computes the Hurwitz zeta function sum over n >= 0 of (n + q)^-x element-wise.

    Args:
      x: A float32 or float64 Tensor (inf at x = 1, NaN below).
      q: A Tensor of the same type, broadcastable with `x`.
      name: A name for the operation (default "Zeta").

    Returns:
      A Tensor of x's type, shaped like `x` and `q` broadcast together.

    Raises:
      TypeError: if the dtypes differ or are not float32/float64.
      ValueError: if the static shapes cannot broadcast.
    """
    return apply_op(Zeta, [x, q], name=name)


def betainc(a, b, x, name=None):
    """Computes the regularized incomplete beta integral I_x(a, b) element-wise.

    Unlike most binary ops, Betainc does not broadcast in general: each input is either a
    scalar or has the one common shape.

    Args:
      a: A float32 or float64 Tensor (positive; NaN otherwise).
      b: A Tensor of the same type (positive).
      x: A Tensor of the same type, in [0, 1].
      name: A name for the operation (default "Betainc").

    Returns:
      A Tensor of a's type with the non-scalar inputs' shape.

    Raises:
      TypeError: if the dtypes differ or are not float32/float64.
      ValueError: if two non-scalar static shapes differ.
    """
    return apply_op(Betainc, [a, b, x], name=name)


# --- composites ---------------------------------------------------------------------------------
def lbeta(x, name=None):
    """Computes log|Beta(x)| = sum(lgamma(x)) - lgamma(sum(x)) over the last dimension.

    An empty last dimension gives -inf (the empty sum is 0, the empty product 1).

    Args:
      x: A floating Tensor of rank at least 1.
      name: A name scope (default "lbeta").

    Returns:
      A Tensor of x's type with the last dimension removed.

    Raises:
      ValueError: if `x` is a scalar.
    """
    from tensorweave.ops.reduction_ops import reduce_sum
    with name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = reduce_sum(lgamma(x), axis=[-1])
        log_gamma_sum_x = lgamma(reduce_sum(x, axis=[-1]))
        return log_prod_gamma_x - log_gamma_sum_x


def log_sigmoid(x, name=None):
    """Computes log(sigmoid(x)) = -softplus(-x) element-wise, without overflow.

    Args:
      x: A floating Tensor.
      name: A name for the operation (default "LogSigmoid", the final Neg op).

    Returns:
      A Tensor shaped and typed like `x`.
    """
    from tensorweave.ops.nn_ops import softplus
    with name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op(Neg, [softplus(-x)], name=scope)


def erfcinv(x, name=None):
    """Computes the inverse of erfc element-wise, as -ndtri(x / 2) / sqrt(2).

    Args:
      x: A floating Tensor with values in [0, 2].
      name: A name scope (default "erfcinv").

    Returns:
      A Tensor shaped and typed like `x`.
    """
    with name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="start")
        return -ndtri(0.5 * x) * np.sqrt(0.5)


# --- gradients ----------------------------------------------------------------------------------
def _summed(grad, x):
    """`grad` summed back to x's shape over the axes x was broadcast along."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    return reduce_to_shape_of(grad, x)


@Lgamma.gradient
def _lgamma_grad(op, grad):
    return [grad * digamma(op.inputs[0])]


@Digamma.gradient
def _digamma_grad(op, grad):
    x = op.inputs[0]
    from tensorweave.ops.constant_op import constant
    return [grad * polygamma(constant(1, dtype=x.dtype.base_dtype), x)]


@Erfc.gradient
def _erfc_grad(op, grad):
    """d erfc = -2 / sqrt(pi) e^(-x^2)."""
    return [grad * (-2 / np.sqrt(np.pi)) * exp(-square(op.inputs[0]))]


@Erfinv.gradient
def _erfinv_grad(op, grad):
    """d erfinv(x) = sqrt(pi) / 2 e^(y^2), y the forward output."""
    return [grad * (np.sqrt(np.pi) / 2) * exp(square(op.outputs[0]))]


@Ndtri.gradient
def _ndtri_grad(op, grad):
    """d ndtri(x) = sqrt(2 pi) e^(y^2 / 2), y the forward output."""
    return [grad * np.sqrt(2 * np.pi) * exp(square(op.outputs[0]) / 2)]


@BesselI0e.gradient
def _bessel_i0e_grad(op, grad):
    """d i0e = i1e(x) - sign(x) i0e(x)."""
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (bessel_i1e(x) - sign(x) * y)]


@BesselI1e.gradient
def _bessel_i1e_grad(op, grad):
    """d i1e = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 at x = 0 (where 1/x is not finite)."""
    from tensorweave.ops.array_index_ops import where_v2
    x, y = op.inputs[0], op.outputs[0]
    dy_dx = where_v2(equal(x, 0), cast(0.5, x.dtype.base_dtype),
                     bessel_i0e(x) - y * (sign(x) + reciprocal(x)))
    return [grad * dy_dx]


def _igamma_grads(op, grad):
    """dP/da by IgammaGradA; dP/dx = x^(a-1) e^-x / Gamma(a), computed in log space."""
    a, x = op.inputs
    partial_a = apply_op(IgammaGradA, [a, x])
    partial_x = exp(-x + (a - 1) * log(x) - lgamma(a))
    return _summed(partial_a * grad, a), _summed(partial_x * grad, x)


@Igamma.gradient
def _igamma_grad(op, grad):
    return list(_igamma_grads(op, grad))


@Igammac.gradient
def _igammac_grad(op, grad):
    """Q = 1 - P: the negated gradients of P."""
    return [-g for g in _igamma_grads(op, grad)]


@Betainc.gradient
def _betainc_grad(op, grad):
    """Only x has a gradient (as in TensorFlow): x^(a-1) (1-x)^(b-1) / B(a, b), in log space
    with xlogy/xlog1py so that a = 1 or b = 1 gives the exact tails."""
    a, b, x = op.inputs
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    partial_x = exp(xlog1py(b - 1, -x) + xlogy(a - 1, x) - log_beta)
    return [None, None, _summed(partial_x * grad, x)]


@Zeta.gradient
def _zeta_grad(op, grad):
    """d zeta(x, q) / dq = -x zeta(x + 1, q); none for x (as in TensorFlow)."""
    x, q = op.inputs
    return [None, _summed(-x * zeta(x + 1, q) * grad, q)]


@Polygamma.gradient
def _polygamma_grad(op, grad):
    """d psi^(n)(x) / dx = psi^(n+1)(x); none for n (as in TensorFlow)."""
    n, x = op.inputs
    return [None, _summed(polygamma(n + 1, x) * grad, x)]


def _x_nonzero(x):
    """1 where x != 0, else 0, in x's dtype: d(x f(y))/dx without the 0 * inf of f at x = 0."""
    return cast(not_equal(x, 0), x.dtype.base_dtype)


@Xlogy.gradient
def _xlogy_grad(op, grad):
    x, y = op.inputs
    return [_summed(xlogy(_x_nonzero(x), y) * grad, x), _summed(xdivy(x, y) * grad, y)]


@Xlog1py.gradient
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    return [_summed(xlog1py(_x_nonzero(x), y) * grad, x), _summed(xdivy(x, y + 1) * grad, y)]


@Xdivy.gradient
def _xdivy_grad(op, grad):
    x, y = op.inputs
    return [_summed(xdivy(_x_nonzero(x), y) * grad, x),
            _summed(xdivy(-x, square(y)) * grad, y)]
