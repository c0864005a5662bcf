"""Array identity, shape queries and shape manipulation: Identity, Shape, Reshape, Transpose, ...

Each op is a typed OpDef with a shape function that follows TensorFlow's shape inference (same
partial results with unknown dims, same ValueErrors at construction), its gradient, and, where
the op carries shapes, a static-value rule so later shape functions see through `tf.shape(x)`
or a reshaped constant. Kernels live in `kernels/array.py`. Creation ops (Fill, Range, zeros,
...) live in `array_creation_ops.py` and Tile/Pad/ReverseV2 in `array_tile_pad_ops.py`; the
wrappers other families import from here are re-exported.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns, tensor_util
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.shape_text import dims_text
from tensorweave.framework.static_value import register_static_value, static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import (  # noqa: F401 - re-exported for other families
    fill,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_tile_pad_ops import (  # noqa: F401
    pad,
    reverse,
    reverse_sequence,
    reverse_v2,
    tile,
)
from tensorweave.ops.constant_op import constant

__all__ = ["expand_dims", "get_static_value", "identity", "identity_n", "newaxis", "pad", "rank",
           "reshape", "reverse", "reverse_sequence", "reverse_v2", "shape", "shape_n", "size",
           "squeeze", "stop_gradient", "tile", "transpose"]

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX

newaxis = None  # tf.newaxis: `x[:, tf.newaxis]` inserts a dimension of size 1


def get_static_value(tensor, partial=False):
    """The value of `tensor` if the graph fixes it at construction time, else None.

    TF's `tf.get_static_value`: constants, shapes of fully-defined tensors, and ops over them
    (Identity, Reshape, Pack, ...) have static values. Non-tensor arguments are returned as is.

    Args:
      tensor: a Tensor, or any other value.
      partial: accepted for TF compatibility; partial values are not computed.

    Returns:
      A NumPy array or None.
    """
    del partial
    if isinstance(tensor, Tensor):
        return tensor_util.constant_value(tensor)   # a new array, as TF's
    if hasattr(tensor, "_as_graph_element"):
        return None  # a Variable's value is not fixed by the graph
    return tensor


def _dims(shape: TensorShape):
    return shape._dims


# --- Identity, IdentityN, StopGradient --------------------------------------------------------
Identity = define_op("Identity", inputs=["input: T"], outputs=["output: T"],
                     attrs=[TypeAttr("T")], shape_fn=shape_fns.unchanged,
                     doc="The input unchanged; a ref input (a variable) is read as its value.")
StopGradient = define_op("StopGradient", inputs=["input: T"], outputs=["output: T"],
                         attrs=[TypeAttr("T")], shape_fn=shape_fns.unchanged,
                         not_differentiable=True, doc="The input, as a constant to autodiff.")
IdentityN = define_op("IdentityN", inputs=[Arg("input", type_list_attr="T")],
                      outputs=[Arg("output", type_list_attr="T")],
                      attrs=[Attr("T", "list(type)", minimum=1)],
                      shape_fn=lambda ctx: ctx.input_shapes, doc="Each input unchanged.")


@register_static_value("Identity")
@register_static_value("StopGradient")
@register_static_value("IdentityN")
def _forwarded_value(op, index):
    return static_value(op.inputs[index if op.type == "IdentityN" else 0])


@Identity.gradient
def _identity_grad(op, grad):
    """Passes the gradient through, a sparse (IndexedSlices) one included."""
    return [grad]


@IdentityN.gradient
def _identity_n_grad(op, *grads):
    return list(grads)


def identity(input, name=None):  # noqa: A002 - TF1's argument name
    """Returns a tensor with the same shape and contents as `input`.

    Reading a TF1 Variable is an Identity of its reference, so the result is a snapshot of the
    variable's value that later assigns do not change.

    Args:
      input: a Tensor (or anything convertible to one, including a Variable).
      name: the op name (default "Identity").

    Returns:
      A Tensor of the same dtype and shape.
    """
    return apply_op(Identity, [input], name=name)


def identity_n(input, name=None):  # noqa: A002 - TF1's argument name
    """Returns a list of tensors with the same shapes and contents as the inputs.

    Args:
      input: a list of Tensors (of any dtypes).
      name: the op name (default "IdentityN").

    Returns:
      A list of Tensors, one per input.
    """
    return apply_op(IdentityN, [list(input)], name=name)


def stop_gradient(input, name=None):  # noqa: A002 - TF1's argument name
    """Returns `input` unchanged, but blocks gradients from flowing through it.

    `tf.gradients` treats the result as a constant: nothing is propagated to the ops that
    computed `input` through this path.

    Args:
      input: a Tensor.
      name: the op name (default "StopGradient").

    Returns:
      A Tensor equal to `input`.
    """
    return apply_op(StopGradient, [input], name=name)


# --- Shape, ShapeN, Size, Rank -----------------------------------------------------------------
def _out_type():
    return TypeAttr("out_type", _INDEX, _dtypes.int32)


Shape = define_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
                  attrs=[TypeAttr("T"), _out_type()], not_differentiable=True,
                  shape_fn=lambda ctx: TensorShape([ctx.input_shape(0).ndims]))
ShapeN = define_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
                   attrs=[TypeAttr("T"), _out_type()], not_differentiable=True,
                   shape_fn=lambda ctx: [TensorShape([s.ndims]) for s in ctx.input_shapes])
Size = define_op("Size", inputs=["input: T"], outputs=["output: out_type"],
                 attrs=[TypeAttr("T"), _out_type()], shape_fn=shape_fns.scalar,
                 not_differentiable=True)
Rank = define_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=[TypeAttr("T")],
                 shape_fn=shape_fns.scalar, not_differentiable=True)


@register_static_value("Shape")
@register_static_value("ShapeN")
def _shape_value(op, index):
    shape = op.inputs[index]._shape
    if not shape.is_fully_defined():
        return None
    return np.array(shape.as_list(), dtype=op._attrs["out_type"].as_numpy_dtype)


@register_static_value("Size")
def _size_value(op, index):
    n = op.inputs[0]._shape.num_elements()
    return None if n is None else np.array(n, dtype=op._attrs["out_type"].as_numpy_dtype)


@register_static_value("Rank")
def _rank_value(op, index):
    n = op.inputs[0]._shape.ndims
    return None if n is None else np.array(n, dtype=np.int32)


def shape_internal(input, name=None, optimize=True, out_type=_dtypes.int32):  # noqa: A002
    """`shape` for other wrappers: a Const when the static shape is fully defined."""
    with name_scope(name, "Shape", [input]) as scope:
        input = convert_to_tensor(input)
        static = input.shape
        if optimize and static.is_fully_defined():
            return constant(static.as_list(), dtype=out_type, name=scope)
        return apply_op(Shape, [input], {"out_type": out_type}, name=scope)


def shape(input, name=None, out_type=_dtypes.int32):  # noqa: A002 - TF1's argument name
    """Returns the shape of a tensor as a 1-D tensor.

    Like TensorFlow, a fully-defined static shape becomes a constant; otherwise a `Shape` op
    reads the shape at run time (e.g. the batch size of a placeholder).

    Args:
      input: a Tensor.
      name: the op name (default "Shape").
      out_type: int32 (default) or int64.

    Returns:
      A 1-D Tensor of `out_type` with one entry per dimension of `input`.
    """
    return shape_internal(input, name, True, _dtypes.as_dtype(out_type))


def shape_n(input, out_type=_dtypes.int32, name=None):  # noqa: A002 - TF1's argument name
    """Returns the shapes of several tensors (one `ShapeN` op).

    Args:
      input: a list of Tensors of one dtype.
      out_type: int32 (default) or int64.
      name: the op name (default "ShapeN").

    Returns:
      A list of 1-D Tensors, the shape of each input.
    """
    return apply_op(ShapeN, [list(input)], {"out_type": out_type}, name=name)


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002 - TF1's argument name
    """Returns the number of elements of a tensor as a scalar.

    Args:
      input: a Tensor.
      name: the op name (default "Size").
      out_type: int32 (default) or int64.

    Returns:
      A scalar Tensor of `out_type` (a constant when the static shape is fully defined).
    """
    out_type = _dtypes.as_dtype(out_type)
    with name_scope(name, "Size", [input]) as scope:
        input = convert_to_tensor(input)
        n = input.shape.num_elements()
        if n is not None:
            return constant(n, dtype=out_type, name=scope)
        return apply_op(Size, [input], {"out_type": out_type}, name=scope)


def rank(input, name=None):  # noqa: A002 - TF1's argument name
    """Returns the number of dimensions of a tensor as an int32 scalar.

    Args:
      input: a Tensor.
      name: the op name (default "Rank").

    Returns:
      A scalar int32 Tensor (a constant when the static rank is known).
    """
    with name_scope(name, "Rank", [input]) as scope:
        input = convert_to_tensor(input)
        if input.shape.ndims is not None:
            return constant(input.shape.ndims, dtype=_dtypes.int32, name=scope)
        return apply_op(Rank, [input], name=scope)


# --- Reshape -----------------------------------------------------------------------------------
def _reshape_target(ctx) -> list | None:
    """The requested shape with None for -1 or unknown entries; None if its rank is unknown."""
    shape_rank = ctx.input_shape(1).ndims
    if shape_rank is not None and shape_rank > 1:
        raise ValueError(f"Shape must be rank 1 but is rank {shape_rank}")
    # Like TF's MakeShapeFromShapeTensor: a Const entry below -1 fails while the shape is
    # materialized (ShapeContext.static_shape); a packed negative scalar is an unknown dim.
    partial = ctx.static_shape(1)
    return None if partial.ndims is None else partial.as_list()


def _reshape_shape(ctx):
    """TF's reshape inference: fill the one unknown output dim from a fully-known input."""
    out = _reshape_target(ctx)
    if out is None:
        return _ts.unknown_shape()
    in_dims = _dims(ctx.input_shape(0))
    if in_dims is None:
        return TensorShape(out)
    out_unknown = [i for i, d in enumerate(out) if d is None]
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    if len(out_unknown) > 1 or len(in_unknown) > 1:
        return TensorShape(out)
    known_out = int(np.prod([d for d in out if d is not None], dtype=np.int64))
    known_in = int(np.prod([d for d in in_dims if d is not None], dtype=np.int64))
    if not in_unknown and not out_unknown:
        if known_in != known_out:
            raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape "
                             f"{dims_text(out)} ({known_out} elements)")
    elif not in_unknown and known_out > 0:
        if known_in % known_out:
            raise ValueError(f"Dimension size must be evenly divisible by {known_out} but is "
                             f"{known_in}")
        out[out_unknown[0]] = known_in // known_out
    elif not out_unknown and known_in > 0:
        if known_out % known_in:
            raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is "
                             f"{known_out}")
    return TensorShape(out)


