"""Control-flow contexts: how ops built inside a cond branch or a loop body are wired.

While a branch or body function runs, the graph's current context is a `CondContext` or a
`WhileContext`; `create_op` asks it to `capture` every input and tells it about each new op
(`add_op`). A value from outside a branch enters through a Switch on the predicate (so it is
dead when the branch is not taken); a value from outside a loop enters through a constant
Enter (so every iteration sees it). An op without data inputs gets a control edge from the
context's pivot, which puts it in the branch or the loop iteration.
"""
from __future__ import annotations

import contextlib
import weakref

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Operation, Tensor

# Switches made by cond contexts, and merges ending a cond: op -> (predicate, branch).
COND_SWITCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
COND_MERGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Exit op -> its WhileContext (an Exit's own context is the loop's outer context).
LOOP_OF_EXIT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def context_of(op: Operation):
    return op._control_flow_context


def is_inside(ctx, outer) -> bool:
    """True if context `ctx` is `outer` or nested in it (None is the graph's top level)."""
    while ctx is not None:
        if ctx is outer:
            return True
        ctx = ctx.outer
    return outer is None


def while_context_of(ctx):
    """The innermost WhileContext at or above `ctx`, or None."""
    while ctx is not None and not isinstance(ctx, WhileContext):
        ctx = ctx.outer
    return ctx


@contextlib.contextmanager
def building_in(ctx, clear_control_dependencies=False):
    """Makes `ctx` the graph's current control-flow context for the block."""
    from tensorweave.framework import scopes
    state = get_default_graph()._scopes
    saved = state.control_flow_context
    state.control_flow_context = ctx
    try:
        if clear_control_dependencies:
            with scopes.control_dependencies(None):
                yield
        else:
            yield
    finally:
        state.control_flow_context = saved


class ControlFlowContext:
    """Base: captured-value cache, pivot, and the outer context."""

    def __init__(self, outer):
        self.outer = outer
        self.pivot: Operation | None = None
        self._captured: dict = {}

    def is_internal(self, t: Tensor) -> bool:
        return is_inside(context_of(t.op), self)

    def capture(self, t: Tensor) -> Tensor:
        """`t` as seen from inside this context."""
        if self.is_internal(t):
            return t
        cached = self._captured.get(t)
        if cached is not None:
            return cached
        with building_in(self.outer, clear_control_dependencies=True):
            base = self.outer.capture(t) if self.outer is not None else t
            result = self._bring_in(base)
        self._captured[t] = result
        return result

    def _bring_in(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def add_op(self, op: Operation) -> None:
        if not op.inputs and self.pivot is not None and op is not self.pivot and \
                not any(is_inside(context_of(c), self) for c in op.control_inputs):
            op._add_control_input(self.pivot)


class CondContext(ControlFlowContext):
    """One branch of a tf.cond: `branch` 1 runs when `pred` is true, 0 when false."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int, outer, name: str = ""):
        super().__init__(outer)
        self.name = name
        self.pred = pred
        self.branch = branch
        self.pivot = pivot.op

    def _bring_in(self, t: Tensor) -> Tensor:
        from tensorweave.framework.scopes import colocate_with
        from tensorweave.ops.control_flow_primitives import switch
        pred = self.outer.capture(self.pred) if self.outer is not None else self.pred
        with colocate_with(t.op, ignore_existing=True):   # a value's Switch lives with it
            out = switch(t, pred)[self.branch]
        out.op._control_flow_context = self
        out.graph.prevent_fetching(out.op)
        COND_SWITCHES[out.op] = (self.pred, self.branch)
        return out

    def add_op(self, op: Operation) -> None:
        op.graph.prevent_fetching(op)    # its value exists only when the branch is taken
        super().add_op(op)


class WhileContext(ControlFlowContext):
    """The body and condition of one tf.while_loop: one execution frame."""

    def __init__(self, name: str, parallel_iterations: int, back_prop: bool, outer):
        super().__init__(outer)
        self.name = name
        self.frame_name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.enters: list[Operation] = []          # loop-variable Enters
        self.constant_enters: list[Operation] = []  # captured values
        self.merges: list[Tensor] = []
        self.switches: list[Operation] = []
        self.exits: list[Tensor] = []
        self.body_inputs: list[Tensor] = []
        self.body_outputs: list[Tensor] = []
        self.next_iterations: list[Operation] = []
        self.loop_cond: Tensor | None = None
        self.grad_state = None   # set by autodiff/while_grad.py when a gradient is built

    def enter(self, t: Tensor, is_constant: bool, record: bool = True) -> Tensor:
        """An Enter of `t` into this frame (built in the outer context); `record=False` for
        the bookkeeping values gradients add (they are not inputs of the loop)."""
        from tensorweave.framework.apply_op import apply_op
        from tensorweave.ops.control_flow_primitives import Enter, RefEnter
        op_def = RefEnter if t.dtype._is_ref_dtype else Enter
        with building_in(self.outer, clear_control_dependencies=True):
            out = apply_op(op_def, [t], {"frame_name": self.frame_name,
                                         "is_constant": is_constant,
                                         "parallel_iterations": self.parallel_iterations})
        out.op._control_flow_context = self
        out.graph.prevent_fetching(out.op)
        out.graph.prevent_feeding(out)
        if record:
            (self.constant_enters if is_constant else self.enters).append(out.op)
        return out

    def _bring_in(self, t: Tensor) -> Tensor:
        return self.enter(t, is_constant=True)

    def add_op(self, op: Operation) -> None:
        """Also marks the op not fetchable and its outputs not feedable (they exist per
        iteration), except the Exits of an outermost loop: its results, as in TF."""
        if self.outer is not None or op.type not in ("Exit", "RefExit"):
            op.graph.prevent_fetching(op)
            for t in op.outputs:
                op.graph.prevent_feeding(t)
        invariant_only = self._reads_only_invariants(op)
        self._forward_external_controls(op)
        if invariant_only and self.pivot is not None:
            # Nothing ties it to an iteration: it would run once per frame, and once more in
            # the iteration whose condition fails (a dequeue in the body would take one
            # element too many). The pivot makes it run once per iteration, as in TF.
            op._add_control_input(self.pivot)
        super().add_op(op)

    def _reads_only_invariants(self, op: Operation) -> bool:
        """Whether `op` has inputs, all of them captured values (constant Enters), and no
        control input from inside the loop (TensorFlow's _IsOpFree)."""
        return bool(op.inputs) and all(
            t.op.type in ("Enter", "RefEnter") and t.op.get_attr("is_constant")
            for t in op.inputs) and not any(
            is_inside(context_of(c), self) for c in op.control_inputs)

    def _forward_external_controls(self, op: Operation) -> None:
        """Control inputs from outside the loop arrive through an entered token instead."""
        external = [c for c in op.control_inputs if not is_inside(context_of(c), self)]
        if not external:
            return
        from tensorweave.framework import scopes
        from tensorweave.ops.constant_op import constant
        for c in external:
            op._remove_control_input(c)
        with building_in(self.outer):
            with scopes.control_dependencies(external):
                token = constant(0, name="control_token")
        with building_in(self):
            entered = self.capture(token)
        op._add_control_input(entered.op)
