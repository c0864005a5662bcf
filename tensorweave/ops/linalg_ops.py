"""Matrix products: MatMul, BatchMatMulV2 (batch broadcasting), Einsum, and tensordot.

`matmul` picks the op like TensorFlow: MatMul when both operands are statically matrices,
BatchMatMulV2 otherwise. (The runtime's cost model reads the contracted dimension from the
input shapes.) The gradients are products again: MatMul's for each transpose combination,
BatchMatMulV2's summed over broadcast batch dimensions, Einsum's as einsums (see
`_einsum_grad`); tensordot's comes from the ops it is built of.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.constant_op import constant
from tensorweave.ops.reduction_ops import reduce_prod, split_axes, tf_op

__all__ = ["matmul", "tensordot", "einsum"]

_MATMUL_TYPES = (_dtypes.FLOATING | _dtypes.COMPLEX | _dtypes.UNSIGNED_INTEGER
                 | {_dtypes.int32, _dtypes.int64})


def merge_inner(k_a, k_b):
    """The contracted dimension of both operands; ValueError if they differ."""
    if k_a is not None and k_b is not None and k_a != k_b:
        raise ValueError(f"Dimensions must be equal, but are {k_a} and {k_b}")
    return k_a if k_a is not None else k_b


def _matmul_shape(ctx):
    """[m, k] x [k, n] -> [m, n], after the transposes the attrs ask for."""
    dims = []
    for i in (0, 1):
        shape = ctx.input_shape(i)
        if shape.ndims is not None and shape.ndims != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {shape.ndims}")
        dims.append(shape.as_list() if shape.ndims is not None else [None, None])
    (m, k_a), (k_b, n) = dims
    if ctx.attrs["transpose_a"]:
        m, k_a = k_a, m
    if ctx.attrs["transpose_b"]:
        k_b, n = n, k_b
    merge_inner(k_a, k_b)
    return _ts.TensorShape([m, n])


MatMul = define_op(
    "MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
    attrs=[Attr("transpose_a", "bool", False), Attr("transpose_b", "bool", False),
           TypeAttr("T", _MATMUL_TYPES), Attr("grad_a", "bool", False),
           Attr("grad_b", "bool", False)],
    shape_fn=_matmul_shape)


def _batch_matmul_shape(ctx):
    """[..., m, k] x [..., k, n] -> [broadcast(...), m, n] (adj_x/adj_y swap the last two)."""
    shapes = [ctx.input_shape(0), ctx.input_shape(1)]
    for s in shapes:
        if s.ndims is not None and s.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    if shapes[0].ndims is None or shapes[1].ndims is None:
        return _ts.unknown_shape()
    (*batch_a, m, k_a), (*batch_b, k_b, n) = (s.as_list() for s in shapes)
    if ctx.attrs["adj_x"]:
        m, k_a = k_a, m
    if ctx.attrs["adj_y"]:
        k_b, n = n, k_b
    merge_inner(k_a, k_b)
    batch = shape_fns.broadcast_shapes(_ts.TensorShape(batch_a), _ts.TensorShape(batch_b))
    return batch.concatenate([m, n])


BatchMatMulV2 = define_op(
    "BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", _MATMUL_TYPES | {_dtypes.int16}), Attr("adj_x", "bool", False),
           Attr("adj_y", "bool", False), Attr("grad_x", "bool", False),
           Attr("grad_y", "bool", False)],
    shape_fn=_batch_matmul_shape)


def _conj(x: Tensor) -> Tensor:
    """TF's conj: the Conj op for complex tensors, the tensor itself for real ones."""
    return tf_op("Conj", [x]) if x.dtype.is_complex else x


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False,
           name=None):
    """Multiplies matrix `a` by matrix `b`, producing `a * b` (TF1's tf.matmul).

    Operands of rank 2 use the MatMul op; higher (or unknown) ranks use BatchMatMulV2, whose
    leading batch dimensions broadcast like NumPy's. The `@` operator calls this function.

    Args:
      a: a tensor of a float, complex, int32/int64 or unsigned type, rank >= 2.
      b: a tensor of the same dtype, rank >= 2.
      transpose_a: if true, `a` is transposed before the product.
      transpose_b: if true, `b` is transposed before the product.
      adjoint_a: if true, `a` is conjugated and transposed before the product.
      adjoint_b: if true, `b` is conjugated and transposed before the product.
      a_is_sparse: a hint TF uses to pick a sparse algorithm; accepted and ignored.
      b_is_sparse: as `a_is_sparse`.
      output_type: the output dtype; only None or the inputs' dtype is supported.
      grad_a: recorded on the op as TF does (marks gradient MatMuls); no effect here.
      grad_b: as `grad_a`.
      name: a name for the operation (default "MatMul").

    Returns:
      A tensor of the inputs' dtype: `[..., m, n]`.

    Raises:
      ValueError: if the inner (or batch) dimensions are statically incompatible, a rank is
        below 2, or both `transpose_x` and `adjoint_x` are set.
      TypeError: if the dtypes differ or are not supported.
    """
    for t, adj, which in ((transpose_a, adjoint_a, "a"), (transpose_b, adjoint_b, "b")):
        if t and adj:
            raise ValueError(f"Only one of `transpose_{which}` and `adjoint_{which}` can be "
                             f"True. Received `transpose_{which}`={t}, "
                             f"`adjoint_{which}`={adj}.")
    del a_is_sparse, b_is_sparse  # hints for a sparse algorithm NumPy does not have
    with name_scope(name, "MatMul") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, preferred_dtype=a.dtype.base_dtype, name="b")
        return _matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b, output_type,
                       grad_a, grad_b, scope)


