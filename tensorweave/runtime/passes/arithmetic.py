"""Arithmetic simplification: algebraic rewrites, each with its algebra and its exactness.

Rules apply to real (float and integer) dtypes only: complex multiplication by 1 is not exact
for infinite parts, and bool/string have no arithmetic. Each rule says whether it is exact:

  exact      x * 1 -> x, x / 1 -> x, x + (-0.0) -> x, x - (+0.0) -> x (for integers any zero;
             for floats only that sign: -0.0 + 0.0 is +0.0, so x + 0.0 and x - (-0.0) turn
             -0.0 into +0.0 and stay), -(-x) -> x, transpose∘transpose, reshape∘reshape when
             the inner reshape cannot fail (its error would be lost), reshape to the own
             static shape, exact cast round trips (an integer of v value bits through a float
             of d >= v significand digits: int32 through float64, not int64), casts to the
             own dtype, not(not(x)), x - x -> 0 for integers, add_n(a, a) -> a * 2, a
             reduction over no axes -> x.
  denormals  x * 1, x / 1, x + (-0.0), x - (+0.0) and float cast round trips drop an
             arithmetic op, and kernels flush denormals to zero as TensorFlow's do
             (runtime/float_env.py): the op would turn a denormal x into 0, the rewrite passes
             it through. For floating-point (and complex) dtypes they apply only when
             `arithmetic_optimization` is AGGRESSIVE; integer and bool dtypes always.
  tolerance  add_n(a, a, ..., a) of n >= 3 equal terms -> a * n, which rounds once where the
             sum rounds n - 1 times (TensorFlow's SimplifyAggregation; only when every term is
             the same tensor, as there, so a sum with other terms keeps its order and bits).

The algebra on constants TensorFlow does in its constant folding (x / c -> x * (1 / c),
constants of add/mul chains combined) is constant_push_down.py, switched with constant folding.

Never rewritten: x * 0 (NaN * 0 is NaN), x - x for floats (inf - inf is NaN). A rewrite that
needs a broadcast to leave x's shape unchanged checks it statically (a scalar or all-ones-shaped
constant, or equal fully-defined shapes; static shapes hold under this run's feeds, see
fed_shapes.py). Replacing a node by one of its inputs requires both on one device, so no
rewrite adds a device crossing.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import ARITHMETIC, PassOptions
from tensorweave.runtime.passes.rewrite import (
    CONTROL_FLOW_OPS,
    Editor,
    apply_rules,
    is_pure,
    known_shape,
    make_node,
)


@register_pass("arithmetic_optimization", order=30, toggle=ARITHMETIC, group="main")
def simplify_arithmetic(graph, options: PassOptions | None = None):
    """Applies the algebraic rules above to every node, in topological order."""
    ed = Editor(graph, options or PassOptions.defaults(graph))
    return apply_rules(ed, _RULES, _real)


def _real(node) -> bool:
    dtypes = node.output_dtypes[:1] or node.input_dtypes[:1]
    return bool(dtypes) and (dtypes[0].is_floating or dtypes[0].is_integer or
                             node.op in ("LogicalNot", "Cast"))


# --- helpers ------------------------------------------------------------------------------------
def _uniform(value: np.ndarray | None, target) -> bool:
    """Whether every element of a constant equals `target` (and there is at least one)."""
    return value is not None and value.size > 0 and value.dtype != object and \
        bool(np.all(value == target))


def _keeps_shape(ed: Editor, x, c_value: np.ndarray, node) -> bool:
    """Whether broadcasting x against the constant leaves x's shape unchanged."""
    if c_value.ndim == 0:
        return True
    x_shape = ed.producer(x).output_shapes[x[1]]
    if x_shape.ndims is not None and c_value.ndim <= x_shape.ndims and \
            all(d == 1 for d in c_value.shape):
        return True
    xs, out = known_shape(x_shape), known_shape(node.output_shapes[0])
    return xs is not None and xs == out


def _same_device(ed: Editor, node, tensor) -> bool:
    return ed.producer(tensor).device == node.device


# Ops whose output may be a view of their first input: a variable's storage flows through them.
_VIEWS = frozenset({"Identity", "Reshape", "ExpandDims", "Squeeze", "StopGradient",
                    "PreventGradient"})


def _may_be_variable_storage(ed: Editor, tensor) -> bool:
    """Whether `tensor` may be (a view of) a variable's storage. An op computing from it makes
    a value when it runs, before the step's in-place updates of the variable
    (executor/update_order.py); the storage itself, fetched, shows them (TensorFlow keeps
    such an op as a Snapshot, a copy, for the same reason)."""
    for _ in range(64):
        node = ed.producer(tensor)
        if node.output_dtypes[tensor[1]]._is_ref_dtype:
            return True
        if node.op not in _VIEWS or not node.inputs:
            return False
        tensor = node.inputs[0]
    return True


