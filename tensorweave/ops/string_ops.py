"""String ops: AsString, StringJoin, ReduceJoin, StringLength, case, StringStrip and Substr.

Regular expressions are in string_regex_ops.py.

Kernels are in kernels/strings.py. Strings are bytes; ops with a `unit` or `encoding` attr read
them as UTF-8 when asked. None of these ops is differentiable.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import shape_with_rank
from tensorweave.framework.shape_text import shape_text
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["as_string", "reduce_join", "string_join", "string_strip", "substr",
           "unsorted_segment_join"]

_d = _dtypes
AS_STRING_TYPES = _d.REAL_NUMERIC | _d.COMPLEX | {_d.bool, _d.string}
_UNITS = ("BYTE", "UTF8_CHAR")


def _merge_shapes(ctx, indices, message) -> _ts.TensorShape:
    """The merge of the shapes of inputs `indices`; ValueError `message(a, b)` if they differ."""
    merged = _ts.unknown_shape()
    for i in indices:
        shape = ctx.input_shape(i)
        if not merged.is_compatible_with(shape):
            raise ValueError(message(merged, shape))
        merged = merged.merge_with(shape)
    return merged


def _string_join_shape(ctx):
    """Scalars broadcast; all other inputs must have one shape (no general broadcasting)."""
    def mismatch(a, b):
        if a.ndims != b.ndims:
            return f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}"
        i = next(k for k, (x, y) in enumerate(zip(a.as_list(), b.as_list()))
                 if x is not None and y is not None and x != y)
        return (f"Dimension {i} in both shapes must be equal, but are {a[i].value} and "
                f"{b[i].value}. Shapes are {shape_text(a)} and {shape_text(b)}.")
    non_scalar = [i for i, s in enumerate(ctx.input_shapes) if s.ndims != 0]
    if not non_scalar:
        return _ts.TensorShape([])
    return _merge_shapes(ctx, non_scalar, mismatch)


def _reduce_join_shape(ctx):
    """Input 0 without (or, with keep_dims, with 1 for) the axes of input 1."""
    shape = ctx.input_shape(0)
    keep = ctx.attrs["keep_dims"]
    axes_rank = ctx.input_shape(1).ndims
    if axes_rank is not None and axes_rank > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {axes_rank}")
    axes = ctx.static_value(1)
    if axes is None or shape.ndims is None:
        return _ts.unknown_shape(rank=shape.ndims) if keep and shape.ndims is not None \
            else _ts.unknown_shape()
    rank = shape.ndims
    reduced = set()
    for axis in np.ravel(axes).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {rank} "
                             "dimensions.")
        reduced.add(axis % rank)
    dims = shape.as_list()
    if keep:
        return _ts.TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])
    return _ts.TensorShape([d for i, d in enumerate(dims) if i not in reduced])


def _substr_shape(ctx):
    """As TF's SubstrShapeFn: `pos` takes the rank of `len`, then every size of `pos` must
    equal `len`'s (an unknown size never equals a known one); the output is `input`
    broadcast with `pos`."""
    pos, length = ctx.input_shape(1), ctx.input_shape(2)
    if length.ndims is not None:
        shape_with_rank(pos, length.ndims)
    if pos.ndims is not None:
        sizes = length.as_list() if length.ndims is not None else [None] * pos.ndims
        if pos.as_list() != sizes:
            raise ValueError(f"pos and len shapes must match: {shape_text(pos)} vs. "
                             f"{shape_text(length)}")
    return shape_fns.broadcast_shapes(ctx.input_shape(0), pos)


AsString = define_op(
    "AsString", inputs=["input: T"], outputs=["output: string"],
    attrs=[TypeAttr("T", AS_STRING_TYPES), Attr("precision", "int", -1),
           Attr("scientific", "bool", False), Attr("shortest", "bool", False),
           Attr("width", "int", -1), Attr("fill", "string", "")],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="Each element printed with a printf-style format.")

StringJoin = define_op(
    "StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
    attrs=[Attr("N", "int", minimum=0), Attr("separator", "string", "")],
    shape_fn=_string_join_shape, not_differentiable=True,
    doc="Elementwise concatenation of the inputs with `separator`; scalars broadcast.")

ReduceJoin = define_op(
    "ReduceJoin", inputs=["inputs: string", "reduction_indices: int32"],
    outputs=["output: string"],
    attrs=[Attr("keep_dims", "bool", False), Attr("separator", "string", "")],
    shape_fn=_reduce_join_shape, not_differentiable=True,
    doc="Joins the strings along the given axes.")

StringLength = define_op(
    "StringLength", inputs=["input: string"], outputs=["output: int32"],
    attrs=[Attr("unit", "string", "BYTE")],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="The length of each string in bytes or UTF-8 characters.")

StringLower = define_op(
    "StringLower", inputs=["input: string"], outputs=["output: string"],
    attrs=[Attr("encoding", "string", "")], shape_fn=shape_fns.unchanged,
    not_differentiable=True, doc="Each string in lower case (ASCII, or UTF-8).")

StringUpper = define_op(
    "StringUpper", inputs=["input: string"], outputs=["output: string"],
    attrs=[Attr("encoding", "string", "")], shape_fn=shape_fns.unchanged,
    not_differentiable=True, doc="Each string in upper case (ASCII, or UTF-8).")

StringStrip = define_op(
    "StringStrip", inputs=["input: string"], outputs=["output: string"],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="Each string without leading and trailing ASCII whitespace.")

Substr = define_op(
    "Substr", inputs=["input: string", "pos: T", "len: T"], outputs=["output: string"],
    attrs=[TypeAttr("T", _d.INDEX), Attr("unit", "string", "BYTE")],
    shape_fn=_substr_shape, not_differentiable=True,
    doc="Substrings of `len` bytes or UTF-8 characters starting at `pos`.")


def _check_unit(op_type: str, unit: str) -> str:
    if unit not in _UNITS:
        raise ValueError(f"Attr 'unit' of '{op_type}' Op passed string '{unit}' not in: "
                         '"BYTE", "UTF8_CHAR".')
    return unit


def as_string(input, precision=-1, scientific=False, shortest=False,  # noqa: A002 - TF name
              width=-1, fill="", name=None):
    """Converts each entry of a tensor to a string (TF's tf.as_string).

    Numbers use printf formats: floats "%f" (or "%e" with `scientific`, "%g" with `shortest`),
    integers "%d", complex numbers "(re,im)", booleans "true"/"false"; strings pass through.

    Args:
      input: a numeric, boolean or string Tensor.
      precision: digits after the point for floats (-1: printf's default).
      scientific: use scientific notation for floats.
      shortest: use the shorter of %f and %e (%g) for floats.
      width: pad each value to at least this many characters (-1: no padding).
      fill: the padding flag: "" or " " (spaces), "0" (zeros), "-" (left-align), "+" (sign),
        "#" (alternate form).
      name: a name for the operation.

    Returns:
      A string Tensor shaped like `input`.

    Raises (when the op runs):
      InvalidArgumentError: for `scientific` with `shortest`, a `precision` of a non-float
        type, or an unsupported `fill`.
    """
    return apply_op(AsString, [input],
                    {"precision": precision, "scientific": scientific, "shortest": shortest,
                     "width": width, "fill": fill}, name=name or "AsString")


def string_join(inputs, separator="", name=None):
    """Joins a list of string tensors elementwise (TF1's tf.string_join / tf.strings.join).

    Args:
      inputs: a list of string Tensors, all of one shape or scalars (scalars broadcast).
      separator: the string between joined parts.
      name: a name for the operation.

    Returns:
      A string Tensor of the common shape.

    Raises:
      ValueError: if the non-scalar inputs' static shapes differ.
    """
    inputs = list(inputs)
    # Like TF's generated wrapper, values become Consts named "<op>/inputs_<i>".
    with name_scope(name or "StringJoin") as scope:
        inputs = [v if isinstance(v, Tensor) else convert_to_tensor(v, name=f"inputs_{i}")
                  for i, v in enumerate(inputs)]
    return apply_op(StringJoin, [inputs], {"separator": separator}, name=scope)


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins all strings along the given axes (TF1's tf.reduce_join).

    With several axes, the first one listed varies fastest in the joined order; with
    `axis=None` every axis is reduced in row-major order.

    Args:
      inputs: a string Tensor.
      axis: the axes to reduce (None: all), negative values counting from the end.
      keep_dims: deprecated alias of `keepdims`.
      separator: the string between joined parts.
      name: a name for the operation (inside a "ReduceJoin" scope, as in TF).
      reduction_indices: deprecated alias of `axis`.
      keepdims: keep the reduced axes with length 1.

    Returns:
      A string Tensor.

    Raises:
      ValueError: for an axis out of range, or for both an argument and its alias.
    """
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
    axis = axis if axis is not None else reduction_indices
    with name_scope(None, "ReduceJoin", [inputs, axis]):
        inputs = convert_to_tensor(inputs)
        if axis is None:
            rank = inputs.shape.ndims
            if rank is not None:
                axis = convert_to_tensor(np.arange(rank - 1, -1, -1, dtype=np.int32))
            else:
                from tensorweave.ops.array_creation_ops import range as _range
                from tensorweave.ops.array_ops import rank as _rank
                axis = _range(_rank(inputs) - 1, -1, -1)
        return apply_op(ReduceJoin, [inputs, axis],
                        {"keep_dims": keep, "separator": separator}, name=name or "ReduceJoin")


def string_length(input, name=None, unit="BYTE"):  # noqa: A002 - TF's argument name
    """The length of each string (tf.strings.length).

    Args:
      input: a string Tensor.
      name: a name for the operation.
      unit: "BYTE" or "UTF8_CHAR" (for invalid UTF-8, every byte that is not a continuation
        byte counts as a character).

    Returns:
      An int32 Tensor shaped like `input`.
    """
    return apply_op(StringLength, [input], {"unit": _check_unit("StringLength", unit)},
                    name=name or "StringLength")


def string_lower(input, encoding="", name=None):  # noqa: A002 - TF's argument name
    """Each string in lower case (tf.strings.lower).

    Args:
      input: a string Tensor.
      encoding: "" (ASCII letters only) or "utf-8" (Unicode letters).
      name: a name for the operation.

    Returns:
      A string Tensor shaped like `input`.
    """
    return apply_op(StringLower, [input], {"encoding": encoding}, name=name or "StringLower")


def string_upper(input, encoding="", name=None):  # noqa: A002 - TF's argument name
    """Each string in upper case (tf.strings.upper); see `string_lower`."""
    return apply_op(StringUpper, [input], {"encoding": encoding}, name=name or "StringUpper")


def string_strip(input, name=None):  # noqa: A002 - TF's argument name
    """Each string without leading and trailing ASCII whitespace (tf.string_strip).

    Args:
      input: a string Tensor.
      name: a name for the operation.

    Returns:
      A string Tensor shaped like `input`.
    """
    return apply_op(StringStrip, [input], name=name or "StringStrip")


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's argument names
    """Substrings of each string (TF1's tf.substr / tf.strings.substr).

    Args:
      input: a string Tensor.
      pos: int32 or int64 start positions (negative: from the end), shaped like `len` and
        broadcastable with `input`.
      len: the substring lengths; a substring stops at the end of its string.
      name: a name for the operation.
      unit: "BYTE" or "UTF8_CHAR".

    Returns:
      A string Tensor of the broadcast shape.

    Raises:
      ValueError: if `pos` and `len` have different static shapes.
      InvalidArgumentError (when the op runs): if a position is outside its string.
    """
    return apply_op(Substr, [input, pos, len], {"unit": _check_unit("Substr", unit)},
                    name=name or "Substr")


def _unsorted_segment_join_op():
    from tensorweave.ops.math_segment_ops import unsorted_segment_shape
    return define_op(
        "UnsortedSegmentJoin",
        inputs=["inputs: string", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        outputs=["output: string"],
        attrs=[Attr("separator", "string", ""), TypeAttr("Tindices", _dtypes.INDEX),
               TypeAttr("Tnumsegments", _dtypes.INDEX, default=_dtypes.int32)],
        shape_fn=unsorted_segment_shape, not_differentiable=True,
        doc="The strings of each segment joined with `separator`, in order; empty segments "
            "give empty strings.")


UnsortedSegmentJoin = _unsorted_segment_join_op()


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins the rows of `inputs` that share a segment id, in their order, with `separator`:
    output [num_segments] + inputs.shape[rank(segment_ids):] (tf.strings.unsorted_segment_join).

    Running it raises InvalidArgumentError for a segment id outside [0, num_segments)."""
    return apply_op(UnsortedSegmentJoin, [inputs, segment_ids, num_segments],
                    {"separator": separator}, name=name)
