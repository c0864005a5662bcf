"""Gradients of tf.while_loop: the loop is differentiated as a whole by a gradient loop.

The backward walk (autodiff/gradients.py) treats each loop as one node whose inputs are the
values entering it and whose outputs are its Exits. Its gradient is another while loop that
runs as many iterations as the forward loop did, in reverse: each iteration applies the body's
gradient (built by the same backward walk, restricted to the body) to the running gradients
of the loop variables, and sums the gradients of captured values across iterations.

Forward values the body's gradient needs are saved per iteration on a stack, as TensorFlow
does: the first time the gradient loop asks for a forward tensor, a StackPushV2 is added to the
forward body and a StackPopV2 to the gradient body (a constant is copied instead). The forward
loop also gets an iteration counter (added once, when a gradient is first built) whose
NextIteration waits for that iteration's pushes, so pushes happen in iteration order; the
pops wait on the gradient loop's counter likewise. Loops nested in the body get their own
gradient loops inside this one; a stack for a nested loop is created per outer iteration, and
its handle is itself saved on the outer loop's stack.

A captured value's gradient is summed over iterations, one add per iteration. When an
iteration's term is a product `a^T @ b` of per-iteration values (a recurrent layer's weight
gradient: inputs^T @ gate gradients, K = the batch) or the column sums of one (its bias
gradient), the gradient loop instead writes those values to TensorArrays and the sum is one
such op of their concatenations after the loop, `A^T @ B`: one large GEMM instead of one thin
GEMM and one add per step.

With gate_gradients (Optimizer.minimize's GATE_OP) each op of the gradient loop's body gates
its gradients, as TF's does; a hoisted term's gate is waited for by the iteration's sync, and
when a hoisted row may be a value from outside the loop (a variable's, read in place after the
loop), the loop's gradients wait for that read (autodiff/gating.py says why).

As in TensorFlow's v1 control flow, a gradient loop is not differentiated again: the backward
walk reaching one raises TypeError (tf.gradients of a loop's gradient, tf.hessians of a loop).
"""
from __future__ import annotations

from tensorweave.framework import scopes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import get_default_graph
from tensorweave.ops import control_flow_primitives as prim
from tensorweave.ops import stack_ops, tensor_array_ops
from tensorweave.ops.control_flow_context import (
    LOOP_OF_EXIT,
    CondContext,
    WhileContext,
    building_in,
    context_of,
    is_inside,
)


def loop_unit(op, level):
    """The outermost while loop below context `level` that contains `op`, or None."""
    ctx = LOOP_OF_EXIT.get(op) or context_of(op)
    unit = None
    while ctx is not None and ctx is not level:
        if isinstance(ctx, WhileContext):
            unit = ctx
        ctx = ctx.outer
    return unit if ctx is level else None


def unit_inputs(ctx) -> list:
    return [e.inputs[0] for e in ctx.enters + ctx.constant_enters]


def unit_outputs(ctx) -> list:
    return list(ctx.exits)


class _ForwardCounter:
    """An iteration counter added to a forward loop: counts iterations, orders pushes."""

    def __init__(self, ctx: WhileContext):
        from tensorweave.ops.array_ops import identity
        from tensorweave.ops.constant_op import constant
        with building_in(ctx.outer, clear_control_dependencies=True):
            zero = constant(0, name="f_count_zero")
        enter = ctx.enter(zero, is_constant=False, record=False)
        with building_in(ctx, clear_control_dependencies=True):
            merge = prim.merge([enter, enter], name="f_count")[0]
            false_side, true_side = prim.switch(merge, ctx.loop_cond)
            self.exit = apply_op(prim.Exit, [false_side], name="f_count_exit")
            self.body_in = identity(true_side)
            nxt = apply_op(prim.NextIteration, [self.body_in + 1])
            merge.op._update_input(1, nxt)
            # Pushes inside an untaken cond branch are dead; a ControlTrigger still fires,
            # so the next iteration waits for this one's pushes without inheriting deadness.
            with scopes.control_dependencies([self.body_in.op]):
                self.sync = apply_op(prim.ControlTrigger, [], name="f_sync")
        nxt.op._add_control_input(self.sync)
        self.exit.op._control_flow_context = ctx.outer
        LOOP_OF_EXIT[self.exit.op] = ctx


