"""tf.train.RMSPropOptimizer: divide the gradient by a running average of its magnitude."""
from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer, cast_like


class RMSPropOptimizer(Optimizer):
    """RMSProp with momentum and an optional centered variance estimate.

    Slots: "rms" (`w/RMSProp`, starts at 1), then "mg" when centered, then "momentum"
    (`w/RMSProp_1`, or `w/RMSProp_2` when centered), as in TensorFlow.

    Args:
      learning_rate: a float, a scalar Tensor, or a callable returning one.
      decay: discounting factor of the running averages.
      momentum: the momentum factor.
      epsilon: a small constant for numerical stability.
      use_locking: if True, updates hold the variables' locks.
      centered: normalize by the estimated variance (ms - mg^2) instead of ms.
      name: the name scope of the update ops and the slot name (default "RMSProp").
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        from tensorweave.ops import init_ops
        from tensorweave.ops.array_creation_ops import ones_like
        for v in var_list:
            if v.get_shape().is_fully_defined():
                init_rms = init_ops.ones_initializer(dtype=v.dtype.base_dtype)
            else:
                init_rms = ones_like(v.initial_value)
            self._get_or_make_slot_with_initializer(v, init_rms, v.get_shape(),
                                                    v.dtype.base_dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._decay_tensor = convert_to_tensor(self._call_if_callable(self._decay),
                                               name="decay")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum),
                                                  name="momentum")
        self._epsilon_tensor = convert_to_tensor(self._call_if_callable(self._epsilon),
                                                 name="epsilon")

    def _hyper(self, var):
        return [cast_like(t, var) for t in (self._learning_rate_tensor, self._decay_tensor,
                                            self._momentum_tensor, self._epsilon_tensor)]

    def _apply_dense(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *self._hyper(var), grad,
                use_locking=self._use_locking)
        return training_ops.apply_rms_prop(var, rms, mom, *self._hyper(var), grad,
                                           use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.sparse_apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *self._hyper(var), grad.values,
                grad.indices, use_locking=self._use_locking)
        return training_ops.sparse_apply_rms_prop(
            var, rms, mom, *self._hyper(var), grad.values, grad.indices,
            use_locking=self._use_locking)