def _matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b, output_type, grad_a, grad_b,
            name):
    """Picks MatMul or BatchMatMulV2 for `matmul` and adds it named exactly `name`."""
    if output_type is not None and _dtypes.as_dtype(output_type) != a.dtype.base_dtype:
        raise NotImplementedError("matmul with an output_type other than the inputs' dtype "
                                  "(BatchMatMulV3) is not supported")
    ranks = (a.shape.ndims, b.shape.ndims)
    if None in ranks or max(ranks) > 2:
        # BatchMatMulV2 has adjoints only: a transpose is the adjoint of the conjugate.
        if transpose_a:
            a, adjoint_a = _conj(a), True
        if transpose_b:
            b, adjoint_b = _conj(b), True
        attrs = {"adj_x": adjoint_a, "adj_y": adjoint_b, "grad_x": grad_a, "grad_y": grad_b}
        op_def = BatchMatMulV2
    else:
        # MatMul has transposes only: an adjoint is the transpose of the conjugate.
        if adjoint_a:
            a, transpose_a = _conj(a), True
        if adjoint_b:
            b, transpose_b = _conj(b), True
        attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b, "grad_a": grad_a,
                 "grad_b": grad_b}
        op_def = MatMul
    return apply_op(op_def, [a, b], attrs, name=name)


@MatMul.gradient
def _matmul_grad(op, grad):
    """For y = op(a) op(b): da and db per transpose combination, each a MatMul marked
    grad_a/grad_b like TensorFlow's (complex operands enter conjugated)."""
    a, b = (_conj(t) for t in op.inputs)
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not t_a and not t_b:    # y = a b:      da = g b^T,    db = a^T g
        return [matmul(grad, b, transpose_b=True, grad_a=True),
                matmul(a, grad, transpose_a=True, grad_b=True)]
    if not t_a and t_b:        # y = a b^T:    da = g b,      db = g^T a
        return [matmul(grad, b, grad_a=True),
                matmul(grad, a, transpose_a=True, grad_b=True)]
    if t_a and not t_b:        # y = a^T b:    da = b g^T,    db = a g
        return [matmul(b, grad, transpose_b=True, grad_a=True),
                matmul(a, grad, grad_b=True)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True, grad_a=True),  # da = b^T g^T
            matmul(grad, a, transpose_a=True, transpose_b=True, grad_b=True)]  # db = g^T a^T