def _counter(ctx) -> _ForwardCounter:
    if ctx.grad_state is None:
        ctx.grad_state = _ForwardCounter(ctx)
    return ctx.grad_state


class GradWhileContext(WhileContext):
    """The gradient loop of `forward`: forward-loop values arrive through stack pops."""

    def __init__(self, forward: WhileContext, outer):
        name = get_default_graph().unique_name(forward.name.rstrip("/") + "_grad")
        super().__init__(name, forward.parallel_iterations, True, outer)
        self.forward = forward
        self.counter_in = None      # the gradient loop's own counter, inside its body
        self.sync = None            # ControlTrigger after this iteration's pops
        self.pops: list = []
        self.writes: list = []      # per-iteration TensorArray writes of summed products
        self._popped: dict = {}
        self._forward_of: dict = {}  # popped -> the forward value pushed
        self._rows: dict = {}
        self.outer_rows = False      # whether a row may be a value from outside the loop

    def capture(self, t):
        if self.is_internal(t):
            return t
        op = t.op
        if op in self.forward.constant_enters:
            return self.capture(op.inputs[0])
        if is_inside(context_of(op), self.forward):
            popped = self._popped.get(t)
            if popped is None:
                popped = self._constant_copy(t)
                if popped is None:
                    popped = self._saved_value(t)
                    self._forward_of[popped] = t
                self._popped[t] = popped
            return popped
        return super().capture(t)

    def _constant_copy(self, t):
        """A Const of the forward body (outside its conds) is the same in every iteration: the
        gradient loop gets its own copy instead of a stack of it; None for other tensors."""
        op = t.op
        if op.type != "Const" or _enclosing_branch(t, self.forward) is not None:
            return None
        from tensorweave.ops.constant_op import constant
        with building_in(self):
            return constant(op._attrs["value"], dtype=op._attrs["dtype"],
                            name=op.name.rsplit("/", 1)[-1])

    def _saved_value(self, t):
        """Pushes `t` in every forward iteration; pops it in the matching gradient one."""
        forward = self.forward
        counter = _counter(forward)
        with building_in(forward.outer, clear_control_dependencies=True):
            handle = stack_ops.stack_v2(-1, t.dtype.base_dtype,
                                        stack_name=t.op.name + "_stack", name="stack")
        with building_in(forward, clear_control_dependencies=True):
            value = t if not t.dtype._is_ref_dtype else _read(t)
            push = stack_ops.stack_push_v2(forward.capture(handle), value)
        push.op._add_control_input(counter.body_in.op)
        counter.sync._add_control_input(push.op)
        with building_in(self):
            grad_handle = self.capture(handle)
            branch = _enclosing_branch(t, forward)
            if branch is not None:
                # Pushed only when its branch ran: pop only in those iterations.
                grad_handle = prim.switch(grad_handle, self.capture(branch.pred))[branch.branch]
            with scopes.control_dependencies([self.counter_in.op]):
                popped = stack_ops.stack_pop_v2(grad_handle, t.dtype.base_dtype)
        popped.set_shape(t.shape)
        self.pops.append(popped.op)
        return popped


    def save_rows(self, t):
        """A TensorArray, made outside this loop, that gets `t` of every iteration (at the
        iteration's index); one per tensor, however many products use it."""
        ta = self._rows.get(t)
        if ta is None:
            from tensorweave.ops.tensor_array import TensorArray
            with building_in(self.outer, clear_control_dependencies=True):
                ta = TensorArray(t.dtype.base_dtype, size=0, dynamic_size=True,
                                 element_shape=t.shape, colocate_with_first_write_call=False,
                                 name="iteration_rows")
            with building_in(self):
                index = self.counter_in - 1
                flow = apply_op(tensor_array_ops.TensorArrayWriteV3,
                                [self.capture(ta.handle), index, t, self.capture(ta.flow)])
            self.writes.append(flow.op)
            self._rows[t] = ta
            forward = self._forward_of.get(t)
            self.outer_rows |= forward is not None and _forwards_outer_value(forward)
        return ta


