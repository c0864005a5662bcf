"""MetaGraphDef export and import: a graph with its saver and collections, as one proto.

Export: the GraphDef (with `_output_shapes`, optionally cut to a name scope, without devices or
without other savers' nodes), a MetaInfoDef (versions, the OpDefs the graph uses), the SaverDef
and one CollectionDef per collection — registered kinds (variables) as serialized protos,
Python ints/floats/strings as lists, tensors and operations by name; other items are skipped
with a warning, as TensorFlow does. Import: `import_graph_def` under the import scope, then the
collections are rebuilt (one Variable object per VariableDef, shared by all its collections),
and `import_meta_graph` returns a Saver for the imported SaverDef.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable

from google.protobuf import any_pb2, text_format

from tensorweave.framework.graph import Graph, GraphKeys, get_default_graph
from tensorweave.framework.op_list import (
    strip_graph_default_valued_attrs,
    stripped_op_list_for_graph,
)
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import (
    control_flow_pb2,
    graph_pb2,
    meta_graph_pb2,
    queue_runner_pb2,
    saver_pb2,
    variable_pb2,
)

__all__ = ["export_meta_graph", "import_meta_graph"]

_UNBOUND_INPUT_PREFIX = "$unbound_inputs_"
# Collections that did not always carry VariableDefs: an old node_list there only warrants a note.
_COMPAT_COLLECTION_LIST = (GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES,
                           GraphKeys.METRIC_VARIABLES)
_VARIABLE_COLLECTIONS = frozenset({
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
    GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.CONCATENATED_VARIABLES,
    GraphKeys.TRAINABLE_RESOURCE_VARIABLES, GraphKeys.GLOBAL_STEP})
_SAVE_AND_RESTORE_OPS = frozenset({"SaveV2", "Save", "SaveSlices", "RestoreV2", "Restore",
                                   "RestoreSlice", "MergeV2Checkpoints"})


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("tensorweave")
    except metadata.PackageNotFoundError:
        return "0.0.0"


# --- name scopes -------------------------------------------------------------------------------
def strip_name_scope(name: str, export_scope: str | None) -> str:
    """`name` without the leading `export_scope/` (also after '^' and 'loc:@')."""
    if not export_scope:
        return name
    scope = export_scope.rstrip("/")
    if isinstance(name, bytes):
        name = name.decode()
    return re.sub(r"([\^]|loc:@|^)" + re.escape(scope) + r"[\/]+(.*)", r"\1\2", name, count=1)


def prepend_name_scope(name: str, import_scope: str | None) -> str:
    """`name` under `import_scope/` (after a leading '^' or 'loc:@')."""
    if not import_scope:
        return name
    scope = import_scope.rstrip("/")
    if isinstance(name, bytes):
        name = name.decode()
    return re.sub(r"([\^]|loc:@|^)(.*)", lambda m: f"{m.group(1)}{scope}/{m.group(2)}", name,
                  count=1)


# --- collection proto functions ----------------------------------------------------------------
_PROTO_FUNCTIONS: dict[str, tuple[type | None, Callable | None, Callable | None]] = {}


def register_proto_function(collection_name: str, proto_type=None, to_proto=None,
                            from_proto=None) -> None:
    """Declares how a collection's items become protos (`to_proto(item, export_scope)`) and
    back (`from_proto(proto, import_scope)`) in a MetaGraphDef."""
    if to_proto is not None and not callable(to_proto):
        raise TypeError("to_proto must be callable.")
    if from_proto is not None and not callable(from_proto):
        raise TypeError("from_proto must be callable.")
    _PROTO_FUNCTIONS[collection_name] = (proto_type, to_proto, from_proto)


def get_collection_proto_type(collection_name: str):
    return _PROTO_FUNCTIONS.get(collection_name, (None, None, None))[0]


def get_to_proto_function(collection_name: str):
    return _PROTO_FUNCTIONS.get(collection_name, (None, None, None))[1]


def get_from_proto_function(collection_name: str):
    return _PROTO_FUNCTIONS.get(collection_name, (None, None, None))[2]


def _variable_to_proto(variable, export_scope=None):
    return variable.to_proto(export_scope=export_scope)


def _variable_from_proto(variable_def, import_scope=None):
    from tensorweave.ops.variables import Variable
    return Variable.from_proto(variable_def, import_scope=import_scope)


def _saver_to_proto(saver, export_scope=None):
    return saver.to_proto(export_scope=export_scope)


def _saver_from_proto(saver_def, import_scope=None):
    """A Saver running the (import-scoped) save and restore ops that `saver_def` names."""
    from tensorweave.train.saver import Saver
    return Saver.from_proto(saver_def, import_scope=import_scope)


def _queue_runner_to_proto(queue_runner, export_scope=None):
    return queue_runner.to_proto(export_scope=export_scope)


def _queue_runner_from_proto(queue_runner_def, import_scope=None):
    from tensorweave.train.queue_runner import QueueRunner
    return QueueRunner.from_proto(queue_runner_def, import_scope=import_scope)


def _context_to_proto(ctx, export_scope=None):
    from tensorweave.ops.control_flow_proto import context_to_proto
    return context_to_proto(ctx, export_scope=export_scope)


def _cond_context_from_proto(proto, import_scope=None):
    from tensorweave.ops.control_flow_proto import cond_context_from_proto
    return cond_context_from_proto(proto, import_scope=import_scope)


def _while_context_from_proto(proto, import_scope=None):
    from tensorweave.ops.control_flow_proto import while_context_from_proto
    return while_context_from_proto(proto, import_scope=import_scope)


for _key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
             GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
             GraphKeys.MODEL_VARIABLES, GraphKeys.METRIC_VARIABLES, GraphKeys.GLOBAL_STEP):
    register_proto_function(_key, variable_pb2.VariableDef, _variable_to_proto,
                            _variable_from_proto)
register_proto_function(GraphKeys.SAVERS, saver_pb2.SaverDef, _saver_to_proto, _saver_from_proto)
register_proto_function(GraphKeys.QUEUE_RUNNERS, queue_runner_pb2.QueueRunnerDef,
                        _queue_runner_to_proto, _queue_runner_from_proto)
register_proto_function(GraphKeys.COND_CONTEXT, control_flow_pb2.CondContextDef,
                        _context_to_proto, _cond_context_from_proto)
register_proto_function(GraphKeys.WHILE_CONTEXT, control_flow_pb2.WhileContextDef,
                        _context_to_proto, _while_context_from_proto)


# --- export ------------------------------------------------------------------------------------
def _kind_of(item) -> str:
    """The CollectionDef field an unregistered collection's first item selects."""
    if isinstance(item, (str, bytes)):
        return "bytes_list"
    if isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    if isinstance(item, any_pb2.Any):
        return "any_list"
    return "node_list"


