"""Gradient accumulators: tf.ConditionalAccumulator and tf.SparseConditionalAccumulator.

An accumulator sums gradients applied with a `local_step` no older than its global step (stale
ones are dropped) and hands out their average once `num_required` have arrived; take_grad waits
asynchronously (kernels/accumulators.py). SyncReplicasOptimizer is built from these. Like
TensorFlow 2.x's compat.v1, the dense accumulator uses the resource ops (Resource...); the
sparse one the ref-handle ops; the dense ref-handle ops exist too so TF1 GraphDefs import.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import Arg, Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import scalar, unknown
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math_unary_ops import cast

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator"]

_DTYPE = TypeAttr("dtype", _dtypes.NUMERIC)
_ACCUMULATOR_ATTRS = [_DTYPE, Attr("shape", "shape"), Attr("container", "string", ""),
                      Attr("shared_name", "string", ""),
                      Attr("reduction_type", "string", "MEAN")]


def _handle_shape(ctx):
    return _ts.TensorShape([2])   # TensorFlow's (container, name) handle shape


def _define(op_type, handle, inputs=(), outputs=(), attrs=(), shape_fn=None):
    return define_op(op_type, inputs=[handle, *inputs] if handle else inputs, outputs=outputs,
                     attrs=list(attrs), shape_fn=shape_fn, is_stateful=True,
                     not_differentiable=True)


def _dense_family(prefix: str, handle: str) -> dict:
    """The dense accumulator ops in one handle form ('' ref, 'Resource' resource)."""
    return {
        "create": _define(f"{prefix}ConditionalAccumulator", None, outputs=[handle],
                          attrs=_ACCUMULATOR_ATTRS, shape_fn=_handle_shape),
        "apply": _define(f"{prefix}AccumulatorApplyGradient", handle,
                         ["local_step: int64", "gradient: dtype"], attrs=[_DTYPE]),
        "take": _define(f"{prefix}AccumulatorTakeGradient", handle, ["num_required: int32"],
                        ["average: dtype"], [_DTYPE], unknown),
        "num": _define(f"{prefix}AccumulatorNumAccumulated", handle, (),
                       ["num_accumulated: int32"], (), scalar),
        "set_step": _define(f"{prefix}AccumulatorSetGlobalStep", handle,
                            ["new_global_step: int64"]),
    }


_REF_OPS = _dense_family("", "handle: Ref(string)")
_RESOURCE_OPS = _dense_family("Resource", "handle: resource")
_SPARSE_CREATE = _define(
    "SparseConditionalAccumulator", None, outputs=["handle: Ref(string)"],
    attrs=_ACCUMULATOR_ATTRS, shape_fn=_handle_shape)
SparseAccumulatorApplyGradient = _define(
    "SparseAccumulatorApplyGradient", "handle: Ref(string)",
    ["local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
     "gradient_shape: int64"], attrs=[_DTYPE, Attr("has_known_shape", "bool")])
SparseAccumulatorTakeGradient = _define(
    "SparseAccumulatorTakeGradient", "handle: Ref(string)", ["num_required: int32"],
    ["indices: int64", Arg("values", type_attr="dtype"), "shape: int64"], [_DTYPE], unknown)


class ConditionalAccumulatorBase:
    """An accumulator handle with its dtype and shape, plus the ops every kind shares."""

    def __init__(self, dtype, shape, accumulator_ref, ops=None):
        self._dtype = dtype
        self._shape = _ts.as_shape(shape) if shape is not None else _ts.unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._ops = ops or _REF_OPS
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        """The accumulator's handle tensor."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """Number of gradients accumulated since the last take (a scalar int32 tensor)."""
        return apply_op(self._ops["num"], [self._accumulator_ref],
                        name=name or f"{self._name}_NumAccumulated")

    def set_global_step(self, new_global_step, name=None):
        """Sets the global step: gradients with an older local_step are dropped from now on."""
        return apply_op(self._ops["set_step"], [self._accumulator_ref, _int64(new_global_step)],
                        name=name)


def _int64(value):
    """`value` as an int64 tensor, cast when it is another integer tensor (TF's wrappers cast
    steps, indices and shapes, which are often int32)."""
    tensor = convert_to_tensor(value)
    if tensor.dtype.base_dtype != _dtypes.int64:
        tensor = cast(tensor, _dtypes.int64)
    return tensor


def _accumulator_attrs(dtype, shape, shared_name, reduction_type) -> dict:
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(f"reduction_type must be 'MEAN' or 'SUM', got {reduction_type!r}")
    return {"dtype": dtype, "shape": _ts.as_shape(shape) if shape is not None
            else _ts.unknown_shape(), "shared_name": shared_name or "",
            "reduction_type": reduction_type}


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients; take_grad returns their average (or sum)."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        """Creates an accumulator of `dtype` gradients of `shape` (None: any shape)."""
        dtype = _dtypes.as_dtype(dtype)
        ref = apply_op(_RESOURCE_OPS["create"], [],
                       _accumulator_attrs(dtype, shape, shared_name, reduction_type), name=name)
        super().__init__(dtype, shape, ref, _RESOURCE_OPS)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds `grad` unless `local_step` is older than the accumulator's global step.

        Raises:
          ValueError: `grad`'s shape is incompatible with the accumulator's.
        """
        grad = convert_to_tensor(grad, self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        return apply_op(self._ops["apply"], [self._accumulator_ref, _int64(local_step), grad],
                        name=name)

    def take_grad(self, num_required, name=None):
        """Waits until `num_required` gradients are in, returns their average and resets.

        The accumulator's global step advances by one.
        """
        out = apply_op(self._ops["take"], [self._accumulator_ref, num_required],
                       {"dtype": self._dtype}, name=name)
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse (IndexedSlices) gradients; rows are averaged per index."""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        """Creates a sparse accumulator of `dtype` gradients of dense `shape`."""
        dtype = _dtypes.as_dtype(dtype)
        ref = apply_op(_SPARSE_CREATE, [],
                       _accumulator_attrs(dtype, shape, shared_name, reduction_type), name=name)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """Applies an IndexedSlices gradient (see apply_grad)."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds the rows `grad_values` at `grad_indices` unless `local_step` is stale."""
        values = convert_to_tensor(grad_values, self._dtype)
        known = grad_shape is not None
        local_step, indices = _int64(local_step), _int64(grad_indices)   # TF's cast order
        shape = _int64(grad_shape) if known else convert_to_tensor([], _dtypes.int64)
        inputs = [self._accumulator_ref, local_step, indices, values, shape]
        return apply_op(SparseAccumulatorApplyGradient, inputs, {"has_known_shape": known},
                        name=name)

    def take_grad(self, num_required, name=None):
        """Waits for `num_required` gradients; returns (indices, values, shape) and resets."""
        return apply_op(SparseAccumulatorTakeGradient, [self._accumulator_ref, num_required],
                        {"dtype": self._dtype}, name=name)

    def take_indexed_slices_grad(self, num_required, name=None):
        """Like take_grad, as an IndexedSlices."""
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values, indices, shape)