def _summable_term(g, grad_ctx):
    """(the op, its inputs, the gates it waits for) when the gradient term `g` is a sum over
    rows of tensors made per iteration in the gradient loop's own body (not in a cond or loop
    inside it) with static 2-D shapes, so that the terms of all iterations are one such op of
    the rows of all iterations: a^T @ b (MatMul with transpose_a) or the column sums of d
    (BiasAddGrad); else None. The term and its inputs are seen through gates
    (gate_gradients); the term's gate is what it waits for (its inputs' gates order nothing
    that the hoisted sum still needs: the gradients they gate are of other ops)."""
    g, waits = _through_gate(g, grad_ctx)
    op = getattr(g, "op", None)
    if op is None or context_of(op) is not grad_ctx:
        return None
    product = op.type == "MatMul" and op.get_attr("transpose_a") and \
        not op.get_attr("transpose_b")
    column_sums = op.type == "BiasAddGrad" and op.get_attr("data_format") in ("NHWC", b"NHWC")
    if not (product or column_sums):
        return None
    rows = [_through_gate(t, grad_ctx)[0] for t in op.inputs]
    # A loop-invariant input (entering the gradient loop) is not per-iteration rows; and
    # TF's TensorArray would hold its buffer, a variable's, which an update may overwrite.
    if not all(t.shape.ndims == 2 and t.shape.is_fully_defined() and t.op.type != "Enter"
               for t in rows):
        return None
    return op, rows, waits


def _through_gate(t, grad_ctx):
    """(`t`, []), or for a gated gradient of the gradient loop's body (an Identity that waits
    for its gate) the gradient and the gate: the same value, once the gate is waited for."""
    op = getattr(t, "op", None)
    if op is not None and op.type == "Identity" and op.control_inputs and \
            all(context_of(o) is grad_ctx for o in [op] + op.control_inputs):
        return op.inputs[0], op.control_inputs
    return t, []


def _hoisted_from(op, gates) -> list:
    """The gates a hoisted term `op` waited for, no longer waiting for `op`: its rows are
    saved instead and it never runs (TF would run it every iteration for a gate alone)."""
    for gate in gates:
        if op in gate.control_inputs:
            gate._remove_control_input(op)
    return list(gates)


def _summed_term(op_type, values):
    """The sum over iterations of the term `op_type`: the same op of the rows of all
    iterations (`values`, concatenated)."""
    from tensorweave.ops.linalg_ops import matmul
    from tensorweave.ops.nn_ops import BiasAddGrad
    if op_type == "MatMul":
        return matmul(*values, transpose_a=True)
    return apply_op(BiasAddGrad, values, {"data_format": "NHWC"})


_FORWARDING = frozenset({"Identity", "RefIdentity", "Switch", "RefSwitch", "Merge", "RefMerge"})


def _forwards_outer_value(t) -> bool:
    """Whether the forward loop's value `t` may be a value from outside the loop itself, not a
    copy: Identities, Switches and Merges forward one that entered the loop."""
    seen, stack = set(), [t.op]
    while stack:
        op = stack.pop()
        if op.type in ("Enter", "RefEnter"):
            return True
        if op.type in _FORWARDING and op not in seen:
            seen.add(op)
            stack.extend(i.op for i in op.inputs)
    return False


def _enclosing_branch(t, forward):
    """The innermost cond branch inside loop `forward` that `t` belongs to, or None."""
    ctx = context_of(t.op)
    while ctx is not None and ctx is not forward:
        if isinstance(ctx, CondContext):
            return ctx
        ctx = ctx.outer
    return None


def _read(t):
    from tensorweave.ops.array_ops import identity
    return identity(t)


