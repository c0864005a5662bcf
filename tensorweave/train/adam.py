"""tf.train.AdamOptimizer (Kingma & Ba): bias-corrected first and second moment estimates."""
from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.scopes import colocate_with, control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer, cast_like


class AdamOptimizer(Optimizer):
    """Adam, as TF1 implements it.

    Slots "m" (`w/Adam`) and "v" (`w/Adam_1`) per variable, and two non-slot variables
    `beta1_power` and `beta2_power` (colocated with the first variable by name) multiplied by
    beta1 and beta2 after each step's updates. Dense gradients use one ApplyAdam per variable;
    sparse gradients decay m and v densely and add the new rows with ScatterAdd, as in TF1.

    Args:
      learning_rate: a float, a scalar Tensor, or a callable returning one.
      beta1: the decay of the first moment estimates.
      beta2: the decay of the second moment estimates.
      epsilon: a small constant for numerical stability (epsilon-hat of the paper).
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the update ops and the slot name (default "Adam").
      use_own_namescope_for_non_slot_vars: make beta1_power and beta2_power in a root
        variable scope of the optimizer's name (see Optimizer).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam", use_own_namescope_for_non_slot_vars=False):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _get_beta_accumulators(self):
        graph = get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(self._call_if_callable(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(self._call_if_callable(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon),
                                            name="epsilon")

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        return training_ops.apply_adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"),
            cast_like(beta1_power, var), cast_like(beta2_power, var),
            cast_like(self._lr_t, var), cast_like(self._beta1_t, var),
            cast_like(self._beta2_t, var), cast_like(self._epsilon_t, var), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        """m = beta1 * m, then m[rows] += (1 - beta1) * g (likewise v); var -= lr_t * m /
        (sqrt(v) + epsilon) over the whole variable, as TF1 does."""
        from tensorweave.ops.control_flow_ops import group
        from tensorweave.ops.math_unary_ops import sqrt
        from tensorweave.ops.scatter_ops import scatter_add
        from tensorweave.ops.state_ops import assign, assign_sub
        beta1_power, beta2_power = (cast_like(b, var) for b in self._get_beta_accumulators())
        lr_t, beta1_t, beta2_t, epsilon_t = (
            cast_like(t, var) for t in (self._lr_t, self._beta1_t, self._beta2_t,
                                        self._epsilon_t))
        lr = lr_t * sqrt(1 - beta2_power) / (1 - beta1_power)
        locking = self._use_locking
        m = self.get_slot(var, "m")
        m_scaled_g_values = grad.values * (1 - beta1_t)
        m_t = assign(m, m * beta1_t, use_locking=locking)
        with control_dependencies([m_t]):
            m_t = scatter_add(m, grad.indices, m_scaled_g_values, use_locking=locking)
        v = self.get_slot(var, "v")
        v_scaled_g_values = (grad.values * grad.values) * (1 - beta2_t)
        v_t = assign(v, v * beta2_t, use_locking=locking)
        with control_dependencies([v_t]):
            v_t = scatter_add(v, grad.indices, v_scaled_g_values, use_locking=locking)
        v_sqrt = sqrt(v_t)
        var_update = assign_sub(var, lr * m_t / (v_sqrt + epsilon_t), use_locking=locking)
        return group(*[var_update, m_t, v_t])

    def _finish(self, update_ops, name_scope):
        """After every update: beta1_power *= beta1 and beta2_power *= beta2."""
        from tensorweave.ops.control_flow_ops import group
        with control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with colocate_with(beta1_power):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                                  use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                                  use_locking=self._use_locking)
        return group(*update_ops + [update_beta1, update_beta2], name=name_scope)
