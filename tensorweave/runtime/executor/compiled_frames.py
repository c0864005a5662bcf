"""Compiled frames: a partition with control flow generated as Python source, loops as loops.

The frames interpreter (frames.py) re-decides per node and iteration what is ready. When a
partition has no asynchronous kernel, all of that is known when the executor is built, so each
frame becomes one Python function: a while loop becomes a `while True:` whose condition nodes
run first, `if not pred: break`, then the body nodes, then the loop variables take their
NextIteration values; a nested loop is a call to its frame's function with the values entering
it; a cond's Switch and Merge become tests of a DEAD sentinel, emitted only for values that can
be dead (the untaken side of a Switch and what depends on it). Iterations run one after
another, which gives the same results as overlapping them.

Only structured loops — what tf.while_loop builds: per loop variable Enter → Merge(Enter,
NextIteration) → Switch(Merge, LoopCond) with Exits on the false side — are compiled; anything
else (imported graphs with other shapes) makes `compile_partition` return None and the
interpreter runs the partition.
"""
from __future__ import annotations

import numpy as np

from tensorweave.runtime.executor import straight_line, values
from tensorweave.runtime.executor.frames import (
    DEAD,
    ENTER,
    EXIT,
    MERGE,
    NEXT,
    PLAIN,
    SWITCH,
    TRIGGER,
    dead_fetch,
    switch_predicate,
)


class _Unsupported(Exception):
    """The partition's control flow is not the structured form this compiler handles."""


class _Loop:
    """The structure of one loop frame."""

    def __init__(self, name):
        self.name = name
        self.loop_cond = None            # item id
        self.vars: list[tuple] = []      # (enter, merge, switch, next) item ids per variable
        self.constant_enters: list = []  # Enter item ids (ofid == this frame, is_constant)
        self.exits: list = []            # Exit item ids


