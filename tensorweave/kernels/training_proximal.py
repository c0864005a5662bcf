"""Kernels of ApplyProximalAdagrad, ApplyAdagradDA and their sparse forms
(ops/training_proximal_ops.py).

They run through the dense and sparse update machinery of kernels/training.py (in place on the
variables' storage, blockwise for large variables, row by row for repeated sparse indices);
this module adds the two formulas and TensorFlow's input checks, whose messages differ from the
other training ops': every slot is called "accum", and the hyperparameters have their own
wording ("lr is not a positive scalar: []", "l1 regularization strength is not a scalar: []").
The formulas do TensorFlow's operations in its order and dtype; the rate lr / sqrt(accum)
stands for Eigen's lr * rsqrt(accum) (the same in float64, within an ulp in float32).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.training import ApplyKernel, SparseApplyKernel
from tensorweave.runtime.executor.values import deref


def _proximal_adagrad(attrs, new, var, accum, lr, l1, l2, grad):
    """accum += g^2; rate = lr / sqrt(accum); prox = var - g * rate;
    var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + l2 * rate) (no shrinking if l1 == 0)."""
    accum += np.square(grad, out=new(var))
    rate = np.sqrt(accum, out=new(var))
    np.divide(lr, rate, out=rate)
    denom = np.multiply(grad, rate, out=new(var))
    var -= denom                              # var now holds prox
    np.multiply(rate, l2, out=denom)
    denom += 1
    if l1 > 0:
        shrunk = np.abs(var, out=new(var))
        rate *= l1
        shrunk -= rate
        np.maximum(shrunk, 0, out=shrunk)
        np.sign(var, out=var)
        var *= shrunk
    var /= denom


def _adagrad_da(attrs, new, var, gradient_accum, squared_accum, grad, lr, l1, l2, global_step):
    """g += grad; gg += grad^2; with T the global step (as a float32, like TensorFlow),
    var = -lr * sign(g) * max(|g| - T * l1, 0) / (l2 * (T * lr) + sqrt(gg)), or
    -lr * g / (...) when l1 == 0."""
    steps = var.dtype.type(np.float32(global_step))
    gradient_accum += grad
    squared_accum += np.square(grad, out=new(var))
    denom = np.sqrt(squared_accum, out=new(var))
    denom += l2 * (steps * lr)
    if l1 > 0:
        update = np.abs(gradient_accum, out=new(var))
        update -= steps * l1
        np.maximum(update, 0, out=update)
        update *= np.sign(gradient_accum, out=var)
    else:
        update = gradient_accum
    np.multiply(update, -lr, out=var)
    var /= denom


# Input name -> (TensorFlow's message when it is not a (valid) scalar, validity test or None).
_POSITIVE_LR = ("lr is not a positive scalar", lambda v: v > 0)
_NON_NEGATIVE = {
    "l1": ("l1 regularization strength is not a non-negative scalar", lambda v: v >= 0),
    "l2": ("l2 regularization strength is not a non-negative scalar", lambda v: v >= 0)}
_ANY_SCALAR = {"lr": ("lr is not a scalar", None),
               "l1": ("l1 regularization strength is not a scalar", None),
               "l2": ("l2 regularization strength is not a scalar", None),
               "global_step": ("global_step is not a scalar", None)}
_RULES = {"ProximalAdagrad": {"lr": _POSITIVE_LR, **_NON_NEGATIVE}, "AdagradDA": _ANY_SCALAR}


class _Checks:
    """TensorFlow's checks of these ops' slots and hyperparameters (set `rules`)."""

    rules: dict = {}

    def _values(self, inputs) -> list:
        roles = self.roles
        values = [deref(x) if i in roles.refs else x for i, x in enumerate(inputs)]
        var = values[0]
        for i in roles.refs[1:]:
            if values[i].shape != var.shape:
                raise invalid_argument("var and accum do not have the same shape"
                                       f"{dims_text(var.shape)} {dims_text(values[i].shape)}")
        for i in roles.scalars:
            message, valid = self.rules[roles.names[i]]
            if np.ndim(values[i]) != 0 or (valid is not None and not valid(values[i])):
                raise invalid_argument(f"{message}: {dims_text(np.shape(values[i]))}")
        return values


class _SparseChecks(_Checks):
    """The sparse ops' extra check: rows of a variable with no element are an error."""

    def _check(self, var, grad_shape, indices_shape) -> None:
        super()._check(var, grad_shape, indices_shape)
        if var.ndim > 1 and np.prod(var.shape[1:]) == 0:
            raise invalid_argument("Inner dimension should be greater than zero.")


_FLOAT32_64 = (_dtypes.float32, _dtypes.float64)   # TensorFlow's CPU kernels of these ops

for _algo, _formula in (("ProximalAdagrad", _proximal_adagrad), ("AdagradDA", _adagrad_da)):
    _members = {"formula": _formula, "rules": _RULES[_algo]}
    kernel((f"Apply{_algo}", f"ResourceApply{_algo}"), dtypes=_FLOAT32_64)(
        type(f"Apply{_algo}Kernel", (_Checks, ApplyKernel), _members))
    kernel((f"SparseApply{_algo}", f"ResourceSparseApply{_algo}"), dtypes=_FLOAT32_64)(
        type(f"SparseApply{_algo}Kernel", (_SparseChecks, SparseApplyKernel), _members))