def _should_include_node(node_or_name, export_scope, exclude_nodes) -> bool:
    if isinstance(node_or_name, str):
        name = node_or_name
    else:
        name = getattr(node_or_name, "name", None)
        if not isinstance(name, str):
            return True  # items without names (Python values) are kept
    if exclude_nodes and name in exclude_nodes:
        return False
    return name.startswith(_UNBOUND_INPUT_PREFIX) or not export_scope or \
        name.startswith(export_scope)


def add_collection_def(meta_graph_def, key, graph=None, export_scope=None, exclude_nodes=None,
                       override_contents=None) -> None:
    """Adds collection `key` of `graph` to `meta_graph_def` (skipped with a warning if its
    items cannot be serialized)."""
    if not isinstance(key, (str, bytes)):
        logging.warning("Only collections with string type keys will be serialized. This key "
                        "has %s", type(key))
        return
    graph = graph or get_default_graph()
    items = override_contents if override_contents else graph.get_collection(key)
    items = [x for x in items if _should_include_node(x, export_scope, exclude_nodes)]
    if not items:
        return
    col_def = meta_graph_def.collection_def[key]
    try:
        to_proto = get_to_proto_function(key)
        if to_proto is not None:
            proto_type = get_collection_proto_type(key)
            for item in items:
                proto = to_proto(item, export_scope=export_scope)
                if proto is not None:
                    if not isinstance(proto, proto_type):
                        raise TypeError(f"{key}: to_proto gave {type(proto).__name__}, "
                                        f"not {proto_type.__name__}")
                    col_def.bytes_list.value.append(proto.SerializeToString())
            return
        kind = _kind_of(items[0])
        if kind == "node_list":
            col_def.node_list.value.extend(
                strip_name_scope(x.name, export_scope) for x in items
                if not export_scope or x.name.startswith(export_scope))
        elif kind == "bytes_list":
            col_def.bytes_list.value.extend(x.encode() if isinstance(x, str) else x
                                            for x in items)
        else:
            getattr(col_def, kind).value.extend(items)
    except Exception as e:  # noqa: BLE001 — any unserializable item: warn and skip, like TF
        logging.warning("Issue encountered when serializing %s.\nType is unsupported, or the "
                        "types of the items don't match field type in CollectionDef. Note this "
                        "is a warning and probably safe to ignore.\n%s", key, str(e))
        if key in meta_graph_def.collection_def:
            del meta_graph_def.collection_def[key]


