"""tf.train.Optimizer: the base of every TF1 optimizer.

`minimize` = `compute_gradients` (tf.gradients of the loss w.r.t. the variables) followed by
`apply_gradients`, which creates the optimizer's slots, then under the optimizer's name scope
adds one update per variable (`<name>/update_<var>/Apply...`, colocated with the variable: a
single fused kernel for dense gradients, a sparse one for IndexedSlices after summing repeated
indices), groups them and, when given, increments `global_step` after all updates. Graph
structure, names and error messages follow TensorFlow's.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import colocate_with, control_dependencies, name_scope
from tensorweave.framework.scopes import colocate_with as _colocate_with
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.train import slot_creator

_VALID_DTYPES = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)


def _var_key(var):
    """Slots are keyed by the primary's graph and op name, like TensorFlow's."""
    return (var.op.graph, var.op.name)


def _is_variable(v) -> bool:
    from tensorweave.ops.variables import Variable
    return isinstance(v, Variable)


def _flatten(values) -> list:
    if isinstance(values, (list, tuple)):
        return [x for v in values for x in _flatten(v)]
    return [values]


def deduplicate_indexed_slices(values, indices):
    """Sums the rows of `values` that share an index: (summed values, unique indices)."""
    from tensorweave.ops.array_index_ops import unique
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    unique_indices, positions = unique(indices)
    summed = unsorted_segment_sum(values, positions, shape(unique_indices)[0])
    return summed, unique_indices


def cast_like(value, var):
    """`value` as a tensor of `var`'s base dtype (no Cast op when it already is)."""
    from tensorweave.ops.math_unary_ops import cast
    tensor = convert_to_tensor(value)
    dtype = var.dtype.base_dtype
    return tensor if tensor.dtype.base_dtype == dtype else cast(tensor, dtype)


def _update_op(optimizer, grad, var):
    """The update of one variable (a Tensor target cannot be updated)."""
    if not _is_variable(var):
        raise NotImplementedError("Trying to update a Tensor ", var)
    if isinstance(grad, Tensor):
        update = optimizer._apply_dense(grad, var)
        if var.constraint is not None:
            with control_dependencies([update]):
                return var.assign(var.constraint(var))
        return update
    if var.constraint is not None:
        raise RuntimeError("Cannot use a constraint function on a sparse variable.")
    return optimizer._apply_sparse_duplicate_indices(grad, var)


