"""Tracing the functions of map, filter, flat_map and interleave into their own Graph.

`trace` calls the user's function once on placeholders shaped like one element, inside a
`FuncGraph`. A tensor of an enclosing graph used there is captured: it becomes a placeholder of
the function graph and an extra input of the dataset op, evaluated when the iterator is
initialized. The traced graph travels as a serialized GraphDef inside the pipeline description.

As in TensorFlow 2.21, whose tf.data traces with tf.function, the traced function gets automatic
control dependencies (`_add_control_dependencies`): every stateful op it creates runs on each
call whether or not its result is used (tf.Assert, tf.print, an update), those that touch no
resource in creation order, those that touch one in program order for that resource. The ops
that must run are the function's `targets`. A function without them is traced as before.

A variable read inside the function is read when the function runs: a resource variable's
handle is captured and its ReadVariableOp is in the function. A reference variable's read is
captured (so initializing the iterator fails if the variable is not) and shares the variable's
storage: in-place updates (assign_add) show, but tensorweave's Assign stores a new array, where
TensorFlow's overwrites the buffer it shares. Creating a variable inside the function is
refused, as tf.function does.
"""
from __future__ import annotations

import base64

from tensorweave.data import nest
from tensorweave.framework import dtypes
from tensorweave.framework.graph import Graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.constant_op import placeholder
from tensorweave.ops.control_flow_context import WhileContext

_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})

# Stateful ops that TensorFlow's automatic control dependencies do not make run
# (auto_control_deps.py): legacy random ops, which each draw from their own generator,
# asynchronous collectives and a few order-insensitive ops.
_RUN_ONLY_IF_USED = frozenset({
    "RandomUniform", "RandomUniformInt", "RandomStandardNormal", "ParameterizedTruncatedNormal",
    "TruncatedNormal", "RandomShuffle", "Multinomial", "RandomGamma", "RandomGammaGrad",
    "RandomPoisson", "RandomPoissonV2", "Recv", "CudnnRNN", "CudnnRNNV2", "CudnnRNNV3",
    "RestoreV2", "SaveV2", "CollectiveGather", "CollectiveReduce", "NcclAllReduce",
})
# Stateful here but not in TensorFlow's OpDefs (so never made to run there). Ops taking a
# reference argument are not stateful there either; refs cannot enter a function anyway.
_STATELESS_IN_TF = frozenset({"Placeholder", "PlaceholderV2", "MatchingFiles",
                              "FractionalAvgPool", "FractionalMaxPool"})
# Ops that only read the resources they take: they run only if their value is used.
_RESOURCE_READS = frozenset({"ReadVariableOp", "VariableShape", "ResourceGather",
                             "ResourceGatherNd", "_ReadVariablesOp"})


class FuncGraph(Graph):
    """A graph being traced for a dataset function; captures tensors of outer graphs."""

    def __init__(self, outer: Graph, name: str):
        super().__init__()
        self.outer = outer
        self.name = name
        self.seed = outer.seed
        self._building_function = True
        self.captures: dict[Tensor, Tensor] = {}   # outer tensor -> placeholder here
        self._capture_order: list[Tensor] = []
        self._sources: dict = {}   # placeholder op -> the outer tensor it stands for

    def _add_op(self, op) -> None:
        if op.type in _VARIABLE_OPS:   # tf.function's refusal (TF 2.21 words)
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. "
                "Make sure the tf.Variable is only created once or created outside "
                "tf.function. See https://www.tensorflow.org/guide/function#creating_tfvariables "
                "for more information.")
        super()._add_op(op)

    def capture(self, tensor: Tensor) -> Tensor:
        """The placeholder standing for `tensor` of an enclosing graph (created once)."""
        inner = self.captures.get(tensor)
        if inner is not None:
            return inner
        if tensor.graph is not self.outer:
            if not isinstance(self.outer, FuncGraph):
                raise ValueError(f"Tensor {tensor.name} must be from the same graph as the "
                                 f"function of {self.name}.")
            source = self.outer.capture(tensor)
        else:
            source = tensor
        with self.as_default():
            inner = placeholder(source.dtype.base_dtype, source.shape, name="captured")
        self.captures[source] = self.captures[tensor] = inner
        self._sources[inner.op] = source
        self._capture_order.append(source)
        return inner

    def captured_source(self, placeholder_op):
        """The outer tensor the placeholder `placeholder_op` stands for, or None."""
        return self._sources.get(placeholder_op)

    def captured_tensors(self) -> list:
        """The outer tensors captured, in the order of their placeholders."""
        return list(self._capture_order)


class TracedFunction:
    """A traced function: its graph, argument placeholders, results and captured tensors."""

    def __init__(self, graph: FuncGraph, args: list, result, targets: list):
        self.graph = graph
        self.args = args
        self.result = result
        self.targets = targets   # the stateful ops that run on every call

    @property
    def captured(self) -> list:
        """The outer tensors captured so far: building a dataset the function returns (for
        flat_map, interleave, group_by_window) may capture more after tracing."""
        return self.graph.captured_tensors()

    def record(self, outputs: list) -> dict:
        """The JSON-able description the DatasetPipeline kernel compiles."""
        placeholders = [self.graph.captures[t] for t in self.captured]
        graph_def = self.graph.as_graph_def().SerializeToString()
        record = {"graph": base64.b64encode(graph_def).decode("ascii"),
                  "inputs": [t.name for t in self.args + placeholders],
                  "outputs": [t.name for t in outputs], "n_element": len(self.args)}
        if self.targets:
            record["targets"] = [op.name for op in self.targets]
        return record


