"""Loading a SavedModel into a session (tf.saved_model.loader).

The MetaGraphDef whose tags match is imported into the session's graph, its variables are
restored from `export_dir/variables/`, and its main op runs with each asset tensor fed the
path of its file under `export_dir/assets/`."""
from __future__ import annotations

import os

from google.protobuf import message, text_format

from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.meta_graph import import_meta_graph, prepend_name_scope
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import saved_model_pb2
from tensorweave.saved_model import constants
from tensorweave.saved_model.assets import asset_tensors

__all__ = ["load", "maybe_saved_model_directory"]


def maybe_saved_model_directory(export_dir) -> bool:
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt (whether it loads is
    another matter)."""
    export_dir = os.fspath(export_dir)
    return any(os.path.exists(os.path.join(export_dir, name)) for name in
               (constants.SAVED_MODEL_FILENAME_PBTXT, constants.SAVED_MODEL_FILENAME_PB))


contains_saved_model = maybe_saved_model_directory


def parse_saved_model(export_dir):
    """The SavedModel proto of `export_dir`, from saved_model.pb or else saved_model.pbtxt.

    Raises:
      OSError: neither file exists, or it cannot be parsed.
    """
    export_dir = os.fspath(export_dir)
    saved_model = saved_model_pb2.SavedModel()
    binary = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    text = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    if os.path.exists(binary):
        with open(binary, "rb") as f:
            try:
                saved_model.ParseFromString(f.read())
            except message.DecodeError as e:
                raise OSError(f"Cannot parse file {binary}: {e}.") from None
    elif os.path.exists(text):
        with open(text, encoding="utf-8") as f:
            try:
                text_format.Parse(f.read(), saved_model)
            except text_format.ParseError as e:
                raise OSError(f"Cannot parse file {text}: {e}.") from None
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.path.sep}"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                      f"{constants.SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def meta_graph_with_tags(saved_model, tags):
    """The MetaGraphDef whose tag set is exactly `tags`.

    Raises:
      RuntimeError: no MetaGraphDef has those tags.
    """
    available = []
    for meta_graph_def in saved_model.meta_graphs:
        available.append(set(meta_graph_def.meta_info_def.tags))
        if available[-1] == set(tags):
            return meta_graph_def
    raise RuntimeError(f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not "
                       f"be found in SavedModel, with available tags '{available}'. To inspect "
                       "available tag-sets in the SavedModel, please use the SavedModel CLI: "
                       "`saved_model_cli`.")


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef tagged `tags` from `export_dir` into `sess` (its graph, the
    variables' values, then the main op) and returns it, to read its signatures.

    Args:
      sess: the session to load into; the graph is imported into `sess.graph`.
      tags: the tag set of the MetaGraphDef to load, e.g. [tag_constants.SERVING].
      export_dir: the SavedModel directory.
      import_scope: a name scope prefixed to every loaded name (not to the returned proto).
      **saver_kwargs: passed to `tf.train.import_meta_graph`.

    Raises:
      RuntimeError: no MetaGraphDef has those tags.
      OSError: `export_dir` holds no SavedModel.
    """
    export_dir = os.fspath(export_dir)
    meta_graph_def = meta_graph_with_tags(parse_saved_model(export_dir), tags)
    with sess.graph.as_default():
        saver = import_meta_graph(meta_graph_def, import_scope=import_scope, **saver_kwargs)
        if saver is not None:
            saver.restore(sess, os.path.join(export_dir, constants.VARIABLES_DIRECTORY,
                                             constants.VARIABLES_FILENAME))
        elif sess.graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=import_scope):
            raise ValueError("No tf.train.Saver object was passed to the function "
                             "`SavedModelLoader.restore_variables`. Since there are variables "
                             "in the graph, a saver is required.")
        else:
            logging.info("The specified SavedModel has no variables; no checkpoints were "
                         "restored.")
        init_op = _init_op(sess.graph, meta_graph_def, import_scope)
        if init_op is not None:
            sess.run([init_op], feed_dict=asset_tensors(export_dir, meta_graph_def,
                                                        import_scope))
    return meta_graph_def


def _init_op(graph, meta_graph_def, import_scope):
    """The op to run after restoring: the init-op signature's, else the one of the main op
    collection, else of the legacy init op collection, else None.

    Raises:
      RuntimeError: a collection holds more than one op.
    """
    signature = meta_graph_def.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if signature is not None:
        name = signature.outputs[constants.INIT_OP_SIGNATURE_KEY].name
        return graph.as_graph_element(prepend_name_scope(name, import_scope))
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta_graph_def.collection_def:
            names = meta_graph_def.collection_def[key].node_list.value
            if len(names) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel init op. Found "
                                   f"{len(names)}: {names}.")
            return graph.as_graph_element(prepend_name_scope(names[0], import_scope))
    return None
