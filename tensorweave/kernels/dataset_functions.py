"""Functions of tf.data transformations, compiled once and run per element or per batch.

A traced function arrives as a serialized GraphDef with the names of its argument placeholders
(element components, then captured tensors), of its outputs and of the stateful ops that run on
every call whether or not an output needs them (`targets`: data/function.py's automatic control
dependencies; a function without them has none). It is imported into a private
Graph, pruned to an RGraph and compiled into one Executor (the straight-line code of
runtime/executor), so a call is one generated-function call. A function built only from
elementwise ops over element components of one fully known shape and scalar constants/captures
is `vectorizable`: running it on a stacked batch equals stacking its per-element results.
"""
from __future__ import annotations

import base64

import numpy as np

from tensorweave.framework.graph import Graph
from tensorweave.framework.importer import import_graph_def
from tensorweave.protos import graph_pb2

# Ops whose output element i depends only on input element i (with NumPy broadcasting).
ELEMENTWISE = frozenset({
    "Identity", "Cast", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod",
    "Maximum", "Minimum", "Pow", "SquaredDifference", "Neg", "Abs", "Square", "Sqrt", "Rsqrt",
    "Exp", "Log", "Log1p", "Expm1", "Sigmoid", "Tanh", "Relu", "Relu6", "Elu", "Softplus",
    "Sign", "Floor", "Ceil", "Round", "Rint", "Reciprocal", "Sin", "Cos", "Tan", "Equal",
    "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
    "LogicalNot", "SelectV2", "IsNan", "IsInf", "IsFinite",
})
_FRAME = frozenset({"_Arg", "_Retval", "Const"})


class FunctionRunner:
    """One traced function compiled for one device."""

    def __init__(self, record: dict, device):
        from tensorweave.runtime import prune
        from tensorweave.runtime.executor.executor import Executor
        from tensorweave.runtime.step import StepState
        graph = Graph()
        graph_def = graph_pb2.GraphDef.FromString(base64.b64decode(record["graph"]))
        with graph.as_default():
            import_graph_def(graph_def, name="")
        feeds = [graph.get_tensor_by_name(n) for n in record["inputs"]]
        fetches = [graph.get_tensor_by_name(n) for n in record["outputs"]]
        targets = [graph.get_operation_by_name(n) for n in record.get("targets", ())]
        rgraph = prune.prune(feeds, fetches, targets)
        for node in rgraph:
            node.device = device.name
        # TF runs a tf.data function's kernels without intra-op sharding (kernels/multinomial.py).
        self._executor = Executor(rgraph, device, None, graph, None, "dataset_function",
                                  intra_op_threads=1)
        self._step = StepState()
        self._n_out = len(fetches)
        self._out_shapes = [tuple(t.shape.as_list()) if t.shape.is_fully_defined() else None
                            for t in fetches]
        self.vectorizable = _is_vectorizable(rgraph, feeds[:record["n_element"]],
                                             self._out_shapes)

    def __call__(self, args: list) -> list:
        rets = [None] * self._n_out
        self._executor.run(args, rets, self._step)
        return rets

    def run_batched(self, args: list, batch: int) -> tuple:
        """The stacked results of a vectorizable function over a batch of `batch` elements."""
        outs = self(args)
        return tuple(out if np.shape(out) == (batch,) + shape else
                     np.ascontiguousarray(np.broadcast_to(out, (batch,) + shape))
                     for out, shape in zip(outs, self._out_shapes))


def _is_vectorizable(rgraph, element_args, out_shapes) -> bool:
    shapes = {tuple(t.shape.as_list()) if t.shape.is_fully_defined() else None
              for t in element_args}
    if len(shapes) != 1 or None in shapes or None in out_shapes:
        return False
    for node in rgraph:
        if node.op not in _FRAME and (node.op not in ELEMENTWISE or node.op_def.is_stateful):
            return False
        if node.op == "Const" and np.ndim(node.attrs["value"]) != 0:
            return False
        if node.op == "_Arg" and node.attrs["index"] >= len(element_args) \
                and node.output_shapes[0].ndims != 0:
            return False  # a captured tensor must be a scalar to broadcast over the batch
    return True