class Optimizer:
    """Base class for optimizers (TF1's tf.train.Optimizer).

    Subclasses implement `_create_slots`, `_prepare`, `_apply_dense` and `_apply_sparse` (or
    `_apply_sparse_duplicate_indices`), and may override `_finish`.

    Args:
      use_locking: if True, updates hold the variables' locks.
      name: the name scope of the ops `apply_gradients` adds, and the slot name.

    Raises:
      ValueError: if `name` is empty.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name, use_own_namescope_for_non_slot_vars=False):
        """`use_own_namescope_for_non_slot_vars`: create the optimizer's own variables
        (Adam's beta powers) in a root variable scope named after the optimizer ("Adam",
        "Adam_1", ...) instead of at the root of the graph or in the enclosing scope."""
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}
        self._non_slot_dict: dict = {}
        self._non_slot_variable_scope = None
        if use_own_namescope_for_non_slot_vars:
            from tensorweave.ops.variable_scope import variable_scope
            with variable_scope(None, default_name=name) as scope:
                self._non_slot_variable_scope = scope

    def get_name(self) -> str:
        return self._name

    # --- the three steps -----------------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """Adds ops that minimize `loss` by updating `var_list`.

        Args:
          loss: the Tensor to minimize.
          global_step: optional Variable incremented by one after the variables are updated.
          var_list: the Variables to update (default: TRAINABLE_VARIABLES).
          gate_gradients: GATE_NONE, GATE_OP or GATE_GRAPH.
          aggregation_method: how gradient terms are combined (see tf.gradients).
          colocate_gradients_with_ops: place each gradient with the op it differentiates.
          name: name of the returned op (default: the optimizer's name).
          grad_loss: optional gradient of `loss` (default: ones).

        Returns:
          The Operation that applies the update (and increments `global_step`).

        Raises:
          ValueError: if no variable receives a gradient from `loss`.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                "support gradients, between variables "
                f"{[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The gradients of `loss` for the variables of `var_list`.

        Returns:
          A list of (gradient, variable) pairs, in `var_list` order; the gradient is a Tensor,
          an IndexedSlices, or None when `loss` does not depend on the variable.

        Raises:
          ValueError: for an invalid gate_gradients, a non-float loss or variable, or no
            variables.
        """
        from tensorweave.autodiff.gating import gate_together
        from tensorweave.autodiff.gradients import gradients
        from tensorweave.ops.variables import trainable_variables
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([convert_to_tensor(grad_loss)])
        if var_list is None:
            var_list = trainable_variables() + \
                get_default_graph().get_collection(GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        targets = [v._ref() if _is_variable(v) else v for v in var_list]
        grads = gradients(loss, targets, grad_ys=grad_loss,
                          gate_gradients=(gate_gradients == Optimizer.GATE_OP),
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = gate_together(grads)   # TF's one `tuple` over all the gradients
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        skip_gradients_aggregation=False):
        """Applies gradients to variables: the second part of `minimize`.

        Args:
          grads_and_vars: (gradient, variable) pairs, as from `compute_gradients`.
          global_step: optional Variable incremented by one after the updates.
          name: name of the returned op (default: the optimizer's name).
          skip_gradients_aggregation: TensorFlow's switch for not summing gradients across
            the replicas of a distribution strategy; without one, as here, it changes nothing.

        Returns:
          The Operation that applies the gradients (and increments `global_step`).

        Raises:
          TypeError: if a gradient is neither convertible to a Tensor nor IndexedSlices.
          ValueError: if the list is empty or no variable has a gradient.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError("Gradient must be convertible to a Tensor or "
                                    f"IndexedSlices, or None: {g}") from None
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        with control_dependencies(None):  # TF's init_scope: slots ignore enclosing deps
            self._create_slots(var_list)
        update_ops = []
        with name_scope(name, self._name) as name:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with name_scope("update_" + var.op.name), colocate_with(var):
                    update_ops.append(_update_op(self, grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, name)
            else:
                from tensorweave.ops.state_ops import assign_add
                with control_dependencies([self._finish(update_ops, "update")]):
                    with colocate_with(global_step):
                        apply_updates = assign_add(global_step, 1, name=name)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = get_default_graph().get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    # --- slots -------------------------------------------------------------------------------
    def get_slot(self, var, name):
        """The slot `name` created for `var` (a Variable), or None."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self) -> list:
        """The sorted names of the slots this optimizer creates (e.g. ['m', 'v'])."""
        return sorted(self._slots)

    def variables(self) -> list:
        """The optimizer's state in the default graph: slots and non-slot variables, by name."""
        graph = get_default_graph()
        found = [v for v in self._non_slot_dict.values() if v.op.graph is graph]
        for per_var in self._slots.values():
            found.extend(v for v in per_var.values() if v.op.graph is graph)
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        """The slot `slot_name` of `var`, made with initial value `val` on first use."""
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_slot(var, val, op_name)
        return named_slots[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_slot_with_initializer(
                var, initializer, shape, dtype, op_name)
        return named_slots[key]

    def _zeros_slot(self, var, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_zeros_slot(var, op_name)
        return named_slots[key]

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A variable of the optimizer itself (Adam's `beta1_power`), one per graph: a
        resource variable if `colocate_with` is one, as in TF (whose keyword names these are)."""
        from tensorweave.ops.variables import Variable, is_resource_variable
        graph = colocate_with.op.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            use_resource = is_resource_variable(colocate_with)
            with _colocate_with(colocate_with):
                if self._non_slot_variable_scope is None:
                    v = Variable(initial_value, name=name, trainable=False,
                                 use_resource=use_resource)
                else:
                    from tensorweave.ops.variable_scope import get_variable, variable_scope
                    with name_scope(""), variable_scope(self._non_slot_variable_scope):
                        v = get_variable(name, initializer=initial_value, trainable=False,
                                         use_resource=use_resource)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    def _non_slot_variables(self):
        return self._non_slot_dict.values()

    # --- helpers for subclasses ----------------------------------------------------------------
    @staticmethod
    def _call_if_callable(param):
        """Learning rates and other hyperparameters may be callables returning the value."""
        return param() if callable(param) else param

    def _valid_dtypes(self):
        return set(_VALID_DTYPES)

    def _assert_valid_dtypes(self, tensors) -> None:
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                expected = ", ".join(repr(d) for d in _VALID_DTYPES if d in valid)
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"[{expected}].")

    # --- what subclasses implement --------------------------------------------------------------
    def _create_slots(self, var_list) -> None:
        """Creates the slots every variable of `var_list` needs."""

    def _prepare(self) -> None:
        """Creates the hyperparameter tensors, inside the optimizer's name scope."""

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _apply_sparse(self, grad, var):
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Sums the rows of repeated indices first (so every formula sees each row once)."""
        summed, unique_indices = deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique_indices, grad.dense_shape), var)

    def _finish(self, update_ops, name_scope) -> Operation:
        """The op that completes the step (default: a group of the updates)."""
        from tensorweave.ops.control_flow_ops import group
        return group(*update_ops, name=name_scope)
