"""TF 2.x-era tf.math additions of compat.v1: MulNoNan, EuclideanNorm, CumulativeLogsumexp,
NextAfter, BesselI0/I1, LeftShift/RightShift, and the compositions TensorFlow builds from ops
(reciprocal_no_nan, polyval, is_non_decreasing, is_strictly_increasing, accumulate_n).

Most of these names exist only under tf.math / tf.bitwise; `is_non_decreasing`,
`is_strictly_increasing` and `accumulate_n` are also top-level in TF1. Gradients follow
TensorFlow's math_grad.py and special_math_grad.py; kernels live in `kernels/math_extra.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math_ops import binary_fn, binary_op
from tensorweave.ops.math_special_ops import scoped_fn
from tensorweave.ops.math_unary_ops import FLOAT, FLOAT_COMPLEX, define_elementwise, unary_op
from tensorweave.ops.reduction_ops import apply_reduction, reshape_to_kept

__all__ = ["accumulate_n", "is_non_decreasing", "is_strictly_increasing"]

_F32_F64 = frozenset({_dtypes.float32, _dtypes.float64})

MulNoNan = binary_op("MulNoNan", FLOAT_COMPLEX)
# T defaults to float32, so Python numbers convert to float32 as in TensorFlow.
NextAfter = define_elementwise("NextAfter", ["x1: T", "x2: T"], None, out_name="output",
                               attrs=[TypeAttr("T", _F32_F64, _dtypes.float32)])
LeftShift, RightShift = (binary_op(t, _dtypes.INTEGER, not_differentiable=True)
                         for t in ("LeftShift", "RightShift"))
BesselI0 = unary_op("BesselI0", FLOAT)
BesselI1 = unary_op("BesselI1", FLOAT)
EuclideanNorm = define_op(
    "EuclideanNorm", inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
    attrs=[Attr("keep_dims", "bool", False), TypeAttr("T", _dtypes.NUMERIC),
           TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32)],
    shape_fn=shape_fns.reduction)
CumulativeLogsumexp = define_op(
    "CumulativeLogsumexp", inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
    attrs=[Attr("exclusive", "bool", False), Attr("reverse", "bool", False),
           TypeAttr("T", FLOAT), TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32)],
    shape_fn=shape_fns.unchanged)


# --- gradients ----------------------------------------------------------------------------------
def _reduced(op, gx, gy):
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    x, y = op.inputs
    return [reduce_to_shape_of(gx, x), reduce_to_shape_of(gy, y)]


@MulNoNan.gradient
def _mul_no_nan_grad(op, grad):
    """As Mul's, with MulNoNan keeping a zero factor's product zero (no 0 * inf = NaN)."""
    x, y = op.inputs
    return _reduced(op, multiply_no_nan(grad, y), multiply_no_nan(x, grad))


@NextAfter.gradient
def _next_after_grad(op, grad):
    """nextafter(x1, x2) moves x1 by one ulp: d/dx1 = 1, d/dx2 = 0 (TensorFlow's choice)."""
    from tensorweave.ops.array_creation_ops import zeros_like
    x1, x2 = op.inputs
    with control_dependencies([grad]):
        return _reduced(op, grad, grad * zeros_like(x2))


@BesselI0.gradient
def _bessel_i0_grad(op, grad):
    """d I0(x) = I1(x)."""
    with control_dependencies([grad]):
        return [grad * bessel_i1(op.inputs[0])]


@BesselI1.gradient
def _bessel_i1_grad(op, grad):
    """d I1(x) = I0(x) - I1(x) / x, and 1/2 at x = 0 (where the division is not finite)."""
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.math_unary_ops import cast
    x, y = op.inputs[0], op.outputs[0]
    with control_dependencies([grad]):
        dy_dx = where_v2(equal(x, 0.0), cast(0.5, x.dtype.base_dtype), bessel_i0(x) - y / x)
        return [grad * dy_dx]


@EuclideanNorm.gradient
def _euclidean_norm_grad(op, grad):
    """d ||x|| = x / ||x||, with the norm and grad broadcast back over the reduced axes."""
    x, axes = op.inputs
    norm = op.outputs[0]
    if not op.get_attr("keep_dims"):
        norm, grad = reshape_to_kept(norm, x, axes), reshape_to_kept(grad, x, axes)
    return [x / (norm / grad), None]


@CumulativeLogsumexp.gradient
def _cumulative_logsumexp_grad(op, grad):
    """TensorFlow's log-space form: the positive and negative parts of grad separately, each
    through a reversed cumulative logsumexp, so large outputs do not overflow."""
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.math_ops import greater, less
    from tensorweave.ops.math_unary_ops import exp, log
    x, axis = op.inputs
    out = op.outputs[0]
    lowest = grad.dtype.base_dtype.min
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")

    def part(mask, magnitude):
        log_grad = where_v2(mask, log(magnitude), lowest)
        return exp(cumulative_logsumexp(log_grad - out, axis=axis, reverse=not reverse,
                                        exclusive=exclusive) + x)
    return [part(greater(grad, 0), grad) - part(less(grad, 0), -grad), None]


# --- wrappers -----------------------------------------------------------------------------------
def multiply_no_nan(x, y, name=None):
    """x * y element-wise, and 0 wherever y is 0, even if x is NaN or infinite
    (tf.math.multiply_no_nan).

    Args:
      x: a float or complex Tensor.
      y: a Tensor convertible to x's dtype, broadcastable with `x`.
      name: a name scope (default "multiply_no_nan"); the MulNoNan op takes its name.

    Returns:
      A Tensor of x's dtype, shaped like `x` and `y` broadcast together.

    Raises:
      TypeError: if `y` has another dtype, or the dtype is not float or complex.
      ValueError: if a tensor `y` cannot convert to x's dtype, or the static shapes cannot
        broadcast.
    """
    with name_scope(name, "multiply_no_nan", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        return apply_op(MulNoNan, [x, y], name=scope)


def reciprocal_no_nan(x, name=None):
    """1 / x element-wise, and 0 wherever x is 0 (tf.math.reciprocal_no_nan).

    Args:
      x: a float or complex Tensor.
      name: a name scope (default "reciprocal_no_nan"); the DivNoNan op takes its name.

    Returns:
      A Tensor of x's dtype and shape.

    Raises:
      TypeError: if x's dtype is not float or complex.
    """
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import DivNoNan
    with name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        one = constant(1, dtype=x.dtype.base_dtype, name="one")
        return apply_op(DivNoNan, [one, x], name=scope)


def nextafter(x1, x2, name=None):
    """The next representable value after x1 in the direction of x2, element-wise
    (tf.math.nextafter).

    Args:
      x1: a float32 or float64 Tensor.
      x2: a Tensor of the same dtype, broadcastable with `x1`.
      name: the op name (default "NextAfter").

    Returns:
      A Tensor of x1's dtype, shaped like `x1` and `x2` broadcast together.

    Raises:
      TypeError: for other dtypes.
    """
    return apply_op(NextAfter, [x1, x2], name=name)


left_shift = binary_fn(LeftShift, "left_shift", "Returns x << y element-wise on integers "
                       "(tf.bitwise.left_shift); shift amounts are clamped to [0, bits - 1], "
                       "as on TensorFlow's CPU.")
right_shift = binary_fn(RightShift, "right_shift", "Returns x >> y element-wise on integers, "
                        "arithmetic for signed types and logical for unsigned "
                        "(tf.bitwise.right_shift); shift amounts are clamped to [0, bits - 1].")


bessel_i0 = scoped_fn(BesselI0, "bessel_i0", "Computes I0(x), the modified Bessel function "
                      "of the first kind of order 0, element-wise.")
bessel_i1 = scoped_fn(BesselI1, "bessel_i1", "Computes I1(x), the modified Bessel function "
                      "of the first kind of order 1, element-wise.")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(|x|^2)) over the given axes (tf.math.reduce_euclidean_norm).

    Args:
      input_tensor: a numeric Tensor (integer results are truncated, as in TensorFlow).
      axis: the axes to reduce (default: all), in [-rank, rank).
      keepdims: if true, reduced axes are kept with length 1.
      name: the op name (default "EuclideanNorm").

    Returns:
      The reduced Tensor, of the input's dtype.

    Raises:
      TypeError: for a non-numeric dtype.
      ValueError: for an axis statically out of range.
    """
    return apply_reduction(EuclideanNorm, input_tensor, axis, keepdims, name, None, None)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed stably (tf.math.cumulative_logsumexp).

    Args:
      x: a float Tensor.
      axis: a scalar int32/int64 axis in [-rank, rank) (checked when the op runs).
      exclusive: if true, each output excludes its own element (the first is -inf).
      reverse: if true, accumulates from the end.
      name: the op name (default "CumulativeLogsumexp").

    Returns:
      A Tensor shaped and typed like `x`.

    Raises:
      TypeError: if x's dtype is not a float type.
    """
    with name_scope(name, "CumulativeLogsumexp", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op(CumulativeLogsumexp, [x, axis],
                        {"exclusive": exclusive, "reverse": reverse}, name=scope)


def polyval(coeffs, x, name=None):
    """Evaluates the polynomial coeffs[0] x^(n-1) + ... + coeffs[n-1] by Horner's rule
    (tf.math.polyval), built from Mul and AddV2 ops as TensorFlow does.

    Args:
      coeffs: a list of Tensors (or numbers), highest degree first.
      x: a Tensor; each coefficient must broadcast with it.
      name: a name scope (default "polyval").

    Returns:
      The polynomial's value, zeros like `x` for an empty list.

    Raises:
      ValueError: if `coeffs` is not a list.
    """
    from tensorweave.ops.array_creation_ops import zeros_like
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with name_scope(name, "polyval", [*coeffs, x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return zeros_like(x, name=scope)
        coeffs = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


def _monotonic(x, name, default_name, strict):
    """All of 0 < diff (strict) or 0 <= diff over the flattened x; true for fewer than two
    elements. The difference is taken inside a cond, as in TensorFlow."""
    from tensorweave.ops.array_ops import reshape, shape, size
    from tensorweave.ops.array_slicing_ops import strided_slice
    from tensorweave.ops.check_ops import is_numeric_tensor
    from tensorweave.ops.cond import cond
    from tensorweave.ops.math_ops import less, less_equal
    from tensorweave.ops.reduction_ops import reduce_all
    with name_scope(name, default_name, [x]):
        x = reshape(x, [-1])
        if not is_numeric_tensor(x):
            raise TypeError(f"Expected x to be numeric, instead found: {x}")
        s_len = shape(x) - 1
        diff = cond(less(size(x), 2), lambda: convert_to_tensor([], dtype=x.dtype),
                    lambda: strided_slice(x, [1], [1] + s_len) - strided_slice(x, [0], s_len))
        zero = convert_to_tensor(0, dtype=diff.dtype)
        return reduce_all((less if strict else less_equal)(zero, diff))


_MONOTONIC_DOC = """Whether x[i] {relation} x[i + 1] for all i of the flattened tensor
    (tf.math.{name}).

    Args:
      x: a numeric Tensor; fewer than two elements count as {what}.
      name: a name scope (default "{name}").

    Returns:
      A scalar bool Tensor.

    Raises:
      TypeError: if `x` is not numeric.
    """


def _monotonic_fn(public_name: str, relation: str, what: str, strict: bool):
    def wrapper(x, name=None):
        return _monotonic(x, name, public_name, strict)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _MONOTONIC_DOC.format(relation=relation, name=public_name, what=what)
    return wrapper


is_non_decreasing = _monotonic_fn("is_non_decreasing", "<=", "non-decreasing", strict=False)
is_strictly_increasing = _monotonic_fn("is_strictly_increasing", "<", "strictly increasing",
                                       strict=True)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The element-wise sum of a list of tensors (tf.math.accumulate_n). TF 2.x builds an
    AddN op (one input and no name: the input itself).

    Args:
      inputs: a non-empty list of Tensors of one dtype and compatible shapes.
      shape: the expected shape of the inputs, or None.
      tensor_dtype: the expected dtype of the inputs, or None.
      name: the op name (default "AddN").

    Returns:
      A Tensor of the inputs' shape and dtype.

    Raises:
      ValueError: if `inputs` is empty, not a list, or mixes dtypes, or if the shapes are
        incompatible.
      TypeError: if `tensor_dtype` differs from the inputs' dtype.
    """
    from tensorweave.ops.array_ops import identity
    from tensorweave.ops.math_ops import add_n
    error = ValueError("inputs must be a list of at least one Tensor with the same dtype and "
                       "shape")
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise error
    inputs = [convert_to_tensor(t) for t in inputs]
    if not all(isinstance(t, Tensor) and t.dtype == inputs[0].dtype for t in inputs):
        raise error
    merged = _ts.as_shape(shape) if shape is not None else _ts.unknown_shape()
    for t in inputs:
        merged = merged.merge_with(t.shape)
    if tensor_dtype is not None and tensor_dtype != inputs[0].dtype:
        raise TypeError(f"The `tensor_dtype` argument is {tensor_dtype}, but `input` is of type "
                        f"{inputs[0].dtype}. These must be equal. Try casting the input to the "
                        "desired type.")
    if len(inputs) == 1:
        return inputs[0] if name is None else identity(inputs[0], name=name)
    return add_n(inputs, name=name)