class _Compiler:
    def __init__(self, items, fg):
        self.items = items
        self.fg = fg
        self.env = {"_deref": values.deref, "_np": np,
                    "DEAD": DEAD, "_dead_fetch": dead_fetch,
                    "_switch_predicate": switch_predicate}
        self.lines: list[str] = []
        self.line_items: dict[int, object] = {}
        self.loops = {name: _Loop(name) for name in fg.frames if name}
        self.producer = {}     # slot -> item id
        for it in items:
            for k in range(it.num_outputs):
                self.producer[it.out_start + k] = it.id
        self._names = {it.node.name: it.id for it in items}
        self._ctrl_sources = {self._names[c] for it in items for c in it.node.control_inputs}
        self.may_dead: set[int] = set()      # slots
        self.dead_nodes: set[int] = set()    # items whose deadness control consumers read
        self._analyse_loops()

    # --- structure --------------------------------------------------------------------------
    def _analyse_loops(self) -> None:
        fg, items = self.fg, self.items
        for it in items:
            kind, frame = fg.kind[it.id], fg.fid[it.id]
            if it.is_async:
                raise _Unsupported("asynchronous kernel")
            if fg.keyed[it.id]:
                raise _Unsupported("a transfer keyed per iteration")
            if it.node.op == "LoopCond":
                loop = self.loops.get(frame)
                if loop is None or loop.loop_cond is not None:
                    raise _Unsupported("LoopCond outside a loop or twice in one")
                loop.loop_cond = it.id
            elif kind == ENTER:
                child = self.loops[fg.ofid[it.id]]
                if fg.constant_enter[it.id]:
                    child.constant_enters.append(it.id)
            elif kind == EXIT:
                self.loops[frame].exits.append(it.id)
        for loop in self.loops.values():
            if loop.loop_cond is None:
                raise _Unsupported("loop frame without LoopCond")
        for it in items:
            if self.fg.kind[it.id] == SWITCH and self._source(it.id, 1) in \
                    {lp.loop_cond for lp in self.loops.values()}:
                self._add_loop_var(it)
        for loop in self.loops.values():
            for e in loop.exits:
                src = self._source(e, 0)
                if src not in {v[2] for v in loop.vars} or self._slot(e, 0) != \
                        items[src].out_start:
                    raise _Unsupported("Exit not fed by a loop switch's false side")

    def _add_loop_var(self, switch) -> None:
        fg = self.fg
        loop = self.loops[fg.fid[switch.id]]
        merge = self._source(switch.id, 0)
        if fg.kind[merge] != MERGE or len(self.items[merge].in_slots) != 2:
            raise _Unsupported("loop switch not fed by a two-input Merge")
        srcs = [self._source(merge, j) for j in range(2)]
        enter = next((s for s in srcs if fg.kind[s] == ENTER), None)
        nxt = next((s for s in srcs if fg.kind[s] == NEXT), None)
        if enter is None or nxt is None or fg.constant_enter[enter]:
            raise _Unsupported("loop Merge not fed by an Enter and a NextIteration")
        if self.items[switch.id].node.control_inputs or self.items[merge].node.control_inputs:
            raise _Unsupported("control edges into loop plumbing")
        loop.vars.append((enter, merge, switch.id, nxt))

    def _slot(self, i, j) -> int:
        return self.items[i].in_slots[j]

    def _source(self, i, j) -> int:
        return self.producer[self.items[i].in_slots[j]]

    # --- scheduling -------------------------------------------------------------------------
    def _units(self, frame: str) -> list:
        """The frame's schedule: item ids and ("frame", name) for nested loops, in order."""
        fg, items = self.fg, self.items
        plumbing = set()
        loop = self.loops.get(frame)
        if loop is not None:
            plumbing.add(loop.loop_cond)
            for _enter, merge, switch, nxt in loop.vars:
                plumbing.update((merge, switch, nxt))
        own = [it.id for it in items if fg.fid[it.id] == frame and fg.kind[it.id] != ENTER
               and it.id not in plumbing]
        children = [name for name, lp in self.loops.items()
                    if fg.frames[name].parent == frame]
        unit_of = {i: i for i in own}
        for name in children:
            for it in items:
                if fg.ofid[it.id] == name and fg.kind[it.id] == ENTER:
                    unit_of[it.id] = ("frame", name)
            for e in self.loops[name].exits:
                unit_of[e] = ("frame", name)
        # Items in this frame feeding a unit: data sources and control sources.
        deps: dict = {u: set() for u in own if fg.kind[u] != EXIT}
        deps.update({("frame", name): set() for name in children})
        for i, u in unit_of.items():
            if u not in deps:
                continue
            node = items[i].node
            sources = [self.producer[s] for s in items[i].in_slots]
            sources += [self._by_name(c) for c in node.control_inputs]
            for s in sources:
                su = unit_of.get(s)
                if su is not None and su != u and su in deps:
                    deps[u].add(su)
        order, done = [], set()
        pending = list(deps)
        while pending:
            progressed = False
            rest = []
            for u in pending:
                if deps[u] <= done:
                    order.append(u)
                    done.add(u)
                    progressed = True
                else:
                    rest.append(u)
            if not progressed:
                raise _Unsupported("cycle between units")
            pending = rest
        return order

    def _by_name(self, name):
        return self._names[name]

    def _split_at_break(self, loop: _Loop, units: list) -> tuple[list, list]:
        """Units that need the body side of a loop Switch run after the loop test."""
        body_slots = {self.items[sw].out_start + 1 for _, _, sw, _ in loop.vars}
        after_units: set = set()
        produced_after = set(body_slots)
        for u in units:
            ins, ctrl = self._unit_inputs(u)
            if ins & produced_after or ctrl & after_units:
                after_units.add(u)
                produced_after.update(self._unit_outputs(u))
        return [u for u in units if u not in after_units], \
            [u for u in units if u in after_units]

    def _unit_inputs(self, u) -> tuple[set, set]:
        """(input slots, control-source units) of a unit."""
        ids = self._unit_items(u)
        slots, ctrl = set(), set()
        for i in ids:
            slots.update(self.items[i].in_slots)
            ctrl.update(self._by_name(c) for c in self.items[i].node.control_inputs)
        return slots, ctrl

    def _unit_outputs(self, u) -> set:
        return {self.items[i].out_start + k for i in self._unit_items(u)
                for k in range(self.items[i].num_outputs)}

    def _unit_items(self, u) -> list:
        if isinstance(u, tuple):
            name = u[1]
            return [it.id for it in self.items if self.fg.fid[it.id] == name or
                    (self.fg.ofid[it.id] == name and self.fg.kind[it.id] == ENTER)]
        return [u]

    # --- emission ---------------------------------------------------------------------------
    def compile(self, name: str):
        for frame in self._frames_innermost_first():
            self._emit_loop(self.loops[frame])
        self.lines.append("def _run(args, rets, step):")
        self._emit_units(self._units(""), "    ")
        self.lines.append("    return None")
        source = "\n".join(self.lines) + "\n"
        code = compile(source, f"<tensorweave:{name}>", "exec")
        exec(code, self.env)
        return self.env["_run"], self.line_items, f"<tensorweave:{name}>"

    def _frames_innermost_first(self) -> list[str]:
        depth = {}
        for name in self.loops:
            d, f = 0, name
            while f:
                f = self.fg.frames[f].parent
                d += 1
            depth[name] = d
        return sorted(self.loops, key=lambda n: -depth[n])

    def _params(self, loop: _Loop) -> list[int]:
        return [v[0] for v in loop.vars] + loop.constant_enters

    def _emit_loop(self, loop: _Loop) -> None:
        items = self.items
        params = [f"v{items[e].out_start}" for e in self._params(loop)]
        self.lines.append(f"def _frame_{_ident(loop.name)}(args, rets, step, {', '.join(params)}):")
        ind = "    "
        self.lines.append(f"{ind}if {' or '.join(p + ' is DEAD' for p in params)}:")
        self.lines.append(f"{ind}    return {_tuple(['DEAD'] * len(loop.exits))}")
        merges = [f"v{items[m].out_start}" for _, m, _, _ in loop.vars]
        self.lines.append(f"{ind}{_tuple(merges)} = "
                          f"{_tuple([f'v{items[e].out_start}' for e, _, _, _ in loop.vars])}")
        self.lines.append(f"{ind}while True:")
        body = ind + "    "
        before, after = self._split_at_break(loop, self._units(loop.name))
        self._emit_units(before, body)
        cond = items[loop.loop_cond]
        self._emit_plain(cond, body)
        test = self._predicate(f"v{cond.out_start}", cond.node.input_shapes[:1])
        self.lines.append(f"{body}if not {test}:")
        # (a non-scalar predicate fails in the loop's Switches, as in TensorFlow)
        self.line_items[len(self.lines)] = items[loop.vars[0][2]] if loop.vars else cond
        self.lines.append(f"{body}    break")
        for _, m, sw, _ in loop.vars:
            self.lines.append(f"{body}v{items[sw].out_start + 1} = v{items[m].out_start}")
        self._emit_units(after, body)
        nexts = []
        for _, _, _, nxt in loop.vars:
            slot = items[nxt].in_slots[0]
            if slot in self.may_dead:
                raise _Unsupported("a loop variable's next value can be dead")
            nexts.append(f"v{slot}")
        self.lines.append(f"{body}{_tuple(merges)} = {_tuple(nexts)}")
        exits = [f"v{items[self._merge_of_switch(self._source(e, 0))].out_start}"
                 for e in loop.exits]
        self.lines.append(f"{ind}return {_tuple(exits)}")

    def _merge_of_switch(self, sw) -> int:
        return self._source(sw, 0)

    def _emit_units(self, units, ind) -> None:
        for u in units:
            if isinstance(u, tuple):
                self._emit_call(self.loops[u[1]], ind)
            else:
                self._emit_node(self.items[u], ind)

    def _emit_call(self, loop: _Loop, ind) -> None:
        items = self.items
        args = []
        for e in self._params(loop):
            slot, deref = items[e].in_slots[0], items[e].deref[0]
            args.append(f"_deref(v{slot})" if deref else f"v{slot}")
            if slot in self.may_dead:
                for x in loop.exits:
                    self.may_dead.add(items[x].out_start)
        outs = [f"v{items[x].out_start}" for x in loop.exits]
        self.lines.append(f"{ind}{_tuple(outs)} = _frame_{_ident(loop.name)}(args, rets, step"
                          f"{', ' if args else ''}{', '.join(args)})")
        for x in loop.exits:
            self.line_items[len(self.lines)] = items[x]

    def _emit_node(self, item, ind) -> None:
        kind = self.fg.kind[item.id]
        if kind == SWITCH:
            self._emit_switch(item, ind)
        elif kind == MERGE:
            self._emit_merge(item, ind)
        elif kind == TRIGGER:
            if item.id in self._control_sources():
                self.lines.append(f"{ind}d{item.id} = False")
        elif kind in (PLAIN,):
            self._emit_plain(item, ind)
        else:
            raise _Unsupported(f"{item.node.op} outside loop plumbing")

    def _control_sources(self) -> set:
        return self._ctrl_sources

    def _guard(self, item) -> list[str]:
        conds = [f"v{s} is DEAD" for s in item.in_slots if s in self.may_dead]
        conds += [f"d{self._by_name(c)}" for c in item.node.control_inputs
                  if self._by_name(c) in self.dead_nodes]
        return conds

    def _emit_plain(self, item, ind) -> None:
        line = straight_line.line_for(item, self.env)
        if item.kind == "_Retval":
            slot = item.in_slots[0]
            if slot in self.may_dead:
                line = (f"rets[{item.index}] = _dead_fetch({item.index}) if v{slot} is DEAD "
                        f"else {line.split(' = ', 1)[1]}")
        guard = self._guard(item) if item.kind != "_Retval" else []
        is_source = item.id in self._control_sources()
        if not guard:
            self.lines.append(ind + line)
            self.line_items[len(self.lines)] = item
            if is_source:
                self.lines.append(f"{ind}d{item.id} = False")
            return
        self.lines.append(f"{ind}if {' or '.join(guard)}:")
        outs = [f"v{item.out_start + k}" for k in range(item.num_outputs)]
        self.lines.append(f"{ind}    " + (f"{' = '.join(outs)} = DEAD" if outs else "pass"))
        if is_source:
            self.lines.append(f"{ind}    d{item.id} = True")
        self.lines.append(f"{ind}else:")
        self.lines.append(f"{ind}    {line}")
        self.line_items[len(self.lines)] = item
        if is_source:
            self.lines.append(f"{ind}    d{item.id} = False")
            self.dead_nodes.add(item.id)
        self.may_dead.update(range(item.out_start, item.out_start + item.num_outputs))

    @staticmethod
    def _predicate(value: str, shapes) -> str:
        """The expression testing a Switch predicate `value`: checked to be a scalar unless
        its static shape (`shapes`, one or none) says so (a fed predicate may be any shape)."""
        if shapes and shapes[0].ndims == 0:
            return value
        return f"_switch_predicate({value})"

    def _emit_switch(self, item, ind) -> None:
        data, pred = (f"_deref(v{s})" if d else f"v{s}"
                      for s, d in zip(item.in_slots, item.deref))
        f, t = f"v{item.out_start}", f"v{item.out_start + 1}"
        pred = self._predicate(pred, item.node.input_shapes[1:2])
        guard = self._guard(item)
        if guard:
            self.lines.append(f"{ind}if {' or '.join(guard)}:")
            self.lines.append(f"{ind}    {f} = {t} = DEAD")
            self.lines.append(f"{ind}elif {pred}:")
        else:
            self.lines.append(f"{ind}if {pred}:")
        self.line_items[len(self.lines)] = item
        self.lines.append(f"{ind}    {f}, {t} = DEAD, {data}")
        self.lines.append(f"{ind}else:")
        self.lines.append(f"{ind}    {f}, {t} = {data}, DEAD")
        self.may_dead.update((item.out_start, item.out_start + 1))
        if item.id in self._control_sources():
            self.lines.append(f"{ind}d{item.id} = False")

    def _emit_merge(self, item, ind) -> None:
        out, index = f"v{item.out_start}", f"v{item.out_start + 1}"
        first = True
        for j, s in enumerate(item.in_slots):
            test = "if" if first else "elif"
            value = f"_deref(v{s})" if item.deref[j] else f"v{s}"
            if s not in self.may_dead:
                if first:
                    self.lines.append(f"{ind}{out}, {index} = {value}, _np.int32({j})")
                else:
                    self.lines.append(f"{ind}else:")
                    self.lines.append(f"{ind}    {out}, {index} = {value}, _np.int32({j})")
                break
            self.lines.append(f"{ind}{test} v{s} is not DEAD:")
            self.lines.append(f"{ind}    {out}, {index} = {value}, _np.int32({j})")
            first = False
        else:
            self.lines.append(f"{ind}else:")
            self.lines.append(f"{ind}    {out} = {index} = DEAD")
            self.may_dead.update((item.out_start, item.out_start + 1))
            if item.id in self._control_sources():
                self.dead_nodes.add(item.id)
        if item.id in self._control_sources():
            self.lines.append(f"{ind}d{item.id} = {out} is DEAD")


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _tuple(names) -> str:
    names = list(names)
    if not names:
        return "()"
    return ", ".join(names) + ("," if len(names) == 1 else "")


def compile_partition(items, frame_graph, name: str):
    """(function(args, rets, step), line → item, filename), or None if not compilable."""
    try:
        return _Compiler(items, frame_graph).compile(name)
    except _Unsupported:
        return None