def _forward(ed: Editor, node, x, kind: str, detail: str) -> bool:
    """Replaces `node` by its input tensor x (not when x may be a variable's storage)."""
    if not _same_device(ed, node, x) or _may_be_variable_storage(ed, x):
        return False
    return ed.replace(node, [x], kind, detail)


def const_operand(ed: Editor, node):
    """(x, c_value, c_index) for a binary node with exactly one Const operand, else None."""
    a, b = node.inputs
    va, vb = ed.const_value(a), ed.const_value(b)
    if vb is not None and va is None:
        return a, vb, 1
    if va is not None and vb is None:
        return b, va, 0
    return None


def new_const(ed: Editor, node, value, suffix: str):
    dtype = node.output_dtypes[0].base_dtype
    value = np.asarray(value, dtype=_dtypes.numpy_dtype(dtype))
    const = ed.add(ed.const(f"{node.name}/{suffix}", value, node))
    return (const.name, 0)


def rebuild(ed: Editor, node, op: str, inputs: list, kind: str, detail: str,
             attrs: dict | None = None) -> bool:
    """Replaces `node` in place (same name, readers, dependents) by `op(inputs)`."""
    attrs = attrs if attrs is not None else {"T": node.output_dtypes[0].base_dtype}
    new = make_node(node.name, op, attrs, inputs, node, ed.graph, node.output_dtypes,
                    node.output_shapes, node.control_inputs)
    ed.substitute(node, new, kind, detail)
    return True


def finite(*values) -> bool:
    return all(np.all(np.isfinite(v)) for v in values)


def _may_drop_arithmetic(ed: Editor, dtype) -> bool:
    """Whether a rule may replace an arithmetic op on `dtype` values by its input.

    Always for integers and bool. For floating-point (and complex) dtypes only when
    `arithmetic_optimization` is AGGRESSIVE: kernels flush denormals to zero as TensorFlow's
    do (runtime/float_env.py), so x * 1 is 0 for a denormal x, and dropping the op would pass
    the denormal through (TensorFlow's optimizer keeps such a Mul too).
    """
    return not (dtype.is_floating or dtype.is_complex) or ARITHMETIC in ed.options.aggressive


def _exact_zero(ed: Editor, node, c: np.ndarray, negative: bool) -> bool:
    """Whether the constant is a zero that x + c (negative) or x - c (not negative) keeps x
    exactly: for floats only -0.0 and +0.0 respectively, since -0.0 + 0.0 is +0.0."""
    if not _uniform(c, 0) or not _may_drop_arithmetic(ed, node.output_dtypes[0]):
        return False
    return not node.output_dtypes[0].is_floating or bool(np.all(np.signbit(c) == negative))


# --- rules ----------------------------------------------------------------------------------------
def _mul(ed: Editor, node) -> bool:
    found = const_operand(ed, node)
    if found is None:
        return False
    x, c, _ = found
    if _uniform(c, 1) and _may_drop_arithmetic(ed, node.output_dtypes[0]) and \
            _keeps_shape(ed, x, c, node):
        # x * 1 -> x  (exact: 1 is the multiplicative identity, also for NaN, inf and -0.0;
        # floats only when AGGRESSIVE, as the Mul would flush a denormal x)
        return _forward(ed, node, x, "mul_by_one", "x * 1 -> x")
    return False


def _add(ed: Editor, node) -> bool:
    found = const_operand(ed, node)
    if found is not None:
        x, c, _ = found
        if _exact_zero(ed, node, c, negative=True) and _keeps_shape(ed, x, c, node):
            # x + (-0.0) -> x  (exact: -0.0 is the additive identity, +0.0 is not, since
            # -0.0 + 0.0 is +0.0; for integers any zero)
            return _forward(ed, node, x, "add_zero", "x + 0 -> x")
    return False


def _sub(ed: Editor, node) -> bool:
    a, b = node.inputs
    if a == b and node.output_dtypes[0].is_integer:
        # x - x -> 0  (integers only: for floats inf - inf and NaN - NaN are NaN)
        return _zeros_like(ed, node, a)
    vb = ed.const_value(b)
    if vb is not None and ed.const_value(a) is None and \
            _exact_zero(ed, node, vb, negative=False) and _keeps_shape(ed, a, vb, node):
        # x - (+0.0) -> x  (exact: x - (+0) is x for every x, -0.0 included; x - (-0.0) is
        # x + 0.0, which is +0.0 for x = -0.0; for integers any zero)
        return _forward(ed, node, a, "sub_zero", "x - 0 -> x")
    return False