def _meta_info_def(meta_info_def):
    info = meta_graph_pb2.MetaGraphDef.MetaInfoDef()
    if meta_info_def is not None:
        if not isinstance(meta_info_def, meta_graph_pb2.MetaGraphDef.MetaInfoDef):
            raise TypeError("meta_info_def must be of type MetaInfoDef. "
                            f"Received type: {type(meta_info_def)}.")
        info.CopyFrom(meta_info_def)
    version = _version()
    # A PEP 440 version (readers such as TensorFlow parse it) that says who wrote the file.
    info.tensorflow_version = f"{version}+tensorweave"
    info.tensorflow_git_version = f"tensorweave {version}"
    return info


def create_meta_graph_def(meta_info_def=None, graph_def=None, saver_def=None,
                          collection_list=None, graph=None, export_scope=None,
                          exclude_nodes=None, clear_extraneous_savers=False,
                          strip_default_attrs=False):
    """Builds a MetaGraphDef from a graph (or a given GraphDef), saver and collections."""
    if graph is not None and not isinstance(graph, Graph):
        raise TypeError(f"graph must be of type Graph. Received type: {type(graph)}.")
    if graph_def is not None and not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"graph_def must be of type GraphDef. Received type: {type(graph_def)}.")
    if saver_def is not None and not isinstance(saver_def, saver_pb2.SaverDef):
        raise TypeError(f"saver_def must be of type SaverDef. Received type: {type(saver_def)}.")
    graph = graph or get_default_graph()
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.CopyFrom(_meta_info_def(meta_info_def))
    meta.graph_def.CopyFrom(graph_def if graph_def is not None
                            else graph.as_graph_def(add_shapes=True))
    if not meta.meta_info_def.stripped_op_list.op:
        meta.meta_info_def.stripped_op_list.CopyFrom(stripped_op_list_for_graph(meta.graph_def))
    if strip_default_attrs:
        strip_graph_default_valued_attrs(meta)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in keys:
        override = None
        if clear_extraneous_savers and key == GraphKeys.SAVERS:
            if saver_def is None:
                continue
            override = [_saver_from_proto(saver_def)]
        add_collection_def(meta, key, graph=graph, export_scope=export_scope,
                           exclude_nodes=exclude_nodes, override_contents=override)
    return meta


def _scope_of(name: str) -> str:
    name = name.lstrip("^")
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _extraneous_saver_nodes(graph_def, saver_def) -> set:
    """Nodes in the name scopes of Savers other than `saver_def`'s (one scope per Saver)."""
    saver_nodes = {n.name for n in graph_def.node if n.op in _SAVE_AND_RESTORE_OPS}
    scopes = {_scope_of(name) + "/" for name in saver_nodes} - {n + "/" for n in saver_nodes}
    if saver_def is not None:
        scopes -= {_scope_of(saver_def.save_tensor_name.split(":")[0]) + "/",
                   _scope_of(saver_def.restore_op_name) + "/"}
    return {n.name for n in graph_def.node if any(n.name.startswith(s) for s in scopes)}


def _scoped_node_def(node, export_scope, unbound_inputs, clear_devices):
    """A copy of `node` relative to `export_scope`; inputs from outside it become unbound."""
    out = type(node)()
    out.CopyFrom(node)
    out.name = strip_name_scope(node.name, export_scope)
    for i, name in enumerate(node.input):
        if export_scope and not name.lstrip("^").startswith(export_scope):
            control = "^" if name.startswith("^") else ""
            out.input[i] = control + _UNBOUND_INPUT_PREFIX + name.lstrip("^")
            unbound_inputs.append(out.input[i])
        else:
            out.input[i] = strip_name_scope(name, export_scope)
    if "_class" in node.attr:
        groups = [s for s in node.attr["_class"].list.s
                  if not export_scope or s.decode().split("@", 1)[-1].startswith(export_scope)]
        out.attr["_class"].list.ClearField("s")
        out.attr["_class"].list.s.extend(strip_name_scope(s.decode(), export_scope).encode()
                                         for s in groups)
    if clear_devices:
        out.device = ""
    return out


