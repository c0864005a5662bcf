"""TF1's assertions (tf.assert_equal ... tf.assert_scalar), tf.ensure_shape and tf.is_tensor.

Each assertion follows TensorFlow 2.21's graph mode: what the graph already fixes is checked
while building. A comparison whose operands both have static values raises InvalidArgumentError
at once when it fails (and still builds its Assert op when it holds); rank, dtype and scalar
checks on static shapes raise ValueError or TypeError and return a NoOp (assert_scalar returns
its input). Otherwise an Assert op fails the step at run time with
"assertion failed: [message] [Condition x == y did not hold element-wise:] [x (name) = ] ...".
EnsureShape checks a tensor's shape at run time and gives its output the merged static shape.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_text import shape_text
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.ops.array_ops import rank as _rank
from tensorweave.ops.array_ops import shape as _shape
from tensorweave.ops.control_flow_ops import no_op
from tensorweave.ops.logging_ops import Assert, check_numerics
from tensorweave.ops.math_ops import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    not_equal,
)
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.reduction_ops import reduce_all

__all__ = [
    "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
    "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
    "assert_non_positive", "assert_near", "assert_rank", "assert_rank_at_least", "assert_type",
    "assert_integer", "assert_scalar", "verify_tensor_all_finite", "ensure_shape", "is_tensor",
    "is_numeric_tensor",
]


def message_prefix(message) -> str:
    """TF's prefix of static error messages: "message.  " or nothing."""
    return f"{message}.  " if message else ""


def _static_text(item) -> str:
    """A data entry as the static error prints it: a known tensor's value, else str()."""
    if isinstance(item, Tensor):
        value = static_value(item)
        return str(item) if value is None else str(value)
    return str(item)


def _assert_static(condition, data) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None,
                                          "\n".join(_static_text(d) for d in data))


