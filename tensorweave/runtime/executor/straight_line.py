"""Straight-line executor: a partition with nothing to overlap, compiled to one Python function.

When no two expensive nodes could run at once and at most one node is asynchronous (waited for
in its place, `await_async`), the best schedule is the topological order itself. It is generated
once as Python source — one line per node, values in local variables, constants bound as
globals, large intermediates deleted after their last use — so a step pays one call per kernel
and nothing else. A failing line maps back to its node through the traceback's line number, so
the per-node cost of error reporting is zero.
"""
from __future__ import annotations

import queue

import numpy as np

from tensorweave.runtime.executor import dataflow, values

# Values whose static size is at most this are not worth a `del` after their last use.
_SMALL = 4096


def _is_small(shape) -> bool:
    if shape is None or shape.ndims is None:
        return False
    n = shape.num_elements()
    return n is not None and n <= _SMALL


def generate(items, name: str = "partition"):
    """Returns (function(args, rets, step), line number -> NodeItem)."""
    env = {"_deref": values.deref, "_np": np,
           "_await": await_async}
    lines = ["def _run(args, rets, step):"]
    line_items = {}
    last_use = {}
    for item in items:
        for s in item.in_slots:
            last_use[s] = item.id
    dels: dict[int, list[int]] = {}
    for item in items:
        if item.kind in ("_Arg", "Const"):
            continue
        for k in range(item.num_outputs):
            slot = item.out_start + k
            if slot in last_use and not _is_small(item.node.output_shapes[k]):
                dels.setdefault(last_use[slot], []).append(slot)
    for item in items:
        line = line_for(item, env)
        lines.append("    " + line)
        line_items[len(lines)] = item
        for slot in dels.get(item.id, ()):
            lines.append(f"    del v{slot}")
    lines.append("    return None")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<tensorweave:{name}>", "exec")
    exec(code, env)
    fn = env["_run"]
    return fn, line_items


def await_async(fn, ctx, step, inputs: list, num_outputs: int):
    """Starts an asynchronous kernel and blocks the calling thread until it reports (the
    executor only inlines a partition's single asynchronous node, see executor.py). A deadline
    cancels the step, which fails the kernel's wait; a cancellation caused by an earlier
    failure of the step raises that root error."""
    done: queue.SimpleQueue = queue.SimpleQueue()

    def report(outputs=None, error=None):
        done.put((outputs, error))
    fn(ctx, step, inputs, report)
    outputs, error = dataflow.wait_for(done, step)
    if error is not None:
        raise step.root_error(error)
    if num_outputs > 1:
        return tuple(outputs)
    return outputs


def failing_item(exc, code, line_items):
    """The item whose line of the generated function `code` raised `exc`, or None."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line_items.get(line)


def _inputs(item, env) -> str:
    parts = []
    for slot, deref in zip(item.in_slots, item.deref):
        if deref:
            env[f"N{item.id}"] = item.node
            parts.append(f"_deref(v{slot})")
        else:
            parts.append(f"v{slot}")
    return ", ".join(parts)


def _outputs(item) -> str:
    return ", ".join(f"v{item.out_start + k}" for k in range(item.num_outputs)) + \
        ("," if item.num_outputs > 1 else "")


def line_for(item, env) -> str:
    """The Python statement that runs one node (binding its kernel and constants in env)."""
    i = item.id
    if item.kind == "_Arg":
        return f"v{item.out_start} = args[{item.index}]"
    if item.kind == "Const":
        env[f"K{i}"] = item.const_value
        return f"v{item.out_start} = K{i}"
    if item.kind == "_Retval":
        # A storage fetch's source is copied when the step ends (values.storage_fetch_indices).
        return f"rets[{item.index}] = v{item.in_slots[0]}"
    env[f"F{i}"] = item.fn
    args = _inputs(item, env)
    if item.is_async:
        env[f"C{i}"] = item.ctx
        call = f"_await(F{i}, C{i}, step, [{args}], {item.num_outputs})"
        return call if item.num_outputs == 0 else f"{_outputs(item)} = {call}"
    if item.kind == "pure":
        call = f"F{i}({args})"
    else:
        env[f"C{i}"] = item.ctx
        head = f"C{i}, step" if item.needs_step else f"C{i}"
        call = f"F{i}({head}{', ' + args if args else ''})"
    if item.num_outputs == 0:
        return call
    return f"{_outputs(item)} = {call}"