def export_scoped_meta_graph(filename=None, graph_def=None, graph=None, export_scope=None,
                             as_text=False, unbound_inputs_col_name="unbound_inputs",
                             clear_devices=False, saver_def=None,
                             clear_extraneous_savers=False, strip_default_attrs=False,
                             **kwargs):
    """Like `export_meta_graph`, also returning the exported variables by relative name."""
    kwargs.pop("save_debug_info", None)
    graph = graph or get_default_graph()
    exclude_nodes = None
    if export_scope or clear_extraneous_savers or clear_devices:
        source = graph_def if graph_def is not None else graph.as_graph_def(add_shapes=True)
        if clear_extraneous_savers:
            exclude_nodes = _extraneous_saver_nodes(source, saver_def)
        unbound_inputs: list = []
        graph_def = graph_pb2.GraphDef()
        graph_def.versions.CopyFrom(source.versions)
        graph_def.library.CopyFrom(source.library)
        for node in source.node:
            if _should_include_node(node.name, export_scope, exclude_nodes):
                graph_def.node.append(_scoped_node_def(node, export_scope, unbound_inputs,
                                                       clear_devices))
        if unbound_inputs_col_name:
            graph.clear_collection(unbound_inputs_col_name)
            for name in unbound_inputs:
                graph.add_to_collection(unbound_inputs_col_name, name)
    var_list = {strip_name_scope(v.name, export_scope): v
                for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=export_scope)
                if _should_include_node(v, export_scope, exclude_nodes)}
    meta = create_meta_graph_def(graph_def=graph_def, graph=graph, export_scope=export_scope,
                                 exclude_nodes=exclude_nodes, saver_def=saver_def,
                                 clear_extraneous_savers=clear_extraneous_savers,
                                 strip_default_attrs=strip_default_attrs, **kwargs)
    if filename:
        from tensorweave.framework.graph_io import write_graph
        write_graph(meta, os.path.dirname(filename), os.path.basename(filename),
                    as_text=as_text)
    return meta, var_list


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, **kwargs):
    """Returns the MetaGraphDef of a graph, writing it to `filename` (atomically) if given.

    TF1's tf.train.export_meta_graph.

    Args:
      filename: where to write the MetaGraphDef; nothing is written if None.
      meta_info_def: a `MetaInfoDef` to start from (versions are filled in).
      graph_def: the GraphDef to use instead of the graph's.
      saver_def: the `SaverDef` to include.
      collection_list: the collection keys to export; default all.
      as_text: write the text format instead of binary.
      graph: the Graph to export; default the default graph.
      export_scope: export only the nodes under this name scope, with the scope stripped.
      clear_devices: drop every node's device.
      clear_extraneous_savers: drop the Save/Restore nodes and SaverDefs of other Savers.
      strip_default_attrs: drop attrs whose value is their OpDef default.

    Returns:
      A `MetaGraphDef` proto.

    Raises:
      TypeError: if `meta_info_def`, `graph_def`, `saver_def` or `graph` has the wrong type.
    """
    meta, _ = export_scoped_meta_graph(
        filename=filename, meta_info_def=meta_info_def, graph_def=graph_def,
        saver_def=saver_def, collection_list=collection_list, as_text=as_text, graph=graph,
        export_scope=export_scope, clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs, **kwargs)
    return meta


# --- import ------------------------------------------------------------------------------------
def read_meta_graph_file(filename: str):
    """Parses a MetaGraphDef file, binary or text format.

    Raises:
      IOError: if the file does not exist or holds neither format.
    """
    if not os.path.exists(filename):
        raise OSError(f"File does not exist. Received: {filename}.")
    with open(filename, "rb") as f:
        content = f.read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(content)
        return meta
    except Exception:  # noqa: BLE001 — not binary: try the text format
        meta.Clear()
    try:
        text_format.Merge(content.decode("utf-8"), meta)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise OSError(f"Cannot parse file {filename}: {e}.") from None
    return meta


def _restore_collection(graph, key, col_def, scope, variable_objects) -> None:
    kind = col_def.WhichOneof("kind")
    if kind is None:
        logging.error("Cannot identify data type for collection %s. Skipping.", key)
        return
    from_proto = get_from_proto_function(key)
    if from_proto is not None and kind == "bytes_list":
        proto_type = get_collection_proto_type(key)
        for value in col_def.bytes_list.value:
            item = variable_objects.get(value) if key in _VARIABLE_COLLECTIONS else None
            if item is None:
                try:
                    item = from_proto(proto_type.FromString(value), import_scope=scope)
                except ImportError as e:
                    logging.warning("Collection %s not restored: %s", key, e)
                    return
                if key in _VARIABLE_COLLECTIONS:
                    variable_objects[value] = item
            graph.add_to_collection(key, item)
        return
    values = getattr(col_def, kind).value
    if key in _COMPAT_COLLECTION_LIST:
        logging.warning("The saved meta_graph is possibly from an older release:\n'%s' "
                        "collection should be of type 'byte_list', but instead is of type "
                        "'%s'.", key, kind)
    for value in values:
        if kind == "node_list":
            item = graph.as_graph_element(prepend_name_scope(value, scope))
        elif kind == "int64_list":
            item = int(value)
        elif kind == "bytes_list" and scope:
            item = prepend_name_scope(value, scope)
        else:
            item = value
        graph.add_to_collection(key, item)


