"""Stateful variable ops: the variable node, assignment and initialization checks.

A TF1 variable is a `VariableV2` node whose ref output is the variable's storage (a
`VariableRef` in the device's resource manager, so each session has its own values); `Assign`,
`AssignAdd` and `AssignSub` update it and return the ref; reading it as a value is an `Identity`.

A resource variable (`use_resource=True`, variables.ResourceVariable) keeps the same storage
behind a `VarHandleOp`, whose output is a DT_RESOURCE handle: `ReadVariableOp` reads a copy of
the value (later updates do not change it), `AssignVariableOp` stores one, `AssignAddVariableOp`
/ `AssignSubVariableOp` update in place, `VarIsInitializedOp` and `ResourceCountUpTo` are
IsVariableInitialized and CountUpTo through the handle, `ResourceGather` reads rows (what
tf.gather and embedding lookups read from a resource variable, without copying the rest; its
gradient is IndexedSlices of the variable) and `VariableShape` the current shape. These ops
return no ref: an update has no output. The other ref updates have resource twins defined
next to them (ResourceScatterAdd in scatter_ops.py, ResourceApplyAdam in training_ops.py, ...)
that run the same kernels, a handle arriving as the storage a ref input would; their shape
functions are the ref ops', run on the variable's static shape (`on_variable_shapes`). The
wrappers here dispatch as TensorFlow's do: given a resource variable, `assign` is its `assign`
method, and so on.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import ShapeContext, scalar
from tensorweave.ops.array_index_ops import gather_nd_shape

__all__ = ["assign", "assign_add", "assign_sub", "count_up_to", "is_variable_initialized"]


def _variable_shape(ctx):
    return ctx.attrs["shape"]


VariableV2 = define_op(
    "VariableV2", outputs=["ref: Ref(dtype)"],
    attrs=[Attr("shape", "shape"), TypeAttr("dtype"), Attr("container", "string", ""),
           Attr("shared_name", "string", "")],
    shape_fn=_variable_shape, is_stateful=True, not_differentiable=True)


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """Adds a VariableV2 node; its ref output is the variable's storage."""
    return apply_op(VariableV2, [], {"shape": _ts.as_shape(shape), "dtype": dtype,
                                     "container": container, "shared_name": shared_name},
                    name=name)


def _assign_shape(ctx):
    ref, value = ctx.input_shape(0), ctx.input_shape(1)
    if not ctx.attrs["validate_shape"]:
        return value
    try:
        return ref.merge_with(value)
    except ValueError:
        raise ValueError(f"Shapes must be equal rank, and compatible, but are {ref} and "
                         f"{value}") from None


def _update_shape(ctx):
    ref, value = ctx.input_shape(0), ctx.input_shape(1)
    try:
        return ref.merge_with(value)
    except ValueError:
        raise ValueError(f"Shapes must be equal rank, and compatible, but are {ref} and "
                         f"{value}") from None


# As TF's state_grad.py: Assign, AssignAdd and AssignSub are NotDifferentiable (their inputs
# get None).
Assign = define_op(
    "Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
    attrs=[TypeAttr("T"), Attr("validate_shape", "bool", True),
           Attr("use_locking", "bool", True)],
    shape_fn=_assign_shape, is_stateful=True, not_differentiable=True)

_UPDATE_ATTRS = [TypeAttr("T", _dtypes.NUMERIC), Attr("use_locking", "bool", False)]
AssignAdd = define_op("AssignAdd", inputs=["ref: Ref(T)", "value: T"],
                      outputs=["output_ref: Ref(T)"], attrs=_UPDATE_ATTRS,
                      shape_fn=_update_shape, is_stateful=True, not_differentiable=True)
AssignSub = define_op("AssignSub", inputs=["ref: Ref(T)", "value: T"],
                      outputs=["output_ref: Ref(T)"], attrs=_UPDATE_ATTRS,
                      shape_fn=_update_shape, is_stateful=True, not_differentiable=True)

CountUpTo = define_op(
    "CountUpTo", inputs=["ref: Ref(T)"], outputs=["output: T"],
    attrs=[TypeAttr("T", (_dtypes.int32, _dtypes.int64)), Attr("limit", "int")],
    shape_fn=lambda ctx: ctx.inputs[0]._shape, is_stateful=True, not_differentiable=True)

