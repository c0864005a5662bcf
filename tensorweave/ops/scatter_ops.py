"""Row updates of a variable in place: tf.scatter_update / add / ... and tf.batch_scatter_update.

tf.scatter_update, scatter_add, scatter_sub, scatter_mul, scatter_div, scatter_min and
scatter_max are one op each: it combines `updates` into the rows of the variable `ref` named by
`indices` and returns `ref` after the update. `updates` has shape indices.shape +
ref.shape[1:] (or is a scalar); repeated indices accumulate (add, sub, mul, div, min, max) or
the last one wins (update). batch_scatter_update does the same within each batch entry (TF's
composition: the indices made full coordinates for ScatterNdUpdate).

Each op has a resource twin (ResourceScatterUpdate, ...: TF's `dtype` attr, no `use_locking`,
no output) run by the same kernel; given a resource variable the wrappers use it on the
variable's handle and return the value read after the update, as TensorFlow's do.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OP_REGISTRY, Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_shapes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import Range, ones_like
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, reshape, shape
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.misc_array_ops import scatter_nd_update
from tensorweave.ops.state_ops import on_variable_shapes
from tensorweave.ops.variables import is_resource_variable

__all__ = ["scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div",
           "scatter_min", "scatter_max", "batch_scatter_update"]


def _scatter_shape(ctx):
    """Output is ref's shape; updates must be indices.shape + ref.shape[1:] unless scalar."""
    ref, indices, updates = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    if updates.ndims == 0 or ref.ndims is None or indices.ndims is None:
        return ref
    if ref.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    merge_shapes(updates, _ts.TensorShape(indices.as_list() + ref.as_list()[1:]))
    return ref


def _scatter(name, allowed, use_locking_default=False, gradient_lookup_fails=False):
    """The ref op `name` and its resource twin `Resource<name>`. As TF's state_grad.py, the
    ref op is NotDifferentiable (inputs get None) except ScatterUpdate, ScatterMin and
    ScatterMax, which TF leaves without a gradient: asking for one raises LookupError."""
    ref_op = define_op(name, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
                       outputs=["output_ref: Ref(T)"],
                       attrs=[TypeAttr("T", allowed), TypeAttr("Tindices", _dtypes.INDEX),
                              Attr("use_locking", "bool", use_locking_default)],
                       shape_fn=_scatter_shape, is_stateful=True,
                       not_differentiable=not gradient_lookup_fails)
    twin = define_op("Resource" + name,
                     inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
                     attrs=[TypeAttr("dtype", allowed), TypeAttr("Tindices", _dtypes.INDEX)],
                     shape_fn=on_variable_shapes(_scatter_shape), is_stateful=True,
                     not_differentiable=True)
    return ref_op, twin


ScatterUpdate, ResourceScatterUpdate = _scatter("ScatterUpdate", None, use_locking_default=True,
                                                gradient_lookup_fails=True)
ScatterAdd, ResourceScatterAdd = _scatter("ScatterAdd", _dtypes.NUMERIC)
ScatterSub, ResourceScatterSub = _scatter("ScatterSub", _dtypes.NUMERIC)
ScatterMul, ResourceScatterMul = _scatter("ScatterMul", _dtypes.NUMERIC)
ScatterDiv, ResourceScatterDiv = _scatter("ScatterDiv", _dtypes.NUMERIC)
ScatterMin, ResourceScatterMin = _scatter("ScatterMin", _dtypes.REAL_NUMERIC,
                                          gradient_lookup_fails=True)
ScatterMax, ResourceScatterMax = _scatter("ScatterMax", _dtypes.REAL_NUMERIC,
                                          gradient_lookup_fails=True)


def resource_scatter(op_def, variable, indices, updates, name=None):
    """The resource twin of `op_def` (ResourceScatterAdd for ScatterAdd, ...) on a resource
    variable's handle: the update op alone, which reads nothing back (what an optimizer's
    sparse update runs, so a step does not copy a whole embedding table)."""
    twin = OP_REGISTRY["Resource" + op_def.name]
    return apply_op(twin, [variable.handle, indices, convert_to_tensor(updates, variable.dtype)],
                    name=name or twin.name)


