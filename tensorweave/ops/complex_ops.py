"""Complex numbers from and to their parts: Complex, Real, Imag, Angle (tf.complex, tf.real, ...).

`Complex` builds real + imag*j with broadcasting; `Real`, `Imag` and `Angle` take a complex
tensor apart into a float tensor of its real dtype (complex64 -> float32, complex128 ->
float64). As in TensorFlow, the wrappers accept real tensors too and then build no such op:
`real(x)` is x, `imag(x)` zeros, `angle(x)` pi where x < 0 and 0 elsewhere. Gradients follow
TensorFlow's math_grad.py; kernels live in `kernels/complex.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math_unary_ops import define_elementwise

__all__ = ["complex", "real", "imag", "angle"]

_FLOAT = frozenset({_dtypes.float32, _dtypes.float64})
_COMPLEX = _dtypes.COMPLEX
_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}

Complex = define_elementwise(
    "Complex", ["real: T", "imag: T"], None, out="Tout", out_name="out",
    attrs=[TypeAttr("T", _FLOAT, _dtypes.float32),
           TypeAttr("Tout", _COMPLEX, _dtypes.complex64)])


def _part_op(op_type: str):
    """A complex -> real elementwise op (Real, Imag, Angle) with TensorFlow's attrs."""
    return define_elementwise(
        op_type, ["input: T"], None, out="Tout", out_name="output",
        attrs=[TypeAttr("T", _COMPLEX, _dtypes.complex64),
               TypeAttr("Tout", _FLOAT, _dtypes.float32)],
        shape_fn=shape_fns.unchanged)


Real = _part_op("Real")
Imag = _part_op("Imag")
Angle = _part_op("Angle")


# --- gradients (math_grad.py) -------------------------------------------------------------------
@Complex.gradient
def _complex_grad(op, grad):
    """real gets Re(grad), imag gets Im(grad), each summed back to its broadcast shape."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    x, y = op.inputs
    return [reduce_to_shape_of(real(grad), x), reduce_to_shape_of(imag(grad), y)]


@Real.gradient
def _real_grad(op, grad):
    """A real gradient g of Re(z) is the complex gradient g + 0j."""
    return [complex(grad, _zero(grad))]


@Imag.gradient
def _imag_grad(op, grad):
    """A real gradient g of Im(z) is the complex gradient 0 + gj."""
    return [complex(_zero(grad), grad)]


@Angle.gradient
def _angle_grad(op, grad):
    """d atan2(b, a) as a complex gradient: -g / (b + aj), TensorFlow's formula."""
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.math_unary_ops import reciprocal
    with control_dependencies([grad]):
        x = op.inputs[0]
        z = reciprocal(complex(imag(x), real(x)))
        return [-complex(grad, _zero(grad)) * z]


def _zero(like):
    from tensorweave.ops.constant_op import constant
    return constant(0, dtype=like.dtype)


# --- wrappers -----------------------------------------------------------------------------------
def complex(real, imag, name=None):  # noqa: A001 - TF's name
    """Builds complex numbers real + imag*j element-wise (tf.complex).

    Args:
      real: a float32 or float64 Tensor.
      imag: a Tensor of the same dtype, broadcastable with `real`.
      name: the op name (default "Complex").

    Returns:
      A complex64 Tensor for float32 parts, complex128 for float64.

    Raises:
      TypeError: if the parts' dtypes differ or are not float32/float64.
      ValueError: if their static shapes cannot broadcast.
    """
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with name_scope(name, "Complex", [real, imag]) as scope:
        dtypes = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if dtypes[0] != dtypes[1] or dtypes[0] not in _COMPLEX_OF:
            raise TypeError(
                f"The `real` and `imag` components have incorrect types: {dtypes[0].name} "
                f"{dtypes[1].name}. They must be consistent, and one of "
                f"{[_dtypes.float32, _dtypes.float64]}")
        return apply_op(Complex, [real, imag], {"Tout": _COMPLEX_OF[dtypes[0]]}, name=scope)


def _part(op_def, input, name, for_real):  # noqa: A002 - TF's argument name
    """`op_def` of a complex input, or `for_real(x)` of a real one (no op of that type)."""
    with name_scope(name, op_def.name, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        if x.dtype.is_complex:
            return apply_op(op_def, [x], {"Tout": x.dtype.real_dtype}, name=scope)
        return for_real(x)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """The real part of each element of a complex (or real) tensor (tf.real, tf.math.real).

    Args:
      input: a Tensor; complex64/complex128, or any real numeric type (returned unchanged).
      name: the op name (default "Real").

    Returns:
      A float32 (float64) Tensor of a complex64 (complex128) input's real parts.

    Raises:
      TypeError: if `input` is not numeric.
    """
    def for_real(x):
        if x.dtype.base_dtype not in _dtypes.NUMERIC:
            raise TypeError(f"input must be a numeric tensor, but got tensor with dtype "
                            f"{x.dtype}")
        return x
    return _part(Real, input, name, for_real)


def imag(input, name=None):  # noqa: A002 - TF's argument name
    """The imaginary part of each element of a complex (or real) tensor (tf.imag).

    Args:
      input: a Tensor; for a real dtype the result is zeros of that dtype.
      name: the op name (default "Imag").

    Returns:
      A float32 (float64) Tensor of a complex64 (complex128) input's imaginary parts.
    """
    from tensorweave.ops.array_creation_ops import zeros_like
    return _part(Imag, input, name, zeros_like)


def angle(input, name=None):  # noqa: A002 - TF's argument name
    """The argument atan2(imag, real) of each element (tf.angle, tf.math.angle).

    Args:
      input: a Tensor; for a real dtype the result is pi where input < 0, else 0.
      name: the op name (default "Angle").

    Returns:
      A float32 (float64) Tensor of a complex64 (complex128) input's arguments, in [-pi, pi].
    """
    from tensorweave.ops.array_creation_ops import ones_like, zeros_like
    from tensorweave.ops.array_index_ops import where

    def for_real(x):
        return where(x < 0, np.pi * ones_like(x), zeros_like(x))
    return _part(Angle, input, name, for_real)
