"""TensorArray ops (TF's V3 family) and their gradients; the Python class is tensor_array.py.

Every op takes the array's resource handle and a float32 "flow" scalar and the mutating ones
return a new flow, so ordering between writes and reads is a data dependence that survives
pruning, partitioning and while loops. Gradients go through a gradient TensorArray created once
per (array, gradient source): a read's gradient writes into it, a write's gradient reads from it,
gather/scatter and concat/split mirror each other.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.op_def import Attr, TypeAttr, define_op

__all__: list[str] = []  # the public API is tf.TensorArray (ops/tensor_array.py)

_HANDLE = _ts.TensorShape([2])   # TF's legacy handle shape: [container, name]
_SCALAR = _ts.TensorShape([])


def _unknown_rank_attr(name):
    return Attr(name, "shape", _ts.unknown_shape())


def _element_shape_dims(shape):
    """`shape` with one leading dimension of unknown size (known rank only)."""
    return _ts.TensorShape([None]).concatenate(shape)


def _vector_of(ctx, i):
    """Checks that input i is a vector (ValueError like TF's shape inference otherwise)."""
    shape = ctx.input_shape(i)
    if shape.ndims is not None and shape.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {shape.ndims}")
    return shape


def _scalar_input(ctx, i):
    shape = ctx.input_shape(i)
    if shape.ndims is not None and shape.ndims != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {shape.ndims}")


def _create_shape(ctx):
    _scalar_input(ctx, 0)
    return [_HANDLE, _SCALAR]


def _gather_shape(ctx):
    n = _vector_of(ctx, 1)
    return _ts.TensorShape([n[0] if n.ndims else None]).concatenate(ctx.attrs["element_shape"])


def _concat_shape(ctx):
    return [_element_shape_dims(ctx.attrs["element_shape_except0"]), _ts.TensorShape([None])]


def _flow_shape(ctx):
    return _SCALAR


TensorArrayV3 = define_op(
    "TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float32"],
    attrs=[TypeAttr("dtype"), _unknown_rank_attr("element_shape"),
           Attr("dynamic_size", "bool", False), Attr("clear_after_read", "bool", True),
           Attr("identical_element_shapes", "bool", False),
           Attr("tensor_array_name", "string", "")],
    shape_fn=_create_shape, is_stateful=True, not_differentiable=True,
    doc="An array of tensors of `size` elements; outputs its handle and initial flow.")

TensorArrayGradV3 = define_op(
    "TensorArrayGradV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["grad_handle: resource", "flow_out: float32"], attrs=[Attr("source", "string")],
    shape_fn=lambda ctx: [_HANDLE, _SCALAR], is_stateful=True, not_differentiable=True,
    doc="The gradient TensorArray of a TensorArray for one gradient source.")

TensorArrayWriteV3 = define_op(
    "TensorArrayWriteV3", inputs=["handle: resource", "index: int32", "value: T",
                                  "flow_in: float32"],
    outputs=["flow_out: float32"], shape_fn=_flow_shape, is_stateful=True,
    doc="Writes `value` at `index`.")

TensorArrayReadV3 = define_op(
    "TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float32"],
    outputs=["value: dtype"], attrs=[TypeAttr("dtype")],
    shape_fn=lambda ctx: _ts.unknown_shape(), is_stateful=True,
    doc="Reads the element at `index`.")

TensorArrayGatherV3 = define_op(
    "TensorArrayGatherV3", inputs=["handle: resource", "indices: int32", "flow_in: float32"],
    outputs=["value: dtype"], attrs=[TypeAttr("dtype"), _unknown_rank_attr("element_shape")],
    shape_fn=_gather_shape, is_stateful=True,
    doc="Stacks the elements at `indices` into one tensor.")

TensorArrayScatterV3 = define_op(
    "TensorArrayScatterV3", inputs=["handle: resource", "indices: int32", "value: T",
                                    "flow_in: float32"],
    outputs=["flow_out: float32"], shape_fn=_flow_shape, is_stateful=True,
    doc="Writes `value[i]` at `indices[i]`.")