IsVariableInitialized = define_op(
    "IsVariableInitialized", inputs=["ref: Ref(dtype)"], outputs=["is_initialized: bool"],
    attrs=[TypeAttr("dtype")], shape_fn=lambda ctx: _ts.TensorShape([]), is_stateful=True,
    not_differentiable=True)


# --- resource variables -------------------------------------------------------------------------
# Ops that pass their first input on unchanged: conds and loops put them between a handle and
# the ops using it.
_FORWARDING = frozenset({"Identity", "Switch", "Enter"})


def _handle_op(handle):
    """The VarHandleOp a DT_RESOURCE `handle` comes from, or None."""
    op = handle.op
    while True:
        if op.type in _FORWARDING:
            op = op.inputs[0].op
        elif op.type == "Placeholder" and hasattr(op.graph, "captured_source"):
            source = op.graph.captured_source(op)   # a handle a tf.data function captured
            if source is None:
                break
            op = source.op
        else:
            break
    return op if op.type == "VarHandleOp" else None


def variable_shape(handle) -> _ts.TensorShape:
    """The static shape of the variable whose DT_RESOURCE `handle` this is: its VarHandleOp's
    `shape` attr (TensorFlow carries it as the handle's shape-and-type data); unknown when the
    handle comes from anything else."""
    op = _handle_op(handle)
    return op.get_attr("shape") if op is not None else _ts.unknown_shape()


def zeros_like_variable(handle):
    """Zeros like the value of the variable behind `handle`: the gradient of a handle that a
    cond branch or a loop iteration does not read. A handle of anything else (a loop's stack)
    gets no gradient, and its zeros stand for none."""
    from tensorweave.ops.array_creation_ops import zeros_like
    op = _handle_op(handle)
    if op is None:
        return zeros_like(handle)
    return zeros_like(read_variable_op(handle, op.get_attr("dtype")))


class _VariableShaped:
    """A resource input as a ref op's shape function sees it: its variable's static shape."""

    __slots__ = ("_shape",)

    def __init__(self, shape: _ts.TensorShape):
        self._shape = shape


def on_variable_shapes(shape_fn):
    """The shape function of a ref op's resource twin: `shape_fn` with each resource input
    standing for its variable's shape, so the twin checks its inputs as the ref op does."""
    def resource_shape_fn(ctx):
        inputs = [_VariableShaped(variable_shape(t)) if t.dtype == _dtypes.resource else t
                  for t in ctx.inputs]
        return shape_fn(ShapeContext(inputs, ctx.attrs, ctx.op_type))
    return resource_shape_fn


VarHandleOp = define_op(
    "VarHandleOp", outputs=["resource: resource"],
    attrs=[Attr("container", "string", ""), Attr("shared_name", "string", ""),
           Attr("debug_name", "string", ""), TypeAttr("dtype"), Attr("shape", "shape"),
           Attr("allowed_devices", "list(string)", [])],
    shape_fn=scalar, is_stateful=True, not_differentiable=True)

ReadVariableOp = define_op(
    "ReadVariableOp", inputs=["resource: resource"], outputs=["value: dtype"],
    attrs=[TypeAttr("dtype")], shape_fn=lambda ctx: variable_shape(ctx.inputs[0]),
    is_stateful=True)


@ReadVariableOp.gradient
def _read_variable_grad(op, grad):
    """A read passes its gradient to the handle: gradients w.r.t. a resource variable are
    taken at its handle, where every read's gradient sums."""
    return [grad]


AssignVariableOp = define_op(
    "AssignVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=[TypeAttr("dtype"), Attr("validate_shape", "bool", False)],
    shape_fn=on_variable_shapes(_update_shape), is_stateful=True,
    not_differentiable=True)
AssignAddVariableOp = define_op(
    "AssignAddVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=[TypeAttr("dtype")], shape_fn=on_variable_shapes(_update_shape), is_stateful=True,
    not_differentiable=True)
AssignSubVariableOp = define_op(
    "AssignSubVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=[TypeAttr("dtype")], shape_fn=on_variable_shapes(_update_shape), is_stateful=True,
    not_differentiable=True)
VarIsInitializedOp = define_op(
    "VarIsInitializedOp", inputs=["resource: resource"], outputs=["is_initialized: bool"],
    shape_fn=scalar, is_stateful=True, not_differentiable=True)
