"""tf.train.AdagradDAOptimizer: Adagrad dual averaging, for sparse linear models."""
from __future__ import annotations

from tensorweave.framework.scopes import colocate_with, device
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_proximal_ops
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.proximal_adagrad import check_positive, make_constant_slot


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (Duchi et al., 2011). It keeps the sum g and the squared sum gg
    of all gradients and sets, at global step T (the value of `global_step` plus one),
    var = -sign(g) * lr * max(|g| - l1 * T, 0) / (l2 * T * lr + sqrt(gg)): the closed form
    that regularizes coordinates unseen in a mini-batch as if they had been updated every step,
    which keeps linear models sparse.

    Slots "gradient_accumulator" (`w/AdagradDA`, starts at 0) and
    "gradient_squared_accumulator" (`w/AdagradDA_1`, starts at
    `initial_gradient_squared_accumulator_value`). The optimizer reads `global_step` but does
    not increment it: pass it to `minimize` / `apply_gradients` too.

    Args:
      learning_rate: a float or scalar Tensor.
      global_step: an int64 Tensor or Variable holding the current training step.
      initial_gradient_squared_accumulator_value: must be positive.
      l1_regularization_strength: a float >= 0.
      l2_regularization_strength: a float >= 0.
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops and the slot name (default "AdagradDA").

    Raises:
      ValueError: if `initial_gradient_squared_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        check_positive(initial_gradient_squared_accumulator_value,
                       "initial_gradient_squared_accumulator_value")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = \
            initial_gradient_squared_accumulator_value
        self._learning_rate_tensor = None
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            make_constant_slot(self, v, 0.0, "gradient_accumulator")
            make_constant_slot(self, v, self._initial_gradient_squared_accumulator_value,
                               "gradient_squared_accumulator")

    def _prepare(self):
        from tensorweave.ops.array_ops import identity
        self._learning_rate_tensor = convert_to_tensor(self._learning_rate,
                                                       name="learning_rate")
        # As TensorFlow: each worker reads its own copy of the step (once per apply).
        with colocate_with(self._learning_rate_tensor):
            self._global_step_on_worker = identity(self._global_step) + 1

    def _update_args(self, var):
        """The slots, and lr, l1, l2 cast to var's dtype with the step read on var's device."""
        from tensorweave.ops.array_ops import identity
        from tensorweave.ops.math_unary_ops import cast
        dtype = var.dtype.base_dtype
        with device(var.device):
            global_step = identity(self._global_step_on_worker)
        slots = (self.get_slot(var, "gradient_accumulator"),
                 self.get_slot(var, "gradient_squared_accumulator"))
        hyper = (cast(self._learning_rate_tensor, dtype),
                 cast(self._l1_regularization_strength, dtype),
                 cast(self._l2_regularization_strength, dtype), global_step)
        return slots, hyper

    def _apply_dense(self, grad, var):
        slots, hyper = self._update_args(var)
        return training_proximal_ops.apply_adagrad_da(var, *slots, grad, *hyper,
                                                      use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        slots, hyper = self._update_args(var)
        return training_proximal_ops.sparse_apply_adagrad_da(
            var, *slots, grad.values, grad.indices, *hyper, use_locking=self._use_locking)
