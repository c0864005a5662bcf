"""SavedModelBuilder and simple_save: a session's graphs and variables as a SavedModel.

The directory is what TensorFlow's builder writes: saved_model.pb (graphs, signatures, assets
and main op) and the variables in TensorFlow's checkpoint format (train/tf_bundle_writer.py),
so TensorFlow and TensorFlow Serving load it, values included.

The first MetaGraphDef comes with the variables (`add_meta_graph_and_variables`, which writes
one checkpoint under variables/); later ones (`add_meta_graph`, e.g. a training graph beside
the serving one) share it. `save` writes saved_model.pb through a temporary file and a rename,
so a crash never leaves a half-written model.
"""
from __future__ import annotations

import os

from google.protobuf import text_format

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Operation
from tensorweave.platform import tf_logging as logging
from tensorweave.platform.atomic_file import write_atomically
from tensorweave.protos import saved_model_pb2, saver_pb2, types_pb2
from tensorweave.saved_model import constants, signature_constants, tag_constants
from tensorweave.saved_model.assets import export_assets
from tensorweave.saved_model.signature_def_utils import predict_signature_def
from tensorweave.train.tf_bundle_writer import rewrite_as_tensorflow

__all__ = ["SavedModelBuilder", "simple_save"]

_RESERVED_KEYS = (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY)


class SavedModelBuilder:
    """Builds a SavedModel in `export_dir`, which must not exist or be empty.

    Raises:
      AssertionError: `export_dir` exists and is not empty.
    """

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    f"Export directory {self._export_dir} already exists, and isn't empty. "
                    "Please choose a different export directory, or delete all the contents "
                    "of the specified directory.")
        else:
            os.makedirs(self._export_dir)
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._copied_assets: set = set()

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None) -> None:
        """Saves the session's variables and adds its graph's MetaGraphDef under `tags`.

        Args:
          sess: the session whose variable values are saved.
          tags: the tags that identify this MetaGraphDef, e.g. [tag_constants.SERVING].
          signature_def_map: {key: SignatureDef} (build them with signature_def_utils).
          assets_collection: constant string tensors naming files to ship with the model.
          legacy_init_op, main_op: an op the loader runs after restoring (the same thing;
            legacy_init_op is the older name).
          clear_devices: drop the nodes' device placements.
          strip_default_attrs: drop attrs that have their default values.
          saver: the Saver to save and restore with; by default a sharded one of every
            saveable object.

        Raises:
          AssertionError: the variables were already saved, or a TensorInfo is incomplete.
          KeyError: a signature uses a key the builder reserves.
        """
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        signature_def_map = _checked_signatures(signature_def_map)
        self._add_collections(sess.graph, assets_collection, _either(main_op, legacy_init_op))
        variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
        os.makedirs(variables_dir, exist_ok=True)
        saver = saver or _sharded_saver()
        with sess.graph.as_default():
            prefix = saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME),
                                write_meta_graph=False, write_state=False)
            meta_graph_def = saver.export_meta_graph(
                clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
        if prefix is not None:   # None: nothing to save
            rewrite_as_tensorflow(prefix)
        self._add(meta_graph_def, tags, signature_def_map)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None) -> None:
        """Adds the default graph's MetaGraphDef under `tags`, restoring from the variables
        saved with the first one; arguments as for `add_meta_graph_and_variables`.

        Raises:
          AssertionError: no variables were saved yet.
        """
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        signature_def_map = _checked_signatures(signature_def_map)
        graph = get_default_graph()
        self._add_collections(graph, assets_collection, _either(main_op, legacy_init_op))
        saver = saver or _sharded_saver()
        meta_graph_def = saver.export_meta_graph(clear_devices=clear_devices,
                                                 strip_default_attrs=strip_default_attrs)
        self._add(meta_graph_def, tags, signature_def_map)

    def save(self, as_text=False) -> bytes:
        """Writes saved_model.pb (or, `as_text`, saved_model.pbtxt, for debugging only);
        returns its path."""
        os.makedirs(self._export_dir, exist_ok=True)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        write_atomically(path, data)
        logging.info("SavedModel written to: %s", path)
        return path.encode()

    def _add_collections(self, graph, assets_collection, main_op) -> None:
        export_assets(graph, assets_collection, self._export_dir, self._copied_assets)
        if main_op is None:
            return
        if not isinstance(main_op, Operation):
            raise TypeError(f"Expected {main_op} to be an Operation but got type "
                            f"{type(main_op)} instead.")
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if graph.get_collection(key):
                raise ValueError("Graph already contains one or more main ops under the "
                                 f"collection {key}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)

    def _add(self, meta_graph_def, tags, signature_def_map) -> None:
        meta_graph_def.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            meta_graph_def.signature_def[key].CopyFrom(signature)
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)


Builder = SavedModelBuilder


def _either(main_op, legacy_init_op):
    """main_op, else legacy_init_op (compared with None: a Tensor has no truth value)."""
    return main_op if main_op is not None else legacy_init_op


def _sharded_saver():
    from tensorweave.train.saver import Saver
    return Saver(sharded=True, write_version=saver_pb2.SaverDef.V2, allow_empty=True)


def _checked_signatures(signature_def_map) -> dict:
    """The map, every TensorInfo checked for an encoding and a dtype, no reserved key.

    Raises:
      AssertionError: an incomplete TensorInfo.
      KeyError: a reserved key.
    """
    signature_def_map = dict(signature_def_map or {})
    for signature in signature_def_map.values():
        for info in list(signature.inputs.values()) + list(signature.outputs.values()):
            _check_tensor_info(info)
    for key in _RESERVED_KEYS:
        if key in signature_def_map:
            what = "initialization" if key == constants.INIT_OP_SIGNATURE_KEY else \
                "the train op"
            raise KeyError(f'SignatureDef map key "{key}" is reserved for {what}. Please use '
                           "a different key.")
    return signature_def_map


def _check_tensor_info(info) -> None:
    if info.WhichOneof("encoding") is None:
        raise AssertionError(f"Invalid `tensor_info`: {info}. All TensorInfo protos used in "
                             "the SignatureDefs must have one of the 'encoding' fields (e.g., "
                             "name or coo_sparse) set.")
    if info.dtype == types_pb2.DT_INVALID:
        raise AssertionError(f"Invalid `tensor_info`: {info}. All TensorInfo protos used in "
                             "the SignatureDefs must have the dtype field set.")


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """Saves `session`'s model for serving in one call: a SavedModel tagged "serve" whose
    default signature predicts `outputs` (dict of name to tensor) from `inputs`, with the
    graph's ASSET_FILEPATHS assets and device placements cleared.

    Raises:
      AssertionError: `export_dir` exists and is not empty.
    """
    signatures = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                  predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING], signature_def_map=signatures,
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()