TensorArrayConcatV3 = define_op(
    "TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["value: dtype", "lengths: int64"],
    attrs=[TypeAttr("dtype"), _unknown_rank_attr("element_shape_except0")],
    shape_fn=_concat_shape, is_stateful=True,
    doc="Concatenates all elements along their first dimension; also outputs their lengths.")

TensorArraySplitV3 = define_op(
    "TensorArraySplitV3", inputs=["handle: resource", "value: T", "lengths: int64",
                                  "flow_in: float32"],
    outputs=["flow_out: float32"], shape_fn=_flow_shape, is_stateful=True,
    doc="Splits `value` along its first dimension into pieces of `lengths` rows.")

TensorArraySizeV3 = define_op(
    "TensorArraySizeV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["size: int32"], shape_fn=lambda ctx: _SCALAR, is_stateful=True,
    not_differentiable=True, doc="The current number of elements.")

TensorArrayCloseV3 = define_op(
    "TensorArrayCloseV3", inputs=["handle: resource"], shape_fn=lambda ctx: [],
    is_stateful=True, not_differentiable=True, doc="Frees the array's elements.")


# --- gradients -----------------------------------------------------------------------------

def _grad_source(tensor) -> str:
    """The gradients scope `tensor` was made in ('gradients', 'outer/gradients_1'): one gradient
    TensorArray per tf.gradients call. A gradient fed from outside (grad_ys) names no such
    scope; then the scope being built, which does, decides."""
    for name in (tensor.name, tensor.graph.get_name_scope()):
        parts = name.split("/")
        for i, part in enumerate(parts):
            if part.startswith("gradients"):
                return "/".join(parts[:i + 1])
    raise ValueError(f"Expected op/tensor name to start with gradients (excluding scope), got: "
                     f"{tensor.name}")


def _grad_array(op, dtype_attr, source_tensor, flow):
    """The gradient TensorArray of `op`'s array, created after `flow` is available."""
    from tensorweave.ops.tensor_array import TensorArray
    ta = TensorArray(op.get_attr(dtype_attr), handle=op.inputs[0], flow=flow,
                     colocate_with_first_write_call=False)
    return ta.grad(source=_grad_source(source_tensor), flow=flow)


def _after_forward_write(op, flow):
    """`flow` made to wait for the forward write, so the gradient array is created once the
    forward array has its final size."""
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_ops import identity
    flow_out = identity(op.outputs[0], name="flow_out")
    with control_dependencies([flow_out]):
        return identity(flow, name="write_barrier")


@TensorArrayReadV3.gradient
def _read_grad(op, grad):
    """d read(i) -> write grad into element i of the gradient array (writes there add up)."""
    g = _grad_array(op, "dtype", grad, op.inputs[2])
    return [None, None, g.write(op.inputs[1], grad).flow]


@TensorArrayWriteV3.gradient
def _write_grad(op, flow):
    """d write(i, v) -> v's gradient is element i of the gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, "T", flow, flow)
    return [None, None, g.read(op.inputs[1]), flow]


@TensorArrayGatherV3.gradient
def _gather_grad(op, grad):
    """d gather(idx) -> scatter the gradient to idx in the gradient array."""
    g = _grad_array(op, "dtype", grad, op.inputs[2])
    return [None, None, g.scatter(op.inputs[1], grad).flow]


@TensorArrayScatterV3.gradient
def _scatter_grad(op, flow):
    """d scatter(idx, v) -> gather idx from the gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, "T", flow, flow)
    return [None, None, g.gather(op.inputs[1]), flow]


@TensorArrayConcatV3.gradient
def _concat_grad(op, grad, unused_lengths_grad):
    """d concat -> split the gradient by the forward lengths into the gradient array."""
    g = _grad_array(op, "dtype", grad, op.inputs[1])
    return [None, g.split(grad, lengths=op.outputs[1]).flow]


@TensorArraySplitV3.gradient
def _split_grad(op, flow):
    """d split(v) -> v's gradient is the concatenated gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, "T", flow, flow)
    return [None, g.concat(), None, flow]

