"""Reductions over axes, arg-reductions, cumulative scans and top-k selection.

The seven axis reductions (Sum, Mean, Prod, Max, Min, All, Any) are rows of one table: one
OpDef shape (`input`, `reduction_indices` → `output`, attr `keep_dims`), one shape function,
one wrapper body. `reduce_logsumexp` and `count_nonzero` are composites built from other ops, as
in TensorFlow. ArgMax/ArgMin, Cumsum/Cumprod and TopKV2 follow, then the gradients (TF's
rules: Sum broadcasts back, Mean divides by the count, Prod multiplies the others without
dividing, Max/Min split among ties, scans run the other way). TopKV2's gradient is with
tf.nn.top_k (ops/nn_top_k_ops.py).
"""
from __future__ import annotations

import collections

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op, get_op_def
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import register_static_value, static_value, static_values
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.constant_op import constant

__all__ = [
    "reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min", "reduce_all",
    "reduce_any", "reduce_logsumexp", "count_nonzero", "argmax", "argmin", "arg_max",
    "arg_min", "cumsum", "cumprod",
]
# `top_k` is TF1's tf.nn.top_k only: the nn namespace re-exports it; it is not top level.


def deprecated_argument_lookup(new_name: str, new_value, old_name: str, old_value):
    """TF1's deprecated_argument_lookup: the new argument, else its old alias, never both."""
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
    return new_value if new_value is not None else old_value


def tf_op(op_type: str, inputs, attrs: dict | None = None, name: str | None = None):
    """Adds an op of another family by its TensorFlow type.

    Composites here (logsumexp, count_nonzero, tensordot) use ops that other modules define;
    naming the op type, which is fixed by TensorFlow, keeps this module independent of how
    those modules name their wrappers, and lets them load in any order.
    """
    return apply_op(get_op_def(op_type), inputs, attrs, name=name)


def _as_input(value, dtype=None) -> Tensor:
    """`value` as a Tensor; non-Tensors convert to `dtype` (the arg's fixed dtype) if given."""
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, dtype=dtype)


# --- axis reductions --------------------------------------------------------------------------

def _reduction_shape(ctx):
    """shape_fns.reduction, after checking that the axes are a scalar or a vector."""
    axes_rank = ctx.input_shape(1).ndims
    if axes_rank is not None and axes_rank > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {axes_rank}")
    return shape_fns.reduction(ctx)


# op type -> allowed input dtypes (None: the input is bool and so is the output)
_REDUCTIONS = {
    "Sum": _dtypes.NUMERIC,
    "Mean": _dtypes.NUMERIC,
    "Prod": _dtypes.NUMERIC,
    "Max": _dtypes.REAL_NUMERIC,
    "Min": _dtypes.REAL_NUMERIC,
    "All": None,
    "Any": None,
}


def _define_reduction(op_type: str, allowed):
    value_type = "bool" if allowed is None else "T"
    attrs = [Attr("keep_dims", "bool", False), TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32)]
    if allowed is not None:
        attrs.insert(0, TypeAttr("T", allowed))
    return define_op(op_type, inputs=[f"input: {value_type}", "reduction_indices: Tidx"],
                     outputs=[f"output: {value_type}"], attrs=attrs, shape_fn=_reduction_shape,
                     not_differentiable=allowed is None)


_OPS = {op_type: _define_reduction(op_type, allowed) for op_type, allowed in _REDUCTIONS.items()}
Sum, Mean, Prod, Max, Min, All, Any = (_OPS[k] for k in _REDUCTIONS)


def _static_reduction(op, index):
    """Reductions of values the graph fixes, so shapes computed with them stay static."""
    values = static_values(op.inputs)
    if values is None:
        return None
    from tensorweave.kernels.reduction import reduce_values  # ops stay importable alone
    try:
        return np.asarray(reduce_values(op.type, values[0], values[1], op.get_attr("keep_dims")))
    except Exception:  # noqa: BLE001 - invalid axes: the kernel reports them at run time
        return None


