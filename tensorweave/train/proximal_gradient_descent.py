"""tf.train.ProximalGradientDescentOptimizer: gradient descent with l1/l2 proximal steps."""
from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer


class ProximalGradientDescentOptimizer(Optimizer):
    """FOBOS: prox = var - lr * grad, soft-thresholded by lr * l1 and shrunk by 1 + lr * l2.

    Args:
      learning_rate: a float or scalar Tensor.
      l1_regularization_strength: a float >= 0.
      l2_regularization_strength: a float >= 0.
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops (default "ProximalGradientDescent").
    """

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._learning_rate,
                                                       name="learning_rate")
        self._l1_regularization_strength_tensor = convert_to_tensor(
            self._l1_regularization_strength, name="l1_regularization_strength")
        self._l2_regularization_strength_tensor = convert_to_tensor(
            self._l2_regularization_strength, name="l2_regularization_strength")

    def _hyper(self):
        return (self._learning_rate_tensor, self._l1_regularization_strength_tensor,
                self._l2_regularization_strength_tensor)

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_gradient_descent(
            var, *self._hyper(), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_gradient_descent(
            var, *self._hyper(), grad.values, grad.indices, use_locking=self._use_locking)
