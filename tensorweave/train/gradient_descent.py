"""tf.train.GradientDescentOptimizer: var -= learning_rate * grad."""
from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.variables import is_resource_variable
from tensorweave.train.optimizer import Optimizer, cast_like


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent: one ApplyGradientDescent per dense variable; sparse gradients
    subtract lr * values from the indexed rows with ScatterSub (repeated rows accumulate), or
    ResourceScatterSub on a resource variable.

    Args:
      learning_rate: a float, a scalar Tensor, or a callable returning one.
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops (default "GradientDescent").
    """

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var, cast_like(self._learning_rate_tensor, var), grad,
            use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        from tensorweave.ops import scatter_ops
        delta = grad.values * cast_like(self._learning_rate_tensor, var)
        if is_resource_variable(var):   # the update alone: no read of the whole variable after
            return scatter_ops.resource_scatter(scatter_ops.ScatterSub, var, grad.indices, delta)
        return scatter_ops.scatter_sub(var, grad.indices, delta, use_locking=self._use_locking)
