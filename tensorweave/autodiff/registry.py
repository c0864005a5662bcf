"""Gradient registry: an op type's gradient function, overrides and explicit non-gradients.

An op's gradient is normally attached to its OpDef next to its definition (`@Op.gradient`).
`RegisterGradient(name)` registers a function under any name, which `gradient_override_map`
(the op's `_gradient_op_type` attr) can select; `NotDifferentiable` marks op types that have
no gradient on purpose. Asking for a gradient through an op that has neither raises LookupError.
"""
from __future__ import annotations

from collections.abc import Callable

from tensorweave.framework.op_def import OP_REGISTRY

_BY_NAME: dict[str, Callable] = {}
_NOT_DIFFERENTIABLE: set[str] = set()


class RegisterGradient:
    """Decorator: `@tf.RegisterGradient("MyGrad") def _grad(op, grad): ...`."""

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        if self._op_type in _BY_NAME:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        _BY_NAME[self._op_type] = fn
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TF's name
    """Declares that ops of `op_type` have no gradient (their inputs get None)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _NOT_DIFFERENTIABLE.add(op_type)


no_gradient = NotDifferentiable
NoGradient = NotDifferentiable  # noqa: N816 - TF's alias

_NONE = object()


def gradient_function(op):
    """The gradient function for `op`, None if it is not differentiable.

    Raises:
      LookupError: if the op type has no gradient and was not declared non-differentiable.
    """
    name = op._attrs.get("_gradient_op_type") or op.type
    fn = _BY_NAME.get(name, _NONE)
    if fn is not _NONE:
        return fn
    if name in _NOT_DIFFERENTIABLE:
        return None
    op_def = OP_REGISTRY.get(name)
    if op_def is not None:
        if op_def.grad_fn is not None:
            return op_def.grad_fn
        if op_def.not_differentiable:
            return None
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {name}). "
                      "In general every operation must have an associated `@tf.RegisterGradient`"
                      " for correct autodiff, which this op is lacking. If you want to pretend "
                      "this operation is a constant in your program, you may insert "
                      "`tf.stop_gradient`.")
