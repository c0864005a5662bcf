"""The dataflow control-flow primitives: Switch, Merge, Enter, Exit, NextIteration, LoopCond.

`tf.cond` and `tf.while_loop` are built from these (ops/cond.py, ops/while_loop.py); the
executor gives them their meaning (runtime/executor/frames.py): a Switch forwards its data to
one output and a dead token to the other, a Merge forwards its first live input, Enter moves a
value into a child frame, Exit back to the parent, NextIteration to the next iteration. Each
has a Ref form that forwards a variable reference instead of its value.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import unchanged

__all__ = ["switch", "merge", "ControlTrigger"]


def _switch_shape(ctx):
    pred = ctx.input_shape(1)
    if pred.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.ndims}")
    return [ctx.input_shape(0), ctx.input_shape(0)]


def most_specific_common_shape(shapes) -> _ts.TensorShape:
    """The dims all `shapes` agree on; differing dims become unknown, differing ranks unknown."""
    shapes = list(shapes)
    if not shapes or any(s.ndims is None for s in shapes):
        return _ts.unknown_shape()
    rank = shapes[0].ndims
    if any(s.ndims != rank for s in shapes):
        return _ts.unknown_shape()
    dims = []
    for column in zip(*(s.as_list() for s in shapes)):
        dims.append(column[0] if all(d == column[0] for d in column) else None)
    return _ts.TensorShape(dims)


def _merge_shape(ctx):
    return [most_specific_common_shape(ctx.input_shapes), _ts.TensorShape([])]


def _ref_spec(spec: str) -> str:
    name, _, kind = spec.partition(": ")
    return f"{name}: Ref({kind.replace('REF', 'T')})" if "REF" in kind else spec


def _define_pair(name, inputs, outputs, attrs, shape_fn, doc):
    """An op and its Ref twin (same attrs, ref-typed data argument and outputs)."""
    plain = define_op(name, [a.replace("REF", "T") for a in inputs],
                      [a.replace("REF", "T") for a in outputs], attrs, shape_fn, doc=doc)
    ref = define_op("Ref" + name, [_ref_spec(a) for a in inputs],
                    [_ref_spec(a) for a in outputs], attrs, shape_fn,
                    doc=doc + " (reference form)")
    return plain, ref


Switch, RefSwitch = _define_pair(
    "Switch", ["data: REF", "pred: bool"], ["output_false: REF", "output_true: REF"],
    [TypeAttr("T")], _switch_shape,
    "Forwards `data` to output_true if `pred`, else to output_false; the other gets a dead token.")
Merge, RefMerge = _define_pair(
    "Merge", ["inputs: N * REF"], ["output: REF", "value_index: int32"],
    [TypeAttr("T"), Attr("N", "int", minimum=1)], _merge_shape,
    "Forwards the first live input and its index; dead only if every input is dead.")
_FRAME_ATTRS = [TypeAttr("T"), Attr("frame_name", "string"),
                Attr("is_constant", "bool", default=False),
                Attr("parallel_iterations", "int", default=10)]
Enter, RefEnter = _define_pair(
    "Enter", ["data: REF"], ["output: REF"], _FRAME_ATTRS, unchanged,
    "Makes `data` available in the child frame `frame_name` (in every iteration if constant).")
Exit, RefExit = _define_pair(
    "Exit", ["data: REF"], ["output: REF"], [TypeAttr("T")], unchanged,
    "Returns a value from a child frame to its parent frame.")
NextIteration, RefNextIteration = _define_pair(
    "NextIteration", ["data: REF"], ["output: REF"], [TypeAttr("T")], unchanged,
    "Makes `data` available to the next iteration of the frame.")
LoopCond = define_op("LoopCond", ["input: bool"], ["output: bool"], shape_fn=unchanged,
                     not_differentiable=True,
                     doc="Forwards the loop predicate; marks the node that decides a loop.")
ControlTrigger = define_op("ControlTrigger", doc="A NoOp that runs even when its inputs are "
                           "dead; used to carry control edges out of untaken branches.")

# The loop ops are differentiated as a whole loop (autodiff/while_grad.py), never one by one.
for _op in (Enter, RefEnter, Exit, RefExit, NextIteration, RefNextIteration, RefSwitch,
            RefMerge):
    _op.gradient(lambda op, *grads: [None] * len(op.inputs))


def switch(data, pred, name=None):
    """Forwards `data` to the output selected by `pred` (TF1's tf.switch / control_flow_ops.switch).

    Returns:
      (output_false, output_true): the untaken one carries a dead token.
    """
    from tensorweave.framework.tensor_conversion import convert_to_tensor
    data = convert_to_tensor(data, as_ref=True)
    op = RefSwitch if data.dtype._is_ref_dtype else Switch
    return tuple(apply_op(op, [data, pred], name=name or "Switch"))


def merge(inputs, name=None):
    """Forwards the first available live input (TF1's control_flow_ops.merge).

    Returns:
      (output, value_index).
    """
    from tensorweave.framework.tensor_conversion import convert_to_tensor
    inputs = [convert_to_tensor(t, as_ref=True) for t in inputs]
    if any(t.dtype.base_dtype != inputs[0].dtype.base_dtype for t in inputs):
        raise TypeError("merge inputs must all have the same dtype, got "
                        f"{[t.dtype.base_dtype.name for t in inputs]}")
    op = RefMerge if all(t.dtype._is_ref_dtype for t in inputs) else Merge
    if op is Merge:
        inputs = [_value(t) for t in inputs]
    return tuple(apply_op(op, [inputs], name=name or "Merge"))


def _value(t):
    if t.dtype._is_ref_dtype:
        from tensorweave.framework.op_def import get_op_def
        return apply_op(get_op_def("Identity"), [t])
    return t

