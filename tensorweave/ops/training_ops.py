"""Fused optimizer updates: one op per variable per step (TF's training ops).

Each `Apply*` op updates a variable (and its optimizer slots) in place with one formula and
returns the variable's ref; each `SparseApply*` op does the same for the rows named by
`indices`. The optimizers in `tensorweave/train/` build exactly one of these per variable, as
TensorFlow does, so a training step is not a chain of small elementwise ops per variable.
The ops are marked stateful (they mutate their ref inputs) so no graph pass folds or merges
them, and not differentiable.

Each op has a resource twin, `Resource<name>` (ResourceApplyAdam, ResourceSparseApplyAdagrad):
the same inputs with DT_RESOURCE handles for the refs, no output, the same kernel. Given
resource variables, the wrappers add the twin on their handles, as the optimizers' resource
paths do in TensorFlow.

The wrappers are TensorFlow's `gen_training_ops` functions (not public tf.* names; the
optimizers call them).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OP_REGISTRY, Arg, Attr, TypeAttr, arg, define_op
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.ops.state_ops import on_variable_shapes
from tensorweave.ops.variables import is_resource_variable

__all__: list[str] = []


# --- shape functions --------------------------------------------------------------------------
def _apply_shape(refs, scalars, grad, indices):
    """Shape function of an Apply/SparseApply op given its input roles (by position).

    Slots merge with var; scalars are rank 0; a dense grad merges with var; a sparse grad is
    [len(indices)] + var.shape[1:] with 1-D indices.
    """
    def shape_fn(ctx):
        shape = ctx.input_shape(refs[0])
        for i in refs[1:]:
            shape = merge_shapes(shape, ctx.input_shape(i))
        for i in scalars:
            shape_with_rank(ctx.input_shape(i), 0)
        g = ctx.input_shape(grad)
        if indices is None:
            return merge_shapes(shape, g)
        idx = shape_with_rank(ctx.input_shape(indices), 1)
        if g.ndims is None:
            return shape
        if g.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
        n, g_n = idx.as_list()[0], g.as_list()[0]
        if n is not None and g_n is not None and n != g_n:
            raise ValueError(f"Dimensions must be equal, but are {g_n} and {n}")
        if shape.ndims is not None:
            merge_shapes(_ts.TensorShape([None] + shape.as_list()[1:]),
                         _ts.TensorShape([None] + g.as_list()[1:]))
        return shape
    return shape_fn


# --- op definitions: one row per op -----------------------------------------------------------
_GRAD_NAMES = ("grad", "delta")


def define_apply_op(name: str, inputs: list[str], extra_attrs=()):
    """Defines an Apply/SparseApply op and its resource twin `Resource<name>`; input roles
    come from the arg specs and names. Returns the ref op."""
    args = [arg(s) for s in inputs]
    refs = [i for i, a in enumerate(args) if a.is_ref]
    grad = next(i for i, a in enumerate(args) if a.name in _GRAD_NAMES)
    indices = next((i for i, a in enumerate(args) if a.name == "indices"), None)
    scalars = [i for i in range(len(args)) if i not in refs and i not in (grad, indices)]
    attrs = [TypeAttr("T", _dtypes.NUMERIC)]
    if indices is not None:
        attrs.append(TypeAttr("Tindices", _dtypes.INDEX))
    attrs.append(Attr("use_locking", "bool", False))
    attrs.extend(extra_attrs)
    shape_fn = _apply_shape(refs, scalars, grad, indices)
    handles = [Arg(a.name, dtype=_dtypes.resource) if a.is_ref else a for a in args]
    define_op("Resource" + name, inputs=handles, attrs=attrs,
              shape_fn=on_variable_shapes(shape_fn), is_stateful=True, not_differentiable=True)
    return define_op(name, inputs=args, outputs=["out: Ref(T)"], attrs=attrs, shape_fn=shape_fn,
                     is_stateful=True, not_differentiable=True)


_NESTEROV = Attr("use_nesterov", "bool", False)
_UPDATE_SLOTS = Attr("update_slots", "bool", True)
_LINEAR_BY_LR = Attr("multiply_linear_by_lr", "bool", False)

ApplyGradientDescent = define_apply_op("ApplyGradientDescent",
                                       ["var: Ref(T)", "alpha: T", "delta: T"])
ApplyProximalGradientDescent = define_apply_op(
    "ApplyProximalGradientDescent", ["var: Ref(T)", "alpha: T", "l1: T", "l2: T", "delta: T"])
ApplyMomentum = define_apply_op(
    "ApplyMomentum", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "momentum: T"],
    [_NESTEROV])
ApplyAdam = define_apply_op(
    "ApplyAdam", ["var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T", "beta2_power: T",
                  "lr: T", "beta1: T", "beta2: T", "epsilon: T", "grad: T"], [_NESTEROV])
ApplyAdagrad = define_apply_op("ApplyAdagrad", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T"],
                              [_UPDATE_SLOTS])
ApplyAdadelta = define_apply_op(
    "ApplyAdadelta", ["var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T", "rho: T",
                      "epsilon: T", "grad: T"])
ApplyRMSProp = define_apply_op(
    "ApplyRMSProp", ["var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T",
                     "momentum: T", "epsilon: T", "grad: T"])
ApplyCenteredRMSProp = define_apply_op(
    "ApplyCenteredRMSProp", ["var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T",
                             "rho: T", "momentum: T", "epsilon: T", "grad: T"])
ApplyFtrl = define_apply_op(
    "ApplyFtrl", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T", "l1: T",
                  "l2: T", "lr_power: T"], [_LINEAR_BY_LR])
ApplyFtrlV2 = define_apply_op(
    "ApplyFtrlV2", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T",
                    "l1: T", "l2: T", "l2_shrinkage: T", "lr_power: T"], [_LINEAR_BY_LR])

SparseApplyProximalGradientDescent = define_apply_op(
    "SparseApplyProximalGradientDescent",
    ["var: Ref(T)", "alpha: T", "l1: T", "l2: T", "grad: T", "indices: Tindices"])
SparseApplyMomentum = define_apply_op(
    "SparseApplyMomentum", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T",
                            "indices: Tindices", "momentum: T"], [_NESTEROV])
SparseApplyAdagrad = define_apply_op(
    "SparseApplyAdagrad", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T",
                           "indices: Tindices"], [_UPDATE_SLOTS])
SparseApplyAdadelta = define_apply_op(
    "SparseApplyAdadelta", ["var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T",
                            "rho: T", "epsilon: T", "grad: T", "indices: Tindices"])
SparseApplyRMSProp = define_apply_op(
    "SparseApplyRMSProp", ["var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T",
                           "momentum: T", "epsilon: T", "grad: T", "indices: Tindices"])
SparseApplyCenteredRMSProp = define_apply_op(
    "SparseApplyCenteredRMSProp", ["var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)",
                                   "lr: T", "rho: T", "momentum: T", "epsilon: T", "grad: T",
                                   "indices: Tindices"])
SparseApplyFtrl = define_apply_op(
    "SparseApplyFtrl", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T",
                        "indices: Tindices", "lr: T", "l1: T", "l2: T", "lr_power: T"],
    [_LINEAR_BY_LR])
SparseApplyFtrlV2 = define_apply_op(
    "SparseApplyFtrlV2", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T",
                          "indices: Tindices", "lr: T", "l1: T", "l2: T", "l2_shrinkage: T",
                          "lr_power: T"], [_LINEAR_BY_LR])


# --- wrappers (TensorFlow's gen_training_ops signatures) ---------------------------------------
def apply_update(op_def, inputs, name, **attrs):
    """Adds `op_def` with the non-None attrs; returns the updated variable's ref tensor. For a
    resource variable (and slots), adds the op's resource twin on their handles and returns
    that op."""
    if is_resource_variable(inputs[0]):
        op_def = OP_REGISTRY["Resource" + op_def.name]
        inputs = [x.handle if a.dtype == _dtypes.resource else x
                  for x, a in zip(inputs, op_def.inputs)]
    return apply_op(op_def, inputs, {k: v for k, v in attrs.items() if v is not None},
                    name=name or op_def.name)


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """var -= alpha * delta. Returns the variable's ref after the update."""
    return apply_update(ApplyGradientDescent, [var, alpha, delta], name, use_locking=use_locking)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    """FOBOS step: prox = var - alpha * delta, then soft-threshold by alpha*l1, shrink by l2."""
    return apply_update(ApplyProximalGradientDescent, [var, alpha, l1, l2, delta], name,
                       use_locking=use_locking)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """accum = accum * momentum + grad; var -= lr * accum (or the Nesterov form)."""
    return apply_update(ApplyMomentum, [var, accum, lr, grad, momentum], name,
                       use_locking=use_locking, use_nesterov=use_nesterov)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """Adam: m, v moving moments; var -= lr_t * m / (sqrt(v) + epsilon) with bias-corrected
    lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)."""
    return apply_update(ApplyAdam, [var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
                                   grad], name, use_locking=use_locking, use_nesterov=use_nesterov)


def apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True, name=None):
    """accum += grad^2; var -= lr * grad / sqrt(accum)."""
    return apply_update(ApplyAdagrad, [var, accum, lr, grad], name, use_locking=use_locking,
                       update_slots=update_slots)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False,
                   name=None):
    """Adadelta: update = sqrt(accum_update + eps) / sqrt(accum + eps) * grad; var -= lr*update."""
    return apply_update(ApplyAdadelta, [var, accum, accum_update, lr, rho, epsilon, grad], name,
                       use_locking=use_locking)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                   name=None):
    """RMSProp: ms tracks grad^2; mom = mom * momentum + lr * grad / sqrt(ms + eps); var -= mom."""
    return apply_update(ApplyRMSProp, [var, ms, mom, lr, rho, momentum, epsilon, grad], name,
                       use_locking=use_locking)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking=False, name=None):
    """Centered RMSProp: like RMSProp with the variance ms - mg^2 in place of ms."""
    return apply_update(ApplyCenteredRMSProp, [var, mg, ms, mom, lr, rho, momentum, epsilon, grad],
                       name, use_locking=use_locking)


def apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, use_locking=False,
               multiply_linear_by_lr=False, name=None):
    """FTRL-Proximal update of var with accumulators accum and linear."""
    return apply_update(ApplyFtrl, [var, accum, linear, grad, lr, l1, l2, lr_power], name,
                       use_locking=use_locking, multiply_linear_by_lr=multiply_linear_by_lr)


