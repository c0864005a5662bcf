"""Grappler's constant folding algebra: division by a constant and constants of chains.

TensorFlow's constant folding does more than fold: it rewrites a node with one constant
operand so that its constants meet (ConstantPushDown) and turns a division by a constant into
a product (ReduceDivToReciprocalMul). Those change how a float result rounds, so this pass runs
exactly when TF's does: with Grappler's `constant_folding` on (options.py), whatever
`arithmetic_optimization` says, and not under the older optimizer's folding alone.

  x / c -> x * (1 / c)   floats, any constant c: exact when every c is a power of two, else
             within 1.5 ulp, rounding as TF does, so x / 255.0 and a mean's gradient match
             TF's bits. TF's folded reciprocal is 1 / c rounded for scalars, float16 and
             float64; for float32 constants of 8 or more values Eigen's vectorized reciprocal
             is an approximation off by an ulp for some (a third, here), which is not followed.
             Kept: a zero, non-finite or tiny c, or a reciprocal that would be denormal.
  (s·y + c1) ± c2 -> s·y + (c1 ± c2), c2 - (s·y + c1) -> (-s)·y + (c2 - c1),
  (y * c1) * c2 -> y * (c1 * c2)
             hoisting, where the inner node is read only by this one. Integers: exact (wrap-
             around arithmetic is a ring). Floats: reassociation; each step of the original
             rounds once and the hoisted form once, so for a chain of n constants the results
             differ by at most (n + 1)/2 ulp of the largest partial sum (the hoisted form is
             the more accurate one: 3e7 + 1.0 a hundred times is 3e7 in float32, 3e7 + 100.0
             is not). It needs finite constants and a finite, normal (or exactly zero when
             every factor is) combined constant, but the intermediate results it removes may
             overflow or underflow where the hoisted form does not (or the reverse): in
             float32, (x * 10) * 0.1 is inf for x = 3e38 and x * 1.0 is 3e38. Not for float16
             and bfloat16, which TF leaves alone.

  c ∘ (x • y) -> x ∘' (c •' y)   both leaves not constant (c + (x - y) -> x + (c - y),
             c * (x * y) -> x * (c * y)): TF's canonical form, which rounds differently, so it
             is followed where TF does it: the chain read only by this node and not fetched,
             c no larger than y, same device; sub/div forms for floats only.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.shape_fns import broadcast_shapes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.arithmetic import const_operand, finite, new_const, rebuild
from tensorweave.runtime.passes.options import CONSTANT_PUSH_DOWN, PassOptions
from tensorweave.runtime.passes.rewrite import Editor, apply_rules, is_pure, make_node

_ADD = frozenset({"Add", "AddV2"})
_HALF_WIDTH = (_dtypes.float16, _dtypes.bfloat16)


@register_pass("constant_push_down", order=25, toggle=CONSTANT_PUSH_DOWN, group="main")
def push_down_constants(graph, options: PassOptions | None = None):
    """Applies the rules above to every node, in topological order."""
    ed = Editor(graph, options or PassOptions.defaults(graph))
    return apply_rules(ed, _RULES, _numeric_output)


def _numeric_output(node) -> bool:
    return bool(node.output_dtypes) and (node.output_dtypes[0].is_floating or
                                         node.output_dtypes[0].is_integer)


def _chain(op: str):
    def rule(ed: Editor, node) -> bool:
        found = const_operand(ed, node)
        return found is not None and (_hoist(ed, node, found[0], found[1], op or node.op) or
                                      _push_down(ed, node))
    return rule


def _quotient(ed: Editor, node) -> bool:
    return _div(ed, node) or (node.op == "Div" and _push_down(ed, node))


# TF's IsAdd/IsSub/IsMul/IsDiv: a RealDiv is none of them (by a constant it became a Mul).
_FAMILY = {"Add": "+", "AddV2": "+", "Sub": "-", "Mul": "*", "Div": "/"}


def _push_down(ed: Editor, node) -> bool:
    """TF's ConstantPushDown where the chain's other leaf is not constant: c ∘ (x • y) is
    rebuilt as x ∘' (c •' y) (each op an add or sub, or a mul or div, as the signs need), so
    that the constant meets y, TF's canonical form. x is the chain's first input (second if
    the first is constant): with canonical_inputs.py, the smaller of TF's input names."""
    parent = _FAMILY.get(node.op)
    dtype = node.output_dtypes[0].base_dtype
    a, b = node.inputs
    c_index = 0 if ed.const_value(a) is not None else 1
    c, op_in = node.inputs[c_index], node.inputs[1 - c_index]
    child = ed.producer(op_in)
    kind = _FAMILY.get(child.op)
    if parent is None or kind is None or (parent in "+-") != (kind in "+-") or \
            dtype in _HALF_WIDTH or len(child.inputs) != 2 or not is_pure(child) or \
            ed.is_preserved(child.name) or len(ed.readers.get(op_in, ())) != 1 or \
            child.output_dtypes[0] != node.output_dtypes[0]:
        return False
    left, right = child.inputs
    left_const, right_const = ed.const_value(left) is not None, ed.const_value(right) is not None
    if left_const or right_const:
        return False    # a constant leaf: _hoist combines the constants (or declined to)
    symmetric, child_symmetric = parent in "+*", kind in "+*"
    if not (symmetric and child_symmetric) and not (dtype.is_floating or dtype.is_complex):
        return False
    if any(ed.producer(t).device != node.device for t in (c, left, right)):
        return False
    if child.name in ed.producer(c).control_inputs:
        return False    # a constant anchored to the chain's frame (rewrite.Editor.const)
    if not _fits(ed.producer(c).output_shapes[c[1]], ed.producer(right).output_shapes[right[1]]):
        return False
    x, y = left, right
    sym, nonsym = ("AddV2", "Sub") if parent in "+-" else ("Mul", "Div")
    if symmetric and child_symmetric:
        node_op, node_in, child_op, child_in = node.op, [x, op_in], child.op, [c, y]
    else:
        # TF's sign bookkeeping: which of c, x, y end up subtracted (or divided by).
        c_first = c_index == 0
        neg_c = not symmetric and not c_first
        neg_x = c_first and not symmetric
        neg_y = (not child_symmetric) != (not symmetric and c_first)
        node_op = nonsym if neg_x or (neg_c and neg_y) else sym
        node_in = [op_in, x] if neg_x else [x, op_in]
        child_op = nonsym if neg_c != neg_y else sym
        child_in = [y, c] if neg_c else [c, y]
    child_shape = broadcast_shapes(ed.producer(child_in[0]).output_shapes[child_in[0][1]],
                                   ed.producer(child_in[1]).output_shapes[child_in[1][1]])
    new_child = make_node(child.name, child_op, {"T": dtype}, child_in, child, ed.graph,
                          child.output_dtypes, [child_shape], child.control_inputs)
    ed.substitute(child, new_child, "push_down", "constant pushed into the chain")
    return rebuild(ed, node, node_op, node_in, "push_down", "c ∘ (x • y) -> x ∘' (c •' y)")