Reshape = define_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                    attrs=[TypeAttr("T"), TypeAttr("Tshape", _INDEX, _dtypes.int32)],
                    shape_fn=_reshape_shape)


def _static_args(op):
    """The static values of all of `op`'s inputs, or None."""
    values = [static_value(t) for t in op.inputs]
    return None if any(v is None for v in values) else values


@register_static_value("Reshape")
def _reshape_value(op, index):
    args = _static_args(op)
    if args is None:
        return None
    try:
        return np.reshape(args[0], np.ravel(args[1]).tolist())
    except ValueError:
        return None


def _reshaped_back(op, grad):
    """[grad reshaped to the first input's shape, None for the other inputs]: the gradient of
    every op that only changes how the elements are laid out in dimensions."""
    return [reshape(grad, shape(op.inputs[0]))] + [None] * (len(op.inputs) - 1)


Reshape.gradient(_reshaped_back)


def reshape(tensor, shape, name=None):
    """Reshapes a tensor (TF1's tf.reshape).

    One entry of `shape` may be -1: that dimension is inferred so the element count is
    unchanged. The result's static shape is inferred as far as the graph allows (e.g.
    `[-1, 2, 3]` of a `[None, 6]` tensor is `[None, 2, 3]`).

    Args:
      tensor: a Tensor.
      shape: a 1-D int32/int64 Tensor or list (may hold tensors) giving the new shape.
      name: the op name (default "Reshape").

    Returns:
      A Tensor with the elements of `tensor` in row-major order and the given shape.

    Raises:
      ValueError: if the static element counts cannot match (24 elements into [5, 5]).
    """
    return apply_op(Reshape, [tensor, shape], name=name)