for _op_type in _REDUCTIONS:
    register_static_value(_op_type)(_static_reduction)


def _reduction_dims(x: Tensor, axis):
    """TF's _ReductionDims: `axis`, or every axis (a constant range when the rank is known and
    not 0)."""
    if isinstance(axis, (list, tuple)) and not axis:
        return constant(np.zeros(0, np.int32))  # [] alone would convert to float32
    if axis is not None:
        return axis
    rank = x.shape.ndims
    if rank:   # as TF, not for a scalar: range(0, rank(x)) is built in x's graph
        return constant(np.arange(rank, dtype=np.int32))
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_ops import rank as _rank
    return _range(0, _rank(x))


def apply_reduction(op_def, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    """The body shared by every reduce_* wrapper."""
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = bool(keepdims) if keepdims is not None else False
    x = _as_input(input_tensor, op_def.inputs[0].dtype)
    out = apply_op(op_def, [x, _reduction_dims(x, axis)], {"keep_dims": keepdims}, name=name)
    if not keepdims and axis is None and not out.shape.is_fully_defined():
        out.set_shape([])  # every axis reduced: a scalar even when the rank is unknown
    return out


_REDUCE_DOC = """Computes {what} of elements across dimensions of a tensor (TF1's tf.{name}).

Reduces `input_tensor` along the dimensions given in `axis`. Unless `keepdims` is true, the
rank of the tensor is reduced by 1 for each entry in `axis`; otherwise the reduced dimensions
are kept with length 1.{extra}

Args:
  input_tensor: the tensor to reduce{dtypes}.
  axis: the dimensions to reduce: an int, a list of ints or an int32/int64 tensor, each in
    `[-rank(input_tensor), rank(input_tensor))`. None (the default) reduces all dimensions;
    an empty list reduces none.
  keepdims: if true, retains reduced dimensions with length 1.
  name: a name for the operation (default "{op}").
  reduction_indices: the old (deprecated) name for `axis`.
  keep_dims: the old (deprecated) name for `keepdims`.

Returns:
  The reduced tensor, of the input's dtype{out}.

Raises:
  ValueError: if an axis is statically out of range, or both an argument and its deprecated
    alias are given.
  TypeError: if the input's dtype is not accepted.
"""


def _reduction_doc(what: str, extra: str = "", dtypes: str = " (a numeric type)"):
    """Fills a reduce_* wrapper's docstring from the shared template."""
    def decorate(fn):
        op = _PUBLIC_TO_OP[fn.__name__]
        out = "" if op not in ("All", "Any") else " (bool)"
        fn.__doc__ = _REDUCE_DOC.format(what=what, name=fn.__name__, extra=extra, op=op,
                                        dtypes=dtypes, out=out)
        return fn
    return decorate


_PUBLIC_TO_OP = {"reduce_sum": "Sum", "reduce_mean": "Mean", "reduce_prod": "Prod",
                 "reduce_max": "Max", "reduce_min": "Min", "reduce_all": "All",
                 "reduce_any": "Any"}


@_reduction_doc("the sum", " Integer sums wrap around on overflow.")
def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    return apply_reduction(Sum, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the mean", " The mean of integers is truncated toward zero, and the "
                "mean over no elements is NaN for floats and 0 for integers.")
def reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    return apply_reduction(Mean, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the product", " The product over no elements is 1.")
def reduce_prod(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    return apply_reduction(Prod, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the maximum", " NaN propagates; the maximum over no elements is the "
                "dtype's lowest value (-inf for floats).", " (a real numeric type)")
def reduce_max(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    return apply_reduction(Max, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the minimum", " NaN propagates; the minimum over no elements is the "
                "dtype's highest value (+inf for floats).", " (a real numeric type)")
def reduce_min(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    return apply_reduction(Min, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the logical and", " Over no elements it is True.", " (bool)")
def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    return apply_reduction(All, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@_reduction_doc("the logical or", " Over no elements it is False.", " (bool)")
def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    return apply_reduction(Any, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None,
                     reduction_indices=None, keep_dims=None):
    """Computes log(sum(exp(elements across dimensions))) (TF1's tf.reduce_logsumexp).

    Numerically stable: the (finite) maximum is subtracted before exponentiating and added
    back after the logarithm, so large inputs do not overflow. Built from Max, IsFinite,
    SelectV2, StopGradient, Sub, Exp, Sum, Log, Reshape and AddV2 ops like TensorFlow's.

    Args:
      input_tensor: a floating-point tensor.
      axis: the dimensions to reduce (see `reduce_sum`); None reduces all.
      keepdims: if true, retains reduced dimensions with length 1.
      name: a name for the operation (default "ReduceLogSumExp").
      reduction_indices: the old (deprecated) name for `axis`.
      keep_dims: the old (deprecated) name for `keepdims`.

    Returns:
      The reduced tensor. Over no elements the result is -inf.

    Raises:
      TypeError: for non-floating inputs.
    """
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = bool(keepdims) if keepdims is not None else False
    with name_scope(name, "ReduceLogSumExp") as scope:
        x = _as_input(input_tensor)
        raw_max = reduce_max(x, axis=axis, keepdims=True)
        # An infinite maximum would turn x - max into NaN: shift by 0 there instead.
        zero = constant(0, dtype=raw_max.dtype, name="e")
        my_max = tf_op("StopGradient", [tf_op("SelectV2", [tf_op("IsFinite", [raw_max]),
                                                           raw_max, zero])])
        shifted_exp = tf_op("Exp", [tf_op("Sub", [x, my_max])])
        result = tf_op("Log", [reduce_sum(shifted_exp, axis=axis, keepdims=keepdims)])
        if not keepdims:
            my_max = tf_op("Reshape", [my_max, tf_op("Shape", [result])])
        result = tf_op("AddV2", [result, my_max], name=scope)
    if not keepdims and axis is None and not result.shape.is_fully_defined():
        result.set_shape([])
    return result


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=_dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002 - TF1
    """Counts the nonzero elements across dimensions of a tensor (TF1's tf.count_nonzero).

    An element is nonzero when it differs from its dtype's zero ("" for strings, False for
    bools). Built from NotEqual, Cast and Sum like TensorFlow's.

    Args:
      input_tensor: the tensor (numeric, bool or string).
      axis: the dimensions to reduce (see `reduce_sum`); None reduces all.
      keepdims: if true, retains reduced dimensions with length 1.
      dtype: the output dtype (default int64).
      name: a name for the operation (default "count_nonzero").
      reduction_indices: the old (deprecated) name for `axis`.
      keep_dims: the old (deprecated) name for `keepdims`.
      input: the old (deprecated) name for `input_tensor`.

    Returns:
      The number of nonzero values, of type `dtype`.
    """
    input_tensor = deprecated_argument_lookup("input", input, "input_tensor", input_tensor)
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    with name_scope(name, "count_nonzero"):
        x = convert_to_tensor(input_tensor, name="input")
        zero = b"" if x.dtype == _dtypes.string else np.zeros((), x.dtype.as_numpy_dtype)
        zero = constant(zero, dtype=x.dtype, name="zeros")
        nonzero = tf_op("Cast", [tf_op("NotEqual", [x, zero])], {"DstT": _dtypes.int64})
        counts = reduce_sum(nonzero, axis=axis, keepdims=keepdims)
        dtype = _dtypes.as_dtype(dtype)
        return counts if dtype == _dtypes.int64 else tf_op("Cast", [counts], {"DstT": dtype})


# --- ArgMax / ArgMin ---------------------------------------------------------------------------

def _arg_shape(ctx):
    """The input without the reduced dimension; scalars and vectors reduce to a scalar."""
    dim_rank = ctx.input_shape(1).ndims
    if dim_rank is not None and dim_rank != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {dim_rank}")
    shape = ctx.input_shape(0)
    rank = shape.ndims
    if rank is None:
        return _ts.unknown_shape()
    if rank <= 1:
        return _ts.TensorShape([])
    dim = ctx.static_value(1)
    if dim is None:
        return _ts.unknown_shape(rank=rank - 1)
    dim = int(dim)
    if not -rank <= dim < rank:
        raise ValueError(f"Dimension ({dim}) must be in the range [{-rank}, {rank}), where "
                         f"{rank} is the number of dimensions in the input.")
    dims = shape.as_list()
    del dims[dim % rank]
    return _ts.TensorShape(dims)


def _define_arg_reduction(op_type: str, output_types):
    return define_op(
        op_type, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
        attrs=[TypeAttr("T", _dtypes.REAL_NUMERIC | {_dtypes.bool}),
               TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32),
               TypeAttr("output_type", output_types, _dtypes.int64)],
        shape_fn=_arg_shape, not_differentiable=True)


ArgMax = _define_arg_reduction("ArgMax", _dtypes.INDEX | {_dtypes.int16, _dtypes.uint16})
ArgMin = _define_arg_reduction("ArgMin", _dtypes.INDEX)


def _arg_reduce(op_def, input, axis, name, output_type):  # noqa: A002 - TF1's argument name
    if axis is None:
        axis = 0
    if not isinstance(axis, Tensor) and np.ndim(axis) != 0:
        raise TypeError("axis must be int or Tensor with integer datatype")
    return apply_op(op_def, [input, axis], {"output_type": output_type}, name=name)


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF1's argument name
           output_type=_dtypes.int64):
    """Returns the index of the largest value along an axis (TF1's tf.argmax).

    Ties resolve to the smallest index.

    Args:
      input: a real numeric or bool tensor.
      axis: the axis to reduce, an int or a scalar int32/int64 tensor in
        `[-rank(input), rank(input))`; defaults to 0.
      name: a name for the operation (default "ArgMax").
      dimension: the old (deprecated) name for `axis`.
      output_type: int64 (default) or int32.

    Returns:
      A tensor of `output_type` with the reduced axis removed.

    Raises:
      ValueError: if the axis is statically out of range or both `axis` and `dimension` are
        given.
      TypeError: if `axis` is not a scalar integer.
    """
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return _arg_reduce(ArgMax, input, axis, name, output_type)


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF1's argument name
           output_type=_dtypes.int64):
    """Returns the index of the smallest value along an axis (TF1's tf.argmin).

    Ties resolve to the smallest index. Arguments as for `argmax`; the default name is
    "ArgMin".
    """
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return _arg_reduce(ArgMin, input, axis, name, output_type)


def arg_max(input, dimension, output_type=_dtypes.int64, name=None):  # noqa: A002 - TF1
    """TF1's raw tf.arg_max: `argmax` with a required `dimension`."""
    return _arg_reduce(ArgMax, input, dimension, name, output_type)


def arg_min(input, dimension, output_type=_dtypes.int64, name=None):  # noqa: A002 - TF1
    """TF1's raw tf.arg_min: `argmin` with a required `dimension`."""
    return _arg_reduce(ArgMin, input, dimension, name, output_type)


# --- Cumsum / Cumprod --------------------------------------------------------------------------

def _define_scan(op_type: str):
    return define_op(
        op_type, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
        attrs=[Attr("exclusive", "bool", False), Attr("reverse", "bool", False),
               TypeAttr("T", _dtypes.NUMERIC), TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32)],
        shape_fn=shape_fns.unchanged)


Cumsum = _define_scan("Cumsum")
Cumprod = _define_scan("Cumprod")


def _scan(op_def, x, axis, exclusive, reverse, name):
    with name_scope(name, op_def.name) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op(op_def, [x, axis], {"exclusive": exclusive, "reverse": reverse},
                        name=scope)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Computes the cumulative sum along `axis` (TF1's tf.cumsum).

    `cumsum([a, b, c])` is `[a, a + b, a + b + c]`; with `exclusive=True` it is
    `[0, a, a + b]`; with `reverse=True` it is `[a + b + c, b + c, c]`; both give
    `[b + c, c, 0]`.

    Args:
      x: a numeric tensor.
      axis: the axis, an int or a scalar int32/int64 tensor in `[-rank(x), rank(x))`
        (checked when the op runs, like TensorFlow).
      exclusive: if true, each output excludes its own element.
      reverse: if true, accumulates from the end.
      name: a name for the operation (default "Cumsum").

    Returns:
      A tensor shaped and typed like `x`.
    """
    return _scan(Cumsum, x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Computes the cumulative product along `axis` (TF1's tf.cumprod).

    Like `cumsum` with products; the exclusive identity is 1. The default name is "Cumprod".
    """
    return _scan(Cumprod, x, axis, exclusive, reverse, name)


# --- TopKV2 ------------------------------------------------------------------------------------

def _top_k_shape(ctx):
    """The input's shape with the last dimension replaced by k."""
    k_rank = ctx.input_shape(1).ndims
    if k_rank is not None and k_rank != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {k_rank}")
    shape = ctx.input_shape(0)
    if shape.ndims is not None and shape.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {shape.ndims}")
    k = ctx.static_value(1)
    if k is not None:
        k = int(k)
        if k < 0:
            raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative "
                             f"but is {k}")
    if shape.ndims is None:
        return [_ts.unknown_shape()] * 2
    last = shape.as_list()[-1]
    if k is not None and last is not None and last < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {last}")
    out = _ts.TensorShape(shape.as_list()[:-1] + [k])
    return [out, out]


TopKV2 = define_op(
    "TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
    attrs=[Attr("sorted", "bool", True), TypeAttr("T", _dtypes.REAL_NUMERIC),
           TypeAttr("Tk", _dtypes.INDEX | {_dtypes.int16}, _dtypes.int32),
           TypeAttr("index_type", _dtypes.INDEX | {_dtypes.int16}, _dtypes.int32)],
    shape_fn=_top_k_shape)

_TopKResult = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, index_type=_dtypes.int32, name=None):  # noqa: A002 - TF1
    """Finds the k largest entries along the last dimension (TF1's tf.nn.top_k).

    Equal values keep their order: the one with the lower index comes first. NaN ranks below
    every number.

    Args:
      input: a real numeric tensor of rank >= 1 whose last dimension is at least `k`.
      k: the number of entries to keep, an int or a scalar int32 tensor.
      sorted: accepted like TF; values always come sorted in descending order.
      index_type: the dtype of `indices` (int32 by default).
      name: a name for the operation (default "TopKV2").

    Returns:
      A namedtuple `(values, indices)`, each shaped `input.shape[:-1] + [k]`.

    Raises:
      ValueError: if `k` is negative or larger than the last dimension, statically.
    """
    values, indices = apply_op(TopKV2, [input, k],
                               {"sorted": sorted, "index_type": index_type}, name=name)
    return _TopKResult(values, indices)


# --- gradients ---------------------------------------------------------------------------------
# Built from graph ops only (never NumPy on values), so gradients of gradients work. Shapes and
# axes known while the graph is built give constant shapes; otherwise they are computed at run
# time from Shape/Rank ops.

def split_axes(x: Tensor, axes):
    """(reduced, kept) axes of `x` for the reduction axes `axes` (non-negative): int lists when
    x's rank and the axes are static, else int32 vectors computed at run time."""
    rank = x.shape.ndims
    value = axes if not isinstance(axes, Tensor) else static_value(axes)
    if rank is not None and value is not None:
        reduced = [int(a) % rank for a in np.ravel(value)] if rank else []
        return reduced, [i for i in range(rank) if i not in reduced]
    rank_t = tf_op("Rank", [x])
    # (axis + rank) mod max(rank, 1): a scalar (rank 0) has no axes, and nothing to divide.
    reduced = tf_op("FloorMod", [tf_op("AddV2", [tf_op("Cast", [tf_op("Reshape", [axes, [-1]])],
                                                        {"DstT": _dtypes.int32}), rank_t]),
                                 tf_op("Maximum", [rank_t, 1])])
    positions = tf_op("Range", [0, rank_t, 1])
    kept_mask = reduce_all(tf_op("NotEqual", [tf_op("Reshape", [positions, [-1, 1]]),
                                              tf_op("Reshape", [reduced, [1, -1]])]), 1)
    kept = tf_op("Reshape", [tf_op("Where", [kept_mask]), [-1]])
    return reduced, tf_op("Cast", [kept], {"DstT": _dtypes.int32})


def _kept_dims_shape(x: Tensor, axes):
    """x's shape with the reduced axes set to 1 (the keepdims output shape): a list of ints
    when everything is static, else an int32 vector."""
    reduced, _ = split_axes(x, axes)
    if isinstance(reduced, list) and x.shape.is_fully_defined():
        return [1 if i in reduced else d for i, d in enumerate(x.shape.as_list())]
    if isinstance(reduced, list):
        reduced = _int32_vector(reduced)
    shape = tf_op("Shape", [x])
    # hit = 1 at the reduced positions, else 0 (the kernel rejects an axis listed twice);
    # the result is shape * (1 - hit) + hit.
    hit = tf_op("ScatterNd", [tf_op("Reshape", [reduced, [-1, 1]]),
                              tf_op("OnesLike", [tf_op("Reshape", [reduced, [-1]])]),
                              tf_op("Shape", [shape])])
    return tf_op("AddV2", [tf_op("Mul", [shape, tf_op("Sub", [1, hit])]), hit])


def _has_shape(t: Tensor, dims: list) -> bool:
    """Whether `t`'s static shape is exactly `dims`."""
    return t.shape.is_fully_defined() and t.shape.as_list() == dims


def _broadcast_back(grad: Tensor, x: Tensor, axes) -> Tensor:
    """The gradient of a reduction's output broadcast back to x's shape: reshaped to the
    keepdims shape, then tiled along the reduced axes."""
    kept = _kept_dims_shape(x, axes)
    if isinstance(kept, list):
        if not _has_shape(grad, kept):
            grad = tf_op("Reshape", [grad, _int32_vector(kept)])
        multiples = [d // max(k, 1) for d, k in zip(x.shape.as_list(), kept)]
        if all(m == 1 for m in multiples):
            return grad
        return tf_op("Tile", [grad, _int32_vector(multiples)])
    grad = tf_op("Reshape", [grad, kept])
    multiples = tf_op("FloorDiv", [tf_op("Shape", [x]), tf_op("Maximum", [kept, 1])])
    return tf_op("Tile", [grad, multiples])


def _int32_vector(values) -> Tensor:
    return constant(np.asarray(values, np.int32).reshape(-1), dtype=_dtypes.int32)


def reshape_to_kept(t: Tensor, x: Tensor, axes) -> Tensor:
    """`t` (shaped like a reduction's output) reshaped to the keepdims shape."""
    kept = _kept_dims_shape(x, axes)
    if isinstance(kept, list):
        return t if _has_shape(t, kept) else tf_op("Reshape", [t, _int32_vector(kept)])
    return tf_op("Reshape", [t, kept])


@Sum.gradient
def _sum_grad(op, grad):
    """Every input element contributes once: the gradient broadcast back to x's shape."""
    x, axes = op.inputs
    return [_broadcast_back(grad, x, axes), None]


def _element_count(x: Tensor, y: Tensor, dtype) -> Tensor:
    """How many elements of x each element of y summarizes (at least 1), as `dtype`."""
    n_x, n_y = x.shape.num_elements(), y.shape.num_elements()
    if n_x is not None and n_y is not None:
        return constant(n_x // max(n_y, 1), dtype=dtype)
    count = tf_op("FloorDiv", [tf_op("Size", [x]), tf_op("Maximum", [tf_op("Size", [y]), 1])])
    return tf_op("Cast", [count], {"DstT": dtype})


@Mean.gradient
def _mean_grad(op, grad):
    """Sum's gradient divided by the number of elements averaged."""
    x, axes = op.inputs
    count = _element_count(x, op.outputs[0], grad.dtype.base_dtype)
    return [tf_op("RealDiv", [_broadcast_back(grad, x, axes), count]), None]


def _conj_of(t: Tensor) -> Tensor:
    return tf_op("Conj", [t]) if t.dtype.is_complex else t


@Prod.gradient
def _prod_grad(op, grad):
    """d prod / d x_i = the product of the other elements, computed without dividing by x_i
    (so zeros are exact): the reduced axes are moved to the front and flattened, and each
    element's gradient is (exclusive cumprod from the left) * (exclusive cumprod from the
    right) of its column."""
    x, axes = op.inputs
    grad = _broadcast_back(grad, x, axes)
    reduced, kept = split_axes(x, axes)
    if isinstance(reduced, list):
        perm = reduced + kept
        perm_t, inverse_t = _int32_vector(perm), _int32_vector(np.argsort(perm))
        reduced, kept = _int32_vector(reduced), _int32_vector(kept)
    else:
        perm_t = tf_op("ConcatV2", [[reduced, kept], 0])
        inverse_t = tf_op("ScatterNd", [tf_op("Reshape", [perm_t, [-1, 1]]),
                                        tf_op("Range", [0, tf_op("Size", [perm_t]), 1]),
                                        tf_op("Shape", [perm_t])])
    shape = tf_op("Shape", [x])
    n_reduced = reduce_prod(tf_op("GatherV2", [shape, reduced, 0]))
    n_kept = reduce_prod(tf_op("GatherV2", [shape, kept, 0]))
    permuted = tf_op("Transpose", [x, perm_t])
    matrix = tf_op("Reshape", [permuted, tf_op("Pack", [[n_reduced, n_kept]])])
    left = cumprod(matrix, 0, exclusive=True)
    right = cumprod(matrix, 0, exclusive=True, reverse=True)
    others = tf_op("Reshape", [tf_op("Mul", [_conj_of(left), _conj_of(right)]),
                               tf_op("Shape", [permuted])])
    return [tf_op("Mul", [grad, tf_op("Transpose", [others, inverse_t])]), None]


def _min_max_grad(op, grad):
    """The gradient goes to the elements equal to the extremum, split equally among ties."""
    x, axes = op.inputs
    y = reshape_to_kept(op.outputs[0], x, axes)
    grad = reshape_to_kept(grad, x, axes)
    hits = tf_op("Cast", [tf_op("Equal", [y, x])], {"DstT": grad.dtype.base_dtype})
    count = reshape_to_kept(reduce_sum(hits, axes), x, axes)
    return [tf_op("Mul", [tf_op("RealDiv", [hits, count]), grad]), None]


Max.gradient(_min_max_grad)
Min.gradient(_min_max_grad)


@Cumsum.gradient
def _cumsum_grad(op, grad):
    """Each x_j feeds the outputs after it (before it, reversed): a scan the other way."""
    return [cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@Cumprod.gradient
def _cumprod_grad(op, grad):
    """d out_i / d x_j = out_i / x_j for each out_i that x_j multiplies. Like TensorFlow's this
    divides with div_no_nan (so entries where x is 0 get 0) and conjugates nothing."""
    x, axis = op.inputs
    out = cumsum(tf_op("Mul", [op.outputs[0], grad]), axis, exclusive=op.get_attr("exclusive"),
                 reverse=not op.get_attr("reverse"))
    return [tf_op("DivNoNan", [out, x]), None]

