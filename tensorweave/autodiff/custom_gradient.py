"""User-defined gradients in graph mode: tf.custom_gradient, tf.grad_pass_through and
tf.recompute_grad.

As in TensorFlow's graph mode, `custom_gradient(f)` calls `f(*args) -> (result, grad_fn)` once
and routes the result, the arguments and the variables the result depends on through one
IdentityN op whose gradient is overridden (gradient_override_map) by a function registered
under a fresh name. tf.gradients then meets that IdentityN and calls `grad_fn(*dys)` (with
`variables=` when variables were used) instead of differentiating f's ops: the original
results get no gradient, the arguments get grad_fn's input gradients, the variables its
variable gradients. Variables created inside f are a TypeError, as TensorFlow requires
resource variables there and TF1 variables are reference variables.
"""
from __future__ import annotations

import functools
import inspect
import itertools

from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["custom_gradient", "grad_pass_through", "recompute_grad"]

_IDS = itertools.count()
_VARIABLE_OPS = ("VariableV2", "VarHandleOp")


def custom_gradient(f=None):
    """Decorator: `f(*args)` returns `(y, grad_fn)`; tf.gradients through y uses
    `grad_fn(*dys)` for the gradients of args (tf.custom_gradient).

    Args:
      f: a function of Tensors returning a Tensor (or a nested structure of Tensors) and
        `grad_fn`. `grad_fn(*dys)` returns one gradient per argument; if f's results depend on
        variables (created outside f), `grad_fn(*dys, variables=...)` returns
        `(input_grads, variable_grads)`, one per variable, ordered by name.

    Returns:
      The decorated function, or a decorator when `f` is None.

    Raises:
      ValueError: (when called) for keyword arguments, which graph mode does not support.
      TypeError: (when called) if f creates variables, or uses variables and grad_fn takes
        no `variables` argument.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _graph_mode_decorator(f, args, kwargs)
    return decorated


def _graph_mode_decorator(f, args, kwargs):
    from tensorweave.ops.array_ops import identity_n
    if kwargs:
        raise ValueError("The custom_gradient decorator currently supports keywords arguments "
                         "only when eager execution is enabled.")
    name = f"CustomGradient-{next(_IDS)}"
    args = nest.map_structure(convert_to_tensor, args)
    before = _all_variables()
    result, grad_fn = f(*args)
    flat_args = nest.flatten(args)
    flat_result = nest.flatten(result)
    if any(v not in before for v in _all_variables()):
        raise TypeError("All variables used by a function wrapped with @custom_gradient must "
                        "be `ResourceVariable`s. Ensure that no `variable_scope` is created "
                        "with `use_resource=False`.")
    graph = get_default_graph()
    inputs = [t for t in flat_args if t.graph is graph]
    variables = sorted(_dependent_variables(inputs, flat_result), key=lambda v: v.name)
    spec = inspect.getfullargspec(grad_fn)
    takes_variables = "variables" in spec.args or "variables" in spec.kwonlyargs or \
        spec.varkw is not None
    if variables and not takes_variables:
        raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument "
                        f"'variables', since function uses variables: {variables}")
    n_results = len(flat_result)

    @RegisterGradient(name)
    def _identity_n_grad(unused_op, *result_grads):
        """The user's grad_fn, padded with None for the results themselves."""
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads[:n_results],
                                                  variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from "
                                 "@custom_gradient grad_fn.")
        else:
            input_grads, variable_grads = grad_fn(*result_grads[:n_results]), []
        return [None] * n_results + nest.flatten(input_grads) + list(variable_grads)

    with graph.gradient_override_map({"IdentityN": name}):
        outputs = identity_n(flat_result + flat_args + variables)
    return nest.pack_sequence_as(result, outputs[:n_results])


def _all_variables() -> list:
    return get_collection(GraphKeys.GLOBAL_VARIABLES) + get_collection(GraphKeys.LOCAL_VARIABLES)


def _dependent_variables(inputs, outputs) -> list:
    """The global variables whose ops lie on a differentiable path into `outputs` that does
    not pass through `inputs` (TensorFlow's _get_dependent_variables)."""
    from tensorweave.autodiff.gradients import is_differentiable_dtype
    stop = {t for t in inputs}
    seen, stack, found = set(), [t.op for t in outputs if t not in stop], []
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type in _VARIABLE_OPS:
            found.append(op.name)
        stack.extend(t.op for t in op.inputs
                     if t not in stop and is_differentiable_dtype(t.dtype.base_dtype))
    by_name = {v.op.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
    return [by_name[n] for n in found if n in by_name]


def grad_pass_through(f):
    """Wraps `f` so that its gradient is the identity: the output's gradient goes unchanged to
    every argument (tf.grad_pass_through), e.g. to train through a non-differentiable
    assignment or quantization.

    Args:
      f: a function of Tensors whose output has the arguments' shape.

    Returns:
      The wrapped function. Variables used by f get no gradient.
    """
    @custom_gradient
    def _grad_pass_through_op(*args, **kwargs):
        def grad(*dys, variables=None):
            return (dys, [None] * len(variables)) if variables is not None else dys
        return f(*args, **kwargs), grad
    return functools.wraps(f)(_grad_pass_through_op)


def recompute_grad(f):
    """Wraps `f` so that its forward activations are recomputed when the gradient is built
    instead of being kept (tf.recompute_grad): the gradient graph calls f again, after the
    output gradient is available, and differentiates that copy.

    Args:
      f: a function of Tensors; variables it uses must exist before the first call.

    Returns:
      The wrapped function, with f's forward values and a recomputed gradient.
    """
    from tensorweave.autodiff.gradients import UnconnectedGradients, gradients
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.array_ops import identity, reshape
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_max
    from tensorweave.ops.variable_scope import get_variable_scope, variable_scope

    @custom_gradient
    def inner(*args, **kwargs):
        scope = get_variable_scope()
        result = f(*args, **kwargs)

        def grad(*dresult, variables=None):
            # A data dependency on the first output gradient, so the recomputation runs after
            # the backward pass reaches this point (not when the forward pass does).
            elem = cast(reduce_max(reshape(dresult[0], [-1])[:1]), _dtypes.bool)
            dep = where_v2(equal(elem, elem), 0.0, float("nan"))
            copies = [identity(a) + cast(dep, a.dtype) for a in args]
            with variable_scope(scope, reuse=True):
                recomputed = f(*copies, **kwargs)
            targets = copies + list(variables or [])
            grads = gradients(nest.flatten(recomputed), targets, grad_ys=list(dresult),
                              unconnected_gradients=UnconnectedGradients.ZERO)
            return (grads[:len(copies)], grads[len(copies):]) if variables else grads
        return result, grad
    return functools.wraps(f)(inner)
