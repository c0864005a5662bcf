"""Constant folding: nodes whose value the graph fixes become Const nodes.

Three sources of fixed values:

* a pure node all of whose data inputs are Consts is evaluated once, here, with its real CPU
  kernel (the executor's own kernels, under the same floating-point error state, with 0-d
  constants as NumPy scalars as the executor passes them), so the folded value is bit-identical
  to what a step would compute; reshapes, casts and concatenations of constants fold this way;
* `Shape`, `ShapeN`, `Size` and `Rank` of a tensor whose static shape is fully defined (for
  `Rank`, whose rank is known) become constants without running the input;
* `ConcatV2` with several adjacent constant inputs (and others not) has those concatenated once.

Never folded: stateful ops, refs, control flow and the call frame (`_Arg` is how a feed enters,
so a fed tensor is never folded: a feed always overrides a foldable value), async kernels and
kernels that need the step. A result larger than `max_folded_bytes` is not materialized; ops
whose output can be far larger than their inputs (Fill, Tile, ...) are folded only when their
static output shape is known to be within that cap, and not at all beyond 64 KiB when only
stateful ops (an initializer's Assign) read them. A kernel that raises is left in the graph,
so the error surfaces at run time with the user's line.

The new Const keeps the control inputs of the node it replaces and of the constants it read
(a constant inside a cond branch or loop body carries the pivot that makes it dead or puts it in
the frame); a materialized shape keeps a control edge to its input when that input is downstream
of control flow, for the same reason. A preserved node is folded in place, under its own name.
"""
from __future__ import annotations

import functools

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.registry import find_kernel
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import CONSTANT_FOLDING, PassOptions
from tensorweave.runtime.passes.rewrite import (
    CONTROL_FLOW_OPS,
    Editor,
    is_pure,
    known_shape,
    make_node,
)

_SHAPE_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank"})
# Ops whose output may be much larger than their inputs: folded only with a known output size.
_EXPANDING = frozenset({"Fill", "Tile", "BroadcastTo", "Range", "LinSpace", "OneHot", "Pad",
                        "PadV2", "MirrorPad", "ZerosLike", "OnesLike", "ScatterNd",
                        "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
                        "MatrixDiagV3", "Diag", "Einsum", "MatMul", "BatchMatMulV2"})
_UNKNOWN_SIZE_INPUT_LIMIT = 1 << 16
_STORED_FILL_MAX_BYTES = 1 << 16


@functools.cache
def _fold_device():
    from tensorweave.runtime.devices import Device
    return Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", np)


@register_pass("constant_folding", order=20, toggle=CONSTANT_FOLDING, group="main")
def fold_constants(graph, options: PassOptions | None = None):
    """Replaces every node whose value the graph fixes by a Const; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    ed = Editor(graph, options)
    tainted = downstream_of_control_flow(ed)
    for node in ed.topological():
        if node.name not in graph.nodes or node.op == "Const" or not is_pure(node) or \
                not node.output_dtypes:
            continue
        if node.op in _SHAPE_OPS:
            values = _static_shape_values(ed, node)
            if values is not None:
                anchors = [s for s, _ in node.inputs if s in tainted]
                _install(ed, node, values, list(node.control_inputs) + anchors, "fold_shape")
                continue
        if node.inputs and all(ed.producer(t).op == "Const" for t in node.inputs):
            if _only_stored(ed, node):
                ed.log.record("skip_fold_stored_fill", node.name, "read only by stateful ops")
                continue
            values = _evaluate(ed, node)
            if values is not None:
                anchors = [c for s, _ in node.inputs for c in ed.producer((s, 0)).control_inputs]
                _install(ed, node, values, list(node.control_inputs) + anchors, "fold")
                continue
        if node.op == "ConcatV2":
            _fold_partial_concat(ed, node)
    ed.sweep()
    return graph


def downstream_of_control_flow(ed: Editor) -> set[str]:
    """Names of nodes reachable from a control-flow op (they may be dead or inside a frame)."""
    starts = [n.name for n in ed.graph if n.op in CONTROL_FLOW_OPS]
    seen: set[str] = set()
    while starts:
        name = starts.pop()
        if name in seen:
            continue
        seen.add(name)
        node = ed.node(name)
        for k in range(len(node.output_dtypes)):
            starts.extend(n for n, _ in ed.readers.get((name, k), ()))
        starts.extend(ed.dependents.get(name, ()))
    return seen


def _static_shape_values(ed: Editor, node) -> list | None:
    """The outputs of a shape query whose answer the static shapes fix, else None."""
    if node.op == "Rank":
        shape = ed.producer(node.inputs[0]).output_shapes[node.inputs[0][1]]
        return None if shape.ndims is None else [np.array(shape.ndims, np.int32)]
    out_dtype = node.attrs["out_type"].as_numpy_dtype
    values = []
    for src in node.inputs:
        dims = known_shape(ed.producer(src).output_shapes[src[1]])
        if dims is None:
            return None
        if node.op == "Size":
            values.append(np.array(int(np.prod(dims, dtype=np.int64)), out_dtype))
        else:
            values.append(np.array(dims, out_dtype).reshape(len(dims)))
    return values


def _only_stored(ed: Editor, node) -> bool:
    """A large fill read only by stateful ops (an initializer's Assign, which stores a copy of
    its own): folded, it would stay resident beside the variable for the session's life (the
    Adam slots' zeros were 5 MB of mlp_train's peak) and save only a cheap fill."""
    if node.op not in _EXPANDING:
        return False
    dims = known_shape(node.output_shapes[0]) if node.output_shapes else None
    if dims is None or _nbytes(dims, node.output_dtypes[0]) <= _STORED_FILL_MAX_BYTES:
        return False
    readers = ed.data_readers(node.name)
    return bool(readers) and not any(is_pure(r) for r in readers)


def _input_value(ed: Editor, src):
    value = ed.const_value(src)
    # 0-d constants run as NumPy scalars, exactly as the executor passes them.
    return value[()] if value.ndim == 0 and value.dtype != object else value


def _evaluate(ed: Editor, node) -> list | None:
    """The node's outputs computed by its CPU kernel, or None if it must not be folded."""
    cap = ed.options.max_folded_bytes
    for k, dtype in enumerate(node.output_dtypes):
        dims = known_shape(node.output_shapes[k]) if k < len(node.output_shapes) else None
        if dims is not None:
            if _nbytes(dims, dtype) > cap:
                ed.log.record("skip_fold_too_large", node.name, f"output {k} of shape {dims}")
                return None
        elif node.op in _EXPANDING:
            return None
    inputs = [_input_value(ed, s) for s in node.inputs]
    if any(dims is None for dims in (known_shape(s) for s in node.output_shapes)) and \
            sum(np.asarray(v).nbytes for v in inputs) > _UNKNOWN_SIZE_INPUT_LIMIT:
        return None
    kdef = find_kernel(node.op, "CPU", node.attrs)
    if kdef is None or kdef.is_async or kdef.needs_step:
        return None
    try:
        with np.errstate(all="ignore"):
            ctx = KernelContext(node, _fold_device(), None)
            if kdef.pure:
                out = kdef.impl(*inputs)
            elif kdef.is_class:
                out = kdef.impl(ctx).compute(ctx, *inputs)
            else:
                out = kdef.impl(ctx, *inputs)
    except Exception as exc:  # noqa: BLE001 - the run reports it, with the user's line
        ed.log.record("skip_fold_kernel_error", node.name, f"{type(exc).__name__}: {exc}")
        return None
    outs = (out,) if len(node.output_dtypes) == 1 else tuple(out)
    values = []
    for k, value in enumerate(outs):
        arr = np.array(value, copy=True) if kdef.returns_view else np.asarray(value)
        expected = node.output_dtypes[k].base_dtype
        if expected == _dtypes.string:
            if arr.dtype != object:
                return None
        elif arr.dtype != _dtypes.numpy_dtype(expected):
            return None
        if arr.nbytes > cap:
            ed.log.record("skip_fold_too_large", node.name, f"output {k} of {arr.nbytes} bytes")
            return None
        values.append(arr)
    return values


