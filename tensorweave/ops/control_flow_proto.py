"""Control-flow contexts in a MetaGraphDef: CondContextDef / WhileContextDef, out and back in.

A cond branch or a while loop is more than its ops: gradients need to know which ops belong to
which branch or frame, which Switch brought a value into a branch, which Merge ends a cond,
and a loop's Enters, Merges, Exits and body inputs and outputs. `tf.cond` and `tf.while_loop`
put their outermost contexts in the "cond_context" and "while_context" collections (as TF
does); a meta graph stores each as a proto naming its tensors (TF's control_flow.proto), and
`import_meta_graph` rebuilds the contexts over the imported ops (framework/meta_graph.py
registers these functions for the two collections), so `tf.gradients` through an
imported cond or loop works. A loop's parts are recovered from the graph around its Enters,
which is how TF's own loops are built too.
"""
from __future__ import annotations

import functools

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.meta_graph import prepend_name_scope, strip_name_scope
from tensorweave.ops.control_flow_context import (
    COND_MERGES,
    COND_SWITCHES,
    LOOP_OF_EXIT,
    CondContext,
    WhileContext,
    context_of,
    is_inside,
)
from tensorweave.protos import control_flow_pb2

_MERGES = ("Merge", "RefMerge")
_EXITS = ("Exit", "RefExit")


# --- export ------------------------------------------------------------------------------------
def _contexts_under(graph, ctx) -> tuple[list, list]:
    """(output names of the ops built in `ctx` or nested in it, the contexts directly in it)."""
    values, children = [], []
    for op in graph.get_operations():
        inner = context_of(op)
        if not is_inside(inner, ctx) or inner is None:
            continue
        values.extend(t.name for t in op.outputs)
        while inner is not None and inner.outer is not ctx and inner is not ctx:
            inner = inner.outer
        if inner is not ctx and inner not in children:
            children.append(inner)
    return values, children


def _values_def(ctx, values, export_scope):
    external = {ext.name: inner.name for ext, inner in ctx._captured.items()}
    return control_flow_pb2.ValuesDef(
        values=sorted(strip_name_scope(v, export_scope) for v in set(values) | set(external)),
        external_values={strip_name_scope(k, export_scope): strip_name_scope(v, export_scope)
                         for k, v in external.items()})


def context_to_proto(ctx, export_scope=None):
    """The CondContextDef or WhileContextDef of `ctx` (None if outside `export_scope`)."""
    if export_scope and not ctx.name.startswith(export_scope):
        return None
    graph = ctx.pivot.graph
    values, children = _contexts_under(graph, ctx)
    strip = functools.partial(strip_name_scope, export_scope=export_scope)
    nested = [_nested_def(child, export_scope) for child in children]
    if isinstance(ctx, CondContext):
        return control_flow_pb2.CondContextDef(
            context_name=strip(ctx.name), pred_name=strip(ctx.pred.name),
            pivot_name=strip(ctx.pivot.outputs[0].name), branch=ctx.branch,
            values_def=_values_def(ctx, values, export_scope), nested_contexts=nested)
    values += [e.name for e in ctx.exits]   # TF builds Exits inside the loop's context
    return control_flow_pb2.WhileContextDef(
        context_name=strip(ctx.name), parallel_iterations=ctx.parallel_iterations,
        back_prop=ctx.back_prop, swap_memory=False, pivot_name=strip(ctx.loop_cond.name),
        pivot_for_pred_name=strip(ctx.merges[0].name),
        pivot_for_body_name=strip(ctx.body_inputs[0].name),
        loop_exit_names=[strip(e.name) for e in ctx.exits],
        loop_enter_names=[strip(e.outputs[0].name) for e in ctx.enters],
        values_def=_values_def(ctx, values, export_scope), nested_contexts=nested)


def _nested_def(ctx, export_scope):
    proto = context_to_proto(ctx, export_scope)
    if isinstance(ctx, CondContext):
        return control_flow_pb2.ControlFlowContextDef(cond_ctxt=proto)
    return control_flow_pb2.ControlFlowContextDef(while_ctxt=proto)


# --- import ------------------------------------------------------------------------------------
def cond_context_from_proto(proto, import_scope=None, outer=None) -> CondContext:
    """A CondContext over the imported ops `proto` names."""
    graph = get_default_graph()
    tensor = functools.partial(_imported, graph, import_scope)
    ctx = CondContext(tensor(proto.pred_name), tensor(proto.pivot_name), proto.branch, outer)
    ctx.name = prepend_name_scope(proto.context_name, import_scope)
    _adopt_values(ctx, proto.values_def, tensor)
    for inner in ctx._captured.values():
        if inner.op.type in ("Switch", "RefSwitch"):
            COND_SWITCHES[inner.op] = (ctx.pred, ctx.branch)
    for op in _ops_of(graph, ctx):
        for t in op.outputs:
            for consumer in t.consumers():
                if consumer.type in _MERGES and not is_inside(context_of(consumer), ctx):
                    COND_MERGES[consumer] = ctx.pred
    _nested_from_proto(proto.nested_contexts, import_scope, ctx)
    return ctx


