"""Slicing: Slice, StridedSlice, its adjoint StridedSliceGrad, and `Tensor.__getitem__` (TF1's
slice helper).

`strided_slice_plan` is the one statement of StridedSlice's index semantics: the shape
function, the static-value rule and the CPU kernels (StridedSlice's and StridedSliceGrad's) all
call it, so they cannot disagree. `tensor[...]` builds one StridedSlice named "strided_slice",
exactly as TF1 does. Slice's gradient pads; StridedSlice's is StridedSliceGrad, whose own
gradient is the StridedSlice again, so second derivatives work.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.static_value import register_static_value, static_value, static_values
from tensorweave.ops.array_join_ops import INDEX_TYPES, is_tensor

__all__ = ["newaxis", "slice", "strided_slice"]

newaxis = None  # tf.newaxis: inserts a dimension of size 1 when slicing

TensorShape = _ts.TensorShape
_PySlice = builtins.slice  # the name `slice` below is TF's tf.slice


# --- Slice -----------------------------------------------------------------------------------
def slice_index(dims, begin, size) -> tuple:
    """The NumPy index of Slice(begin, size) on a tensor of shape `dims`; ValueError if bad."""
    if not len(begin) == len(size) == len(dims):
        raise ValueError(f"Expected begin and size arguments to be 1-D tensors of size "
                         f"{len(dims)}, but got shapes [{len(begin)}] and [{len(size)}] instead.")
    index = []
    for i, (dim, b, s) in enumerate(zip(dims, begin, size)):
        b, s = int(b), int(s)
        if s == -1:
            s = dim - b
        if not 0 <= b <= dim:
            raise ValueError(f"Expected begin[{i}] in [0, {dim}], but got {b}")
        if not 0 <= s <= dim - b:
            raise ValueError(f"Expected size[{i}] in [0, {dim - b}], but got {s}")
        index.append(_PySlice(b, b + s))
    return tuple(index)


def _partial(ctx, i: int, n):
    """Input i (1-D) as a tuple of ints/None of length n: exact value, else Pack/Shape parts."""
    value = ctx.static_value(i)
    if value is not None:
        return tuple(int(v) for v in value)
    dims = ctx.static_shape(i)._dims
    return dims if dims is not None and len(dims) == n else (None,) * n


def _slice_shape(ctx):
    dims = ctx.input_shape(0)._dims
    n = merge_dims(dims_with_rank(ctx.input_shape(1)._dims, 1),
                   dims_with_rank(ctx.input_shape(2)._dims, 1))[0]
    if dims is not None:
        if n is not None and n != len(dims):
            raise ValueError(f"Shape must be rank {n} but is rank {len(dims)}")
        n = len(dims)
    if n is None:
        return _ts.unknown_shape()
    begin, size = _partial(ctx, 1, n), _partial(ctx, 2, n)
    dims = dims or (None,) * n
    out = []
    for dim, b, s in zip(dims, begin, size):
        if s is not None and s < -1:
            raise ValueError(f"Invalid value in tensor used for shape: {s}")
        if s == -1:
            s = None if dim is None or b is None else dim - b
        out.append(s)
    return TensorShape._from_dims(tuple(out))


Slice = define_op("Slice", inputs=["input: T", "begin: Index", "size: Index"],
                  outputs=["output: T"], attrs=[TypeAttr("T"), TypeAttr("Index", INDEX_TYPES)],
                  shape_fn=_slice_shape)


@register_static_value("Slice")
def _slice_value(op, index):
    values = static_values(op.inputs)
    if values is None:
        return None
    x, begin, size = values
    try:
        return np.asarray(x[slice_index(x.shape, begin, size)])
    except ValueError:
        return None


@Slice.gradient
def _slice_grad(op, grad):
    """The gradient padded with zeros back to the input's shape: `begin` before, the rest
    after (constant paddings when all three shapes are static)."""
    import tensorweave as tw
    x, begin = op.inputs[:2]
    y = op.outputs[0]
    begin_value = static_value(begin)
    if begin_value is not None and x.shape.is_fully_defined() and y.shape.is_fully_defined():
        before = np.ravel(begin_value).astype(np.int64)
        after = np.array(x.shape.as_list()) - np.array(y.shape.as_list()) - before
        paddings = np.stack([before, after], axis=1).astype(begin.dtype.as_numpy_dtype)
    else:
        index = begin.dtype.base_dtype
        after = tw.shape(x, out_type=index) - tw.shape(y, out_type=index) - begin
        paddings = tw.stack([begin, after], axis=1)
    return [tw.pad(grad, paddings), None, None]


def slice(input_, begin, size, name=None):  # noqa: A001 - TF1's public name
    """Extracts `input_[begin[i]:begin[i] + size[i]]` in every dimension (TF1's tf.slice).

    Args:
      input_: the tensor to slice.
      begin: 1-D int32/int64 start offsets, one per dimension.
      size: 1-D sizes; -1 takes everything from `begin` to the end of that dimension.
      name: the op name.

    Returns:
      A Tensor of shape `size` (with -1 entries resolved).
    """
    return apply_op(Slice, [input_, begin, size], name=name)


# --- StridedSlice ----------------------------------------------------------------------------
def strided_slice_plan(dims, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                       new_axis_mask=0, shrink_axis_mask=0):
    """StridedSlice's semantics: (NumPy index tuple, output dims) for an input of shape `dims`.

    `dims` holds ints or None; `begin`/`end` are int sequences or None when not known (then
    the index is None and only masked or shrunk dimensions keep a static size); `strides` must
    be known. Raises ValueError with TensorFlow's messages for invalid specs.
    """
    n = len(strides)
    if (begin is not None and len(begin) != n) or (end is not None and len(end) != n):
        raise ValueError(f"Expected begin, end, and strides to be 1D equal size tensors, but "
                         f"got shapes [{len(begin)}], [{len(end)}], and [{n}] instead.")
    valid = (1 << n) - 1
    ellipsis_mask &= valid
    new_axis_mask &= valid & ~ellipsis_mask  # an ellipsis bit wins over the others
    if ellipsis_mask & (ellipsis_mask - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    rank = len(dims)
    real = n - bin(ellipsis_mask | new_axis_mask).count("1")  # entries that consume a dim
    if real and rank == 0:
        raise ValueError("Attempting to slice scalar input.")
    if real > rank:
        raise ValueError(f"Index out of range using input dim {rank}; input has only {rank} "
                         "dims")
    fill = rank - real  # dims the explicit (or implicit trailing) ellipsis covers
    index, out = [], []
    d = 0
    for i in range(n):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
            out.extend(dims[d:d + fill])
            d += fill
            continue
        if new_axis_mask & bit:
            index.append(None)
            out.append(1)
            continue
        dim, stride = dims[d], int(strides[i])
        if stride == 0:
            raise ValueError(f"strides[{i}] must be non-zero")
        if shrink_axis_mask & bit:
            if stride < 0 and dim is not None:
                raise ValueError("only stride 1 allowed on non-range indexing.")
            if begin is not None:
                b = int(begin[i])
                if dim is not None:
                    b = b + dim if b < 0 else b
                    if not 0 <= b < dim:
                        raise ValueError(f"slice index {b} of dimension {d} out of bounds.")
                index.append(b)
        else:
            b = None if begin_mask & bit or begin is None else int(begin[i])
            e = None if end_mask & bit or end is None else int(end[i])
            sl = _PySlice(b, e, stride)
            index.append(sl)
            masked = begin_mask & end_mask & bit
            if dim is None or (not masked and (begin is None or end is None)):
                out.append(None)
            else:
                out.append(len(range(*sl.indices(dim))))
        d += 1
    if not ellipsis_mask:
        out.extend(dims[d:])
    return (tuple(index) if begin is not None and end is not None else None), out


# StridedSlice's mask attrs (also StridedSliceGrad's and the slice assignments').
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_slice_shape(ctx):
    n = None
    for i in (1, 2, 3):
        n = merge_dims(n, dims_with_rank(ctx.input_shape(i)._dims, 1))
    strides = ctx.static_value(3)
    dims = ctx.input_shape(0)._dims
    if strides is None or dims is None:
        return _ts.unknown_shape()
    masks = {k: ctx.attrs[k] for k in MASKS}
    _, out = strided_slice_plan(dims, ctx.static_value(1), ctx.static_value(2), strides,
                                **masks)
    return TensorShape._from_dims(tuple(out))


StridedSlice = define_op(
    "StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"],
    attrs=[TypeAttr("T"), TypeAttr("Index", {_dtypes.int16, *INDEX_TYPES})]
    + [Attr(k, "int", 0) for k in MASKS],
    shape_fn=_strided_slice_shape)


@register_static_value("StridedSlice")
def _strided_slice_value(op, index):
    spec = static_values(op.inputs[1:])
    if spec is None:
        return None
    source = op.inputs[0]
    x = static_value(source)
    partial = x is None and source.op.type == "Shape"
    if partial:  # tf.shape(x)[i] is known when dimension i is, even if others are not
        dims = source.op.inputs[0].shape._dims
        if dims is None:
            return None
        x = np.array([-1 if d is None else d for d in dims],
                     dtype=source.dtype.as_numpy_dtype)
    if x is None:
        return None
    masks = {k: op._attrs[k] for k in MASKS}
    try:
        idx, _ = strided_slice_plan(x.shape, *spec, **masks)
    except ValueError:
        return None
    value = np.asarray(x[idx])
    return None if partial and (value < 0).any() else value


def _strided_slice_grad_shape(ctx):
    """The shape the `shape` input holds (as far as it is known statically)."""
    for i in (0, 1, 2, 3):
        dims_with_rank(ctx.input_shape(i)._dims, 1)
    return ctx.static_shape(0)


# The adjoint of StridedSlice: zeros of `shape` with `dy` written where the slice came from.
StridedSliceGrad = define_op(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"],
    attrs=[TypeAttr("T"), TypeAttr("Index", {_dtypes.int16, *INDEX_TYPES})]
    + [Attr(k, "int", 0) for k in MASKS],
    shape_fn=_strided_slice_grad_shape)


def masks_of(op) -> dict:
    return {k: op.get_attr(k) for k in MASKS}


@StridedSlice.gradient
def _strided_slice_grad(op, grad):
    """StridedSliceGrad of the input's shape (in the spec's index dtype) with the same spec."""
    import tensorweave as tw
    x, begin, end, strides = op.inputs
    index = begin.dtype.base_dtype
    shape = tw.shape(x, out_type=index if index in INDEX_TYPES else _dtypes.int32)
    if shape.dtype.base_dtype != index:
        shape = tw.cast(shape, index)
    return [apply_op(StridedSliceGrad, [shape, begin, end, strides, grad], masks_of(op)),
            None, None, None]


@StridedSliceGrad.gradient
def _strided_slice_grad_grad(op, grad):
    """StridedSliceGrad is linear in dy; its adjoint is the slice itself."""
    _, begin, end, strides, _ = op.inputs
    return [None] * 4 + [apply_op(StridedSlice, [grad, begin, end, strides], masks_of(op))]


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """Extracts a strided slice of a tensor (TF1's tf.strided_slice).

    Entry i of `begin`, `end` and `strides` describes the i-th entry of a Python-style index,
    modified by bit i of the masks: `begin_mask`/`end_mask` ignore that begin/end (take the
    full range), `ellipsis_mask` makes the entry `...`, `new_axis_mask` makes it `tf.newaxis`,
    and `shrink_axis_mask` makes it a scalar index `begin[i]` that removes the dimension.

    Args:
      input_: the tensor to slice.
      begin: 1-D int tensor of start indices.
      end: 1-D int tensor of (exclusive) end indices.
      strides: 1-D int tensor of steps (non-zero); all ones when None.
      begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask: int bit masks.
      var: the Variable whose value `input_` is: the result then has `assign(value)`, which
        writes `value` into this slice of it (ops/slice_assign_ops.py).
      name: the op name.

    Returns:
      The sliced Tensor.

    Raises:
      ValueError: for specs that are statically invalid (index out of bounds, zero stride,
        several ellipses, too many indices).
    """
    if strides is None:
        if is_tensor(begin):
            import tensorweave
            strides = tensorweave.ones_like(begin)
        elif isinstance(begin, np.ndarray):
            strides = np.ones_like(begin)
        else:
            strides = [1] * len(begin)
    attrs = dict(zip(MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                             shrink_axis_mask)))
    sliced = apply_op(StridedSlice, [input_, begin, end, strides], attrs, name=name)
    if var is None:
        return sliced
    from tensorweave.ops.slice_assign_ops import assignable
    return assignable(sliced, var, name or sliced.op.name)


# --- Tensor.__getitem__ ----------------------------------------------------------------------
_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")
_SLICE_DTYPES = frozenset({_dtypes.int16, _dtypes.int32, _dtypes.int64})


def _as_index(idx):
    """A Python int or a scalar int tensor for one index entry; TypeError otherwise."""
    if isinstance(idx, _ts.Dimension):
        idx = idx.value
    if isinstance(idx, numbers.Integral) and not isinstance(idx, bool):
        return int(idx)
    if isinstance(idx, np.ndarray) and idx.ndim == 0 and idx.dtype.kind in "iu":
        return int(idx)
    dtype = getattr(idx, "dtype", None)
    shape = getattr(idx, "shape", None)
    if isinstance(idx, Tensor) or hasattr(idx, "_as_graph_element"):
        ok = dtype.base_dtype in _SLICE_DTYPES and shape.ndims in (None, 0)
        if ok:
            return idx
    raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _is_undefined(bound) -> bool:
    return isinstance(bound, _ts.Dimension) and bound.value is None


def _spec_dtype(entries):
    """The dtype for packing begin/end/strides: int64 if any entry needs it (TF promotes the
    whole spec), int16 for int16 tensors, else None (int32)."""
    kinds = set()
    for v in entries:
        if isinstance(v, int):
            if not -2 ** 31 <= v < 2 ** 31:
                kinds.add(_dtypes.int64)
        else:
            kinds.add(v.dtype.base_dtype)
    if _dtypes.int64 in kinds:
        return _dtypes.int64
    return _dtypes.int16 if kinds == {_dtypes.int16} else None


def slice_helper(tensor, slice_spec, var=None):
    """`tensor[slice_spec]` as TF1 builds it: one StridedSlice named "strided_slice"."""
    if isinstance(slice_spec, (bool, np.bool_)) or (
            isinstance(slice_spec, (Tensor, np.ndarray)) and slice_spec.dtype in (
                _dtypes.bool, np.bool_)):
        import tensorweave
        return tensorweave.boolean_mask(tensor=tensor, mask=slice_spec)
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, _PySlice):
            for bound, out, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                if bound is None or _is_undefined(bound):
                    out.append(0)
                    masks[mask] |= bit
                else:
                    out.append(_as_index(bound))
            strides.append(1 if s.step is None else _as_index(s.step))
        elif s is Ellipsis or s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            s = _as_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    # As TF: the values put the scope (and the packed spec) in the tensor's graph.
    with name_scope(None, "strided_slice", [tensor] + begin + end + strides) as scope:
        if begin:
            dtype = _spec_dtype(begin + end + strides)
            packed = [tensor_conversion.convert_to_tensor(v, dtype=dtype, name="stack")
                      for v in (begin, end, strides)]
        else:
            from tensorweave.ops.constant_op import constant
            packed = [constant(np.zeros([0], np.int32))] * 3
        return strided_slice(tensor, *packed, var=var, name=scope, **masks)


Tensor._override_operator("__getitem__", slice_helper)