def apply_ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power,
                  use_locking=False, multiply_linear_by_lr=False, name=None):
    """FTRL-Proximal with online L2 shrinkage (grad + 2 * l2_shrinkage * var)."""
    return apply_update(ApplyFtrlV2, [var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power],
                       name, use_locking=use_locking, multiply_linear_by_lr=multiply_linear_by_lr)


def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices,
                                           use_locking=False, name=None):
    """ApplyProximalGradientDescent on the rows `indices` of var."""
    return apply_update(SparseApplyProximalGradientDescent, [var, alpha, l1, l2, grad, indices],
                        name, use_locking=use_locking)


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False,
                          use_nesterov=False, name=None):
    """ApplyMomentum on the rows `indices` of var and accum."""
    return apply_update(SparseApplyMomentum, [var, accum, lr, grad, indices, momentum], name,
                       use_locking=use_locking, use_nesterov=use_nesterov)


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, update_slots=True,
                         name=None):
    """ApplyAdagrad on the rows `indices` of var and accum."""
    return apply_update(SparseApplyAdagrad, [var, accum, lr, grad, indices], name,
                       use_locking=use_locking, update_slots=update_slots)


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices,
                          use_locking=False, name=None):
    """ApplyAdadelta on the rows `indices`."""
    return apply_update(SparseApplyAdadelta, [var, accum, accum_update, lr, rho, epsilon, grad,
                                             indices], name, use_locking=use_locking)


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                          use_locking=False, name=None):
    """ApplyRMSProp on the rows `indices`."""
    return apply_update(SparseApplyRMSProp,
                        [var, ms, mom, lr, rho, momentum, epsilon, grad, indices], name,
                        use_locking=use_locking)


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking=False, name=None):
    """ApplyCenteredRMSProp on the rows `indices`."""
    return apply_update(SparseApplyCenteredRMSProp, [var, mg, ms, mom, lr, rho, momentum, epsilon,
                                                    grad, indices], name, use_locking=use_locking)


def sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power,
                      use_locking=False, multiply_linear_by_lr=False, name=None):
    """ApplyFtrl on the rows `indices`."""
    return apply_update(SparseApplyFtrl, [var, accum, linear, grad, indices, lr, l1, l2, lr_power],
                       name, use_locking=use_locking, multiply_linear_by_lr=multiply_linear_by_lr)


def sparse_apply_ftrl_v2(var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power,
                         use_locking=False, multiply_linear_by_lr=False, name=None):
    """ApplyFtrlV2 on the rows `indices`."""
    return apply_update(SparseApplyFtrlV2, [var, accum, linear, grad, indices, lr, l1, l2,
                                           l2_shrinkage, lr_power], name, use_locking=use_locking,
                       multiply_linear_by_lr=multiply_linear_by_lr)