# --- ExpandDims, Squeeze -----------------------------------------------------------------------
def _expand_dims_shape(ctx):
    in_dims = _dims(ctx.input_shape(0))
    dim = ctx.static_value(1)
    if dim is None:
        return _ts.unknown_shape(None if in_dims is None else len(in_dims) + 1)
    if np.size(dim) != 1:
        raise ValueError("'dim' input must be a tensor with a single value")
    if in_dims is None:
        return _ts.unknown_shape()
    d, r = int(np.ravel(dim)[0]), len(in_dims)
    if not -r - 1 <= d <= r:
        raise ValueError(f"dim {d} not in the interval [{-r - 1}, {r}].")
    if d < 0:
        d += r + 1
    return TensorShape(in_dims[:d] + (1,) + in_dims[d:])


ExpandDims = define_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
                       attrs=[TypeAttr("T"), TypeAttr("Tdim", _INDEX, _dtypes.int32)],
                       shape_fn=_expand_dims_shape)


@register_static_value("ExpandDims")
def _expand_dims_value(op, index):
    args = _static_args(op)
    if args is None or np.size(args[1]) != 1:
        return None
    try:
        return np.expand_dims(args[0], int(np.ravel(args[1])[0]))
    except ValueError:  # includes NumPy's AxisError
        return None


