"""Tracing the functions of map, filter, flat_map and interleave into their own Graph.

`trace` calls the user's function once on placeholders shaped like one element, inside a
`FuncGraph`. A tensor of an enclosing graph used there is captured: it becomes a placeholder of
the function graph and an extra input of the dataset op, evaluated when the iterator is
initialized. The traced graph travels as a serialized GraphDef inside the pipeline description.
"""
from __future__ import annotations

import base64

from tensorweave.data import nest
from tensorweave.framework.graph import Graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.constant_op import placeholder

_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})


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
        _check_capturable(tensor, self.name)
        with self.as_default():
            inner = placeholder(source.dtype.base_dtype, source.shape, name="captured")
        self.captures[source] = self.captures[tensor] = inner
        self._capture_order.append(source)
        return inner

    def captured_tensors(self) -> list:
        """The outer tensors captured, in the order of their placeholders."""
        return list(self._capture_order)


def _check_capturable(tensor: Tensor, fn_name: str) -> None:
    op = tensor.op
    reads_variable = op.type in _VARIABLE_OPS or (
        op.type == "Identity" and op.inputs[0].op.type in _VARIABLE_OPS)
    if reads_variable or tensor.dtype._is_ref_dtype:
        raise ValueError(
            f"The function of {fn_name} uses the variable {tensor.name}: tensorweave's tf.data "
            "functions cannot read variables (the value would be frozen when the iterator is "
            "initialized). Read the variable outside the dataset instead.")


class TracedFunction:
    """A traced function: its graph, argument placeholders, results and captured tensors."""

    def __init__(self, graph: FuncGraph, args: list, result):
        self.graph = graph
        self.args = args
        self.result = result

    @property
    def captured(self) -> list:
        """The outer tensors captured so far: building a dataset the function returns (for
        flat_map, interleave, group_by_window) may capture more after tracing."""
        return self.graph.captured_tensors()

    def record(self, outputs: list) -> dict:
        """The JSON-able description the DatasetPipeline kernel compiles."""
        placeholders = [self.graph.captures[t] for t in self.captured]
        graph_def = self.graph.as_graph_def().SerializeToString()
        return {"graph": base64.b64encode(graph_def).decode("ascii"),
                "inputs": [t.name for t in self.args + placeholders],
                "outputs": [t.name for t in outputs], "n_element": len(self.args)}


def trace(fn, structure, outer: Graph, name: str) -> TracedFunction:
    """Calls `fn` on placeholders matching `structure` (nested TensorSpecs) in a FuncGraph.

    A tuple element is passed as separate arguments, anything else as one, as tf.data does.
    A component that is a dataset (a DatasetSpec: a window) arrives stacked in one placeholder
    and is passed to `fn` as the dataset of its slices; a SparseTensor component arrives as
    its three tensors and is passed as a SparseTensor. A list the function returns is taken as
    a tuple (its items may differ in dtype and shape), as tf.data does at the top level only:
    a list inside the result stays one tensor.
    """
    graph = FuncGraph(outer, name)
    with graph.as_default():
        flat, values = [], []
        for s in nest.flatten(structure):
            if hasattr(s, "component_specs"):   # a SparseTensorSpec: its three tensors
                parts = [placeholder(c.dtype, c.shape, name=f"arg{len(flat) + k}")
                         for k, c in enumerate(s.component_specs())]
                flat.extend(parts)
                values.append(s.from_components(parts))
                continue
            stacked = hasattr(s, "from_stacked")   # a DatasetSpec (dataset_ops imports us)
            arg = s.placeholder_spec() if stacked else s
            flat.append(placeholder(arg.dtype, arg.shape, name=f"arg{len(flat)}"))
            values.append(s.from_stacked(flat[-1]) if stacked else flat[-1])
        element = nest.pack(structure, values)
        if isinstance(element, tuple) and not hasattr(element, "_fields"):
            result = fn(*element)
        else:
            result = fn(element)
        if isinstance(result, list):
            result = tuple(result)
        result = _to_tensors(graph, result)
    return TracedFunction(graph, flat, result)


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