def _zeros_like(ed: Editor, node, x) -> bool:
    dims = known_shape(node.output_shapes[0])
    dtype = _dtypes.numpy_dtype(node.output_dtypes[0].base_dtype)
    if dims is not None and int(np.prod(dims)) * np.dtype(dtype).itemsize <= \
            ed.options.max_folded_bytes:
        # Inside control flow x may be dead or in a loop frame: the constant keeps an edge to it.
        anchors = [x[0]] if any(n.op in CONTROL_FLOW_OPS for n in ed.graph) else []
        zeros = ed.add(ed.const(f"{node.name}/zeros", np.zeros(dims, dtype), node,
                                list(node.control_inputs) + anchors))
        return ed.replace(node, [(zeros.name, 0)], "sub_self", "x - x -> 0 (integer)")
    return rebuild(ed, node, "ZerosLike", [x], "sub_self", "x - x -> zeros_like(x) (integer)")


def _div(ed: Editor, node) -> bool:
    x, y = node.inputs
    c = ed.const_value(y)
    if c is None or ed.const_value(x) is not None:
        return False
    if _uniform(c, 1) and _may_drop_arithmetic(ed, node.output_dtypes[0]) and \
            _keeps_shape(ed, x, c, node):
        # x / 1 -> x  (exact; floats only when AGGRESSIVE, as the division flushes denormals)
        return _forward(ed, node, x, "div_by_one", "x / 1 -> x")
    return False


def _neg(ed: Editor, node) -> bool:
    inner = ed.producer(node.inputs[0])
    if inner.op == "Neg" and is_pure(inner):
        # -(-x) -> x  (exact, also for the most negative integer, which wraps to itself)
        return _forward(ed, node, inner.inputs[0], "double_negation", "-(-x) -> x")
    return False


def _logical_not(ed: Editor, node) -> bool:
    inner = ed.producer(node.inputs[0])
    if inner.op == "LogicalNot" and is_pure(inner):
        # not(not(x)) -> x  (exact)
        return _forward(ed, node, inner.inputs[0], "double_not", "!!x -> x")
    return False


def _transpose(ed: Editor, node) -> bool:
    x, perm_t = node.inputs
    perm = ed.const_value(perm_t)
    if perm is None:
        return False
    perm = [int(p) for p in np.ravel(perm)]
    if perm == list(range(len(perm))):
        # transpose(x, identity) -> x  (exact: a view of the same data)
        return _forward(ed, node, x, "identity_transpose", f"perm {perm}")
    inner = ed.producer(x)
    inner_perm = ed.const_value(inner.inputs[1]) if inner.op == "Transpose" else None
    if inner_perm is None or not is_pure(inner) or len(inner_perm) != len(perm):
        return False
    # transpose(transpose(y, p), q) = transpose(y, p∘q) with (p∘q)[i] = p[q[i]]
    composed = [int(np.ravel(inner_perm)[q]) for q in perm]
    y = inner.inputs[0]
    if composed == list(range(len(composed))):
        return _forward(ed, node, y, "transpose_pair", "transposes cancel")
    k = _perm_const(ed, node, composed)
    return rebuild(ed, node, "Transpose", [y, k], "transpose_pair",
                    f"composed perm {composed}", attrs=dict(node.attrs))


def _perm_const(ed: Editor, node, perm):
    dtype = _dtypes.numpy_dtype(node.attrs["Tperm"])
    const = ed.add(ed.const(f"{node.name}/perm", np.array(perm, dtype), node))
    return (const.name, 0)


def _reshape(ed: Editor, node) -> bool:
    x, shape_t = node.inputs
    target = ed.const_value(shape_t)
    x_dims = known_shape(ed.producer(x).output_shapes[x[1]])
    if x_dims is not None and _names_own_shape(target, x_dims):
        # reshape(x, shape(x)) -> x  (exact: same data, same shape). The target must be a
        # constant naming x's shape (a -1 at most once, in place of x's dim): a static output
        # shape inferred from x's size alone would hide the reshape's run-time error.
        return _forward(ed, node, x, "reshape_to_own_shape", f"shape {list(x_dims)}")
    inner = ed.producer(x)
    if inner.op == "Reshape" and is_pure(inner) and target is not None and \
            inner.device == node.device and _cannot_fail(ed, inner):
        # reshape(reshape(y, s1), s2) -> reshape(y, s2)  (exact: the element order is kept,
        # and the inner reshape, whose error would be lost, provably succeeds)
        attrs = dict(node.attrs)
        return rebuild(ed, node, "Reshape", [inner.inputs[0], shape_t], "reshape_pair",
                        f"to {np.ravel(target).tolist()}", attrs=attrs)
    return False


def _names_own_shape(target, x_dims) -> bool:
    """Whether the constant reshape target is x's own (fully known) shape."""
    if target is None:
        return False
    dims = [int(d) for d in np.ravel(target)]
    return len(dims) == len(x_dims) and dims.count(-1) <= 1 and \
        all(d in (x, -1) for d, x in zip(dims, x_dims))


