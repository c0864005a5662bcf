"""Neural-network activations and bias addition (the tf.nn namespace, not top level).

Each activation is one row of a table: a typed OpDef `features -> activations` with TF's op type
and allowed dtypes, and a gradient that calls TF's helper op (`ReluGrad`, `EluGrad`, ...). The
helper ops are ops of their own, with kernels and gradients, so second derivatives work and a
backward pass costs one kernel per activation, as in TensorFlow. ELU and SELU differentiate
through their outputs, ReLU and ReLU6 through their outputs too (the same mask), the others
through their inputs. Kernels live in `kernels/nn.py`. Softmax and the cross-entropies are in
`nn_softmax_ops.py` and `nn_loss_ops.py`, l2_normalize and moments in `nn_normalize_ops.py`,
dropout in `nn_dropout_ops.py`, in_top_k and top_k in `nn_top_k_ops.py`.
"""
from __future__ import annotations

import numbers

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import cast, exp, sigmoid, sign, tanh

__all__ = [
    "relu", "relu6", "crelu", "elu", "selu", "leaky_relu", "softplus", "softsign", "sigmoid",
    "tanh", "silu", "swish", "bias_add", "xw_plus_b", "relu_layer",
]

_FLOAT = _dtypes.FLOATING
_REAL = _dtypes.REAL_NUMERIC
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# --- activations and their helper gradient ops ----------------------------------------------
def _activation(op_type: str, allowed, attrs=()):
    """An elementwise activation `features -> activations` (shape unchanged)."""
    return define_op(op_type, inputs=["features: T"], outputs=["activations: T"],
                     attrs=[TypeAttr("T", allowed), *attrs], shape_fn=shape_fns.unchanged)


def _activation_grad(op_type: str, allowed, second: str = "features", attrs=()):
    """TF's gradient helper `(gradients, features or outputs) -> backprops`, shapes merged."""
    return define_op(op_type, inputs=["gradients: T", f"{second}: T"], outputs=["backprops: T"],
                     attrs=[TypeAttr("T", allowed), *attrs], shape_fn=shape_fns.merged)


_ALPHA = Attr("alpha", "float", 0.2)
Relu = _activation("Relu", _REAL)
ReluGrad = _activation_grad("ReluGrad", _REAL)
Relu6 = _activation("Relu6", _REAL)
Relu6Grad = _activation_grad("Relu6Grad", _REAL)
Elu = _activation("Elu", _FLOAT)
EluGrad = _activation_grad("EluGrad", _FLOAT, "outputs")
Selu = _activation("Selu", _FLOAT)
SeluGrad = _activation_grad("SeluGrad", _FLOAT, "outputs")
LeakyRelu = _activation("LeakyRelu", _FLOAT, [_ALPHA])
LeakyReluGrad = _activation_grad("LeakyReluGrad", _FLOAT, attrs=[_ALPHA])
Softplus = _activation("Softplus", _FLOAT)
SoftplusGrad = _activation_grad("SoftplusGrad", _FLOAT)
Softsign = _activation("Softsign", _FLOAT)
SoftsignGrad = _activation_grad("SoftsignGrad", _FLOAT)


def _alpha(op) -> dict:
    return {"alpha": op._attrs["alpha"]}


# First derivatives: one helper op each, fed the tensor TensorFlow feeds it.
@Relu.gradient
def _relu_grad(op, grad):
    return [apply_op(ReluGrad, [grad, op.outputs[0]])]


@Relu6.gradient
def _relu6_grad(op, grad):
    return [apply_op(Relu6Grad, [grad, op.outputs[0]])]


@Elu.gradient
def _elu_grad(op, grad):
    return [apply_op(EluGrad, [grad, op.outputs[0]])]


@Selu.gradient
def _selu_grad(op, grad):
    return [apply_op(SeluGrad, [grad, op.outputs[0]])]


@LeakyRelu.gradient
def _leaky_relu_grad(op, grad):
    return [apply_op(LeakyReluGrad, [grad, op.inputs[0]], _alpha(op))]


@Softplus.gradient
def _softplus_grad(op, grad):
    return [apply_op(SoftplusGrad, [grad, op.inputs[0]])]


@Softsign.gradient
def _softsign_grad(op, grad):
    return [apply_op(SoftsignGrad, [grad, op.inputs[0]])]


# Second derivatives. Every helper is linear in `gradients`, so d/d(gradients) is the helper
# applied to the incoming gradient; d/d(features) is zero for the piecewise-linear ones.
@ReluGrad.gradient
@Relu6Grad.gradient
@LeakyReluGrad.gradient
def _piecewise_linear_grad_grad(op, grad):
    x = op.inputs[1]
    attrs = _alpha(op) if op.type == "LeakyReluGrad" else None
    return [apply_op(op.op_def, [grad, x], attrs), zeros_like(x)]


