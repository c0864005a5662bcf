"""Shape inference over the runtime graph: the graph's shape functions, run on runtime nodes.

Shape functions and static-value rules (framework/shape_fns.py, framework/static_value.py) read
graph Tensors and Operations. `RTensor` and `ROp` present runtime nodes the same way, so a pass
can re-run a node's shape function over the runtime graph's current input shapes: a static value
is then whatever the *runtime* graph fixes (an `_Arg`, how a feed enters, has no static-value
rule, so a fed tensor's value is unknown here, as it is at run time).

A `Watch` notes what an inference looked at that the caller distrusts: the value of a fed
tensor (the producer of an `_Arg` output was inspected) or a tensor whose shape the caller
changed. A shape function that looked at neither computed what it computed when the graph was
built.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.shape_fns import ShapeContext


class Watch:
    """What one inference touched: fed values, or shapes a pass has changed."""

    __slots__ = ("changed", "touched", "failed")

    def __init__(self, changed: set[str]):
        self.changed = changed       # names of nodes whose output shapes were replaced
        self.touched = False
        self.failed = False          # the shape function raised


def infer_shapes(ed, node, watch: Watch | None = None) -> list | None:
    """The node's output shapes from its shape function over the current input shapes, or None
    when it has none or fails (a shape function that needs more than the runtime graph has)."""
    shape_fn = node.op_def.shape_fn if node.op_def is not None else None
    if shape_fn is None or not node.output_shapes:
        return None
    try:
        shapes = shape_fn(ShapeContext([RTensor(ed, src, watch) for src in node.inputs],
                                       node.attrs, node.op))
    except Exception:  # noqa: BLE001 - e.g. a rule reading Operation fields we do not model
        if watch is not None:
            watch.failed = True
        return None
    if isinstance(shapes, _ts.TensorShape):
        shapes = [shapes] * len(node.output_shapes)
    return list(shapes) if len(shapes) == len(node.output_shapes) else None


class RTensor:
    """A runtime-graph tensor as shape functions and static-value rules read a graph Tensor."""

    __slots__ = ("ed", "src", "watch")

    def __init__(self, ed, src, watch: Watch | None = None):
        self.ed, self.src, self.watch = ed, src, watch

    @property
    def op(self):
        producer = self.ed.producer(self.src)
        watch = self.watch
        if watch is not None and (producer.op == "_Arg" or producer.name in watch.changed):
            watch.touched = True    # a fed value (or a changed node's) is being looked at
        return ROp(self.ed, producer, watch)

    _op = op

    @property
    def value_index(self) -> int:
        return self.src[1]

    @property
    def shape(self):
        watch = self.watch
        if watch is not None and self.src[0] in watch.changed:
            watch.touched = True
        return self.ed.producer(self.src).output_shapes[self.src[1]]

    _shape = shape

    @property
    def dtype(self):
        return self.ed.producer(self.src).output_dtypes[self.src[1]]

    _dtype = dtype

    def get_shape(self):
        return self.shape


class ROp:
    """A runtime node as static-value rules read a graph Operation."""

    __slots__ = ("ed", "node", "watch")

    def __init__(self, ed, node, watch: Watch | None = None):
        self.ed, self.node, self.watch = ed, node, watch

    @property
    def type(self) -> str:
        return self.node.op

    @property
    def name(self) -> str:
        return self.node.name

    _name = name

    @property
    def _attrs(self) -> dict:
        return self.node.attrs

    def get_attr(self, name: str):
        return self.node.attrs[name]

    @property
    def inputs(self) -> list:
        return [RTensor(self.ed, src, self.watch) for src in self.node.inputs]

    _inputs = inputs

    @property
    def outputs(self) -> list:
        return [RTensor(self.ed, (self.node.name, k), self.watch)
                for k in range(len(self.node.output_dtypes))]

    _outputs = outputs
