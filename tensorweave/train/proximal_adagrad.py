"""tf.train.ProximalAdagradOptimizer: Adagrad's per-coordinate rate with FOBOS l1/l2 steps.

Also the helpers it shares with AdagradDAOptimizer: TensorFlow's check of an accumulator's
start value, and slots initialized from a constant made beside the variable.
"""
from __future__ import annotations

from tensorweave.framework.scopes import colocate_with
from tensorweave.ops import training_proximal_ops
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.proximal_gradient_descent import ProximalGradientDescentOptimizer


def check_positive(value, what: str) -> None:
    """TensorFlow's ValueError for an accumulator start value that is not positive."""
    if value <= 0.0:
        raise ValueError(f"{what} must be positive: {value}")


def make_constant_slot(optimizer, var, value, slot_name):
    """The slot `slot_name` of `var` (named after the optimizer), starting at `value`: a Const
    of var's shape and dtype colocated with var, as TensorFlow makes it."""
    from tensorweave.ops.constant_op import constant
    with colocate_with(var):
        initial = constant(value, shape=var.get_shape(), dtype=var.dtype.base_dtype)
    return optimizer._get_or_make_slot(var, initial, slot_name, optimizer._name)


class ProximalAdagradOptimizer(Optimizer):
    """Proximal Adagrad (Duchi et al., 2009 and 2011): accum += grad^2; rate = lr / sqrt(accum);
    prox = var - rate * grad; var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2).

    One slot, "accumulator" (`w/ProximalAdagrad`), starting at `initial_accumulator_value`.
    As in TensorFlow, the hyperparameters are not cast to the variables' dtype: with float64
    variables pass them as float64 tensors.

    Args:
      learning_rate: a float or scalar Tensor; must be positive (checked when the update runs).
      initial_accumulator_value: the accumulators' start value; must be positive.
      l1_regularization_strength: a float >= 0.
      l2_regularization_strength: a float >= 0.
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops and the slot name (default "ProximalAdagrad").

    Raises:
      ValueError: if `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        check_positive(initial_accumulator_value, "initial_accumulator_value")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            make_constant_slot(self, v, self._initial_accumulator_value, "accumulator")

    # The hyperparameter tensors are ProximalGradientDescent's (same names, no casts).
    _prepare = ProximalGradientDescentOptimizer._prepare
    _hyper = ProximalGradientDescentOptimizer._hyper

    def _apply_dense(self, grad, var):
        return training_proximal_ops.apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyper(), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_proximal_ops.sparse_apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyper(), grad.values, grad.indices,
            use_locking=self._use_locking)