@EluGrad.gradient
@SeluGrad.gradient
def _exp_linear_grad_grad(op, grad):
    """EluGrad = g * (y + c) for y < 0: d/dy is g there, 0 elsewhere."""
    g, y = op.inputs
    return [apply_op(op.op_def, [grad, y]), where(y < 0, grad * g, zeros_like(g))]


@SoftplusGrad.gradient
def _softplus_grad_grad(op, grad):
    """SoftplusGrad = g * sigmoid(x); d/dx = g * sigmoid'(x) = g / (e^-x + 2 + e^x)."""
    g, x = op.inputs
    return [apply_op(SoftplusGrad, [grad, x]), grad * g / (exp(-x) + 2.0 + exp(x))]


@SoftsignGrad.gradient
def _softsign_grad_grad(op, grad):
    """SoftsignGrad = g / (1 + |x|)^2; d/dx = -2 g sign(x) / (1 + |x|)^3."""
    g, x = op.inputs
    denom = 1.0 + _abs(x)
    return [apply_op(SoftsignGrad, [grad, x]), grad * g * -2.0 * sign(x) / (denom * denom * denom)]


def relu(features, name=None):
    """Computes rectified linear: max(features, 0) (NaN stays NaN).

    Args:
      features: A Tensor of a real numeric type.
      name: A name for the operation (default "Relu").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Relu, [features], name=name)


def relu6(features, name=None):
    """Computes Rectified Linear 6: min(max(features, 0), 6).

    Args:
      features: A Tensor of a real numeric type.
      name: A name for the operation (default "Relu6").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Relu6, [features], name=name)


def elu(features, name=None):
    """Computes exponential linear: exp(features) - 1 if features < 0, features otherwise.

    Args:
      features: A floating Tensor.
      name: A name for the operation (default "Elu").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Elu, [features], name=name)


def selu(features, name=None):
    """Computes scaled exponential linear: scale * alpha * (exp(features) - 1) if features < 0,
    scale * features otherwise, with alpha = 1.67326324 and scale = 1.05070098.

    Args:
      features: A floating Tensor.
      name: A name for the operation (default "Selu").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Selu, [features], name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """Computes the Leaky ReLU: features if features > 0, alpha * features otherwise.

    Args:
      features: A Tensor; integer tensors are cast to float32 first, like TensorFlow.
      alpha: The slope for negative inputs, a Python float.
      name: A name for the operation (default "LeakyRelu").

    Returns:
      A floating Tensor shaped like `features`.

    Raises:
      TypeError: if `alpha` is a Tensor (the op takes it as an attr).
    """
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = cast(features, _dtypes.float32)
        if hasattr(alpha, "item") and not isinstance(alpha, Tensor):
            alpha = alpha.item()
        if isinstance(alpha, Tensor) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"Expected float for argument 'alpha' not {alpha!r}.")
        return apply_op(LeakyRelu, [features], {"alpha": alpha}, name=scope)


def softplus(features, name=None):
    """Computes softplus: log(exp(features) + 1), without overflow for large features.

    Args:
      features: A floating Tensor.
      name: A name for the operation (default "Softplus").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Softplus, [features], name=name)


def softsign(features, name=None):
    """Computes softsign: features / (abs(features) + 1).

    Args:
      features: A floating Tensor.
      name: A name for the operation (default "Softsign").

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return apply_op(Softsign, [features], name=name)


def crelu(features, name=None, axis=-1):
    """Concatenated ReLU: relu of [features, -features] joined along `axis`.

    Args:
      features: A Tensor of a real numeric type.
      name: A name for the operation (default "CRelu").
      axis: The axis along which the two halves are concatenated (default -1).

    Returns:
      A Tensor like `features` with the `axis` dimension doubled.
    """
    with name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        joined = concat([features, -features], axis, name=scope)
        return relu(joined)


def silu(features, beta=1.0):
    """Computes the SiLU or Swish activation: features * sigmoid(beta * features).

    Args:
      features: A floating Tensor.
      beta: A scalar scaling the argument of the sigmoid (default 1.0).

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    features = convert_to_tensor(features, name="features")
    beta = convert_to_tensor(beta, dtype=features.dtype.base_dtype, name="beta")
    return features * sigmoid(beta * features)


def swish(features, beta=1.0):
    """Computes the Swish activation features * sigmoid(beta * features) (same as `silu`).

    Args:
      features: A floating Tensor.
      beta: A scalar scaling the argument of the sigmoid (default 1.0).

    Returns:
      A Tensor of the same type and shape as `features`.
    """
    return silu(features, beta)


# --- BiasAdd, BiasAddGrad ---------------------------------------------------------------------
_DATA_FORMAT = Attr("data_format", "string", "NHWC")


def _channel_axis(ctx) -> tuple[int | None, list | None]:
    """(channel axis, dims) of input 0 under the data_format attr; ValueError if too small."""
    nchw = ctx.attrs["data_format"] == "NCHW"
    dims = ctx.input_shape(0)._dims
    if dims is None:
        return None, None
    need = 3 if nchw else 2
    if len(dims) < need:
        raise ValueError(f"Shape must be at least rank {need} but is rank {len(dims)}")
    return (1 if nchw else len(dims) - 1), list(dims)


def _check_data_format(ctx) -> None:
    if ctx.attrs["data_format"] not in ("NHWC", "NCHW"):
        raise ValueError(f"Invalid data format: {ctx.attrs['data_format']}")


def bias_add_shape(ctx):
    """The value's shape, its channel dimension merged with the bias length."""
    _check_data_format(ctx)
    bias = ctx.input_shape(1)
    if bias.ndims is not None and bias.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {bias.ndims}")
    axis, dims = _channel_axis(ctx)
    if dims is None:
        return _ts.unknown_shape()
    length = bias._dims[0] if bias.ndims else None
    channels = dims[axis]
    if channels is not None and length is not None and channels != length:
        raise ValueError(f"Dimensions must be equal, but are {channels} and {length}")
    dims[axis] = channels if channels is not None else length
    return _ts.TensorShape(dims)


