"""Kernels of the fused ops (ops/fused_ops.py) and the in-place variants of elementwise kernels.

Every fused kernel computes exactly what the kernels of the ops it replaces compute, step by
step with the same NumPy operations in the same order, but writes each step into one buffer
with `out=` instead of allocating an array per op: results are bit-identical (the one exception,
folding inference batch norm into the filter, is documented on its kernel). The elementwise
steps are written once, as code templates (`_STEPS`), and serve three users: the fused
elementwise chains (compiled per node into one Python function), the activations of fused
MatMul/Conv2D, and the in-place variants the executor uses when the memory pass
(runtime/passes/memory.py) has found that an input's buffer dies at this node.

An in-place variant still checks at run time that the buffer it would write is an ordinary,
writeable ndarray of the output's shape and dtype, and otherwise runs the original kernel.
"""
from __future__ import annotations

import functools

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import bias_rows, pool
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.linalg import MatMulKernel
from tensorweave.kernels.nn import leaky_relu_alpha, relu_grad_and_sums, relu_grad_into
from tensorweave.kernels.registry import find_kernel, kernel, register_pure

_nd = np.ndarray

# One elementwise op as code: `{x}` the input (and `{y}` the second), `{o}` the output buffer,
# which may be `{x}` itself. Each line is the op's kernel (kernels/math*.py, kernels/nn.py)
# rewritten with an output argument (positional, which is cheaper than `out=`, except for
# maximum/minimum, where NumPy deprecates it): same ufuncs, same operand order, so the same bits.
_UNARY = {
    "Neg": "np.negative({x}, {o})",
    "Abs": "np.absolute({x}, {o})",
    "Square": "np.square({x}, {o})",
    "Sqrt": "np.sqrt({x}, {o})",
    "Rsqrt": "np.sqrt({x}, {o}); np.reciprocal({o}, {o})",
    "Reciprocal": "np.reciprocal({x}, {o})",
    "Exp": "np.exp({x}, {o})",
    "Expm1": "np.expm1({x}, {o})",
    "Log": "np.log({x}, {o})",
    "Log1p": "np.log1p({x}, {o})",
    "Sin": "np.sin({x}, {o})",
    "Cos": "np.cos({x}, {o})",
    "Tanh": "np.tanh({x}, {o})",
    "Floor": "np.floor({x}, {o})",
    "Ceil": "np.ceil({x}, {o})",
    "Sign": "np.sign({x}, {o})",
    # 1 / (1 + exp(-x)), as kernels/math_unary._sigmoid
    "Sigmoid": "np.negative({x}, {o}); np.exp({o}, {o}); np.add({o}, 1, {o}); "
               "np.reciprocal({o}, {o})",
    "Relu": "np.maximum({x}, ZERO, out={o})",
    "Relu6": "np.maximum({x}, ZERO, out={o}); np.minimum({o}, SIX, out={o})",
    # expm1(min(x, 0)) + max(x, 0), as kernels/nn._elu
    "Elu": "_t = np.minimum({x}, ZERO); np.expm1(_t, _t); np.maximum({x}, ZERO, out={o}); "
           "np.add(_t, {o}, {o})",
    "Softplus": "np.logaddexp(ZERO, {x}, {o})",
    # pick(x, x * alpha), as kernels/nn.LeakyReluKernel
    "LeakyRelu": "_t = np.multiply({x}, ALPHA); PICK({x}, _t, out={o})",
}
_BINARY = {
    "Add": "np.add({x}, {y}, {o})",
    "AddV2": "np.add({x}, {y}, {o})",
    "Sub": "np.subtract({x}, {y}, {o})",
    "Mul": "np.multiply({x}, {y}, {o})",
    "RealDiv": "np.true_divide({x}, {y}, {o})",
    "Div": "np.true_divide({x}, {y}, {o})",
    "Maximum": "np.maximum({x}, {y}, out={o})",
    "Minimum": "np.minimum({x}, {y}, out={o})",
    "SquaredDifference": "np.subtract({x}, {y}, {o}); np.multiply({o}, {o}, {o})",
}
ELEMENTWISE_UNARY = frozenset(_UNARY)
ELEMENTWISE_BINARY = frozenset(_BINARY)
# The float dtypes these templates are exact for (bfloat16 is stored as float32 and rounded by
# its own kernels, so it stays out).
FUSIBLE_DTYPES = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64})


def _constants(dtype, attrs=None) -> dict:
    scalar = np.dtype(dtype).type
    # float32, as TF's LeakyRelu and _FusedMatMul kernels: see kernels/nn.leaky_relu_alpha
    alpha = leaky_relu_alpha(
        (attrs or {}).get("alpha", (attrs or {}).get("leakyrelu_alpha", 0.2)))
    return {"np": np, "ZERO": scalar(0), "SIX": scalar(6), "ALPHA": alpha,
            "PICK": np.maximum if alpha <= 1 else np.minimum}