def while_context_from_proto(proto, import_scope=None, outer=None) -> WhileContext:
    """A WhileContext over the imported loop `proto` names: its parts are found from the
    loop-variable Enters (Enter -> Merge -> Switch(pred) -> Exit / body Identity, if any, and
    the Merge's NextIteration input carrying the body's output)."""
    graph = get_default_graph()
    tensor = functools.partial(_imported, graph, import_scope)
    enters = [tensor(name).op for name in proto.loop_enter_names]
    ctx = WhileContext(prepend_name_scope(proto.context_name, import_scope),
                       proto.parallel_iterations, proto.back_prop, outer)
    ctx.frame_name = _frame_name(enters[0]) if enters else proto.context_name
    ctx.loop_cond = tensor(proto.pivot_name)
    ctx.pivot = ctx.loop_cond.op
    ctx.enters = enters
    _adopt_values(ctx, proto.values_def, tensor)
    ctx.constant_enters = [inner.op for inner in ctx._captured.values()
                           if inner.op.type in ("Enter", "RefEnter")]
    _move_out_entered_values(ctx, proto.values_def, tensor)
    for enter in enters:
        merge = _only_consumer(enter.outputs[0], _MERGES)
        switch = _only_consumer(merge.outputs[0], ("Switch", "RefSwitch"))
        ctx.merges.append(merge.outputs[0])
        ctx.switches.append(switch)
        ctx.exits.append(_only_consumer(switch.outputs[0], _EXITS).outputs[0])
        ctx.body_inputs.append(_body_input(switch))
        next_iteration = merge.inputs[1].op
        ctx.next_iterations.append(next_iteration)
        ctx.body_outputs.append(next_iteration.inputs[0])
    for exit_ in ctx.exits:
        exit_.op._control_flow_context = outer
        LOOP_OF_EXIT[exit_.op] = ctx
    # As after tf.while_loop: the body's pivot (in TF's gradient loop, its counter's `n - 1`).
    ctx.pivot = (tensor(proto.pivot_for_body_name) if proto.pivot_for_body_name
                 else ctx.body_inputs[0]).op
    _nested_from_proto(proto.nested_contexts, import_scope, ctx)
    return ctx


def _imported(graph, import_scope, name):
    return graph.get_tensor_by_name(prepend_name_scope(name, import_scope))


def _adopt_values(ctx, values_def, tensor) -> None:
    """Puts the ops of the context's own values in it and records its captured values."""
    external = set(values_def.external_values)
    for name in values_def.values:
        if name not in external:
            tensor(name).op._control_flow_context = ctx
    for ext, inner in values_def.external_values.items():
        ctx._captured[tensor(ext)] = tensor(inner)


def _move_out_entered_values(ctx, values_def, tensor) -> None:
    """Puts back in the outer context the ops whose values enter the loop through one of its
    Enters. TF lists some among the loop's values (the `f_count` constant of the iteration
    counter `tf.gradients` adds), but a value entering a loop comes from outside it; inside,
    it would make the loop its own input for the gradient walk."""
    for name in values_def.values:
        op = tensor(name).op
        if op.type in ("Enter", "RefEnter") and \
                _frame_name(op) == ctx.frame_name and context_of(op.inputs[0].op) is ctx:
            op.inputs[0].op._control_flow_context = ctx.outer


def _frame_name(enter) -> str:
    frame = enter.get_attr("frame_name")
    return frame.decode() if isinstance(frame, bytes) else frame


def _nested_from_proto(nested, import_scope, outer) -> None:
    for child in nested:
        if child.WhichOneof("ctxt") == "cond_ctxt":
            cond_context_from_proto(child.cond_ctxt, import_scope, outer)
        else:
            while_context_from_proto(child.while_ctxt, import_scope, outer)


def _ops_of(graph, ctx):
    return [op for op in graph.get_operations() if context_of(op) is ctx]


def _body_input(switch):
    """The value a loop variable has in the body: the Identity on the Switch's true side that
    tf.while_loop adds, or the true side itself where TF adds none (the iteration counters
    and gradient accumulators `tf.gradients` builds: `Switch:1 -> Sub / AddV2`)."""
    identities = [op for op in switch.outputs[1].consumers()
                  if op.type in ("Identity", "RefIdentity")]
    return identities[0].outputs[0] if len(identities) == 1 else switch.outputs[1]


def _only_consumer(t, types):
    found = [op for op in t.consumers() if op.type in types]
    if len(found) != 1:
        raise ValueError(f"Cannot rebuild the while loop around {t.name}: expected one "
                         f"{'/'.join(types)} consumer, found {len(found)}.")
    return found[0]