@BatchMatMulV2.gradient
def _batch_matmul_grad(op, grad):
    """MatMul's four cases with adjoints, each gradient summed over the batch dimensions its
    operand was broadcast along."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x and not adj_y:
        gx = matmul(grad, y, adjoint_b=True, grad_a=True)
        gy = matmul(x, grad, adjoint_a=True, grad_b=True)
    elif not adj_x:
        gx = matmul(grad, y, grad_a=True)
        gy = matmul(grad, x, adjoint_a=True, grad_b=True)
    elif not adj_y:
        gx = matmul(y, grad, adjoint_b=True, grad_a=True)
        gy = matmul(x, grad, grad_b=True)
    else:
        gx = matmul(y, grad, adjoint_a=True, adjoint_b=True, grad_a=True)
        gy = matmul(grad, x, adjoint_a=True, adjoint_b=True, grad_b=True)
    return [reduce_to_shape_of(gx, x), reduce_to_shape_of(gy, y)]


def _matmul_operator(x, y):
    return matmul(x, y, name="matmul")


def _rmatmul_operator(y, x):
    """`x @ y` where only `y` is a Tensor: `x` converts with `y`'s dtype."""
    return matmul(convert_to_tensor(x, dtype=y.dtype.base_dtype), y, name="matmul")


Tensor._override_operator("__matmul__", _matmul_operator)
Tensor._override_operator("__rmatmul__", _rmatmul_operator)


# --- Einsum ------------------------------------------------------------------------------------

def _tokens(term: str) -> list[str]:
    """One subscript term as a list of labels, with "..." as the single token "."."""
    tokens = list(term.replace("...", "."))
    if tokens.count(".") > 1 or any(t != "." and not t.isalpha() for t in tokens):
        raise ValueError(f"Invalid einsum subscripts {term!r}: labels are letters, with at "
                         f"most one '...'")
    return tokens


def _parse_equation(equation: str):
    """(input terms, output term or None when implicit), each a token list."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"Subscripts have incorrect format: {equation}")
    lhs, arrow, rhs = eq.partition("->")
    return [_tokens(t) for t in lhs.split(",")], (_tokens(rhs) if arrow else None)


def _resolve_equation(equation: str, num_inputs: int) -> str:
    """The explicit, validated form of `equation`: "ij,jk" becomes "ij,jk->ik"."""
    ins, out = _parse_equation(equation)
    if len(ins) != num_inputs:
        raise ValueError(f'Got {num_inputs} inputs for equation "{equation}", expecting '
                         f"{len(ins)}")
    labels = [t for term in ins for t in term if t != "."]
    if out is None:
        out = (["."] if any("." in term for term in ins) else []) + sorted(
            t for t in set(labels) if labels.count(t) == 1)
    for t in out:
        if t != "." and t not in labels:
            raise ValueError(f"Output subscripts contain the label {t} not present in the "
                             "input subscripts.")
        if out.count(t) > 1:
            raise ValueError("Output subscripts contain a label appearing more than once: "
                             f"{equation}")
    spell = lambda term: "".join(term).replace(".", "...")  # noqa: E731
    return ",".join(spell(term) for term in ins) + "->" + spell(out)


def _einsum_shape(ctx):
    """Each label's dimension agrees across inputs; "..." dimensions broadcast."""
    ins, out = _parse_equation(ctx.attrs["equation"])
    if len(ins) != len(ctx.inputs):
        raise ValueError(f"Expected {len(ins)} inputs but got {len(ctx.inputs)}")
    dims: dict[str, int | None] = {}
    ellipsis = _ts.TensorShape([])
    for i, (term, shape) in enumerate(zip(ins, ctx.input_shapes)):
        has_ellipsis = "." in term
        if shape.ndims is None:
            if has_ellipsis:
                ellipsis = _ts.unknown_shape()
            continue
        values, labels = shape.as_list(), term
        n_labels = len(term) - has_ellipsis
        if len(values) < n_labels or (not has_ellipsis and len(values) != n_labels):
            raise ValueError(f"Input {i} has rank {len(values)} but its einsum subscripts "
                             f"{''.join(term)!r} name {n_labels} dimensions")
        if has_ellipsis:
            at, n = term.index("."), len(values) - n_labels
            ellipsis = shape_fns.broadcast_shapes(ellipsis, _ts.TensorShape(values[at:at + n]))
            values, labels = values[:at] + values[at + n:], term[:at] + term[at + 1:]
        for label, d in zip(labels, values):
            known = dims.get(label)
            if known is None:
                dims[label] = d
            elif d is not None and d != known:
                raise ValueError(f"Dimensions must be equal, but are {known} and {d}")
    if "." not in out:
        if ellipsis.ndims and any(d != 1 for d in ellipsis.as_list()):
            raise ValueError("einsum: the inputs' '...' dimensions must appear in the output")
        return _ts.TensorShape([dims.get(t) for t in out])
    if ellipsis.ndims is None:
        return _ts.unknown_shape()
    at = out.index(".")
    return _ts.TensorShape([dims.get(t) for t in out[:at]] + ellipsis.as_list()
                           + [dims.get(t) for t in out[at + 1:]])


