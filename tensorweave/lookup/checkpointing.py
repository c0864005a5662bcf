"""How tf.train.Saver checkpoints a mutable lookup table (MutableHashTable, DenseHashTable).

As in TensorFlow, a table created with `checkpoint=True` adds a TableSaveable to the graph's
SAVEABLE_OBJECTS collection, so a Saver of the default var_list saves it; a Saver given an
explicit var_list saves the table only if the list holds that saveable or the table itself (a
Trackable). The saveable saves the table's export (LookupTableExportV2, built with the
saveable) as "<name>-keys" and "<name>-values", `name` being the table's `name` argument, not
its op name made unique (two tables of one name collide as in TF); its restore is a
LookupTableImportV2, which replaces the table's whole contents.
"""
from __future__ import annotations

from tensorweave.framework import scopes as _scopes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.ops import lookup_ops
from tensorweave.train.saver_builder import SaveableObject, SaveSpec, Trackable

__all__ = ["CheckpointedTable", "TableSaveable"]


class TableSaveable(SaveableObject):
    """A table's exported keys and values as two checkpoint tensors, restored by an import."""

    def __init__(self, table, name: str, table_name: str):
        keys, values = table.export()
        super().__init__(table, [SaveSpec(f"{name}-keys", keys, keys.dtype, keys.shape),
                                 SaveSpec(f"{name}-values", values, values.dtype,
                                          values.shape)], name)
        self.table_name = table_name

    def restore(self, restored_tensors, restored_shapes=None):
        """LookupTableImportV2 of the restored keys and values, colocated with the table."""
        handle = self.op.resource_handle
        with _scopes.name_scope(f"{self.table_name}_table_restore"), \
                _scopes.colocate_with(handle.op):
            return apply_op(lookup_ops.LookupTableImportV2, [handle] + list(restored_tensors))


class CheckpointedTable(Trackable):
    """A table whose export and import a Saver saves and restores (mixed into a
    LookupInterface whose constructor sets `_name`)."""

    def _add_saveable(self) -> None:
        """Registers the table for Savers of the default var_list (`checkpoint=True`)."""
        get_default_graph().add_to_collection(GraphKeys.SAVEABLE_OBJECTS,
                                              self.saveable_object(self._name))

    def saveable_object(self, name: str) -> TableSaveable:
        """A saveable of the table under checkpoint keys "<name>-keys" and "<name>-values"."""
        return TableSaveable(self, name, self._name)