def _bias_add_grad_shape(ctx):
    """A vector as long as the channel dimension of the gradient."""
    _check_data_format(ctx)
    axis, dims = _channel_axis(ctx)
    return _ts.TensorShape([None if dims is None else dims[axis]])


BiasAdd = define_op("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
                    attrs=[TypeAttr("T", _dtypes.NUMERIC), _DATA_FORMAT],
                    shape_fn=bias_add_shape)
BiasAddGrad = define_op("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
                        attrs=[TypeAttr("T", _dtypes.NUMERIC), _DATA_FORMAT],
                        shape_fn=_bias_add_grad_shape)


@BiasAdd.gradient
def _bias_add_grad(op, grad):
    """The value gets the gradient itself; the bias its sum over all but the channel axis."""
    fmt = {"data_format": op._attrs["data_format"]}
    return [grad, apply_op(BiasAddGrad, [grad], fmt)]


@BiasAddGrad.gradient
def _bias_add_grad_grad(op, grad):
    """BiasAddGrad is a sum over the non-channel axes, so its gradient is the broadcast of the
    incoming vector: BiasAdd of it onto zeros shaped like the original gradient."""
    fmt = {"data_format": op._attrs["data_format"]}
    return [apply_op(BiasAdd, [zeros_like(op.inputs[0]), grad], fmt)]


def _canonical_data_format(data_format):
    """TF's normalization: 'NC...' is NCHW, 'N...C' is NHWC, None is NHWC."""
    if data_format is None:
        return "NHWC"
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    if data_format.startswith("NC"):
        return "NCHW"
    if data_format.startswith("N") and data_format.endswith("C"):
        return "NHWC"
    raise ValueError("`data_format` must be of the form `N...C` or `NC...`. Received: "
                     f"data_format={data_format}")


def bias_add(value, bias, data_format=None, name=None):
    """Adds `bias` to `value` along its channel dimension.

    A special case of `tf.add` where `bias` is 1-D and is broadcast along the last dimension of
    `value` (NHWC, any rank >= 2) or its dimension 1 (NCHW, rank >= 3). Its gradient is one
    `BiasAddGrad` op, a sum over the other dimensions.

    Args:
      value: A Tensor of a numeric type.
      bias: A 1-D Tensor as long as the channel dimension of `value`, of its type.
      data_format: 'NHWC' (default), 'NCHW', or any 'N...C' / 'NC...' spelling.
      name: A name for the operation (default "BiasAdd").

    Returns:
      A Tensor with the same type and shape as `value`.

    Raises:
      ValueError: for a bad data_format, a bias that is not 1-D, or a length mismatch.
    """
    data_format = _canonical_data_format(data_format)
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        try:
            bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        except ValueError as e:
            raise ValueError(f"bias: {e}") from None
        return apply_op(BiasAdd, [value, bias], {"data_format": data_format}, name=scope)


def xw_plus_b(x, weights, biases, name=None):
    """Computes matmul(x, weights) + biases (a MatMul then a BiasAdd).

    Args:
      x: A 2-D Tensor [batch, in_units].
      weights: A 2-D Tensor [in_units, out_units].
      biases: A 1-D Tensor [out_units].
      name: A name for the operation (default "xw_plus_b").

    Returns:
      A 2-D Tensor [batch, out_units].
    """
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return bias_add(matmul(x, weights), biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    """Computes relu(matmul(x, weights) + biases): a MatMul, a BiasAdd and a Relu.

    Args:
      x: A 2-D Tensor [batch, in_units].
      weights: A 2-D Tensor [in_units, out_units].
      biases: A 1-D Tensor [out_units].
      name: A name for the operation (default "relu_layer").

    Returns:
      A 2-D Tensor [batch, out_units].
    """
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return relu(bias_add(matmul(x, weights), biases), name=scope)