Einsum = define_op("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
                   attrs=[Attr("equation", "string"), TypeAttr("T", _dtypes.NUMERIC)],
                   shape_fn=_einsum_shape)


def einsum(equation, *inputs, **kwargs):
    """Tensor contraction in Einstein summation notation (TF1's tf.einsum).

    `einsum("ij,jk->ik", a, b)` is a matrix product, `einsum("bij,bjk->bik", a, b)` a batched
    one, `einsum("ii", m)` a trace, `einsum("...ij->...ji", x)` a transpose of the last two
    axes. Without `->` the output holds the labels used once, in alphabetical order (after the
    broadcast `...` dimensions). Labels name equal dimensions; `...` dimensions broadcast.

    Args:
      equation: the subscripts, e.g. "ij,jk->ik".
      *inputs: the tensors, one per comma-separated term, all of one numeric dtype.
      **kwargs: `name` (default scope "einsum", op "Einsum"); `optimize` is accepted and
        ignored (the kernel always picks a contraction order).

    Returns:
      The contracted tensor.

    Raises:
      ValueError: for a malformed equation, a wrong number of inputs or statically
        incompatible dimensions.
      TypeError: for unknown keyword arguments.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for this function: "
                        f"{', '.join(sorted(kwargs))}. Expected: name, optimize")
    equation = _resolve_equation(equation, len(inputs))
    with name_scope(name, "einsum"):
        return apply_op(Einsum, [list(inputs)], {"equation": equation}, name="Einsum")


def _spell(term) -> str:
    return "".join(term).replace(".", "...")


def _einsum_op(terms, out, operands) -> Tensor:
    return apply_op(Einsum, [list(operands)], {
        "equation": ",".join(_spell(t) for t in terms) + "->" + _spell(out)})


def _dim(x: Tensor, term, label):
    """The size of `label`'s (first) dimension of x: an int if static, else a scalar tensor."""
    at = term.index(label)
    if "." in term and at > term.index("."):
        at -= len(term)  # after the ellipsis: counted from the end
    rank = x.shape.ndims
    if rank is not None and x.shape._dims[at % rank] is not None:
        return x.shape._dims[at % rank]
    return tf_op("StridedSlice", [tf_op("Shape", [x]), [at], [at + 1], [1]],
                 {"shrink_axis_mask": 1})


def _ones(d, dtype) -> Tensor:
    """A vector of d ones (a constant when d is static)."""
    if isinstance(d, int):
        return constant(np.ones(d, dtype.as_numpy_dtype), dtype=dtype)
    return tf_op("Fill", [tf_op("Reshape", [d, [1]]), constant(1, dtype=dtype)])


