"""Pooling: MaxPool / AvgPool (2-D and 3-D) with their gradient ops, and the TF1 wrappers
(max_pool, avg_pool, max_pool1d/2d/3d, avg_pool1d/2d/3d).

Each pooling family is a table row: a forward op, its gradient op, and for max pooling the
gradient of the gradient (MaxPoolGradGrad), so second derivatives work like TensorFlow's.
Max pooling routes a gradient to the first maximum of each window in scan order (as TF's CPU
kernel); average pooling divides by the number of window elements inside the unpadded input
(SAME padding never counts padding). Windows share `WindowSpec` with the convolutions. The 1-D
forms are composites (expand_dims, 2-D pool, squeeze), as in TensorFlow. Kernels live in
`kernels/pool.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import shape_dims
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.array_ops import expand_dims, shape, squeeze
from tensorweave.ops.nn_conv_ops import (
    assemble,
    convert_padding,
    get_sequence,
    split_dims,
    window_spec,
)

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool", "max_pool1d",
           "max_pool2d", "max_pool3d"]

TensorShape = _ts.TensorShape

_MAX_TYPES = _dtypes.REAL_NUMERIC - {_dtypes.uint32, _dtypes.uint64}
_GRAD_TYPES = _dtypes.REAL_NUMERIC
_FLOAT = _dtypes.FLOATING


class _Family:
    """Static facts of one pooling rank: tensor rank, layouts, op type suffix."""

    def __init__(self, rank: int, formats: tuple, suffix: str):
        self.rank, self.formats, self.suffix = rank, formats, suffix


_2D = _Family(4, ("NHWC", "NCHW"), "")
_3D = _Family(5, ("NDHWC", "NCDHW"), "3D")
_FAMILY_OF: dict = {}
_EXPLICIT_OK = ("MaxPool", "MaxPoolGrad")   # the only pooling ops with explicit padding


def pool_spec(op_type: str, attrs: dict):
    """The validated WindowSpec of a pooling node (its rank and layouts from the op type)."""
    fam = _FAMILY_OF[op_type]
    paddings = ("SAME", "VALID", "EXPLICIT") if op_type in _EXPLICIT_OK else ("SAME", "VALID")
    return window_spec(op_type, attrs, fam.rank, fam.formats, paddings, ksize=True)


def _pool_shape(ctx):
    """Output of a pooling op: spatial sizes from the windows; channels / depth pooling."""
    spec = pool_spec(ctx.op_type, ctx.attrs)
    batch, channels, spatial = split_dims(spec, shape_dims(ctx.input_shape(0), spec.rank))
    out, _ = spec.output_dims(spatial, spec.ksize)
    depth_k = spec.outer_ksize[1]
    if channels is not None and depth_k > 1:
        channels //= depth_k
    return assemble(spec, batch, channels, out)


def _like_input(i: int):
    """Gradient ops are shaped like their input `i` (orig_input / orig_output)."""
    def shape_fn(ctx):
        spec = pool_spec(ctx.op_type, ctx.attrs)
        dims = [shape_dims(t._shape, spec.rank) for t in ctx.inputs]
        return TensorShape(dims[i])
    return shape_fn


def _avg_grad_shape(ctx):
    """AvgPoolGrad: the shape in orig_input_shape."""
    spec = pool_spec(ctx.op_type, ctx.attrs)
    shape_dims(ctx.input_shape(1), spec.rank)
    return TensorShape(shape_dims(ctx.static_shape(0), spec.rank))


def _window_attrs(explicit: bool):
    attrs = [Attr("ksize", "list(int)", minimum=4), Attr("strides", "list(int)", minimum=4),
             Attr("padding", "string")]
    if explicit:
        attrs.append(Attr("explicit_paddings", "list(int)", []))
    return attrs


def _define(fam: _Family):
    """The pooling ops of one rank: forward max/avg, their gradients, and MaxPoolGradGrad."""
    s = fam.suffix
    fmt = Attr("data_format", "string", fam.formats[0])
    explicit = not s
    ops = {
        "MaxPool": define_op(f"MaxPool{s}", ["input: T"], ["output: T"],
                             [TypeAttr("T", _MAX_TYPES), *_window_attrs(explicit), fmt],
                             _pool_shape),
        "AvgPool": define_op(f"AvgPool{s}", ["value: T" if not s else "input: T"],
                             ["output: T"], [TypeAttr("T", _FLOAT), *_window_attrs(False), fmt],
                             _pool_shape),
        "MaxPoolGrad": define_op(
            f"MaxPool{s}Grad",
            ["orig_input: TInput", "orig_output: TInput", "grad: T"] if s else
            ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"],
            [TypeAttr("T", _GRAD_TYPES), *_window_attrs(explicit), fmt] +
            ([TypeAttr("TInput", _FLOAT)] if s else []), _like_input(0)),
        "MaxPoolGradGrad": define_op(
            f"MaxPool{s}GradGrad", ["orig_input: T", "orig_output: T", "grad: T"],
            ["output: T"], [TypeAttr("T", _GRAD_TYPES), *_window_attrs(False), fmt],
            _like_input(1)),
        "AvgPoolGrad": define_op(
            f"AvgPool{s}Grad", ["orig_input_shape: int32", "grad: T"], ["output: T"],
            [TypeAttr("T", _FLOAT), *_window_attrs(False), fmt], _avg_grad_shape),
    }
    for op_def in ops.values():
        _FAMILY_OF[op_def.name] = fam
    return ops


POOL_OPS = {2: _define(_2D), 3: _define(_3D)}
MaxPool, AvgPool, MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad = POOL_OPS[2].values()
MaxPool3D, AvgPool3D, MaxPool3DGrad, MaxPool3DGradGrad, AvgPool3DGrad = POOL_OPS[3].values()


# --- gradients ----------------------------------------------------------------------------------
def _attrs(op, drop=("T", "TInput")) -> dict:
    return {k: v for k, v in op._attrs.items() if not k.startswith("_") and k not in drop}


def _ops_of(op) -> dict:
    return POOL_OPS[3 if _FAMILY_OF[op.type].suffix else 2]


def _max_pool_grad(op, grad):
    """MaxPoolGrad routes grad to the first maximum of each window."""
    return [apply_op(_ops_of(op)["MaxPoolGrad"], [op.inputs[0], op.outputs[0], grad],
                     _attrs(op))]


def _max_pool_grad_grad(op, grad):
    """MaxPoolGrad is linear in `grad`: its gradient gathers the incoming gradient at each
    window's maximum (MaxPoolGradGrad); orig_input/orig_output only pick positions."""
    attrs = _attrs(op, ("T", "TInput", "explicit_paddings"))
    return [zeros_like(op.inputs[0]), zeros_like(op.inputs[1]),
            apply_op(_ops_of(op)["MaxPoolGradGrad"], [op.inputs[0], op.inputs[1], grad], attrs)]