ExpandDims.gradient(_reshaped_back)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 - TF1's argument name
    """Inserts a dimension of size 1 at index `axis` (TF1's tf.expand_dims).

    Args:
      input: a Tensor.
      axis: a scalar in [-rank(input) - 1, rank(input)]; negative counts from the end.
      name: the op name (default "ExpandDims").
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor with one more dimension.

    Raises:
      ValueError: if neither or both of `axis` and `dim` are given, or `axis` is out of range.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op(ExpandDims, [input, axis], name=name)


def _squeeze_shape(ctx):
    in_dims = _dims(ctx.input_shape(0))
    if in_dims is None:
        return _ts.unknown_shape()
    r = len(in_dims)
    listed = set()
    for i, d in enumerate(ctx.attrs["squeeze_dims"]):
        if not -r <= d < r:
            raise ValueError(f"squeeze_dims[{i}] not in [{-r},{r}).")
        listed.add(d % r)
    out = []
    for i, d in enumerate(in_dims):
        if listed:
            if i not in listed:
                out.append(d)
            elif d is not None and d != 1:  # an unknown listed dim is assumed to be 1
                raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        elif d is None:
            return _ts.unknown_shape()  # whether it is removed is only known at run time
        elif d != 1:
            out.append(d)
    return TensorShape(out)


Squeeze = define_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
                    attrs=[TypeAttr("T"), Attr("squeeze_dims", "list(int)", [])],
                    shape_fn=_squeeze_shape)


@register_static_value("Squeeze")
def _squeeze_value(op, index):
    value = static_value(op.inputs[0])
    if value is None:
        return None
    dims = op._attrs["squeeze_dims"]
    return np.squeeze(value, axis=tuple(dims)) if dims else np.squeeze(value)


Squeeze.gradient(_reshaped_back)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002 - TF1's arg name
    """Removes dimensions of size 1 (TF1's tf.squeeze).

    Args:
      input: a Tensor.
      axis: an int or list of ints: the dimensions to remove (each must have size 1). By
        default every size-1 dimension is removed.
      name: the op name (default "Squeeze").
      squeeze_dims: deprecated alias of `axis`.

    Returns:
      A Tensor with the same elements and fewer dimensions.

    Raises:
      ValueError: if a listed dimension is statically not 1, or both aliases are given.
    """
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif np.isscalar(axis):
        axis = [axis]
    return apply_op(Squeeze, [input], {"squeeze_dims": list(axis)}, name=name)


# --- Transpose, ConjugateTranspose --------------------------------------------------------------
def _transpose_shape(ctx):
    in_dims = _dims(ctx.input_shape(0))
    n = dims_with_rank(_dims(ctx.input_shape(1)), 1)[0]
    if in_dims is not None and n is not None and n != len(in_dims):
        raise ValueError(f"Dimension must be {len(in_dims)} but is {n}")
    r = len(in_dims) if in_dims is not None else n
    if r is None:
        return _ts.unknown_shape()
    perm = ctx.static_value(1)
    if perm is None:
        return _ts.unknown_shape(r)
    dims = in_dims if in_dims is not None else (None,) * r
    out = []
    for p in np.ravel(perm).tolist():
        q = p + r if p < 0 else p
        if not 0 <= q < r:
            raise ValueError(f"perm dim {p} is out of range of input rank {r}")
        out.append(dims[q])
    return TensorShape(out)


Transpose = define_op("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                      attrs=[TypeAttr("T"), TypeAttr("Tperm", _INDEX, _dtypes.int32)],
                      shape_fn=_transpose_shape)
ConjugateTranspose = define_op(
    "ConjugateTranspose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
    attrs=[TypeAttr("T"), TypeAttr("Tperm", _INDEX, _dtypes.int32)], shape_fn=_transpose_shape)


@register_static_value("Transpose")
@register_static_value("ConjugateTranspose")
def _transpose_value(op, index):
    args = _static_args(op)
    if args is None:
        return None
    try:
        value = np.transpose(args[0], np.ravel(args[1]).tolist())
    except ValueError:  # not a permutation: the kernel reports it at run time
        return None
    return np.conj(value) if op.type == "ConjugateTranspose" else value


def _inverse_permutation(perm):
    """The permutation undoing `perm` (whose entries may be negative, counting from the end):
    a constant when `perm` is static, else a ScatterNd of positions into the places `perm`
    names."""
    value = static_value(perm)
    if value is not None:
        value = np.ravel(value)
        return constant(np.argsort(value % max(value.size, 1)).astype(value.dtype))
    from tensorweave.ops.array_index_ops import scatter_nd
    from tensorweave.ops.math_ops import floormod, maximum
    n = size(perm, out_type=perm.dtype)
    places = floormod(perm, maximum(n, 1))
    return scatter_nd(reshape(places, [-1, 1]), _range(0, n, 1, dtype=perm.dtype),
                      shape(perm, out_type=perm.dtype))


@Transpose.gradient
def _transpose_grad(op, grad):
    """Transposes back: by the inverse permutation."""
    return [transpose(grad, _inverse_permutation(op.inputs[1])), None]


@ConjugateTranspose.gradient
def _conjugate_transpose_grad(op, grad):
    """y = conj(x) permuted, so dx = conj(dy) permuted back."""
    return [apply_op(ConjugateTranspose, [grad, _inverse_permutation(op.inputs[1])]), None]


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of `a` (TF1's tf.transpose).

    Output dimension i is input dimension `perm[i]`. Without `perm` the dimensions are
    reversed (a matrix transpose for 2-D input).

    Args:
      a: a Tensor.
      perm: a permutation of [0, rank(a)); default reversed order.
      name: the op name.
      conjugate: for complex `a`, also conjugate (`ConjugateTranspose`).

    Returns:
      The transposed Tensor.

    Raises:
      ValueError: if `perm` statically has the wrong length or an out-of-range entry.
    """
    with name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        op_def = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
        if perm is None:
            r = a.shape.ndims
            if r is not None:
                perm = constant(np.arange(r - 1, -1, -1, dtype=np.int32), name="perm")
            else:  # rank - 1 - range(rank) = range(rank) reversed
                perm = reverse(_range(0, apply_op(Rank, [a], name="Rank"), 1), [0])
        return apply_op(op_def, [a, perm], name=scope)