def _eye(d, dtype) -> Tensor:
    """The d x d identity matrix (a constant when d is static)."""
    if isinstance(d, int):
        return constant(np.eye(d, dtype=dtype.as_numpy_dtype), dtype=dtype)
    positions = tf_op("Range", [0, d, 1])
    eye = tf_op("Equal", [tf_op("Reshape", [positions, [-1, 1]]),
                          tf_op("Reshape", [positions, [1, -1]])])
    return tf_op("Cast", [eye], {"DstT": dtype})


def _sum_leading_ellipsis(g: Tensor, n_kept: int, x: Tensor, term) -> Tensor:
    """g = [E_full..., kept...] summed to [E_x..., kept...], where E_x are x's "..."
    dimensions (none if its term has no ellipsis) and E_full their broadcast with the other
    operands'. Static shapes give static axes; otherwise they are computed at run time."""
    from tensorweave.ops.broadcast_grad_ops import broadcast_gradient_args, reduction_axes
    from tensorweave.ops.reduction_ops import reduce_sum
    g_rank, x_rank = g.shape.ndims, x.shape.ndims
    n_full = g_rank - n_kept if g_rank is not None else tf_op("Sub", [tf_op("Rank", [g]), n_kept])
    if "." not in term:  # x has no "..." dimensions: sum them all
        if isinstance(n_full, int):
            return reduce_sum(g, list(range(n_full))) if n_full else g
        return reduce_sum(g, tf_op("Range", [0, n_full, 1]))
    at, n_after = term.index("."), len(term) - 1 - term.index(".")
    if g_rank is not None and x_rank is not None:
        e_full = g.shape.as_list()[:n_full]
        e_x = x.shape.as_list()[at:x_rank - n_after]
        target = e_x + g.shape.as_list()[n_full:]
        if None not in e_full + e_x:
            axes, _ = reduction_axes(e_x, e_full)
            g = reduce_sum(g, axes) if axes else g
            if None not in target:
                return g if g.shape.as_list() == target else tf_op("Reshape", [g, _int32(target)])
    # Run time: E_x = shape(x)[at:rank(x) - n_after], E_full = shape(g)[:n_full] (after any
    # static reduction above, the broadcast axes left are none).
    n_full = tf_op("Sub", [tf_op("Rank", [g]), n_kept])
    g_shape = tf_op("Shape", [g])
    stop = tf_op("Reshape", [tf_op("Sub", [tf_op("Rank", [x]), n_after]), [1]])
    e_x = tf_op("StridedSlice", [tf_op("Shape", [x]), [at], stop, [1]])
    e_full = tf_op("StridedSlice", [g_shape, [0], tf_op("Reshape", [n_full, [1]]), [1]])
    kept_dims = tf_op("StridedSlice", [g_shape, tf_op("Reshape", [n_full, [1]]), [0], [1]],
                      {"end_mask": 1})
    axes, _ = broadcast_gradient_args(e_x, e_full)
    return tf_op("Reshape", [reduce_sum(g, axes), tf_op("ConcatV2", [[e_x, kept_dims], 0])])