def _max_pool_grad_grad_grad(op, grad):
    """MaxPoolGradGrad is a gather at the maxima; its transpose is MaxPoolGrad's scatter."""
    return [zeros_like(op.inputs[0]), zeros_like(op.inputs[1]),
            apply_op(_ops_of(op)["MaxPoolGrad"], [op.inputs[0], op.inputs[1], grad], _attrs(op))]


def _avg_pool_grad(op, grad):
    """Each input gets grad / window count from every window that covers it."""
    return [apply_op(_ops_of(op)["AvgPoolGrad"], [shape(op.inputs[0]), grad], _attrs(op))]


def _avg_pool_grad_grad(op, grad):
    """AvgPoolGrad is the transpose of the (linear) AvgPool: its gradient is AvgPool."""
    return [None, apply_op(_ops_of(op)["AvgPool"], [grad], _attrs(op))]


for _ops in POOL_OPS.values():
    _ops["MaxPool"].gradient(_max_pool_grad)
    _ops["MaxPoolGrad"].gradient(_max_pool_grad_grad)
    _ops["MaxPoolGradGrad"].gradient(_max_pool_grad_grad_grad)
    _ops["AvgPool"].gradient(_avg_pool_grad)
    _ops["AvgPoolGrad"].gradient(_avg_pool_grad_grad)


# --- wrappers -----------------------------------------------------------------------------------
def _check_ksize(ksize) -> None:
    if (np.isscalar(ksize) and ksize == 0) or (
            isinstance(ksize, (list, tuple, np.ndarray)) and any(v == 0 for v in ksize)):
        raise ValueError(f"`ksize` cannot be zero. Received: ksize={ksize}")


def _pool(op_def, value, ksize, strides, padding, data_format, n: int, name, default: str,
          explicit: bool = True):
    """A pooling op named `name` (or the default scope name) with TF1's attr expansion."""
    with name_scope(name, default) as scope:
        fmt = data_format or ("NHWC" if n == 2 else "NDHWC")
        ci = 1 if fmt.startswith("NC") else n + 1
        _check_ksize(ksize)
        attrs = {"ksize": get_sequence(ksize, n, ci, "ksize"),
                 "strides": get_sequence(strides, n, ci, "strides"), "data_format": fmt}
        if explicit:
            attrs["padding"], attrs["explicit_paddings"] = convert_padding(padding, n + 2)
        else:
            attrs["padding"] = padding.decode() if isinstance(padding, bytes) else padding
        return apply_op(op_def, [value], attrs, name=scope)


