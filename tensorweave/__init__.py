"""tensorweave: TensorFlow 1.x's graph-mode API on a readable Python runtime.

`import tensorweave as tf` gives the tf.compat.v1 namespace. This module only re-exports: each
op family module lists its public names in `__all__`.
"""
from tensorweave import kernels as _kernels  # registers every kernel
from tensorweave import errors
from tensorweave.framework.dtypes import *
from tensorweave.framework.dtypes import DType, as_dtype
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.graph import (
    Graph,
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection,
    get_collection_ref,
    container,
    get_default_graph,
    reset_default_graph,
)
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.symbolic import is_symbolic_tensor
from tensorweave.framework.scopes import (
    colocate_with,
    control_dependencies,
    device,
    name_scope,
    op_scope,
)
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import (
    Dimension,
    TensorShape,
    dimension_at_index,
    dimension_value,
)
from tensorweave.protos.config_pb2 import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from tensorweave.runtime.session import InteractiveSession, Session, get_default_session
from tensorweave.framework.graph_io import write_graph as _write_graph
from tensorweave.framework.importer import import_graph_def
from tensorweave.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorweave.protos.graph_pb2 import GraphDef
from tensorweave.protos.node_def_pb2 import NodeDef
from tensorweave.protos.attr_value_pb2 import AttrValue, NameAttrList
from tensorweave.protos.tensor_pb2 import TensorProto
from tensorweave.protos.summary_pb2 import Summary, SummaryMetadata, HistogramProto
from tensorweave.protos.event_pb2 import Event, LogMessage, SessionLog
from tensorweave.protos.meta_graph_pb2 import MetaGraphDef, TensorInfo
from tensorweave.framework.graph_io import (
    MIN_CONSUMER_VERSION as GRAPH_DEF_VERSION_MIN_CONSUMER,
    MIN_PRODUCER_VERSION as GRAPH_DEF_VERSION_MIN_PRODUCER,
    PRODUCER_VERSION as GRAPH_DEF_VERSION,
)
from tensorweave.framework.sparse_tensor import convert_to_tensor_or_sparse_tensor
from tensorweave import nest
from tensorweave.compat.v2_behavior import *
from tensorweave.platform import app, flags
from tensorweave.platform import gfile
from tensorweave.platform import tf_logging as logging
from tensorweave.platform.tf_logging import get_logger
from tensorweave import compat, image, initializers, layers, losses, nn, raw_ops, test, train
from tensorweave import graph_util
from tensorweave import io, lookup, metrics, python_io, queue, sparse, summary
from tensorweave import data
from tensorweave.data.dataset_ops import SparseTensorSpec, TensorSpec
from tensorweave import feature_column, saved_model, strings
from tensorweave.autodiff.custom_gradient import *
from tensorweave.autodiff.gradients import *
from tensorweave.autodiff.registry import (
    NoGradient,
    NotDifferentiable,
    RegisterGradient,
    no_gradient,
)
from tensorweave.framework.errors import OpError
from tensorweave.framework.indexed_slices import (
    IndexedSlices,
    convert_to_tensor_or_indexed_slices,
)

# --- op families (one star-import line per module; keep this block sorted) -----------------
from tensorweave.ops.accumulator_ops import *
from tensorweave.ops.array_creation_ops import *
from tensorweave.ops.array_index_ops import *
from tensorweave.ops.array_join_ops import *
from tensorweave.ops.array_matrix_ops import *
from tensorweave.ops.array_ops import *
from tensorweave.ops.array_rearrange_ops import *
from tensorweave.ops.array_slicing_ops import *
from tensorweave.ops.array_space_ops import *
from tensorweave.ops.audio_ops import *
from tensorweave.ops.space_to_batch_paddings import *
from tensorweave.ops.session_ops import *
from tensorweave.module import Module
from tensorweave.ops.check_extra_ops import *
from tensorweave.ops.check_ops import *
from tensorweave.ops.clip_ops import *
from tensorweave.ops.complex_ops import *
from tensorweave.ops.confusion_matrix_ops import *
from tensorweave.ops.constant_op import *
from tensorweave.ops.control_flow_ops import *
from tensorweave.ops.cond import *
from tensorweave.ops.while_loop import *
from tensorweave.ops.functional_ops import *
from tensorweave.ops.guarantee_const_ops import *
from tensorweave.ops.control_flow_primitives import *
from tensorweave.ops.counting_ops import *
from tensorweave.ops.decode_ops import *
from tensorweave.ops.data_flow_ops import *
from tensorweave.ops.edit_distance_ops import *
from tensorweave.ops.fake_quant_ops import *
from tensorweave.ops.file_io_ops import *
from tensorweave.ops.fft_ops import *
from tensorweave.ops.fingerprint_ops import *
from tensorweave.ops.image_ops import *
from tensorweave.ops.image_patches_ops import *
from tensorweave.ops.init_ops import *
from tensorweave.ops.linalg_decomp_ops import *
from tensorweave.ops.linalg_funcs_ops import *
from tensorweave.ops.linalg_ops import *
from tensorweave.ops.linalg_qr_svd_ops import *
from tensorweave.ops.linalg_solve_ops import *
from tensorweave.ops.logging_ops import *
from tensorweave.ops.lookup_ops import *
from tensorweave.ops.math_extra_ops import *
from tensorweave.ops.math_ops import *
from tensorweave.ops.math_segment_ops import *
from tensorweave.ops.math_special_ops import *
from tensorweave.ops.math_unary_ops import *
from tensorweave.ops.misc_array_ops import *
from tensorweave.ops.norm_ops import *
from tensorweave.ops.parsing_ops import *
from tensorweave.ops.partition_ops import *
from tensorweave.ops.partitioned_variables import *
from tensorweave.ops.py_function_ops import *
from tensorweave.ops.random_gamma_ops import *
from tensorweave.ops.random_ops import *
from tensorweave.ops.reader_ops import *
from tensorweave.ops.reader_text_ops import *
from tensorweave.ops.reduction_ops import *
from tensorweave.ops.scatter_ops import *
from tensorweave.ops.script_ops import *
from tensorweave.ops.slice_assign_ops import *
from tensorweave.ops.sequence_parsing_ops import *
from tensorweave.ops.sort_ops import *
from tensorweave.ops.stack_ops import *
from tensorweave.ops.sparse_math_ops import *
from tensorweave.ops.sparse_ops import *
from tensorweave.ops.sparse_reduce_ops import *
from tensorweave.ops.sparse_reshape_ops import *
from tensorweave.ops.sparse_segment_ops import *
from tensorweave.ops.sparse_serialize_ops import *
from tensorweave.ops.sparse_slice_ops import *
from tensorweave.ops.state_ops import *
from tensorweave.ops.string_hash_ops import *
from tensorweave.ops.string_ops import *
from tensorweave.ops.string_regex_ops import *
from tensorweave.ops.string_split_ops import *
from tensorweave.ops.tensor_array import *
from tensorweave.ops.tensor_scatter_ops import *
from tensorweave.ops.template import *
from tensorweave.ops.unravel_index_ops import *
from tensorweave.ops.variable_creators import *
from tensorweave.ops.variable_scope import *
from tensorweave.ops.variables import *
# --- end of op families ------------------------------------------------------------------
# TF's tf.math, tf.linalg, ... namespaces; imported after the op families they re-export.
from tensorweave import audio, bitwise, debugging, dtypes, linalg, manip, math, quantization
from tensorweave import random
from tensorweave import distributions, sets, signal
from tensorweave.signal import spectral
from tensorweave.version import GIT_VERSION, VERSION, __version__
