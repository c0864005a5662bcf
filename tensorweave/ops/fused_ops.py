"""Fused ops: internal op types only the graph optimizer creates (runtime/passes/).

They never appear in a user's Graph: the remapping passes put them into the runtime graph after
autodiff has built every gradient, so they have no gradients and no public wrappers. Their
kernels (kernels/fused.py) compute exactly what the ops they replace compute, in fewer passes
over memory and without the intermediate arrays.

* `_FusedMatMul(a, b, args)`: MatMul, then `fused_ops` in order, e.g. ["BiasAdd", "Relu"]
  (TensorFlow's op and attrs).
* `_FusedConv2D(input, filter, args)`: Conv2D (NHWC), then ["BiasAdd"(, activation)] with
  args = [bias], or ["FusedBatchNorm"(, activation)] with args = [scale, offset, mean,
  variance] (inference batch norm folded into the filter and a bias).
* `_FusedElementwise(inputs)`: a chain of elementwise ops evaluated into one buffer. Step i
  applies `ops[i]` to the running value and, when `operands[i] >= 0`, to input
  `operands[i]` (as the first argument when `value_first[i]`, else the second); the running
  value starts as input 0.
* `_FusedMatMulApplyGradientDescent(var, alpha, a, b)`: ApplyGradientDescent whose delta is
  MatMul(a, b): one GEMM that accumulates `-alpha * a @ b` into the variable.
  `_FusedMatMulResourceApplyGradientDescent` is the same for ResourceApplyGradientDescent (a
  resource variable's handle, no output), as is `_FusedAddNResourceApplyGradientDescent` below.
* `_FusedMatMulApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
  a, b)`: ApplyAdam whose grad is MatMul(a, b), made and applied a block of rows at a time
  (no whole gradient array); `_FusedMatMulResourceApplyAdam` takes the three handles.
* `_FusedMaxPoolGradReluGrad(orig_input, orig_output, grad)`: ReluGrad(MaxPoolGrad(...),
  orig_input), the backward pass of relu -> max_pool: each window's gradient goes to its first
  maximum when that maximum is positive.
* `_FusedReluGradBiasAddGrad(gradients, features)`: ReluGrad and the sum of its result over
  every axis but the last (the bias gradient: Sum or BiasAddGrad of it) in one pass; outputs
  (backprops, bias_grad).
* `_FusedAddNApplyGradientDescent(var, alpha, factor, grads)`: ApplyGradientDescent whose delta
  is AddN(grads), optionally times (`scale` "mul") or divided by (`scale` "div") the scalar
  `factor` (a list of one; empty for `scale` "none"): the averaged-gradient update of
  data-parallel towers, one pass over the arrays.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.op_def import Attr, TypeAttr, define_op, get_op_def
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.ops.state_ops import on_variable_shapes

__all__: list[str] = []

ADAM_MATRICES = 9   # the index of `a` among _FusedMatMulApplyAdam's inputs

ACTIVATIONS = ("Relu", "Relu6", "Elu", "Tanh", "Sigmoid", "LeakyRelu")
_FLOAT = _dtypes.FLOATING


def product_shape(a, b, attrs):
    """The shape of op(a) @ op(b) for matrix shapes a and b (transposes from `attrs`)."""
    if a.ndims is None or b.ndims is None:
        return _ts.unknown_shape(rank=2)
    rows = a[1] if attrs.get("transpose_a") else a[0]
    cols = b[0] if attrs.get("transpose_b") else b[1]
    return _ts.TensorShape([rows, cols])


def _fused_matmul_shape(ctx):
    return product_shape(ctx.input_shape(0), ctx.input_shape(1), ctx.attrs)


def _fused_conv2d_shape(ctx):
    """Conv2D's own shape function (it reads only the input, the filter and the attrs)."""
    return get_op_def("Conv2D").shape_fn(ctx)


def _fused_elementwise_shape(ctx):
    shape = ctx.input_shape(0)
    for i in range(1, len(ctx.inputs)):
        shape = shape_fns.broadcast_shapes(shape, ctx.input_shape(i))
    return shape


_COMMON = [Attr("num_args", "int", minimum=0), Attr("fused_ops", "list(string)", []),
           Attr("epsilon", "float", 1e-4), Attr("leakyrelu_alpha", "float", 0.2)]

FusedMatMul = define_op(
    "_FusedMatMul", inputs=["a: T", "b: T", "args: num_args * T"], outputs=["product: T"],
    attrs=[TypeAttr("T", _FLOAT), Attr("transpose_a", "bool", False),
           Attr("transpose_b", "bool", False), *_COMMON],
    shape_fn=_fused_matmul_shape, not_differentiable=True,
    doc="MatMul followed by `fused_ops` (BiasAdd, then an optional activation).")

FusedConv2D = define_op(
    "_FusedConv2D", inputs=["input: T", "filter: T", "args: num_args * T"],
    outputs=["output: T"],
    attrs=[TypeAttr("T", _FLOAT), Attr("strides", "list(int)"), Attr("padding", "string"),
           Attr("explicit_paddings", "list(int)", []), Attr("data_format", "string", "NHWC"),
           Attr("dilations", "list(int)", [1, 1, 1, 1]), Attr("use_cudnn_on_gpu", "bool", True),
           *_COMMON],
    shape_fn=_fused_conv2d_shape, not_differentiable=True,
    doc="Conv2D followed by `fused_ops` (BiasAdd or inference FusedBatchNorm, then an "
        "optional activation).")