def loop_gradients(ctx: WhileContext, exit_grads, gradients_impl, is_differentiable,
                   gate=False):
    """Gradients of the loop's inputs (loop-variable initial values, then captured values);
    `gate`: the gradients of each op are gated (gate_gradients), so the gradient loop's are,
    and the loop's own wait for the rows it read after the loop (autodiff/gating.py)."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.while_loop import build_loop
    n_enter = len(ctx.enters)
    captured = [e.outputs[0] for e in ctx.constant_enters]
    if not ctx.back_prop:
        return [None] * (n_enter + len(captured))
    if all(g is None for g in exit_grads):
        return [None] * (n_enter + len(captured))
    if isinstance(ctx, GradWhileContext):
        # As TF's v1 control flow (_ExitGrad): a gradient loop pops the forward values it
        # needs from stacks, and a pop has no gradient, so differentiating one would silently
        # drop those terms (d2/dx2 x^4 = 48 would come out 24).
        raise TypeError("Second-order gradient for while loops not supported.")
    # Every differentiable variable carries gradient through the loop, even one whose final
    # value is unused (its exit gradient is then zero).
    var_idx = [i for i in range(n_enter) if is_differentiable(ctx.exits[i].dtype)]
    cap_idx = [j for j, c in enumerate(captured) if is_differentiable(c.dtype)]
    count = _counter(ctx).exit
    outer = get_default_graph()._scopes.control_flow_context
    grad_ctx = GradWhileContext(ctx, outer)
    init = [count] + [_dense(exit_grads[i]) if exit_grads[i] is not None
                      else zeros_like(ctx.exits[i]) for i in var_idx] + \
        [_zeros_like_value(captured[j].op.inputs[0]) for j in cap_idx]

    terms = [None] * len(cap_idx)   # (op type, TensorArrays of its inputs' rows) if hoisted

    def body(n, *state):
        grad_ctx.counter_in = n
        grads = list(state[:len(var_idx)])
        accs = list(state[len(var_idx):])
        ys = [ctx.body_outputs[i] for i in var_idx]
        xs = [ctx.body_inputs[i] for i in var_idx] + [captured[j] for j in cap_idx]
        d = gradients_impl(ys, xs, grads, level=ctx)
        new_grads = [_dense(g) if g is not None else zeros_like(x)
                     for g, x in zip(d[:len(var_idx)], xs)]
        new_accs = []
        gates = []
        for k, (acc, g) in enumerate(zip(accs, d[len(var_idx):])):
            term = _summable_term(g, grad_ctx) if g is not None else None
            if term is not None:
                op, rows, waits = term
                terms[k] = (op.type, [grad_ctx.save_rows(t) for t in rows])
                gates += _hoisted_from(op, waits)
            new_accs.append(acc + _dense(g) if g is not None and term is None else acc)
        # The hoisted sums come after the loop's last count, which waits for each iteration's
        # gates as an accumulator waits for its gated term.
        with scopes.control_dependencies(grad_ctx.pops + grad_ctx.writes + gates):
            sync = apply_op(prim.ControlTrigger, [], name="b_sync")
        with scopes.control_dependencies([sync]):
            n_next = n - 1
        return [n_next] + new_grads + new_accs

    invariants = [count.shape] + [ctx.merges[i].shape for i in var_idx] + \
        [zeros.shape for zeros in init[1 + len(var_idx):]]
    results = build_loop(grad_ctx, lambda n, *_: n > 0, body, init, invariants)
    out = [None] * (n_enter + len(captured))
    for k, i in enumerate(var_idx):
        out[i] = results[1 + k]
    concatenated = {}     # TensorArray -> its rows, read once (after the loop is done)
    for k, j in enumerate(cap_idx):
        summed = results[1 + len(var_idx) + k]
        if terms[k] is not None:     # the accumulator stayed zero
            op_type, tas = terms[k]
            for ta in tas:
                if ta not in concatenated:
                    with scopes.control_dependencies([results[0].op]):
                        concatenated[ta] = ta.concat()
            summed = _summed_term(op_type, [concatenated[ta] for ta in tas])
        out[n_enter + j] = summed
    if gate and grad_ctx.outer_rows:
        # A hoisted term's rows are read after the loop, and one may be a value from outside
        # the loop held in place, a variable's (a loop variable's initial value): as TF's gate
        # makes the other gradients of the op reading it wait for the read, each gradient
        # leaving the loop waits for the reads.
        from tensorweave.ops.control_flow_ops import with_dependencies
        reads = [rows.op for rows in concatenated.values()]
        out = [g if g is None else with_dependencies(reads, g) for g in out]
    return out


def _zeros_like_value(t):
    """The zero gradient of a captured value: zeros like it, or like a resource variable's
    value for its handle."""
    from tensorweave.framework import dtypes as _dtypes
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.state_ops import zeros_like_variable
    return zeros_like_variable(t) if t.dtype == _dtypes.resource else zeros_like(t)


def _dense(g):
    from tensorweave.framework.tensor_conversion import convert_to_tensor
    return convert_to_tensor(g)
