"""Fused updates of the l1/l2-regularized Adagrad variants: ApplyProximalAdagrad,
ApplyAdagradDA and their SparseApply* forms for IndexedSlices gradients.

They are defined like the other training ops (training_ops.py: one stateful, not
differentiable op per variable update, returning the variable's ref, with the same shape
function); only the formulas differ (kernels/training_proximal.py). AdagradDA also takes the
int64 global step, which scales its regularization. The wrappers are TensorFlow's
`gen_training_ops` functions, called by tf.train.ProximalAdagradOptimizer and
tf.train.AdagradDAOptimizer.
"""
from __future__ import annotations

from tensorweave.ops.training_ops import apply_update, define_apply_op

__all__: list[str] = []

ApplyProximalAdagrad = define_apply_op(
    "ApplyProximalAdagrad",
    ["var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T", "grad: T"])
SparseApplyProximalAdagrad = define_apply_op(
    "SparseApplyProximalAdagrad",
    ["var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T", "grad: T",
     "indices: Tindices"])
ApplyAdagradDA = define_apply_op(
    "ApplyAdagradDA",
    ["var: Ref(T)", "gradient_accumulator: Ref(T)", "gradient_squared_accumulator: Ref(T)",
     "grad: T", "lr: T", "l1: T", "l2: T", "global_step: int64"])
SparseApplyAdagradDA = define_apply_op(
    "SparseApplyAdagradDA",
    ["var: Ref(T)", "gradient_accumulator: Ref(T)", "gradient_squared_accumulator: Ref(T)",
     "grad: T", "indices: Tindices", "lr: T", "l1: T", "l2: T", "global_step: int64"])


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    """FOBOS with Adagrad's rate: accum += grad^2; rate = lr / sqrt(accum);
    prox = var - rate * grad; var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2).

    Returns the variable's ref after the update.
    """
    return apply_update(ApplyProximalAdagrad, [var, accum, lr, l1, l2, grad], name,
                        use_locking=use_locking)


def sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices, use_locking=False,
                                  name=None):
    """ApplyProximalAdagrad on the rows `indices` of var and accum."""
    return apply_update(SparseApplyProximalAdagrad, [var, accum, lr, l1, l2, grad, indices], name,
                        use_locking=use_locking)


def apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
                     global_step, use_locking=False, name=None):
    """Adagrad dual averaging: g += grad; gg += grad^2; with T the global step,
    var = -sign(g) * lr * max(|g| - l1 * T, 0) / (l2 * T * lr + sqrt(gg)).

    Returns the variable's ref after the update.
    """
    inputs = [var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
              global_step]
    return apply_update(ApplyAdagradDA, inputs, name, use_locking=use_locking)


def sparse_apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad,
                            indices, lr, l1, l2, global_step, use_locking=False, name=None):
    """ApplyAdagradDA on the rows `indices` of var and both accumulators."""
    inputs = [var, gradient_accumulator, gradient_squared_accumulator, grad, indices, lr, l1,
              l2, global_step]
    return apply_update(SparseApplyAdagradDA, inputs, name, use_locking=use_locking)