FusedElementwise = define_op(
    "_FusedElementwise", inputs=["inputs: N * T"], outputs=["output: T"],
    attrs=[TypeAttr("T", _FLOAT), Attr("ops", "list(string)"), Attr("operands", "list(int)"),
           Attr("value_first", "list(bool)")],
    shape_fn=_fused_elementwise_shape, not_differentiable=True,
    doc="A chain of elementwise ops computed into one buffer.")

def resource_twin(name: str) -> str:
    """The resource twin of a fused update op: `_FusedMatMulApplyGradientDescent` ->
    `_FusedMatMulResourceApplyGradientDescent`."""
    return name.replace("Apply", "ResourceApply", 1)


def define_fused_update(name: str, inputs: list[str], attrs: list, shape_fn, doc: str):
    """A fused update op on ref variables (input 0 `var: Ref(T)`, slots such as `m: Ref(T)`;
    output the var's ref) and its resource twin (each ref a `resource`, no output; shape
    function run on the variables' static shapes), as training_ops defines ApplyAdam and
    ResourceApplyAdam. Returns the ref op."""
    handles = [spec.replace("Ref(T)", "resource") for spec in inputs]
    define_op(resource_twin(name), inputs=handles, attrs=attrs,
              shape_fn=on_variable_shapes(shape_fn), is_stateful=True, not_differentiable=True,
              doc=doc + " Through a resource variable's handle.")
    return define_op(name, inputs=inputs, outputs=["out: Ref(T)"], attrs=attrs,
                     shape_fn=shape_fn, is_stateful=True, not_differentiable=True, doc=doc)


FusedMatMulApplyGradientDescent = define_fused_update(
    "_FusedMatMulApplyGradientDescent", ["var: Ref(T)", "alpha: T", "a: T", "b: T"],
    [TypeAttr("T", (_dtypes.float32, _dtypes.float64)), Attr("transpose_a", "bool", False),
     Attr("transpose_b", "bool", False), Attr("use_locking", "bool", False)],
    lambda ctx: ctx.input_shape(0),
    "var -= alpha * MatMul(a, b), the product accumulated into var by one GEMM.")



def _fused_matmul_adam_shape(ctx):
    """ApplyAdam's, with the gradient's shape that of the product op(a) @ op(b)."""
    shape = ctx.input_shape(0)
    for i in (1, 2):
        shape = merge_shapes(shape, ctx.input_shape(i))
    for i in range(3, ADAM_MATRICES):
        shape_with_rank(ctx.input_shape(i), 0)
    a, b = (shape_with_rank(ctx.input_shape(ADAM_MATRICES + i), 2) for i in (0, 1))
    return merge_shapes(shape, product_shape(a, b, ctx.attrs))


FusedMatMulApplyAdam = define_fused_update(
    "_FusedMatMulApplyAdam",
    ["var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T", "beta2_power: T", "lr: T",
     "beta1: T", "beta2: T", "epsilon: T", "a: T", "b: T"],
    [TypeAttr("T", (_dtypes.float32, _dtypes.float64)), Attr("transpose_a", "bool", False),
     Attr("transpose_b", "bool", False), Attr("use_locking", "bool", False),
     Attr("use_nesterov", "bool", False)],
    _fused_matmul_adam_shape,
    "ApplyAdam whose grad is MatMul(a, b), the product made and applied a block of rows at "
    "a time.")

FusedMaxPoolGradReluGrad = define_op(
    "_FusedMaxPoolGradReluGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=[TypeAttr("T", (_dtypes.float32, _dtypes.float64)), Attr("ksize", "list(int)"),
           Attr("strides", "list(int)"), Attr("padding", "string"),
           Attr("explicit_paddings", "list(int)", []), Attr("data_format", "string", "NHWC")],
    shape_fn=lambda ctx: ctx.input_shape(0), not_differentiable=True,
    doc="ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input) in one pass.")


def _with_channel_sums(ctx):
    """(the inputs' merged shape, [its last dimension]): a gradient and its bias gradient."""
    shape = merge_shapes(ctx.input_shape(0), ctx.input_shape(1))
    return shape, _ts.TensorShape([shape[-1] if shape.ndims else None])


FusedReluGradBiasAddGrad = define_op(
    "_FusedReluGradBiasAddGrad", inputs=["gradients: T", "features: T"],
    outputs=["backprops: T", "bias_grad: T"], attrs=[TypeAttr("T", _FLOAT)],
    shape_fn=_with_channel_sums, not_differentiable=True,
    doc="ReluGrad(gradients, features) and its sum over every axis but the last.")


def _fused_add_n_update_shape(ctx):
    """ApplyGradientDescent's: var merged with every gradient; alpha and the factor scalars."""
    factors = ctx.attrs["num_factors"]
    shape_with_rank(ctx.input_shape(1), 0)
    for i in range(2, 2 + factors):
        shape_with_rank(ctx.input_shape(i), 0)
    shape = ctx.input_shape(0)
    for i in range(2 + factors, len(ctx.inputs)):
        shape = merge_shapes(shape, ctx.input_shape(i))
    return shape


FusedAddNApplyGradientDescent = define_fused_update(
    "_FusedAddNApplyGradientDescent",
    ["var: Ref(T)", "alpha: T", "factor: num_factors * T", "grads: N * T"],
    [TypeAttr("T", (_dtypes.float32, _dtypes.float64)), Attr("N", "int", minimum=2),
     Attr("num_factors", "int", minimum=0), Attr("scale", "string", "none"),
     Attr("use_locking", "bool", False)],
    _fused_add_n_update_shape,
    "var -= alpha * (AddN(grads) [* or / factor]) in one pass: `scale` is none, mul or div.")