@Einsum.gradient
def _einsum_grad(op, grad):
    """The gradient of each input as another einsum, in three steps:

    1. contract the output gradient with the other inputs onto the input's labels that appear
       anywhere else ("ij,jk->ik" gives dA = einsum("ik,jk->ij", g, B)), keeping any "..."
       dimensions in front;
    2. sum those "..." dimensions down to the input's own (they were broadcast, or the input
       has none);
    3. restore the labels of the input that appear nowhere else (multiplying by ones: they
       were summed) and its repeated labels (multiplying by an identity: a trace's gradient
       lives on the diagonal), each repeat spelled with a fresh label.
    Complex inputs enter conjugated."""
    inputs = list(op.inputs)
    ins, out = _parse_equation(_resolve_equation(op.attrs["equation"], len(inputs)))
    operands = [_conj(t) for t in inputs]
    used = {t for term in ins + [out] for t in term}
    fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                 if c not in used)
    grads = []
    for i, (term, x) in enumerate(zip(ins, inputs)):
        others = [(t, v) for j, (t, v) in enumerate(zip(ins, operands)) if j != i]
        elsewhere = set(out).union(*(set(t) for t, _ in others))
        labels = list(dict.fromkeys(t for t in term if t != "."))
        kept = [t for t in labels if t in elsewhere]
        lonely = [t for t in labels if t not in elsewhere]
        ellipsis = "." in out or any("." in t for t, _ in others)
        target = (["."] if ellipsis else []) + kept
        if others or target != out:
            g = _einsum_op([out] + [t for t, _ in others], target, [grad] + [v for _, v in others])
        else:
            g = grad
        if ellipsis:
            g = _sum_leading_ellipsis(g, len(kept), x, term)
        # Step 3: from [E_x..., kept...] to x's own layout.
        g_term = (["."] if "." in term else []) + kept
        x_term, seen, terms, extra = [], set(), [g_term], []
        dtype = x.dtype.base_dtype
        for t in term:
            if t == "." or t not in seen:
                x_term.append(t)
                seen.add(t)
                continue
            copy = next(fresh)
            x_term.append(copy)
            terms.append([t, copy])
            extra.append(_eye(_dim(x, term, t), dtype))
        for t in lonely:
            if term.count(t) == 1:  # a repeated one is restored by its identity matrix
                terms.append([t])
                extra.append(_ones(_dim(x, term, t), dtype))
        if extra or x_term != g_term:
            g = _einsum_op(terms, x_term, [g] + extra)
        grads.append(g)
    return grads


# --- tensordot ---------------------------------------------------------------------------------

def _tensordot_axes(a: Tensor, axes):
    """The contracted axes of `a` and `b` as two lists of ints (TF's _tensordot_axes); an int
    N means the last N axes of `a`, spelled -N..-1 when the rank of `a` is unknown."""
    if isinstance(axes, Tensor):
        from tensorweave.framework.static_value import static_value
        value = static_value(axes)
        if value is None:
            raise NotImplementedError("tensordot with axes computed at run time is not "
                                      "supported; pass an int or lists of ints")
        axes = value.tolist()
    if isinstance(axes, np.ndarray):
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"'axes' must be at least 0, but got {n}.")
        rank = a.shape.ndims
        if rank is not None and n > rank:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a}.")
        a_axes = list(range(rank - n, rank)) if rank is not None else list(range(-n, 0))
        return a_axes, list(range(n))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"'axes' must be an integer or have length 2, but got {axes!r}.")
    a_axes, b_axes = axes
    if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
        a_axes, b_axes = [a_axes], [b_axes]
    a_axes, b_axes = [int(i) for i in a_axes], [int(i) for i in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} "
                         f"!= {len(b_axes)}.")
    return a_axes, b_axes


def _int32(values) -> Tensor:
    return constant(np.asarray(values, np.int32).reshape(-1), dtype=_dtypes.int32)


def _gather_dims(x: Tensor, positions) -> Tensor:
    """The run-time sizes of `x`'s dimensions at `positions` (an int32 vector)."""
    return tf_op("GatherV2", [tf_op("Shape", [x]), positions, 0])


def _split_axes(x: Tensor, axes: list[int]):
    """(contracted, free) axes of `x`: Python lists when its rank is known (checked to be in
    range), else int32 vectors computed at run time."""
    rank = x.shape.ndims
    if rank is None:
        return split_axes(x, _int32(axes))
    for i in axes:
        if not -rank <= i < rank:
            raise ValueError(f"tensordot axis {i} is out of range for a tensor of rank {rank}")
    return split_axes(x, axes)