def _pick(value, input):  # noqa: A002 - TF1's argument name
    if value is not None and input is not None:
        raise ValueError("Cannot specify both 'value' and 'input'")
    return value if value is not None else input


_POOL_DOC = """{summary}

    Args:
      {arg}: A {rank}-D Tensor laid out as `data_format` says.
      ksize: An int or a list of 1, {n} or {rank} ints: the window size per dimension.
      strides: An int or a list of 1, {n} or {rank} ints: the window stride per dimension.
      padding: "SAME" or "VALID"{explicit}.
      data_format: {formats}.
      name: A name for the operation (default "{default}").

    Returns:
      The pooled Tensor, of the input's dtype.
    """


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return _pool(MaxPool, _pick(value, input), ksize, strides, padding, data_format, 2, name,
                 "MaxPool")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return _pool(AvgPool, _pick(value, input), ksize, strides, padding, data_format, 2, name,
                 "AvgPool", explicit=False)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(MaxPool, input, ksize, strides, padding, data_format, 2, name, "MaxPool2d")


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(AvgPool, input, ksize, strides, padding, data_format, 2, name, "AvgPool2D",
                 explicit=False)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    return _pool(MaxPool3D, input, ksize, strides, padding, data_format, 3, name, "MaxPool3D",
                 explicit=False)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    return _pool(AvgPool3D, input, ksize, strides, padding, data_format, 3, name, "AvgPool3D",
                 explicit=False)


def _pool1d(op_def, input, ksize, strides, padding, data_format, name, default,  # noqa: A002
            explicit):
    """expand_dims to 2-D, pool, squeeze back (TF's composite for the 1-D forms)."""
    with name_scope(name, default) as scope:
        fmt = data_format or "NWC"
        if fmt not in ("NWC", "NCW"):
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: "
                             f"data_format={fmt}")
        ci = 1 if fmt == "NCW" else 2
        _check_ksize(ksize)
        attrs = {"ksize": [1] + get_sequence(ksize, 1, ci, "ksize"),
                 "strides": [1] + get_sequence(strides, 1, ci, "strides"),
                 "data_format": "NHWC" if fmt == "NWC" else "NCHW"}
        if explicit:
            padding, pads = convert_padding(padding, 3)
            attrs["explicit_paddings"] = [0, 0] + pads if padding == "EXPLICIT" else []
        attrs["padding"] = padding
        axis = 1 if fmt == "NWC" else 2
        result = apply_op(op_def, [expand_dims(input, axis)], attrs, name=scope)
        return squeeze(result, [axis])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool1d(MaxPool, input, ksize, strides, padding, data_format, name, "MaxPool1d",
                   True)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool1d(AvgPool, input, ksize, strides, padding, data_format, name, "AvgPool1D",
                   False)


for _fn, _summary, _rank, _default, _arg, _explicit in (
        (max_pool, "Performs max pooling on the input (each window's maximum).", 4, "MaxPool",
         "value", True),
        (avg_pool, "Performs average pooling on the input (each window's mean; padding is not "
         "counted).", 4, "AvgPool", "value", False),
        (max_pool2d, "Performs 2-D max pooling on the input.", 4, "MaxPool2d", "input", True),
        (avg_pool2d, "Performs 2-D average pooling on the input.", 4, "AvgPool2D", "input",
         False),
        (max_pool3d, "Performs 3-D max pooling on the input.", 5, "MaxPool3D", "input", False),
        (avg_pool3d, "Performs 3-D average pooling on the input.", 5, "AvgPool3D", "input",
         False),
        (max_pool1d, "Performs 1-D max pooling (a composite of expand_dims, MaxPool and "
         "squeeze).", 3, "MaxPool1d", "input", True),
        (avg_pool1d, "Performs 1-D average pooling (a composite of expand_dims, AvgPool and "
         "squeeze).", 3, "AvgPool1D", "input", False)):
    _fn.__doc__ = _POOL_DOC.format(
        summary=_summary, arg=_arg, rank=_rank, n=_rank - 2, default=_default,
        explicit=", or a list of [before, after] pairs per dimension" if _explicit else "",
        formats={3: '"NWC" (default) or "NCW"', 4: '"NHWC" (default) or "NCHW"',
                 5: '"NDHWC" (default) or "NCDHW"'}[_rank])
