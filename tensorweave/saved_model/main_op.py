"""Main ops for SavedModels (tf.saved_model.main_op): what the loader runs after restoring."""
from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.scopes import control_dependencies
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.lookup_ops import tables_initializer
from tensorweave.ops.variables import global_variables_initializer, local_variables_initializer

__all__ = ["main_op", "main_op_with_restore"]


def main_op():
    """An op initializing every global and local variable and every table."""
    return group(global_variables_initializer(), local_variables_initializer(),
                 tables_initializer())


def main_op_with_restore(restore_op_name):
    """`main_op()`, then `restore_op_name` (a Saver's restore op, or its name)."""
    restore = get_default_graph().as_graph_element(restore_op_name) \
        if isinstance(restore_op_name, str) else restore_op_name
    with control_dependencies([main_op()]):
        return group(restore)