ResourceCountUpTo = define_op(
    "ResourceCountUpTo", inputs=["resource: resource"], outputs=["output: T"],
    attrs=[Attr("limit", "int"), TypeAttr("T", (_dtypes.int32, _dtypes.int64))],
    shape_fn=on_variable_shapes(lambda ctx: ctx.inputs[0]._shape), is_stateful=True,
    not_differentiable=True)


def _resource_gather_shape(ctx):
    """params[:batch_dims] + indices[batch_dims:] + params[batch_dims + 1:], params being the
    variable's static shape (TF's ResourceGather shape function)."""
    batch_dims = ctx.attrs["batch_dims"]
    if batch_dims < 0:
        raise ValueError(f"batch_dims is negative ({batch_dims})")
    params, indices = variable_shape(ctx.inputs[0]), ctx.input_shape(1)
    for shape, least in ((params, batch_dims + 1), (indices, batch_dims)):
        if shape.ndims is not None and shape.ndims < least:
            raise ValueError(f"Shape must be at least rank {least} but is rank {shape.ndims}")
    if params.ndims is None or indices.ndims is None:
        return _ts.unknown_shape()
    dims = params.as_list()
    return _ts.TensorShape(dims[:batch_dims] + indices.as_list()[batch_dims:] +
                           dims[batch_dims + 1:])


ResourceGather = define_op(
    "ResourceGather", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=[Attr("batch_dims", "int", 0), Attr("validate_indices", "bool", True),
           TypeAttr("dtype"), TypeAttr("Tindices", (_dtypes.int32, _dtypes.int64))],
    shape_fn=_resource_gather_shape, is_stateful=True)


@ResourceGather.gradient
def _resource_gather_grad(op, grad):
    """The gathered rows' gradient as IndexedSlices of the variable, taken at its handle (as
    ReadVariableOp's is), so a sparse optimizer update touches only those rows."""
    import tensorweave as tw
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.ops.array_join_ops import concat
    handle, indices = op.inputs
    params_shape = variable_shape_tensor(handle)
    count = tw.expand_dims(tw.size(indices), 0)
    values = tw.reshape(grad, concat([count, params_shape[1:]], 0))
    return [IndexedSlices(values, tw.reshape(indices, count), params_shape), None]


ResourceGatherNd = define_op(
    "ResourceGatherNd", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=[TypeAttr("dtype"), TypeAttr("Tindices", (_dtypes.int32, _dtypes.int64))],
    shape_fn=on_variable_shapes(gather_nd_shape), is_stateful=True)


@ResourceGatherNd.gradient
def _resource_gather_nd_grad(op, grad):
    """TensorFlow's: IndexedSlices of the variable when each index names one row ([N, 1]
    indices), else the gradient scattered into the variable's shape (ScatterNd)."""
    import tensorweave as tw
    from tensorweave.framework.indexed_slices import IndexedSlices
    handle, indices = op.inputs
    params_shape = variable_shape_tensor(handle, indices.dtype.base_dtype)
    dims = indices.shape
    if dims.ndims == 2 and dims[-1].value == 1:
        return [IndexedSlices(grad, tw.squeeze(indices, axis=-1), params_shape), None]
    return [tw.scatter_nd(indices, grad, params_shape), None]


VariableShape = define_op(
    "VariableShape", inputs=["input: resource"], outputs=["output: out_type"],
    attrs=[TypeAttr("out_type", (_dtypes.int32, _dtypes.int64), default=_dtypes.int32)],
    shape_fn=lambda ctx: _ts.TensorShape([variable_shape(ctx.inputs[0]).ndims]),
    is_stateful=True, not_differentiable=True)


def variable_shape_tensor(handle, out_type=_dtypes.int32):
    """The shape of the variable behind `handle` as a tensor: a constant when its static shape
    is fully known, else a VariableShape op (TF's resource_variable_ops.variable_shape)."""
    static = variable_shape(handle)
    if static.is_fully_defined():
        from tensorweave.ops.constant_op import constant
        return constant(static.as_list(), dtype=out_type)
    return variable_shape_op(handle, out_type)


def variable_shape_op(handle, out_type=_dtypes.int32, name=None):
    """A VariableShape op: the current shape of the variable behind `handle`, read at run
    time (FailedPrecondition before it is assigned)."""
    return apply_op(VariableShape, [handle], {"out_type": out_type}, name=name)


def resource_gather(handle, indices, dtype, batch_dims=0, validate_indices=True, name=None):
    """Rows `indices` of the variable behind `handle` (a new array: later updates do not
    change it), without reading the rest of it."""
    return apply_op(ResourceGather, [handle, indices],
                    {"dtype": dtype, "batch_dims": batch_dims,
                     "validate_indices": validate_indices}, name=name)


