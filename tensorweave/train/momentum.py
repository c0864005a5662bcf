"""tf.train.MomentumOptimizer: accum = momentum * accum + grad; var -= lr * accum."""
from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer, cast_like


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum (optionally Nesterov's), slot "momentum" (`w/Momentum`).

    Args:
      learning_rate: a float, a scalar Tensor, or a callable returning one.
      momentum: a float, a scalar Tensor, or a callable returning one.
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops and the slot name (default "Momentum").
      use_nesterov: use Nesterov momentum: var -= lr * (grad + momentum * accum).
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum),
                                                  name="momentum")

    def _apply_dense(self, grad, var):
        return training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"), cast_like(self._learning_rate_tensor, var),
            grad, cast_like(self._momentum_tensor, var), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_momentum(
            var, self.get_slot(var, "momentum"), cast_like(self._learning_rate_tensor, var),
            grad.values, grad.indices, cast_like(self._momentum_tensor, var),
            use_locking=self._use_locking, use_nesterov=self._use_nesterov)
