"""Lookup-table ops: hash tables as resources, their initializers, finds, inserts and exports.

The ops are TensorFlow's resource-handle forms (HashTableV2, MutableHashTableV2,
MutableHashTableOfTensorsV2, MutableDenseHashTableV2, LookupTableFindV2, LookupTableRemoveV2,
...), so graphs import by name.
A table op outputs a `resource` handle; the table itself lives in the device's ResourceMgr
(kernels/lookup.py, kernels/dense_hash_table.py), shared by every node that names the same
`shared_name`. The tf.lookup classes (tensorweave/lookup/) build on these ops;
`tables_initializer` groups the TABLE_INITIALIZERS collection. No op is differentiable: tables
map keys to stored values.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_dim, merge_shapes, shape_with_rank
from tensorweave.framework.shape_fns import scalar

__all__ = ["tables_initializer", "initialize_all_tables"]

_TABLE_ATTRS = [Attr("container", "string", ""), Attr("shared_name", "string", ""),
                Attr("use_node_name_sharing", "bool", False), TypeAttr("key_dtype"),
                TypeAttr("value_dtype")]


def _no_outputs(ctx):
    return []


def _remove_shape(ctx):
    """LookupTableRemoveV2: the keys have rank 1 or more (TensorFlow checks nothing else)."""
    if ctx.input_shape(1).ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return []


def _init_shape(ctx):
    """InitializeTableV2: keys are a vector and values have the keys' shape."""
    merge_shapes(shape_with_rank(ctx.input_shape(1), 1), ctx.input_shape(2))
    return []


def _import_shape(ctx):
    """LookupTableImportV2: keys are a vector, values have one row (rank 1 or more) per key."""
    keys = shape_with_rank(ctx.input_shape(1), 1)
    values = ctx.input_shape(2)
    if values.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    merge_dim(keys.as_list()[0], values.as_list()[0] if values.ndims else None)
    return []


def _value_shape(ctx):
    """The value_shape attr of the table op whose handle is input 0 (a table of vectors or a
    dense table), else None (TensorFlow reads the same fact from the handle's shape data)."""
    op = getattr(ctx.inputs[0], "op", None)
    if op is None or op.type not in ("MutableHashTableOfTensorsV2", "MutableDenseHashTableV2"):
        return None
    return _ts.as_shape(op.get_attr("value_shape"))


def _find_shape(ctx):
    """One value per key: the keys' shape, then the table's value_shape; for tables without
    one known only when the default is one scalar (tables of scalar values)."""
    value_shape = _value_shape(ctx)
    if value_shape is not None:
        return ctx.input_shape(1).concatenate(value_shape)
    default = ctx.input_shape(2)
    return ctx.input_shape(1) if default.ndims == 0 else _ts.unknown_shape()


def _dense_table_shape(ctx):
    """MutableDenseHashTableV2: a scalar handle; the two marker keys have one shape."""
    ctx.input_shape(0).merge_with(ctx.input_shape(1))
    return _ts.TensorShape([])


def _export_shape(ctx):
    """Unknown shapes, as TensorFlow infers them for every kind of table."""
    return [_ts.unknown_shape(), _ts.unknown_shape()]


HashTableV2 = define_op(
    "HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, shape_fn=scalar,
    is_stateful=True, not_differentiable=True,
    doc="An empty hash table, immutable once initialized.")
MutableHashTableV2 = define_op(
    "MutableHashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS,
    shape_fn=scalar, is_stateful=True, not_differentiable=True,
    doc="An empty hash table that LookupTableInsertV2 fills.")
MutableHashTableOfTensorsV2 = define_op(
    "MutableHashTableOfTensorsV2", outputs=["table_handle: resource"],
    attrs=_TABLE_ATTRS + [Attr("value_shape", "shape", _ts.TensorShape([]))], shape_fn=scalar,
    is_stateful=True, not_differentiable=True,
    doc="An empty hash table of vectors of value_shape that LookupTableInsertV2 fills.")
