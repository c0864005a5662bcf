"""A SavedModel's assets: files named by constant path tensors, shipped in the model.

They are copied into `export_dir/assets/`, and the loader feeds each path tensor the copy's
path when it runs the main op."""
from __future__ import annotations

import filecmp
import os
import shutil

from google.protobuf import any_pb2

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.protos import meta_graph_pb2
from tensorweave.saved_model import constants

__all__ = ["asset_tensors", "export_assets"]


def export_assets(graph, asset_tensors, export_dir: str, copied: set) -> None:
    """Adds an AssetFileDef for each of `asset_tensors` to `graph`'s ASSETS_KEY collection
    and copies its file to `export_dir/assets/` under its base name (made unique when two
    different files share one); `copied` holds the destinations already written.

    Raises:
      TypeError: a tensor is not a scalar string constant.
      ValueError: a path is empty.
    """
    sources: dict[str, str] = {}
    for tensor in asset_tensors or ():
        source = _asset_path(tensor)
        if not source:
            raise ValueError(f"Asset filepath tensor {tensor} in is invalid.")
        filename = _unique_filename(source, sources)
        sources[filename] = source
        packed = any_pb2.Any()
        packed.Pack(meta_graph_pb2.AssetFileDef(
            tensor_info=meta_graph_pb2.TensorInfo(name=tensor.name), filename=filename))
        graph.add_to_collection(constants.ASSETS_KEY, packed)
    if not sources:
        return
    directory = os.path.join(export_dir, constants.ASSETS_DIRECTORY)
    os.makedirs(directory, exist_ok=True)
    for filename, source in sources.items():
        destination = os.path.join(directory, filename)
        if os.path.exists(source) and source != destination and destination not in copied:
            shutil.copyfile(source, destination)
            copied.add(destination)


def _asset_path(tensor) -> str:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Asset path tensor {tensor} must be a Tensor.")
    if tensor.op.type != "Const":
        raise TypeError(f"Asset path tensor {tensor} must be of type constant.Has type "
                        f"{tensor.op.type} instead.")
    if tensor.dtype != dtypes.string:
        raise TypeError(f"Asset path tensor {tensor}` must be of dtype string.Has type "
                        f"{tensor.dtype} instead.")
    values = tensor.op.get_attr("value").string_val
    if len(values) != 1:
        raise TypeError(f"Asset path tensor {tensor} must be a scalar.")
    return values[0].decode()


def _unique_filename(source: str, sources: dict) -> str:
    """The base name of `source`, suffixed _1, _2, ... if a different file already has it."""
    filename = os.path.basename(source)
    other = sources.get(filename)
    if other is None or other == source or (
            os.path.exists(source) and os.path.exists(other) and
            filecmp.cmp(source, other, shallow=False)):
        return filename
    index, unique = 1, filename
    while unique in sources:
        unique, index = f"{filename}_{index}", index + 1
    return unique


def asset_tensors(export_dir: str, meta_graph_def, import_scope=None) -> dict:
    """{asset tensor name: its file's path under export_dir/assets}, from the MetaGraphDef's
    asset_file_def or, as TF1 builders wrote them, its ASSETS_KEY collection."""
    protos = list(meta_graph_def.asset_file_def)
    if not protos and constants.ASSETS_KEY in meta_graph_def.collection_def:
        for packed in meta_graph_def.collection_def[constants.ASSETS_KEY].any_list.value:
            proto = meta_graph_pb2.AssetFileDef()
            packed.Unpack(proto)
            protos.append(proto)
    directory = os.path.join(export_dir, constants.ASSETS_DIRECTORY)
    return {(f"{import_scope}/{p.tensor_info.name}" if import_scope else p.tensor_info.name):
            os.path.join(directory, p.filename) for p in protos}
