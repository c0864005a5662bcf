"""tf.cond, tf.case and tf.switch_case: data-dependent branching built from Switch and Merge.

Each branch function runs inside a CondContext, so every value it takes from outside passes
through a Switch on the predicate and everything it computes is dead unless its branch is
taken: only the taken branch executes, side effects included. One Merge per output joins the
two branches. Gradients: a branch Switch's gradient is a Merge of the two branch gradients and
a Merge's gradient is a Switch of the incoming gradient on the same predicate.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_primitives as prim
from tensorweave.ops.control_flow_context import (
    COND_MERGES,
    COND_SWITCHES,
    CondContext,
    building_in,
)
from tensorweave.ops.loop_vars import from_flows, to_flows

__all__ = ["cond", "case", "switch_case"]


def _identity(t, name):
    from tensorweave.ops.array_ops import identity
    return identity(t, name=name)


def _build_branch(fn, ctx, label):
    """Runs one branch function in its context; returns (structure, flat tensors)."""
    if not callable(fn):
        raise TypeError(f"'{label}' must be callable.")
    with building_in(ctx):
        result = fn()
        if result is None:
            raise ValueError(f"'{label}' must have a return value.")
        flat = []
        for v in nest.flatten(to_flows(result)):
            if isinstance(v, Operation):
                from tensorweave.ops.control_flow_ops import with_dependencies
                v = with_dependencies([v], _identity(ctx.pred, "pivot"))
            else:
                # A Variable leaves the branch as its value (TF converts without as_ref), so
                # the output is a plain tensor and gradients reach the variable through its
                # read; a ref tensor the branch computed (an Assign) stays a ref.
                v = ctx.capture(convert_to_tensor(v))
            flat.append(v)
    return result, flat


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """Returns `true_fn()` if `pred` is true, else `false_fn()` (TF1's tf.cond).

    Only the taken branch runs. Ops created inside a branch function belong to it; ops created
    outside (even if a branch uses their value) always run.

    Args:
      pred: a scalar bool Tensor.
      true_fn, false_fn: callables returning the same nested structure of tensors.
      strict: keep singleton lists/tuples instead of unpacking them.
      name: name scope (default "cond").
      fn1, fn2: deprecated aliases of true_fn and false_fn.

    Returns:
      The merged outputs, in the branches' structure.

    Raises:
      TypeError: for a Python bool or non-bool predicate, non-callable branches, or
        branches returning different sequence types (a list against a tuple).
      ValueError: if a branch returns None, or the branches return different structures or
        dtypes.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or false_fn is None:
        raise TypeError("cond(): true_fn and false_fn arguments are required.")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    with name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"Input 'pred' of 'Switch' Op has type {pred.dtype.base_dtype.name} "
                            "that does not match expected type of bool.")
        outer = get_default_graph()._scopes.control_flow_context
        p_false, p_true = prim.switch(pred, pred)
        pivot_t = _identity(p_true, "switch_t")
        pivot_f = _identity(p_false, "switch_f")
        pred = _identity(pred, "pred_id")
        for t in (p_false, p_true, pivot_t, pivot_f, pred):   # live on one branch only
            t.graph.prevent_fetching(t.op)
        graph = get_default_graph()
        ctx_t = CondContext(pred, pivot_t, 1, outer, graph.unique_name("cond_text"))
        res_t, flat_t = _build_branch(true_fn, ctx_t, "true_fn")
        ctx_f = CondContext(pred, pivot_f, 0, outer, graph.unique_name("cond_text"))
        if outer is None:   # kept by meta graphs (ops/control_flow_proto.py), as in TF
            graph.add_to_collection(GraphKeys.COND_CONTEXT, ctx_t)
            graph.add_to_collection(GraphKeys.COND_CONTEXT, ctx_f)
        res_f, flat_f = _build_branch(false_fn, ctx_f, "false_fn")
        # TF compares the structures after unpacking singletons (unless strict), with
        # nest's own error: a list against a tuple is a TypeError.
        nest.assert_same_structure(*(to_flows(r if strict else _unpack_singleton(r))
                                     for r in (res_t, res_f)))
        merged = []
        for t, f in zip(flat_t, flat_f):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError(
                    f"Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                    f"{t.dtype.base_dtype.name} from 'true_fn' and {f.dtype.base_dtype.name} "
                    "from 'false_fn'.")
            out = prim.merge([f, t])[0]
            COND_MERGES[out.op] = pred
            merged.append(out)
        result = from_flows(res_t, nest.pack_sequence_as(to_flows(res_t), merged))
    return result if strict else _unpack_singleton(result)