def _nbytes(dims, dtype) -> int:
    itemsize = 8 if dtype.base_dtype == _dtypes.string else dtype.base_dtype.size
    return int(np.prod(dims, dtype=np.int64)) * itemsize


def _install(ed: Editor, node, values: list, control_inputs: list, kind: str) -> None:
    """Replaces `node` by Consts holding `values` (in place when it is preserved)."""
    control_inputs = list(dict.fromkeys(control_inputs))
    if len(values) == 1 and ed.is_preserved(node.name):
        const = ed.const(node.name, values[0], node, control_inputs, name=node.name)
        ed.substitute(node, const, kind, _describe(values[0]))
        return
    outputs = []
    for k, value in enumerate(values):
        suffix = "" if k == 0 else f"-{k}"
        const = ed.add(ed.const(f"ConstantFolding/{node.name}{suffix}", value, node,
                                control_inputs))
        outputs.append((const.name, 0))
    if not ed.replace(node, outputs, kind, ", ".join(_describe(v) for v in values)):
        for name, _ in outputs:
            ed.remove(ed.node(name))


def _describe(value: np.ndarray) -> str:
    if value.size <= 8:
        return f"{value.dtype} {np.array2string(value, separator=',')}"
    return f"{value.dtype} array of shape {list(value.shape)}"


def _fold_partial_concat(ed: Editor, node) -> None:
    """ConcatV2(..., c1, c2, ..., axis): adjacent constant inputs concatenated once."""
    n = node.attrs["N"]
    pieces, axis_src = node.inputs[:n], node.inputs[n]
    axis = ed.const_value(axis_src)
    if axis is None:
        return
    runs, current = [], []
    for src in pieces:
        if ed.const_value(src) is not None and not ed.producer(src).control_inputs:
            current.append(src)
        else:
            runs.append(current)
            runs.append([src])
            current = []
    runs.append(current)
    runs = [r for r in runs if r]
    if all(len(r) == 1 for r in runs):
        return
    merged = []
    try:
        for r in runs:
            merged.append(r[0] if len(r) == 1 else
                          np.concatenate([ed.const_value(s) for s in r], axis=int(axis)))
    except ValueError:  # mismatched constants: the run reports it
        return
    if any(isinstance(m, np.ndarray) and m.nbytes > ed.options.max_folded_bytes
           for m in merged):
        return
    new_inputs = []
    for m in merged:
        if isinstance(m, np.ndarray):
            m = (ed.add(ed.const(f"ConstantFolding/{node.name}/partial", m, node)).name, 0)
        new_inputs.append(m)
    attrs = dict(node.attrs, N=len(new_inputs))
    new = make_node(node.name, "ConcatV2", attrs, new_inputs + [axis_src], node, ed.graph,
                    node.output_dtypes, node.output_shapes, node.control_inputs)
    ed.substitute(node, new, "fold_partial_concat", f"{n} inputs -> {len(new_inputs)}")