@functools.lru_cache(maxsize=1024)
def _code(source: str, name: str):
    """Compiling is the slow part of building a fused kernel; equal programs share the code."""
    return compile(source, f"<tensorweave:fused:{name}>", "exec")


def _compile(name: str, params: str, body: list[str], env: dict):
    source = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in body)
    exec(_code(source, name), env)
    return env[name]


def _step_lines(op: str, x: str, y: str | None, o: str) -> list[str]:
    template = _BINARY[op] if y is not None else _UNARY[op]
    return [s.strip() for s in template.format(x=x, y=y, o=o).split(";")]


def in_place_activation(op: str, dtype, attrs=None):
    """fn(buf) applying activation `op` to the float array `buf` in place (returns buf)."""
    body = _step_lines(op, "o", None, "o") + ["return o"]
    return _compile("_activation", "o", body, _constants(dtype, attrs))


def _check_bias(bias, out_shape) -> None:
    """BiasAdd's check: a vector as long as the last dimension of a matrix or more."""
    if bias.ndim != 1 or len(out_shape) < 2 or out_shape[-1] != bias.shape[0]:
        raise invalid_argument("Must provide as many biases as the last dimension of the input "
                               f"tensor: {list(bias.shape)} vs. {list(out_shape)}")


class _Epilogue:
    """The fused_ops after a contraction: a bias (or batch norm) and an optional activation."""

    def __init__(self, ctx, lead: tuple):
        ops = list(ctx.attrs["fused_ops"])
        if not ops or ops[0] not in lead:
            raise invalid_argument(f"{ctx.op_type}: unsupported fused_ops {ops}")
        self.lead = ops[0]
        self.activation = None
        self.activation_op = ops[1] if len(ops) > 1 else None
        if len(ops) > 1:
            self.activation = in_place_activation(ops[1], ctx.attrs["T"].as_numpy_dtype,
                                                  ctx.attrs)
        if len(ops) > 2:
            raise invalid_argument(f"{ctx.op_type}: unsupported fused_ops {ops}")

    def _apply(self, out, bias) -> None:
        """out = activation(out + bias) in place (the bias already checked): one compiled
        pass where `bias_rows` has it, else NumPy's add and the activation."""
        if bias_rows.add_bias(out, bias, self.activation_op, out=out) is None:
            np.add(out, bias, out=out)
            if self.activation is not None:
                self.activation(out)

    def rows_finisher(self, bias, out_shape):
        """fn(rows) doing `finish` in place on [pixels, channels] blocks of an output of
        `out_shape`; the bias is checked here, before any block is computed."""
        _check_bias(bias, out_shape)
        return lambda rows: self._apply(rows, bias)

    def finish(self, out, bias):
        if not out.flags.writeable:
            out = out.copy()
        _check_bias(bias, out.shape)
        self._apply(out, bias)
        return out


@kernel("_FusedMatMul", expensive=True)
class FusedMatMulKernel:
    """MatMul's kernel, then bias and activation in place on its output."""

    def __init__(self, ctx):
        self.matmul = MatMulKernel(ctx)
        self.epilogue = _Epilogue(ctx, ("BiasAdd",))

    def compute(self, ctx, a, b, bias):
        return self.epilogue.finish(self.matmul.compute(ctx, a, b), bias)


class InnerNode:
    """What a KernelContext reads of a node: lets a fused kernel build the Conv2D kernel."""

    def __init__(self, ctx, op: str):
        self.name, self.op, self.attrs = ctx.node_name, op, ctx.attrs
        self.input_dtypes = ctx.input_dtypes[:2]
        self.output_dtypes = ctx.output_dtypes
        self.creation_site = ctx.creation_site