def trace(fn, structure, outer: Graph, name: str) -> TracedFunction:
    """Calls `fn` on placeholders matching `structure` (nested TensorSpecs) in a FuncGraph.

    A tuple element is passed as separate arguments, anything else as one, as tf.data does.
    A component of a composite spec (`component_specs()`) arrives as its tensors and is passed
    as what its `from_components` makes: a SparseTensor's three tensors as a SparseTensor, a
    window (a DatasetSpec) stacked as the dataset of its elements. A list the function returns
    is taken as a tuple (its items may differ in dtype and shape), as tf.data does at the top
    level only: a list inside the result stays one tensor.
    """
    graph = FuncGraph(outer, name)
    with graph.as_default():
        flat, values = [], []
        for s in nest.flatten(structure):
            if hasattr(s, "component_specs"):   # a SparseTensorSpec or a DatasetSpec
                parts = [placeholder(c.dtype, c.shape, name=f"arg{len(flat) + k}")
                         for k, c in enumerate(s.component_specs())]
                flat.extend(parts)
                values.append(s.from_components(parts))
                continue
            flat.append(placeholder(s.dtype, s.shape, name=f"arg{len(flat)}"))
            values.append(flat[-1])
        element = nest.pack(structure, values)
        if isinstance(element, tuple) and not hasattr(element, "_fields"):
            result = fn(*element)
        else:
            result = fn(element)
        if isinstance(result, list):
            result = tuple(result)
        result = _to_tensors(graph, result)
    return TracedFunction(graph, flat, result, _add_control_dependencies(graph))


def is_stateful_in_tf(op) -> bool:
    """Whether TensorFlow's OpDef of `op` is stateful (tensorweave marks a few more so)."""
    op_def = op.op_def
    return op_def.is_stateful and op.type not in _STATELESS_IN_TF and \
        not any(a.is_ref for a in op_def.inputs)


def _is_stateful(op) -> bool:
    """TensorFlow's `op_is_stateful` of automatic control dependencies."""
    return is_stateful_in_tf(op) and op.type not in _RUN_ONLY_IF_USED


def _in_while_loop(op) -> bool:
    ctx = op._control_flow_context
    while ctx is not None:
        if isinstance(ctx, WhileContext):
            return True
        ctx = ctx.outer
    return False


def _add_control_dependencies(graph: FuncGraph) -> list:
    """Adds TensorFlow's automatic control dependencies to the ops of a traced function and
    returns the ops that must run on every call, in creation order (auto_control_deps.py).

    A stateful op touching no resource waits for the previous one; an op touching a resource
    waits for the last op that wrote it, and a write also for the reads since then. A v1 cond's
    Merge waits for the ops that must run so far and stands for them. Ops inside a while loop
    are left alone (TensorFlow's while_v2 would run their effects; tensorweave's loops are
    v1).
    """
    must_run: list = []
    last_write: dict = {}     # resource tensor, or None for resource-less ops -> op
    reads: dict = {}          # resource tensor -> its reads since the last write
    for op in graph.get_operations():
        if _in_while_loop(op):
            continue
        stateful = _is_stateful(op)
        if stateful and (op.type not in _RESOURCE_READS or
                         any(t.consumers() for t in op.outputs)):
            must_run.append(op)
        if op.type == "Merge":
            op._add_control_inputs([o for o in must_run if o is not op])
            must_run = [op]
            continue
        control, resources = [], []
        for t in op.inputs:
            if t.dtype.base_dtype != dtypes.resource or any(t is r for r in resources):
                continue
            resources.append(t)
            if t in last_write:
                control.append(last_write[t])
            if op.type in _RESOURCE_READS:
                reads.setdefault(t, []).append(op)
            else:
                control.extend(reads.pop(t, ()))
                last_write[t] = op
        if stateful and not resources and op._control_flow_context is None:
            if None in last_write:
                control.append(last_write[None])
            last_write[None] = op
        op._add_control_inputs([c for c in control if c is not op])
    return must_run


def _to_tensors(graph: FuncGraph, result):
    """Leaves of a function's result as Tensors of `graph` (values and lists are converted)
    or SparseTensors of its tensors; datasets stay datasets, for the callers to accept or
    refuse."""
    def own(tensor):
        return graph.capture(tensor) if tensor.graph is not graph else tensor

    def convert(leaf):
        if hasattr(leaf, "_dataset_spec"):
            return leaf
        if isinstance(leaf, SparseTensorValue):
            leaf = SparseTensor.from_value(leaf)
        if isinstance(leaf, SparseTensor):
            sparse = SparseTensor(*(own(t) for t in (leaf.indices, leaf.values,
                                                     leaf.dense_shape)))
            sparse.set_shape(leaf.shape)
            return sparse
        return own(convert_to_tensor(leaf))
    return nest.map_structure(convert, result)