def _tensordot_reshape(x: Tensor, axes: list[int], flipped: bool = False):
    """`x` transposed and reshaped to a matrix whose rows (columns if `flipped`) run over the
    contracted axes. Returns it, its free dimensions as a static list (None if the rank is
    unknown) and a function building them as a run-time vector."""
    axes, free = _split_axes(x, axes)
    if isinstance(free, list):
        dims = x.shape.as_list()
        perm = axes + free if flipped else free + axes
        if perm != list(range(len(dims))):
            x = tf_op("Transpose", [x, perm])
        # Positions of the free and contracted dimensions in the transposed x.
        if flipped:
            axes_at, free_at = range(len(axes)), range(len(axes), len(dims))
        else:
            free_at, axes_at = range(len(free)), range(len(free), len(dims))
        free_static = [dims[i] for i in free]
        free_size = _size(free_static, x, axes_at=free_at)
        axes_size = _size([dims[i] for i in axes], x, axes_at=axes_at)
        transposed = x
        free_vector = lambda: _gather_dims(transposed, _int32(free_at))  # noqa: E731
    else:
        free_static = None
        free_dims, axes_dims = _gather_dims(x, free), _gather_dims(x, axes)
        perm = tf_op("ConcatV2", [[axes, free] if flipped else [free, axes], 0])
        x = tf_op("Transpose", [x, perm])
        free_size, axes_size = reduce_prod(free_dims), reduce_prod(axes_dims)
        free_vector = lambda: free_dims  # noqa: E731
    new_shape = [axes_size, free_size] if flipped else [free_size, axes_size]
    if x.shape.ndims is None or x.shape.as_list() != new_shape:
        if any(isinstance(d, Tensor) for d in new_shape):
            new_shape = tf_op("Pack", [new_shape], {"axis": 0})
        x = tf_op("Reshape", [x, new_shape])
    return x, free_static, free_vector


def _size(dims: list, x: Tensor, axes_at):
    """The product of `dims` as an int when all are known, else of `x`'s run-time sizes at
    the positions `axes_at`."""
    if all(d is not None for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    return reduce_prod(_gather_dims(x, _int32(axes_at)))


def tensordot(a, b, axes, name=None):
    """Tensor contraction of `a` and `b` over the given axes (TF1's tf.tensordot).

    Built like TensorFlow's: each operand is transposed so its contracted axes are adjacent,
    reshaped to a matrix, multiplied with MatMul, and the product reshaped to the free
    dimensions of `a` followed by those of `b`. Steps that would change nothing are skipped;
    unknown dimensions (and ranks) are read at run time.

    Args:
      a: a tensor of a MatMul dtype.
      b: a tensor of the same dtype.
      axes: an int N (the last N axes of `a` against the first N of `b`), or a pair of lists
        `[a_axes, b_axes]` of equal length (a pair of ints means one axis each).
      name: a name for the operation (default scope "Tensordot").

    Returns:
      A tensor of shape `a_free_dims + b_free_dims`.

    Raises:
      ValueError: for an invalid `axes`, or contracted dimensions that differ statically.
    """
    with name_scope(name, "Tensordot") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_matrix, a_free, a_free_vector = _tensordot_reshape(a, a_axes)
        b_matrix, b_free, b_free_vector = _tensordot_reshape(b, b_axes, flipped=True)
        product = matmul(a_matrix, b_matrix)
        if a_free is not None and b_free is not None:
            out_dims = a_free + b_free
            if product.shape.is_fully_defined() and product.shape.as_list() == out_dims:
                return product
            if sum(d is None for d in out_dims) <= 1:
                target = [-1 if d is None else d for d in out_dims]
            else:
                target = tf_op("ConcatV2", [[a_free_vector(), b_free_vector()], 0])
        else:
            out_dims = None
            target = tf_op("ConcatV2", [[a_free_vector(), b_free_vector()], 0])
        result = tf_op("Reshape", [product, target], name=scope)
        if out_dims is not None:
            result.set_shape(out_dims)
        return result