MutableDenseHashTableV2 = define_op(
    "MutableDenseHashTableV2", inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
    outputs=["table_handle: resource"],
    attrs=_TABLE_ATTRS + [Attr("value_shape", "shape", _ts.TensorShape([])),
                          Attr("initial_num_buckets", "int", 131072),
                          Attr("max_load_factor", "float", 0.8)],
    shape_fn=_dense_table_shape, is_stateful=True, not_differentiable=True,
    doc="An empty open-addressing hash table; empty_key and deleted_key mark free buckets.")
LookupTableRemoveV2 = define_op(
    "LookupTableRemoveV2", inputs=["table_handle: resource", "keys: Tin"],
    attrs=[TypeAttr("Tin")], shape_fn=_remove_shape, is_stateful=True, not_differentiable=True,
    doc="Removes keys from a mutable table; keys not in it are ignored.")
InitializeTableV2 = define_op(
    "InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
    attrs=[TypeAttr("Tkey"), TypeAttr("Tval")], shape_fn=_init_shape, is_stateful=True,
    not_differentiable=True, doc="Initializes a table from a vector of keys and of values.")
LookupTableImportV2, LookupTableInsertV2 = (
    define_op(op_type, inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
              attrs=[TypeAttr("Tin"), TypeAttr("Tout")], shape_fn=shape_fn,
              is_stateful=True, not_differentiable=True, doc=doc)
    for op_type, shape_fn, doc in (
        ("LookupTableImportV2", _import_shape,
         "Replaces a table's contents (initializes an initializable table)."),
        ("LookupTableInsertV2", _no_outputs,
         "Sets the value of each key (the last one of repeated keys).")))
InitializeTableFromTextFileV2 = define_op(
    "InitializeTableFromTextFileV2", inputs=["table_handle: resource", "filename: string"],
    attrs=[Attr("key_index", "int"), Attr("value_index", "int"),
           Attr("vocab_size", "int", -1), Attr("delimiter", "string", "\t"),
           Attr("offset", "int", 0)],
    shape_fn=_no_outputs, is_stateful=True, not_differentiable=True,
    doc="Initializes a table from the columns (or line numbers) of a text file.")
LookupTableFindV2 = define_op(
    "LookupTableFindV2", inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
    outputs=["values: Tout"], attrs=[TypeAttr("Tin"), TypeAttr("Tout")], shape_fn=_find_shape,
    is_stateful=True, not_differentiable=True,
    doc="The value of each key, or the default for keys not in the table.")
LookupTableSizeV2 = define_op(
    "LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"],
    shape_fn=scalar, is_stateful=True, not_differentiable=True,
    doc="The number of entries (0 for a table not yet initialized).")
LookupTableExportV2 = define_op(
    "LookupTableExportV2", inputs=["table_handle: resource"],
    outputs=["keys: Tkeys", "values: Tvalues"], attrs=[TypeAttr("Tkeys"), TypeAttr("Tvalues")],
    shape_fn=_export_shape, is_stateful=True, not_differentiable=True,
    doc="All keys and their values (the keys a vector, except a dense table's buckets).")


def tables_initializer(name="init_all_tables"):
    """Returns an Op that initializes all tables of the default graph.

    Groups the ops in the graph's `GraphKeys.TABLE_INITIALIZERS` collection (where every
    tf.lookup initializer adds its op), as TF1's `tf.tables_initializer`.

    Args:
      name: Optional name for the initialization op.

    Returns:
      An Op that initializes all tables. If there are no tables it is a NoOp.
    """
    from tensorweave.ops.control_flow_ops import group, no_op
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return group(*initializers, name=name)
    return no_op(name=name)


def initialize_all_tables(name="init_all_tables"):
    """Deprecated alias of `tables_initializer` (TF1's tf.initialize_all_tables).

    Args:
      name: Optional name for the initialization op.

    Returns:
      An Op that initializes all tables.
    """
    return tables_initializer(name)