def resource_gather_nd(handle, indices, dtype, name=None):
    """tf.gather_nd of the variable behind `handle`, reading only the named elements."""
    return apply_op(ResourceGatherNd, [handle, indices], {"dtype": dtype}, name=name)


def var_handle_op(shape, dtype, shared_name, name, container=""):
    """Adds a VarHandleOp: the handle of the variable `shared_name` of `dtype` and `shape`."""
    return apply_op(VarHandleOp, [], {"shape": _ts.as_shape(shape), "dtype": dtype,
                                      "shared_name": shared_name, "debug_name": name,
                                      "container": container}, name=name)


def read_variable_op(handle, dtype, name=None):
    """A copy of the value of the variable behind `handle` (FailedPrecondition before it is
    assigned)."""
    return apply_op(ReadVariableOp, [handle], {"dtype": dtype}, name=name)


def assign_variable_op(handle, value, validate_shape=False, name=None):
    """Stores a copy of `value` in the variable behind `handle` (its shape must be unchanged
    when `validate_shape`); returns the op."""
    return apply_op(AssignVariableOp, [handle, value], {"validate_shape": validate_shape},
                    name=name)


def assign_add_variable_op(handle, value, name=None):
    """Adds `value` to the variable behind `handle` in place; returns the op."""
    return apply_op(AssignAddVariableOp, [handle, value], name=name)


def assign_sub_variable_op(handle, value, name=None):
    """Subtracts `value` from the variable behind `handle` in place; returns the op."""
    return apply_op(AssignSubVariableOp, [handle, value], name=name)


def var_is_initialized_op(handle, name=None):
    """A scalar bool: whether the variable behind `handle` has been assigned."""
    return apply_op(VarIsInitializedOp, [handle], name=name)


def _is_resource_variable(value) -> bool:
    from tensorweave.ops.variables import is_resource_variable
    return is_resource_variable(value)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Assigns `value` to the variable `ref` and returns `ref` after the assignment.

    Args:
      ref: a Variable (or its ref tensor).
      value: the new value; its shape must match unless `validate_shape` is False.
      validate_shape: if False, the variable takes `value`'s shape.
      use_locking: whether the update is protected by a lock.
      name: the op name.

    Returns:
      `ref` after the assignment; for a resource variable, its value read after it.
    """
    if _is_resource_variable(ref):
        return ref.assign(value, name=name)
    attrs = {}
    if validate_shape is not None:
        attrs["validate_shape"] = validate_shape
    if use_locking is not None:
        attrs["use_locking"] = use_locking
    return apply_op(Assign, [ref, value], attrs, name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to the variable `ref` and returns `ref` after the update (a resource
    variable's value read after it)."""
    if _is_resource_variable(ref):
        return ref.assign_add(value)   # TF drops the name here (not in `assign`)
    attrs = {"use_locking": use_locking} if use_locking is not None else {}
    return apply_op(AssignAdd, [ref, value], attrs, name=name or "AssignAdd")


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from the variable `ref` and returns `ref` after the update (a
    resource variable's value read after it)."""
    if _is_resource_variable(ref):
        return ref.assign_sub(value)   # TF drops the name here (not in `assign`)
    attrs = {"use_locking": use_locking} if use_locking is not None else {}
    return apply_op(AssignSub, [ref, value], attrs, name=name or "AssignSub")


def is_variable_initialized(variable):
    """A scalar bool tensor: whether `variable` has been initialized in this session."""
    if _is_resource_variable(variable):
        return variable.is_initialized()
    return apply_op(IsVariableInitialized, [variable], name="IsVariableInitialized")


def count_up_to(ref, limit, name=None):
    """Increments the int32/int64 variable `ref` until it reaches `limit`.

    Args:
      ref: an int32 or int64 variable (scalar).
      limit: once `ref` equals it, the op raises OutOfRangeError instead.
      name: a name for the operation (default "CountUpTo").

    Returns:
      The value of `ref` before the increment.
    """
    if _is_resource_variable(ref):
        return apply_op(ResourceCountUpTo, [ref.handle], {"limit": limit, "T": ref.dtype},
                        name=name or "ResourceCountUpTo")
    return apply_op(CountUpTo, [ref], {"limit": limit}, name=name or "CountUpTo")