@kernel("_FusedConv2D", expensive=True)
class FusedConv2DKernel:
    """Conv2D's kernel, then bias (or inference batch norm) and activation in place.

    With fused_ops ["FusedBatchNorm", ...], args are (scale, offset, mean, variance) and the
    batch norm is folded: s = scale / sqrt(variance + epsilon), the filter is scaled by s per
    output channel and the bias is offset - mean * s. That reassociates the arithmetic, so the
    result differs from Conv2D followed by FusedBatchNorm by rounding: a relative 1e-5 in
    float32 (tests/runtime/passes/test_remapper.py checks it).
    """

    def __init__(self, ctx):
        conv_def = find_kernel("Conv2D", ctx.device.device_type, ctx.attrs)
        if conv_def is None:
            raise invalid_argument("_FusedConv2D: no Conv2D kernel for these attrs")
        self.inner_ctx = KernelContext(InnerNode(ctx, "Conv2D"), ctx.device, ctx.session)
        self.conv = conv_def.impl(self.inner_ctx)
        self.epilogue = _Epilogue(ctx, ("BiasAdd", "FusedBatchNorm"))
        self.epsilon = float(ctx.attrs.get("epsilon", 1e-4))
        self.batch_norm = self.epilogue.lead == "FusedBatchNorm"
        # The bias and activation run on each block of the output as it is made (in cache,
        # on the intra-op threads) where the convolution computes in the node's own dtype.
        self.conv_in_place = conv_def.op_type == "Conv2D" and \
            ctx.attrs.get("data_format", "NHWC") == "NHWC" and \
            ctx.attrs["T"].as_numpy_dtype in (np.float32, np.float64)

    def compute(self, ctx, x, w, *args):
        if self.batch_norm:
            scale, offset, mean, variance = args
            s = scale / np.sqrt(variance + np.asarray(self.epsilon, variance.dtype))
            w = w * s.astype(w.dtype, copy=False)
            bias = (offset - mean * s).astype(w.dtype, copy=False)
        else:
            (bias,) = args
        if self.conv_in_place and x.ndim == 4 and w.ndim == 4:
            out_shape = (*x.shape[:3], w.shape[3])    # channels, as the output will have
            return self.conv.compute(self.inner_ctx, x, w,
                                     self.epilogue.rows_finisher(bias, out_shape))
        return self.epilogue.finish(self.conv.compute(self.inner_ctx, x, w), bias)


@kernel("_FusedMaxPoolGradReluGrad", expensive=True)
class FusedMaxPoolGradReluGradKernel:
    """MaxPoolGrad's kernel, routing each window's gradient times [maximum > 0]: ReluGrad of
    its result with orig_input as the features, in the same pass (bit-identical)."""

    def __init__(self, ctx):
        pool_def = find_kernel("MaxPoolGrad", ctx.device.device_type, ctx.attrs)
        if pool_def is None:
            raise invalid_argument("_FusedMaxPoolGradReluGrad: no MaxPoolGrad kernel for these "
                                   "attrs")
        self.pool = pool_def.impl(KernelContext(InnerNode(ctx, "MaxPoolGrad"), ctx.device,
                                                ctx.session))

    @staticmethod
    def splits_work(node) -> bool:
        """Read by the cost model: as MaxPoolGrad's pass, split over the batch when large."""
        return pool.splits_over_batch("MaxPoolGrad", node)

    def compute(self, ctx, x, y, dy):
        if self.pool.error is not None:
            raise self.pool.error
        return self.pool.route(x, dy, relu=True)


def _relu_grad_bias_add_grad(g, x):
    """ReluGrad and its bias gradient in one pass (kernels/nn.py)."""
    if g.shape != x.shape:
        raise invalid_argument("_FusedReluGradBiasAddGrad: gradients and features must have the "
                               f"same shape: {list(g.shape)} vs {list(x.shape)}")
    if g.ndim < 2:
        raise invalid_argument(f"_FusedReluGradBiasAddGrad: input must be at least 2-D: "
                               f"{list(g.shape)}")
    return relu_grad_and_sums(g, x)


register_pure("_FusedReluGradBiasAddGrad", _relu_grad_bias_add_grad)


@kernel("_FusedElementwise")
class FusedElementwiseKernel:
    """A chain of elementwise ops compiled into one function over one output buffer.

    The buffer has the broadcast shape of all inputs (0-d inputs cannot change it and are
    skipped cheaply). When the memory pass allowed it (`_in_place_input`) and that input is a
    writeable ndarray of exactly the output's shape and dtype, the input is the buffer.
    """

    def __init__(self, ctx):
        attrs = ctx.attrs
        dtype = attrs["T"].as_numpy_dtype
        names = [f"a{i}" for i in range(len(ctx.input_dtypes))]
        body = [f"s = {names[0]}.shape"]
        for a in names[1:]:
            body.append(f"if {a}.ndim and {a}.shape != s: s = _broadcast(s, {a}.shape)")
        reuse = attrs.get("_in_place_input")
        if reuse is not None and reuse in fused_chain_inputs(attrs):
            a = names[reuse]
            body.append(f"if {a}.__class__ is _nd and {a}.shape == s and {a}.dtype == DTYPE "
                        f"and {a}.flags.writeable: o = {a}")
            body.append("else: o = _empty(s, DTYPE)")
        else:
            body.append("o = _empty(s, DTYPE)")
        value = names[0]
        for op, operand, first in zip(attrs["ops"], attrs["operands"], attrs["value_first"]):
            if operand < 0:
                body += _step_lines(op, value, None, "o")
            else:
                x, y = (value, names[operand]) if first else (names[operand], value)
                body += _step_lines(op, x, y, "o")
            value = "o"
        body.append("return o")
        env = _constants(dtype)
        env.update(_nd=_nd, _empty=np.empty, _broadcast=np.broadcast_shapes,
                   DTYPE=np.dtype(dtype))
        self.compute = _compile("_fused_chain", ", ".join(["ctx", *names]), body, env)