def _binary_assert(sym, default_name, op_fn, np_fn, x, y, data, summarize, message, name):
    """Assert that op_fn(x, y) holds element-wise; checked now when both values are static."""
    with name_scope(name, default_name, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = reduce_all(op_fn(x, y))
        x_static, y_static = static_value(x), static_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(np.all(np_fn(x_static, y_static)), data)
        return Assert(condition, data, summarize=summarize)


def _binary_assert_fn(sym, public_name, op_fn, np_fn):
    """The TF1 wrapper `assert_<cmp>(x, y, data=None, summarize=None, message=None, name=None)`."""
    def wrapper(x, y, data=None, summarize=None, message=None, name=None):
        return _binary_assert(sym, public_name, op_fn, np_fn, x, y, data, summarize, message,
                              name)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = f"""Asserts that `x {sym} y` holds element-wise (TF1's tf.{public_name}).

    Empty operands trivially satisfy it. When both values are fixed by the graph the check
    happens now; otherwise the returned Assert op fails the step. Make other ops depend on it
    with `tf.control_dependencies`.

    Args:
      x: A numeric Tensor.
      y: A numeric Tensor of x's dtype, broadcastable with it.
      data: Tensors to print when the condition is false (default: a message, x and y).
      summarize: How many entries of each tensor to print (default 3).
      message: A string to put before the default message.
      name: A name scope for the ops (default "{public_name}").

    Returns:
      The Assert Operation.

    Raises:
      InvalidArgumentError: if both values are static and the condition does not hold.
      TypeError: if x and y have different dtypes.
      ValueError: if their shapes cannot broadcast.
    """
    return wrapper


assert_equal = _binary_assert_fn("==", "assert_equal", equal, np.equal)
assert_none_equal = _binary_assert_fn("!=", "assert_none_equal", not_equal, np.not_equal)
assert_less = _binary_assert_fn("<", "assert_less", less, np.less)
assert_less_equal = _binary_assert_fn("<=", "assert_less_equal", less_equal, np.less_equal)
assert_greater = _binary_assert_fn(">", "assert_greater", greater, np.greater)
assert_greater_equal = _binary_assert_fn(">=", "assert_greater_equal", greater_equal,
                                         np.greater_equal)


def _sign_assert_fn(public_name, condition_text, compare, zero_first, joined=False):
    """assert_positive & co.: a comparison with zero whose default message names only x.

    `joined` reproduces TF's assert_non_positive message, whose condition and "x (...) = "
    lines are one string (a missing comma in TF).
    """
    def wrapper(x, data=None, summarize=None, message=None, name=None):
        message = message_prefix(message)
        with name_scope(name, public_name, [x, data]):
            x = convert_to_tensor(x, name="x")
            if data is None:
                lines = [f"Condition {condition_text} did not hold element-wise:",
                         f"x ({x.name}) = "]
                data = [message] + (["".join(lines)] if joined else lines) + [x]
            zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
            a, b = (zero, x) if zero_first else (x, zero)
            return compare(a, b, data=data, summarize=summarize)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = f"""Asserts that `{condition_text}` holds element-wise (TF1's
    tf.{public_name}); an empty x trivially satisfies it.

    Args:
      x: A numeric Tensor.
      data: Tensors to print when the condition is false (default: a message and x).
      summarize: How many entries of each tensor to print (default 3).
      message: A string to put before the default message.
      name: A name scope for the ops (default "{public_name}").

    Returns:
      The Assert Operation.

    Raises:
      InvalidArgumentError: if x is static and the condition does not hold.
    """
    return wrapper


assert_positive = _sign_assert_fn("assert_positive", "x > 0", assert_less, True)
assert_negative = _sign_assert_fn("assert_negative", "x < 0", assert_less, False)
assert_non_negative = _sign_assert_fn("assert_non_negative", "x >= 0", assert_less_equal, True)
assert_non_positive = _sign_assert_fn("assert_non_positive", "x <= 0", assert_less_equal,
                                      False, joined=True)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """Asserts that x and y are close element-wise: |x - y| <= atol + rtol * |y|.

    Checked when the op runs (TF does not check it statically).

    Args:
      x: A float or complex Tensor.
      y: A Tensor of x's dtype (or convertible to it), broadcastable with x.
      rtol: Relative tolerance (default 10 * eps of x's real dtype).
      atol: Absolute tolerance (default 10 * eps of x's real dtype).
      data: Tensors to print when the condition is false (default: a message, x and y).
      summarize: How many entries of each tensor to print (default 3).
      message: A string to put before the default message.
      name: A name scope for the ops (default "assert_near").

    Returns:
      The Assert Operation.
    """
    message = message_prefix(message)
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        dtype = x.dtype.base_dtype
        if dtype.is_complex:
            dtype = dtype.real_dtype
        eps = np.finfo(dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=dtype)
        if data is None:
            data = [message, f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tol = atol + rtol * _abs(y)
        diff = _abs(x - y)
        condition = reduce_all(less_equal(diff, tol))
        return Assert(condition, data, summarize=summarize)


def _rank_assert(x, rank, data, summarize, message, name, default_name, at_least: bool):
    """assert_rank / assert_rank_at_least: static when x's rank and `rank` are known; else an
    Assert printing `data` (by default: the message, the rule and x's shape)."""
    words = "rank at least" if at_least else "rank"
    with name_scope(name, default_name, [x, rank]):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        if rank.shape.ndims not in (None, 0):
            raise ValueError(f"{message_prefix(message)}Rank must be a scalar. Received rank: "
                             f"{rank}")
        ndims, want = x.shape.ndims, static_value(rank)
        if ndims is not None and want is not None:
            want = int(want)
            if ndims < want if at_least else ndims != want:
                raise ValueError(f"{message_prefix(message)}Tensor {x.name} must have {words} "
                                 f"{want}.  Received rank {ndims}, shape {x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [message_prefix(message), f"Tensor {x.name} must have {words}", rank,
                    "Received shape: ", _shape(x)]
        actual = _rank(x)
        condition = greater_equal(actual, rank) if at_least else equal(actual, rank)
        return Assert(condition, data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Asserts that x has rank `rank` (TF1's tf.assert_rank).

    Args:
      x: A Tensor.
      rank: A scalar int.
      data: What a failing run-time check prints instead of the default message (the
        message, the rule and x's shape).
      summarize: How many entries of each tensor in `data` to print.
      message: A string to put before the default message.
      name: A name scope for the ops (default "assert_rank").

    Returns:
      A NoOp when the check was static, else the Assert Operation.

    Raises:
      ValueError: if x's rank is static and not `rank`.
    """
    return _rank_assert(x, rank, data, summarize, message, name, "assert_rank", at_least=False)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Asserts that x has rank `rank` or more (TF1's tf.assert_rank_at_least); the arguments,
    result and errors are assert_rank's (a ValueError if the static rank is below `rank`)."""
    return _rank_assert(x, rank, data, summarize, message, name, "assert_rank_at_least",
                        at_least=True)


def assert_type(tensor, tf_type, message=None, name=None):
    """Statically asserts that `tensor` has dtype `tf_type` (TF1's tf.assert_type).

    Args:
      tensor: A Tensor.
      tf_type: A DType.
      message: A string to put before the error message.
      name: A name scope for the NoOp (default "assert_type").

    Returns:
      A NoOp.

    Raises:
      TypeError: if the dtypes differ.
    """
    tf_type = _dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type:
            raise TypeError(f"{message_prefix(message)}{tensor.name} must be of type "
                            f"{tf_type!r}; got {tensor.dtype.base_dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """Statically asserts that x has an integer dtype (TF1's tf.assert_integer).

    Args:
      x: A Tensor.
      message: A string to put before the error message.
      name: A name scope for the NoOp (default "assert_integer").

    Returns:
      A NoOp.

    Raises:
      TypeError: if x's dtype is not an integer type.
    """
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{message_prefix(message)}Expected "x" to be integer type.  '
                            f"Found: {x.name} of dtype {x.dtype}")
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """Statically asserts that `tensor` is a scalar (TF1's tf.assert_scalar).

    Args:
      tensor: A Tensor.
      name: A name scope (default "assert_scalar").
      message: A string to put before the error message.

    Returns:
      `tensor` (converted to a Tensor).

    Raises:
      ValueError: if its static rank is not 0, or unknown.
    """
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.ndims != 0:
            raise ValueError(f"{message_prefix(message)}Expected scalar shape for "
                             f"{tensor.name}, saw shape: {tensor.shape}.")
        return tensor


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """`t` after a CheckNumerics that fails the step on NaN or Inf (tf.debugging.
    assert_all_finite).

    Args:
      t: A float Tensor (or `x`, TF2's name).
      msg: The message of the error (or `message`).
      name: A name scope (default "VerifyFinite").

    Returns:
      A Tensor equal to `t`.
    """
    t = x if t is None else t
    msg = message if msg is None else msg
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        return check_numerics(t, message=msg)


def _ensure_shape_fn(ctx):
    """The input's shape merged with the wanted one; ValueError when they conflict."""
    have, want = ctx.input_shape(0), _ts.as_shape(ctx.attr("shape"))
    if have.ndims is not None and want.ndims is not None:
        if have.ndims != want.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {want.ndims} and "
                             f"{have.ndims}")
        for i, (w, h) in enumerate(zip(want.as_list(), have.as_list())):
            if w is not None and h is not None and w != h:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {w} "
                                 f"and {h}. Shapes are {shape_text(want)} and {shape_text(have)}.")
    return have.merge_with(want)


EnsureShape = define_op("EnsureShape", inputs=["input: T"], outputs=["output: T"],
                        attrs=[TypeAttr("T"), Attr("shape", "shape")],
                        shape_fn=_ensure_shape_fn)


@EnsureShape.gradient
def _ensure_shape_grad(op, grad):
    """The value flows through unchanged."""
    return [grad]


def ensure_shape(x, shape, name=None):
    """Checks x's shape at run time and gives the result that static shape (tf.ensure_shape).

    Args:
      x: A Tensor.
      shape: A (partial) shape; None entries match any size.
      name: A name for the op (default "EnsureShape").

    Returns:
      x, with the static shape merged with `shape`.

    Raises:
      ValueError: if x's static shape conflicts with `shape`.
    """
    x = convert_to_tensor(x, name="x")
    return apply_op(EnsureShape, [x], {"shape": _ts.as_shape(shape)}, name=name or "EnsureShape")


def is_tensor(x) -> bool:
    """True for a Tensor, SparseTensor, Variable or other tensor-like value (tf.is_tensor).

    Args:
      x: Any Python object.

    Returns:
      Whether x is a graph tensor type (not a NumPy array or Python number).
    """
    from tensorweave.framework.sparse_tensor import SparseTensor
    return isinstance(x, SparseTensor) or is_tensor_like(x)


def is_numeric_tensor(tensor) -> bool:
    """True for a Tensor of a numeric dtype (tf.debugging.is_numeric_tensor)."""
    return isinstance(tensor, Tensor) and tensor.dtype.base_dtype in _dtypes.NUMERIC