def _apply(op_def, ref, indices, updates, use_locking, name):
    """`op_def` on the variable `ref`; on a resource variable, its twin on the handle (which
    always locks), returning the value read after it."""
    if is_resource_variable(ref):
        return ref._read_after(resource_scatter(op_def, ref, indices, updates, name))
    attrs = {"use_locking": use_locking} if use_locking is not None else {}
    return apply_op(op_def, [ref, indices, updates], attrs, name=name or op_def.name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Assigns `updates` to the rows `indices` of the variable `ref` (tf.scatter_update).

    ref[indices[i], ...] = updates[i, ...]; with repeated indices the last update wins.

    Args:
      ref: a Variable (or its ref tensor) of rank >= 1.
      indices: int32/int64 Tensor of row indices into ref's first dimension.
      updates: a Tensor of shape indices.shape + ref.shape[1:], or a scalar.
      use_locking: if True, the update holds the variable's lock.
      name: the op name (default "ScatterUpdate").

    Returns:
      `ref` after the update (a ref tensor; reading it gives the new value), or a resource
      variable's value read after it.

    Raises:
      InvalidArgumentError: at run time, for an index outside [0, ref.shape[0]).
    """
    return _apply(ScatterUpdate, ref, indices, updates, use_locking, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """Adds `updates` to the rows `indices` of `ref`; repeated indices accumulate
    (tf.scatter_add). See `scatter_update` for the arguments."""
    return _apply(ScatterAdd, ref, indices, updates, use_locking, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """Subtracts `updates` from the rows `indices` of `ref` (tf.scatter_sub)."""
    return _apply(ScatterSub, ref, indices, updates, use_locking, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """Multiplies the rows `indices` of `ref` by `updates` (tf.scatter_mul)."""
    return _apply(ScatterMul, ref, indices, updates, use_locking, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """Divides the rows `indices` of `ref` by `updates` (tf.scatter_div)."""
    return _apply(ScatterDiv, ref, indices, updates, use_locking, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """ref[indices] = minimum(ref[indices], updates) (tf.scatter_min)."""
    return _apply(ScatterMin, ref, indices, updates, use_locking, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """ref[indices] = maximum(ref[indices], updates) (tf.scatter_max)."""
    return _apply(ScatterMax, ref, indices, updates, use_locking, name)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Assigns `updates` to positions `indices` along the first non-batch dimension of the
    variable `ref` (tf.batch_scatter_update), the batch analogue of `tf.batch_gather`:

    ref[i_1, ..., i_n, indices[i_1, ..., i_n, j], ...] = updates[i_1, ..., i_n, j, ...]

    where n = rank(indices) - 1 leading dimensions are shared by ref, indices and updates.
    Built as in TensorFlow: each batch position's coordinates (Range) are joined with
    `indices` into full ScatterNdUpdate indices.

    Args:
      ref: a Variable (or its ref tensor).
      indices: an int32/int64 Tensor of known rank.
      updates: a Tensor of shape indices.shape + ref.shape[rank(indices):].
      use_locking: if True, the update holds the variable's lock.
      name: a name scope for the ops (default: none, as in TensorFlow).

    Returns:
      `ref` after the update (a ref tensor; reading it gives the new value).

    Raises:
      ValueError: if `indices` has unknown rank, or the static shapes do not fit.
      InvalidArgumentError: at run time, for an index outside its dimension.
    """
    with name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = shape(indices)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = expand_dims(indices, axis=-1)
        coordinates = []
        for dim in range(ndims - 1):  # each position's index along batch dimension `dim`
            size = indices_shape[dim]
            broadcast = [1] * (ndims + 1)
            broadcast[dim] = size
            dim_range = reshape(apply_op(Range, [0, size, 1]), broadcast)
            if dim_range.dtype.base_dtype != nd_indices.dtype:
                dim_range = cast(dim_range, nd_indices.dtype)
            coordinates.append(dim_range * ones_like(nd_indices))
        coordinates.append(nd_indices)
        return scatter_nd_update(ref, concat(coordinates, axis=-1), updates,
                                 use_locking=use_locking)
