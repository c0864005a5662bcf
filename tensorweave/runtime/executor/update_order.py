"""Reads of a variable before its in-place updates: the order a step's straight-line code runs in.

A variable's storage is updated in place (AssignAdd, the Apply* optimizers), and its reads are
views of that storage, so the order of a read and an update that do not depend on each other
decides what the read sees. TensorFlow's executor runs such reads first in practice (a summary
of `global_step` evaluated with the train op sees the step's starting value, as do the hooks'
`global_step + 0` reads), and the parallel lines must fix one order for every thread. So each
in-place update is ordered after every read of its variable's storage that is not downstream of
it, and after the earlier updates of that variable; fetches of the variable itself are copied
when the step ends (values.storage_fetch_indices) and see the updates.
"""
from __future__ import annotations

from tensorweave.runtime.executor.node_item import input_arg_is_ref

_VARIABLES = frozenset({"VariableV2", "Variable", "TemporaryVariable"})


def storage_access(items) -> tuple[dict, dict]:
    """Variable (its ref slot) -> ids of items reading its storage, and of items updating it
    in place. Storage flows through ref outputs and through views (`returns_view`)."""
    roots: dict[int, frozenset] = {}
    readers: dict[int, list[int]] = {}
    writers: dict[int, list[int]] = {}
    for it in items:
        if it.node.op in _VARIABLES:
            roots[it.out_start] = frozenset((it.out_start,))
            continue
        seen = frozenset()
        for j, s in enumerate(it.in_slots):
            var = roots.get(s)
            if var:
                seen |= var
                kind = writers if input_arg_is_ref(it.node, j) else readers
                for v in var:
                    kind.setdefault(v, []).append(it.id)
        if seen:
            for k in range(it.num_outputs):
                if it.returns_view or it.node.output_dtypes[k]._is_ref_dtype:
                    roots[it.out_start + k] = seen
    return readers, writers


def successors(preds) -> list[list[int]]:
    succ = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    return succ


def _descendants(start: int, succ) -> set[int]:
    seen, stack = set(), [start]
    while stack:
        for s in succ[stack.pop()]:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def order_updates(items, preds) -> list[int] | None:
    """Adds edges (to `preds`) putting each in-place update after the unordered reads and
    earlier updates of its variable; returns a topological order of the items with them,
    lowest id first among the ready, or None if they would close a cycle."""
    readers, writers = storage_access(items)
    succ = successors(preds)
    added = []
    for var, updates in writers.items():
        for u in set(updates):
            below = _descendants(u, succ)
            before = {r for r in readers.get(var, ()) if r != u and r not in below}
            before |= {w for w in updates if w < u}
            added.extend((r, u) for r in before if r not in preds[u])
    for r, u in set(added):
        preds[u].append(r)
        succ[r].append(u)
    indeg = [len(set(ps)) for ps in preds]
    ready = sorted((i for i, d in enumerate(indeg) if d == 0), reverse=True)
    order = []
    while ready:
        i = ready.pop()
        order.append(i)
        for s in sorted(set(succ[i]), reverse=True):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return order if len(order) == len(items) else None


def straight_line_order(items) -> list:
    """The items of one partition in the order its straight-line code runs them: updates
    after the reads they do not feed (the items' own order if that cannot be had)."""
    preds = [[] for _ in items]
    for it in items:
        for c in it.consumers:
            preds[c].append(it.id)
    order = order_updates(items, preds)
    return items if order is None else [items[i] for i in order]
