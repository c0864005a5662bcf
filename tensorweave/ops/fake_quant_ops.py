"""Fake quantization: float tensors rounded to the grid of a num_bits integer range and back.

These are the ops quantization-aware training inserts (tf.quantization.fake_quant_with_min_max_*).

The range [min, max] is first nudged so that 0.0 falls on the grid exactly: with the
integer range [quant_min, quant_max] = [narrow_range ? 1 : 0, 2^num_bits - 1], scale =
(max - min) / (quant_max - quant_min) and the zero point round(quant_min - min / scale) clamped
into the integer range; nudged_min / nudged_max are the grid's ends around it. Inputs are
clamped to the nudged range and rounded to the nearest grid point. The range comes from attrs
(`..._args`), from scalar tensors (`..._vars`, trainable) or from [d] tensors, one range per
index of the last dimension (`..._vars_per_channel`); min = max = 0 gives zeros.

The gradient is the straight-through estimator, as in TensorFlow: the incoming gradient passes
where the input lies inside the nudged range, and the rest goes to min (below it) or to max
(above it), summed. Kernels: `kernels/fake_quant.py`, in float32 with TensorFlow's operations
and order (bit-identical outputs). The three gradient ops have no gradient: TensorFlow
registers none, so differentiating them raises LookupError here too.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.shape_checks import merge_dim, merge_shapes, shape_with_rank

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]

_BITS = [Attr("num_bits", "int", 8), Attr("narrow_range", "bool", False)]
_RANGE = [Attr("min", "float", -6.0), Attr("max", "float", 6.0)]


def _args_gradient_shape(ctx):
    return merge_shapes(ctx.input_shape(0), ctx.input_shape(1))


def _vars_shape(ctx):
    for i in (1, 2):
        shape_with_rank(ctx.input_shape(i), 0)
    return ctx.input_shape(0)


def _vars_gradient_shape(ctx):
    for i in (2, 3):
        shape_with_rank(ctx.input_shape(i), 0)
    return [merge_shapes(ctx.input_shape(0), ctx.input_shape(1)), _ts.scalar(), _ts.scalar()]


def _channels(ctx, first: int):
    """(inputs' shape, [d]): inputs (input `first`) of rank >= 1 whose last dimension d is
    that of the [d] min and max after them."""
    shape = ctx.input_shape(first)
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    depth = shape[-1] if shape.ndims is not None else None
    for i in (first + 1, first + 2):
        depth = merge_dim(depth, shape_with_rank(ctx.input_shape(i), 1)[0])
    if shape.ndims is not None:
        shape = _ts.TensorShape(shape.as_list()[:-1] + [depth])
    return shape, _ts.TensorShape([depth])


def _per_channel_gradient_shape(ctx):
    merge_shapes(ctx.input_shape(0), ctx.input_shape(1))
    shape, depth = _channels(ctx, 1)
    return [merge_shapes(ctx.input_shape(0), shape), depth, depth]


FakeQuantWithMinMaxArgs = define_op(
    "FakeQuantWithMinMaxArgs", inputs=["inputs: float32"], outputs=["outputs: float32"],
    attrs=_RANGE + _BITS, shape_fn=lambda ctx: ctx.input_shape(0),
    doc="inputs fake-quantized to the num_bits grid of the nudged [min, max] attrs.")
FakeQuantWithMinMaxArgsGradient = define_op(
    "FakeQuantWithMinMaxArgsGradient", inputs=["gradients: float32", "inputs: float32"],
    outputs=["backprops: float32"], attrs=_RANGE + _BITS, shape_fn=_args_gradient_shape,
    doc="gradients where inputs lie in the nudged [min, max], else 0.")
_VARS_INPUTS = ["inputs: float32", "min: float32", "max: float32"]


def _vars_op(name: str, shape_fn, doc: str):
    """A ..._vars op: inputs, min and max tensors in, the fake-quantized inputs out."""
    return define_op(name, inputs=_VARS_INPUTS, outputs=["outputs: float32"], attrs=_BITS,
                     shape_fn=shape_fn, doc=doc)


def _vars_gradient_op(name: str, shape_fn, doc: str):
    """A ..._vars op's gradient: (gradients, inputs, min, max) in, the three backprops out."""
    return define_op(name, inputs=["gradients: float32"] + _VARS_INPUTS,
                     outputs=["backprops_wrt_input: float32", "backprop_wrt_min: float32",
                              "backprop_wrt_max: float32"],
                     attrs=_BITS, shape_fn=shape_fn, doc=doc)


FakeQuantWithMinMaxVars = _vars_op(
    "FakeQuantWithMinMaxVars", _vars_shape,
    "inputs fake-quantized to the num_bits grid of the nudged [min, max] scalars.")
FakeQuantWithMinMaxVarsGradient = _vars_gradient_op(
    "FakeQuantWithMinMaxVarsGradient", _vars_gradient_shape,
    "The straight-through gradient, and the sums of the gradients below min / above max.")
FakeQuantWithMinMaxVarsPerChannel = _vars_op(
    "FakeQuantWithMinMaxVarsPerChannel", lambda ctx: _channels(ctx, 0)[0],
    "inputs fake-quantized per index of their last dimension, by [d] min and max.")
FakeQuantWithMinMaxVarsPerChannelGradient = _vars_gradient_op(
    "FakeQuantWithMinMaxVarsPerChannelGradient", _per_channel_gradient_shape,
    "The per-channel straight-through gradient and per-channel sums below / above.")


def _bits(num_bits, narrow_range) -> dict:
    return {"num_bits": num_bits, "narrow_range": narrow_range}


def fake_quant_with_min_max_args(inputs, min=-6.0, max=6.0, num_bits=8, narrow_range=False,
                                 name=None):
    """`inputs` (float32) rounded to the num_bits grid of the nudged [min, max]."""
    return apply_op(FakeQuantWithMinMaxArgs, [inputs],
                    {"min": min, "max": max, **_bits(num_bits, narrow_range)}, name=name)


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6.0, max=6.0, num_bits=8,
                                          narrow_range=False, name=None):
    """`gradients` where `inputs` lie inside the nudged [min, max], else 0."""
    return apply_op(FakeQuantWithMinMaxArgsGradient, [gradients, inputs],
                    {"min": min, "max": max, **_bits(num_bits, narrow_range)}, name=name)


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):
    """`inputs` rounded to the num_bits grid of the nudged range of scalar tensors min, max."""
    return apply_op(FakeQuantWithMinMaxVars, [inputs, min, max], _bits(num_bits, narrow_range),
                    name=name)


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,
                                          narrow_range=False, name=None):
    """(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max) of fake_quant_with_min_max_vars."""
    return apply_op(FakeQuantWithMinMaxVarsGradient, [gradients, inputs, min, max],
                    _bits(num_bits, narrow_range), name=name)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,
                                             name=None):
    """`inputs` fake-quantized per index of the last dimension by [d] tensors min and max."""
    return apply_op(FakeQuantWithMinMaxVarsPerChannel, [inputs, min, max],
                    _bits(num_bits, narrow_range), name=name)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,
                                                      narrow_range=False, name=None):
    """The gradients of fake_quant_with_min_max_vars_per_channel: wrt inputs, min and max."""
    return apply_op(FakeQuantWithMinMaxVarsPerChannelGradient, [gradients, inputs, min, max],
                    _bits(num_bits, narrow_range), name=name)


def _bits_of(op) -> dict:
    return _bits(op.get_attr("num_bits"), op.get_attr("narrow_range"))


@FakeQuantWithMinMaxArgs.gradient
def _args_grad(op, grad):
    return fake_quant_with_min_max_args_gradient(
        grad, op.inputs[0], min=op.get_attr("min"), max=op.get_attr("max"), **_bits_of(op))


@FakeQuantWithMinMaxVars.gradient
def _vars_grad(op, grad):
    return list(fake_quant_with_min_max_vars_gradient(grad, *op.inputs, **_bits_of(op)))


@FakeQuantWithMinMaxVarsPerChannel.gradient
def _per_channel_grad(op, grad):
    return list(fake_quant_with_min_max_vars_per_channel_gradient(grad, *op.inputs,
                                                                  **_bits_of(op)))