def fused_chain_inputs(attrs) -> tuple:
    """The inputs of a _FusedElementwise node read only by its first step (reusable buffers)."""
    first = attrs["operands"][0] if attrs["operands"] else -1
    reads = [i for i in attrs["operands"][1:] if i >= 0]
    return tuple(i for i in ((0, first) if first >= 0 else (0,)) if i not in reads)


# --- in-place variants for the executor -----------------------------------------------------
# Kernels whose output is always an array they allocated (or a view of one only they hold),
# never an input or a buffer kept across calls: the memory pass lets the only reader of such an
# output write into it. (MaxPool is not one: a 1x1 window returns its input.)
FRESH_OUTPUT_OPS = ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | frozenset({
    "ReluGrad", "BiasAdd", "MatMul", "AddN", "Cast", "_FusedMatMul", "_FusedConv2D",
    "_FusedElementwise", "Relu6Grad", "EluGrad", "TanhGrad", "SigmoidGrad", "Conv2D",
    "Conv2DBackpropInput", "MaxPoolGrad", "AvgPoolGrad"})


def in_place_inputs(node) -> tuple:
    """The inputs of `node` whose buffer its kernel can reuse for its output."""
    if node.op in ELEMENTWISE_UNARY:
        return (0,)
    if node.op in ELEMENTWISE_BINARY:
        return (0, 1)
    if node.op in ("ReluGrad", "BiasAdd", "_FusedReluGradBiasAddGrad"):
        return (0,)
    if node.op == "_FusedElementwise":
        return fused_chain_inputs(node.attrs)
    return ()


def in_place_kernel(node, j: int, ctx, original, pure: bool):
    """A context-free kernel for `node` writing into input j when it can, else None.

    `original` is the node's kernel callable (`pure` says whether it takes the context); the
    variant falls back to it whenever the buffer is not a writeable ndarray of the output's
    shape and dtype.
    """
    dtype = node.output_dtypes[0].base_dtype
    if dtype not in FUSIBLE_DTYPES and not (dtype.is_integer and node.op in _BINARY_INT_OK):
        return None
    np_dtype = dtype.as_numpy_dtype
    fallback = original if pure else (lambda *xs: original(ctx, *xs))
    if node.op in ELEMENTWISE_UNARY:
        step = _compile("_step", "x", _step_lines(node.op, "x", None, "x") + ["return x"],
                        _constants(np_dtype, node.attrs))

        def unary(x):
            if x.__class__ is _nd and x.flags.writeable:
                return step(x)
            return fallback(x)
        return unary
    if node.op in ELEMENTWISE_BINARY:
        lines = _step_lines(node.op, "x", "y", "x" if j == 0 else "y")
        step = _compile("_step", "x, y", lines + [f"return {'x' if j == 0 else 'y'}"],
                        _constants(np_dtype))
        return _binary(step, fallback, j)
    if node.op == "ReluGrad" and j == 0:
        def relu_grad(g, x):
            if g.__class__ is _nd and g.flags.writeable and x.shape == g.shape:
                return relu_grad_into(g, x, out=g)
            return fallback(g, x)
        return relu_grad
    if node.op == "_FusedReluGradBiasAddGrad" and j == 0:
        def relu_grad_and_bias_grad(g, x):
            if g.__class__ is _nd and g.flags.writeable and x.shape == g.shape and g.ndim >= 2:
                return relu_grad_and_sums(g, x, out=g)
            return fallback(g, x)
        return relu_grad_and_bias_grad
    if node.op == "BiasAdd" and j == 0 and node.attrs.get("data_format", "NHWC") == "NHWC":
        def bias_add(value, bias):
            if value.__class__ is _nd and value.flags.writeable and bias.ndim == 1 and \
                    value.ndim >= 2 and value.shape[-1] == bias.shape[0]:
                if bias_rows.add_bias(value, bias, out=value) is None:
                    np.add(value, bias, out=value)
                return value
            return fallback(value, bias)
        return bias_add
    return None


_BINARY_INT_OK = frozenset({"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum"})


def _binary(step, fallback, j: int):
    """The buffer of input j is reused when the other input broadcasts into it."""
    if j == 0:
        def binary(x, y):
            if x.__class__ is _nd and x.flags.writeable and (
                    y.shape == x.shape or y.ndim <= x.ndim and
                    y.shape == x.shape[x.ndim - y.ndim:]):
                return step(x, y)
            return fallback(x, y)
    else:
        def binary(x, y):
            if y.__class__ is _nd and y.flags.writeable and (
                    x.shape == y.shape or x.ndim <= y.ndim and
                    x.shape == y.shape[y.ndim - x.ndim:]):
                return step(x, y)
            return fallback(x, y)
    return binary