def _cannot_fail(ed: Editor, reshape) -> bool:
    """Whether reshape(y, s) succeeds for every y its static shape allows: s is a constant (not
    fed) with at most one -1, and y's size is its product, or a multiple of it with a -1."""
    y, shape_t = reshape.inputs
    target = ed.const_value(shape_t)
    y_shape = ed.producer(y).output_shapes[y[1]]
    if target is None or y_shape.ndims is None:
        return False
    dims = [int(d) for d in np.ravel(target)]
    if any(d < -1 for d in dims) or dims.count(-1) > 1:
        return False
    fixed = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    known = int(np.prod([d for d in y_shape.as_list() if d is not None], dtype=np.int64))
    if -1 not in dims:
        return y_shape.is_fully_defined() and known == fixed
    # size(y) = known * (the unknown dims), a multiple of `fixed` whatever they are
    return fixed > 0 and known % fixed == 0


def _reduce(ed: Editor, node) -> bool:
    x, axes = node.inputs
    value = ed.const_value(axes)
    if value is not None and value.size == 0:
        # sum(x, axes=[]) -> x  (exact: nothing is reduced; a broadcast gradient's other side)
        return _forward(ed, node, x, "reduce_no_axes", node.op)
    return False


def _cast(ed: Editor, node) -> bool:
    src, dst = node.attrs["SrcT"].base_dtype, node.attrs["DstT"].base_dtype
    x = node.inputs[0]
    if src == dst:
        # cast(x, dtype(x)) -> x  (exact: the kernel copies the bits)
        return _forward(ed, node, x, "cast_to_same_type", src.name)
    inner = ed.producer(x)
    if inner.op != "Cast" or not is_pure(inner):
        return False
    first = inner.attrs["SrcT"].base_dtype
    if first == dst and _exactly_in(first, src) and _may_drop_arithmetic(ed, first):
        # cast(cast(x, wide), narrow) -> x when `wide` represents every value of x exactly
        # (a float round trip only when AGGRESSIVE: the two casts flush a denormal x)
        return _forward(ed, node, inner.inputs[0], "cast_round_trip",
                        f"{first.name} -> {src.name} -> {dst.name}")
    return False


# Significand digits (the implicit bit included) of each float type, and of complex parts.
_DIGITS = {_dtypes.float16: 11, _dtypes.bfloat16: 8, _dtypes.float32: 24, _dtypes.float64: 53,
           _dtypes.complex64: 24, _dtypes.complex128: 53}


def _exactly_in(a, b) -> bool:
    """Whether every value of dtype a is exactly a value of dtype b (and casts back to itself).

    An integer of v value bits (the sign excluded) fits a float of d significand digits iff
    v <= d: int32 (31) fits float64 (53), int64 (63) does not (2^53 + 1 rounds to 2^53), though
    NumPy calls int64 -> float64 a "safe" cast. Between integers, and floats or complexes of
    NumPy's own types, NumPy's safe casting is exactly range (and precision) inclusion.
    """
    if _dtypes.string in (a, b) or a.is_quantized or b.is_quantized:
        return False
    if a.is_integer and b in _DIGITS:
        info = np.iinfo(_dtypes.numpy_dtype(a))
        return info.bits - (1 if info.min < 0 else 0) <= _DIGITS[b]
    if _dtypes.bfloat16 in (a, b):   # stored as float32 here: NumPy cannot tell the types apart
        return a == _dtypes.bfloat16 and b in _DIGITS and _DIGITS[b] >= _DIGITS[_dtypes.float32]
    return bool(np.can_cast(_dtypes.numpy_dtype(a), _dtypes.numpy_dtype(b), casting="safe"))


def _add_n(ed: Editor, node) -> bool:
    terms = node.inputs
    if len(terms) < 2 or any(t != terms[0] for t in terms):
        return False
    # add_n(a, ..., a) -> a * n  (n equal terms: 2a is exact, more round once instead of n - 1
    # times, as TensorFlow rewrites it)
    dtype = node.output_dtypes[0].base_dtype
    k = new_const(ed, node, np.array(len(terms), _dtypes.numpy_dtype(dtype)), "count")
    return rebuild(ed, node, "Mul", [terms[0], k], "add_n_repeated",
                   f"{len(terms)} equal terms -> one product")


_RULES = {
    "Mul": _mul, "Add": _add, "AddV2": _add, "Sub": _sub, "RealDiv": _div, "Div": _div,
    "Neg": _neg, "LogicalNot": _logical_not, "Transpose": _transpose, "Reshape": _reshape,
    "Cast": _cast, "AddN": _add_n, "Sum": _reduce, "Prod": _reduce, "Max": _reduce,
    "Min": _reduce, "Mean": _reduce,
}