def _unpack_singleton(result):
    """A one-element list or tuple (not a namedtuple) as its element, as TF's cond returns."""
    if isinstance(result, (list, tuple)) and len(result) == 1 and \
            not hasattr(type(result), "_fields"):
        return result[0]
    return result


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The branch of the first true predicate (TF1's tf.case).

    Builds nested conds, testing the predicates in order. Without `default`, the last pair's
    callable serves as the default, guarded by a run-time check that its predicate holds: no
    true predicate is then an InvalidArgumentError.

    Args:
      pred_fn_pairs: a list or tuple of (bool scalar Tensor, callable) pairs, or a dict (whose
        pairs are taken in the order of the predicates' names).
      default: callable for when no predicate holds.
      exclusive: if True, more than one true predicate is an InvalidArgumentError at run time.
      strict, name: as for cond.

    Returns:
      The chosen callable's outputs.

    Raises:
      TypeError: for a malformed pair, a predicate that is not a bool Tensor or a callable
        that is not callable.
      ValueError: if `pred_fn_pairs` is empty.
    """
    preds, fns = _case_pairs(pred_fn_pairs)
    with name_scope(name, "case", preds):
        if default is None:
            default, preds, fns = _guarded_default(preds, fns)
        fn = default
        # Nested in reverse, so that the conditions are tested in order.
        for pred, action in reversed(list(zip(preds, fns))):
            fn = _cond_fn(pred, action, fn, strict)
        if not exclusive:
            return fn()
        from tensorweave.framework.scopes import control_dependencies
        with control_dependencies([
                _assert_at_most_n_true(preds, 1, "Input error: exclusive=True")]):
            return fn()


def _case_pairs(pred_fn_pairs):
    """Checks case's pairs; returns (predicates, callables)."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError("'pred_fn_pairs' must be a list, tuple, or dict. "
                        f"Received: {type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received "
                            f"{pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if pred.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if not pred_fn_pairs:
        raise ValueError("not enough values to unpack (expected 2, got 0)")
    return [p for p, _ in pred_fn_pairs], [f for _, f in pred_fn_pairs]


def _cond_fn(pred, true_fn, false_fn, strict):
    return lambda: cond(pred, true_fn, false_fn, strict=strict)


def _guarded_default(preds, fns):
    """The last pair's callable as the default, run after checking that its predicate holds
    and no other does; returns (default, the other predicates, their callables)."""
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.logging_ops import Assert
    k = len(preds) - 1
    others_msg = (f"Implementation error: selected default action #{k} was called, but some "
                  "of other predicates are True: ")

    def default():
        default_msg = ["Input error: None of conditions evaluated as True:",
                       stack(preds, name="preds_c")]
        with control_dependencies([_assert_at_most_n_true(preds[:k], 0, others_msg),
                                   Assert(preds[k], default_msg)]):
            return fns[k]()
    return default, preds[:k], fns[:k]


def _assert_at_most_n_true(preds, n, msg):
    """An Assert that at most `n` of `preds` are true at run time."""
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.math_ops import cast, less_equal
    from tensorweave.ops.reduction_ops import reduce_sum
    preds_c = stack(preds, name="preds_c")
    count = reduce_sum(cast(preds_c, _dtypes.int32), name="num_true_conds")
    condition = less_equal(count, constant(n, name="n_true_conds"))
    names = ", ".join(getattr(p, "name", "?") for p in preds)
    return Assert(condition, [f"{msg}: more than {n} conditions ({names}) evaluated as True:",
                              preds_c], summarize=len(preds))


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs the callable selected by an int32 index (TF's tf.switch_case).

    Like a C switch statement: `branch_fns[branch_index]()`, or `default()` for an index
    outside `[0, len(branch_fns))`; without `default` the last (max-keyed) callable serves for
    out-of-range indices. Only the selected callable's ops run, side effects included, and
    gradients flow through the selected branch only.

    Graph structure differs from TensorFlow's: TF builds one functional `StatelessCase` (or
    `Case`, if a branch has stateful ops) whose branches are library functions, followed by one
    Identity per output. Tensorweave has no functional ops, so it builds what TF lowers that op
    to in spirit: a chain of nested tf.conds on `branch_index == k` (k = 0 .. n-2, the last
    callable in the innermost false branch), then the same Identity per output, all under
    `<name>/indexed_case/`. The branches' ops therefore sit in the graph itself, inside
    cond contexts. An index of unknown rank that is not a scalar when it runs fails in the
    conds' Switches with TF's message ("The second input must be a scalar, but it has shape
    [2]"). One of known rank above 0 (which a Switch would reject when the graph is built,
    where TF's Case builds) or the index of a single branch (no Switch) gets a run-time Assert
    instead, whose message reads "assertion failed: [The second input must be a scalar, but it
    has shape] [2]".
    Being conds, branches accept what tf.cond accepts, which TF's function branches do not
    quite match: TF rejects assigning a ref variable in a branch and a TensorArray made
    outside the switch_case, but returns a TensorArray made inside a branch, which (as with
    tf.cond) works here only for branch 0.

    Args:
      branch_index: an int32 scalar Tensor choosing the branch.
      branch_fns: a list of callables (the position is the key), or a list of (`int`,
        callable) pairs, or a dict from `int` to callables; the keys must be exactly
        0 .. len(branch_fns) - 1. Each callable returns the same nested structure of tensors
        (an Operation leaf becomes `branch_index` after that Operation has run, as in TF).
      default: optional callable for indices outside the keys.
      name: name scope (default "switch_case").

    Returns:
      The selected callable's outputs, in its structure (singleton lists are kept).

    Raises:
      TypeError: if `branch_index` is not an integer Tensor, or (after the branches are
        built, as in TF) not int32; if `branch_fns` is not a list, tuple or dict, an entry is
        not a callable or an (int, callable) pair, or the branches' outputs differ in
        structure or dtype.
      ValueError: if `branch_fns` is empty or its keys are not 0 .. n-1.
      AssertionError: if the branches return different numbers of values (as TF does).
    """
    fns = _switch_case_fns(branch_fns, default, branch_index)
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_ops import identity
    from tensorweave.ops.math_ops import equal
    with name_scope(name, "case", [branch_index]), name_scope("indexed_case"):
        index = branch_index if len(fns) > 1 and branch_index.shape.ndims is None else \
            _scalar_index(branch_index)
        preds = [equal(index, k) for k in range(len(fns) - 1)]
        branches, traced = _traced_branches(fns, index, branch_index)
        if preds:
            result = case(list(zip(preds, branches[:-1])), default=branches[-1], strict=True)
        else:
            result = branches[0]()
        structure = traced[0]   # what the branches returned (None became [] for the conds)
        if structure is None:
            return None
        with control_dependencies([index.op]):   # TF's Case always takes the index as input
            flat = [identity(t, name="Identity") for t in nest.flatten(to_flows(result))]
        return from_flows(structure, nest.pack_sequence_as(to_flows(structure), flat))


def _switch_case_fns(branch_fns, default, branch_index):
    """Checks switch_case's arguments as TF does; returns the callables, default last."""
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError(f"key must be a Python `int`, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable.")
    keys = [key for key, _ in pairs]
    if min(keys) < 0 or max(keys) >= len(keys) or len(set(keys)) != len(keys):
        raise ValueError("branch indices (keys) must form contiguous range of [0 to "
                         f"{len(keys)}) but found {{{','.join(map(str, sorted(keys)))}}}")
    fns = [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]
    return fns + [default] if default is not None else fns


def _scalar_index(index):
    """`index`, checked at run time to be a scalar unless its static shape says so (TF's Case
    builds with an index of any shape and rejects a non-scalar one when it runs)."""
    if index.shape.ndims == 0:
        return index
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_ops import rank, reshape, shape
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.math_ops import equal
    check = Assert(equal(rank(index), 0),
                   ["The second input must be a scalar, but it has shape", shape(index)])
    with control_dependencies([check]):
        return reshape(index, [-1])[0]


# Stateful ops that still leave TF's Case stateless (auto_control_deps.LEGACY_RANDOM_OPS).
_LEGACY_RANDOM_OPS = frozenset({
    "RandomUniform", "RandomUniformInt", "RandomStandardNormal", "ParameterizedTruncatedNormal",
    "TruncatedNormal", "RandomShuffle", "Multinomial", "RandomGamma", "RandomGammaGrad",
    "RandomPoisson", "RandomPoissonV2"})


def _traced_branches(fns, index, branch_index):
    """Wraps each callable to return TF's branch outputs and, once the last has been built
    (the innermost cond builds it last), to check them all as TF's Case does before any
    Merge exists: same count, then same structure and dtypes as branch 0, then an int32
    index (TF's Case op names itself Case if a branch has stateful ops)."""
    graph = get_default_graph()
    first_op = graph.version   # the number of ops so far: ops are only ever added
    traced = []

    def check():
        counts = [len(nest.flatten(to_flows(out))) for out in traced]
        if len(set(counts)) != 1:
            raise AssertionError(counts)
        for k, out in enumerate(traced[1:], 1):
            _check_same_outputs(traced[0], out, k)
        if branch_index.dtype.base_dtype != _dtypes.int32:
            stateful = any(op.op_def.is_stateful and op.type not in _LEGACY_RANDOM_OPS
                           for op in graph.get_operations()[first_op:])
            raise TypeError(f"Input 'branch_index' of '{'Case' if stateful else 'StatelessCase'}'"
                            f" Op has type {branch_index.dtype.base_dtype.name} that does not "
                            "match expected type of int32.")

    def wrap(fn):
        def branch():
            out = _branch_outputs(fn(), index)
            traced.append(out)
            if len(traced) == len(fns):
                check()
            return [] if out is None else out   # TF's Case allows None; tf.cond does not
        return branch
    return [wrap(fn) for fn in fns], traced


def _branch_outputs(result, index):
    """A branch's outputs as tensors: an Operation becomes `index` after it, as in TF."""
    from tensorweave.ops.control_flow_ops import with_dependencies
    if result is None:
        return None

    def leaf(v):
        if isinstance(v, Operation):
            return with_dependencies([v], index)
        return v if v is None or hasattr(v, "_as_flow") else convert_to_tensor(v)
    return nest.pack_sequence_as(result, [leaf(v) for v in nest.flatten(result)])


def _check_same_outputs(first, other, k):
    """TF's TypeError when branch k's outputs differ from branch 0's."""
    detail = None
    try:
        nest.assert_same_structure(to_flows(first), to_flows(other))
    except (ValueError, TypeError) as e:
        detail = str(e)
    if detail is None:
        for a, b in zip(nest.flatten(to_flows(first)), nest.flatten(to_flows(other))):
            if a is not None and b is not None and a.dtype.base_dtype != b.dtype.base_dtype:
                detail = f"{a} and {b} have different types"
                break
    if detail is not None:
        raise TypeError(f"branches[0] and branches[{k}] arguments to tf.switch_case must have "
                        "the same number, type, and overall structure of return values.\n\n"
                        f"branches[0] output: {first}\nbranches[{k}] output: {other}\n\n"
                        f"Error details:\n{detail}")


def _merge_grad(op, grad, _index_grad=None):
    pred = COND_MERGES.get(op)
    if pred is None:
        return [None] * len(op.inputs)
    grad = convert_to_tensor(grad)
    ctx = get_default_graph()._scopes.control_flow_context
    if ctx is not None:
        pred = ctx.capture(pred)
    grads = prim.switch(grad, pred)
    COND_SWITCHES[grads[0].op] = (pred, None)  # so second derivatives go through it
    return list(grads)


def _switch_grad(op, grad_false, grad_true):
    """Merges the branch gradients; a branch without one contributes zeros, live only when
    that branch is taken. For a resource handle (a variable read in one branch) the zeros are
    shaped like the variable's value, as TF's are."""
    if op not in COND_SWITCHES:
        return [None, None]
    grads = [grad_false, grad_true]
    for k, g in enumerate(grads):
        if g is None:
            from tensorweave.ops.array_creation_ops import zeros_like
            from tensorweave.ops.state_ops import zeros_like_variable
            source = op.inputs[0]
            zeros = zeros_like_variable(source) if source.dtype == _dtypes.resource else \
                zeros_like(source)
            grads[k] = prim.switch(zeros, op.inputs[1])[k]
        else:
            grads[k] = convert_to_tensor(g)
    merged = prim.merge(grads, name="cond_grad")[0]
    COND_MERGES[merged.op] = op.inputs[1]
    return [merged, None]


prim.Merge.gradient(_merge_grad)
prim.Switch.gradient(_switch_grad)