def _fits(c_shape, y_shape) -> bool:
    """TF's check that c ∘ y is no larger than y: fewer elements, and no leading dimension of
    c larger than y's (both compared where known)."""
    if c_shape.is_fully_defined() and y_shape.is_fully_defined() and \
            c_shape.num_elements() > y_shape.num_elements():
        return False
    if c_shape.ndims is None or y_shape.ndims is None or c_shape.ndims == 0:
        return True
    return all(yd is None or cd is None or cd <= yd
               for cd, yd in zip(c_shape.as_list(), y_shape.as_list()))


def _div(ed: Editor, node) -> bool:
    x, y = node.inputs
    c = ed.const_value(y)
    if c is None or ed.const_value(x) is not None or not node.output_dtypes[0].is_floating:
        return False
    with np.errstate(all="ignore"):
        recip = np.reciprocal(c)
    info = np.finfo(c.dtype)
    if not finite(c, recip) or np.any(c == 0) or np.any(np.abs(recip) < info.tiny):
        return False
    k = new_const(ed, node, recip, "reciprocal")
    return rebuild(ed, node, "Mul", [x, k], "div_to_mul", "x / c -> x * (1/c)")


def _hoist(ed: Editor, node, x, c2, op: str) -> bool:
    """Constant hoisting: the constants of an add/sub (or mul) chain combine into one.

    (s·y + c1) ± c2 -> s·y + (c1 ± c2) and c2 - (s·y + c1) -> (-s)·y + (c2 - c1), where s is
    ±1 and the inner node is read only by this one; (y * c1) * c2 -> y * (c1 * c2).
    """
    inner = ed.producer(x)
    if inner.op not in (_ADD | {"Sub"} if op != "Mul" else {"Mul"}) or not is_pure(inner) or \
            ed.only_reader(x) is not node or inner.device != node.device or \
            inner.output_dtypes[0] != node.output_dtypes[0]:
        return False
    found = const_operand(ed, inner)
    if found is None:
        return False
    y, c1, c1_index = found
    floating = node.output_dtypes[0].is_floating
    if node.output_dtypes[0].base_dtype in _HALF_WIDTH or floating and not finite(c1, c2):
        return False
    with np.errstate(all="ignore"):
        if op == "Mul":
            combined, sign = np.multiply(c1, c2), 1
            algebra = "(y * c1) * c2 -> y * (c1 * c2)"
        else:
            # inner = s·y + c1' with s = -1 only for c1 - y, and c1' = -c1 for y - c1.
            s = -1 if inner.op == "Sub" and c1_index == 0 else 1
            c1s = np.negative(c1) if inner.op == "Sub" and c1_index == 1 else c1
            x_index = node.inputs.index(x)
            if op == "Sub" and x_index == 1:      # c2 - (s·y + c1')
                combined, sign = np.subtract(c2, c1s), -s
            elif op == "Sub":                     # (s·y + c1') - c2
                combined, sign = np.subtract(c1s, c2), s
            else:                                 # (s·y + c1') + c2
                combined, sign = np.add(c1s, c2), s
            algebra = "constants of an add/sub chain combined"
    combined = np.asarray(combined)
    if floating:
        info = np.finfo(combined.dtype)
        tiny = (combined != 0) & (np.abs(combined) < info.tiny)
        vanished = op == "Mul" and np.any((combined == 0) & (c1 != 0) & (c2 != 0))
        if not finite(combined) or np.any(tiny) or vanished:
            return False
    k = new_const(ed, node, combined, "hoisted")
    if op == "Mul":
        return rebuild(ed, node, "Mul", [y, k], "hoist_constants", algebra)
    if sign > 0:
        return rebuild(ed, node, "AddV2", [y, k], "hoist_constants", algebra)
    return rebuild(ed, node, "Sub", [k, y], "hoist_constants", algebra)


_RULES = {"Mul": _chain("Mul"), "Add": _chain(""), "AddV2": _chain(""), "Sub": _chain("Sub"),
          "RealDiv": _div, "Div": _quotient}