def _check_unbound_inputs(meta, col_name, input_map) -> None:
    col_def = meta.collection_def.get(col_name) if col_name else None
    if col_def is None or col_def.WhichOneof("kind") is None:
        return
    values = [v.decode() if isinstance(v, bytes) else str(v)
              for v in getattr(col_def, col_def.WhichOneof("kind")).value]
    if values and (not input_map or sorted(values) != sorted(input_map)):
        missing = [v for v in values if not input_map or v not in input_map]
        raise ValueError(f"Graph contains unbound inputs: {','.join(missing)}. Must provide "
                         "these inputs through input_map.")


def _import(meta_graph_or_file, clear_devices=False, graph=None, import_scope=None,
            input_map=None, unbound_inputs_col_name="unbound_inputs",
            restore_collections_predicate=lambda key: True, return_elements=None):
    """Imports a MetaGraphDef; returns (meta, {relative name: Variable}, elements, scope)."""
    from tensorweave.framework.importer import import_graph_def
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        meta = meta_graph_or_file
    else:
        meta = read_meta_graph_file(meta_graph_or_file)
    _check_unbound_inputs(meta, unbound_inputs_col_name, input_map)
    graph = graph or get_default_graph()
    with graph.as_default():
        graph_def = meta.graph_def
        if clear_devices:
            graph_def = graph_pb2.GraphDef()
            graph_def.CopyFrom(meta.graph_def)
            for node in graph_def.node:
                node.device = ""
        import_scope = import_scope.rstrip("/") if import_scope else import_scope
        scope = graph.unique_name(import_scope, mark_as_used=False) if import_scope else ""
        elements = import_graph_def(graph_def, name=import_scope or scope, input_map=input_map,
                                    return_elements=return_elements)
        # TRAINABLE_VARIABLES first, so its VariableDefs make the shared Variable objects.
        keys = sorted(meta.collection_def, key=lambda k: (k != GraphKeys.TRAINABLE_VARIABLES, k))
        variable_objects: dict = {}
        for key in keys:
            if key == unbound_inputs_col_name or not restore_collections_predicate(key):
                continue
            _restore_collection(graph, key, meta.collection_def[key], scope, variable_objects)
        var_list = {strip_name_scope(v.name, scope): v
                    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope or None)}
    return meta, var_list, elements, scope


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None, input_map=None,
                             unbound_inputs_col_name="unbound_inputs",
                             restore_collections_predicate=lambda key: True):
    """Imports a MetaGraphDef; returns the imported variables by name relative to the scope."""
    return _import(meta_graph_or_file, clear_devices, graph, import_scope, input_map,
                   unbound_inputs_col_name, restore_collections_predicate)[1]


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Recreates a graph saved in a MetaGraphDef (or a `.meta` file) in the default graph.

    TF1's tf.train.import_meta_graph: the graph's nodes are imported under `import_scope`, its
    collections are restored (variables, `train_op`, user collections of tensors and ops), and
    a Saver for the saved SaverDef is returned, so training resumes with
    `saver.restore(sess, checkpoint)` without the code that built the model.

    Args:
      meta_graph_or_file: a `MetaGraphDef` proto or the path of a file holding one.
      clear_devices: ignore the devices the nodes were pinned to.
      import_scope: a name scope prefixed to every imported name.
      **kwargs: `input_map`, `unbound_inputs_col_name`, `restore_collections_predicate`,
        `return_elements`, as for `import_graph_def`.

    Returns:
      A Saver built from the MetaGraphDef's SaverDef; without one, a Saver of all variables
      or None if there are no variables.

    Raises:
      IOError: if the file does not exist or cannot be parsed.
      ValueError: if the graph has unbound inputs that `input_map` does not provide.
    """
    meta, var_list, _, scope = _import(meta_graph_or_file, clear_devices,
                                       import_scope=import_scope, **kwargs)
    if meta.HasField("saver_def"):
        return _saver_from_proto(meta.saver_def, scope)
    graph = get_default_graph()
    if var_list or graph.get_collection(GraphKeys.SAVEABLE_OBJECTS, scope=scope or None):
        from tensorweave.train.saver import Saver
        return Saver()
    logging.info("Saver not created because there are no variables in the graph to restore")
    return None
