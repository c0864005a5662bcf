"""TensorInfo protos: how a SignatureDef names a graph's tensor (tf.saved_model.utils)."""
from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.graph_io import shape_to_proto
from tensorweave.framework.meta_graph import prepend_name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.protos import meta_graph_pb2

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor):
    """The TensorInfo of `tensor` (its name, dtype and static shape), or of a SparseTensor
    (its three component tensors' names, the `coo_sparse` encoding)."""
    info = meta_graph_pb2.TensorInfo(dtype=tensor.dtype.as_datatype_enum,
                                     tensor_shape=shape_to_proto(tensor.get_shape()))
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
    else:
        info.name = tensor.name
    return info


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) of `graph` (default: the default graph) that
    `tensor_info` names, its names under `import_scope` when the graph was loaded in one.

    Raises:
      KeyError: the graph has no such tensor.
      ValueError: `tensor_info` has no encoding.
    """
    graph = graph or get_default_graph()

    def tensor(name):
        return graph.get_tensor_by_name(prepend_name_scope(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return SparseTensor(tensor(sparse.indices_tensor_name),
                            tensor(sparse.values_tensor_name),
                            tensor(sparse.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}. Expected `coo_sparse`, "
                     "`composite_tensor`, or `name` for a dense tensor.")
