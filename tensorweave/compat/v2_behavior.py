"""TF1 switches for v2 behaviour: tensorweave is always graph mode with v1 semantics.

Resource variables are the one switch that changes something: `enable_resource_variables()`
makes tf.Variable and get_variable build ResourceVariables where neither they nor a
variable_scope say otherwise, as in TensorFlow.
"""
from __future__ import annotations

from tensorweave.ops.variables import default_use_resource, set_default_use_resource

__all__ = ["disable_v2_behavior", "enable_v2_behavior", "disable_eager_execution",
           "enable_eager_execution", "executing_eagerly", "executing_eagerly_outside_functions",
           "disable_resource_variables", "enable_resource_variables",
           "resource_variables_enabled", "disable_control_flow_v2", "enable_control_flow_v2",
           "control_flow_v2_enabled", "disable_v2_tensorshape", "disable_tensor_equality",
           "enable_tensor_equality"]


def disable_v2_behavior() -> None:
    """TF1 behaviour, which tensorweave has already; like TensorFlow's, it also turns
    resource variables off."""
    disable_resource_variables()


def disable_eager_execution() -> None:
    """Accepted for compatibility: graphs are always built, never run eagerly."""


def disable_resource_variables() -> None:
    """tf.Variable and get_variable make TF1 reference variables by default (the default)."""
    set_default_use_resource(False)


def enable_resource_variables() -> None:
    """tf.Variable and get_variable make ResourceVariables by default."""
    set_default_use_resource(True)


def resource_variables_enabled() -> bool:
    """Whether variables are ResourceVariables by default."""
    return default_use_resource()


def disable_control_flow_v2() -> None:
    """Accepted for compatibility: cond and while_loop build TF1's Switch/Merge/Enter/Exit
    graphs, which is what this asks for."""


def enable_control_flow_v2() -> None:
    raise NotImplementedError("tensorweave builds TF1 control flow (Switch, Merge, Enter, "
                              "Exit) only; functional If/While ops are not available")


def control_flow_v2_enabled() -> bool:
    return False


def disable_v2_tensorshape() -> None:
    """Accepted for compatibility: shapes index to Dimension objects, as in TF1."""


def disable_tensor_equality() -> None:
    """Accepted for compatibility: `==` on tensors is Python identity, as in TF1, and tensors
    are hashable (dict keys)."""


def enable_tensor_equality() -> None:
    raise NotImplementedError("tensorweave keeps TF1's tensor `==` (identity, hashable "
                              "tensors); use tf.equal for elementwise comparison")


def enable_v2_behavior() -> None:
    raise NotImplementedError("tensorweave implements the TF1 (graph mode) API only")


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    raise NotImplementedError("Eager execution is not available in tensorweave yet")


def executing_eagerly() -> bool:
    return False


def executing_eagerly_outside_functions() -> bool:
    """False: the outermost context is always a graph."""
    return False
