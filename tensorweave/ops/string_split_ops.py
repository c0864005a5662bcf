"""Splitting strings into SparseTensors of tokens: StringSplit and StringSplitV2.

`tf.string_split` (StringSplit) splits each string of a vector on a set of one-byte
delimiters; `tf.strings.split` (StringSplitV2) follows Python's str.split (a whole separator,
or runs of whitespace) with `maxsplit`, and takes inputs of any rank: a scalar is split as a
vector of one, a higher-rank tensor is split flat and each token's row index unravelled into
the input's dimensions (TensorFlow gets the same SparseTensor through RaggedTensors, which
tensorweave does not have: `result_type="RaggedTensor"` is not supported).

Kernels (and the exact token rules) are in kernels/string_split.py. Neither op is
differentiable: strings in, strings and indices out.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import shape_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["string_split"]  # strings_split is tf.strings.split (tensorweave/strings)

_OUTPUTS = ["indices: int64", "values: string", "shape: int64"]


def _split_shape(ctx):
    """A vector of strings and a scalar separator give indices [?, 2], values [?], shape [2]."""
    shape_with_rank(ctx.input_shape(0), 1)
    shape_with_rank(ctx.input_shape(1), 0)
    return [_ts.TensorShape([None, 2]), _ts.TensorShape([None]), _ts.TensorShape([2])]


StringSplit = define_op(
    "StringSplit", inputs=["input: string", "delimiter: string"], outputs=_OUTPUTS,
    attrs=[Attr("skip_empty", "bool", True)], shape_fn=_split_shape, not_differentiable=True,
    doc="Splits each string on any byte of `delimiter` into a SparseTensor of tokens.")

StringSplitV2 = define_op(
    "StringSplitV2", inputs=["input: string", "sep: string"], outputs=_OUTPUTS,
    attrs=[Attr("maxsplit", "int", -1)], shape_fn=_split_shape, not_differentiable=True,
    doc="Splits each string on `sep` (or whitespace) into a SparseTensor of tokens.")


def _check_result_type(result_type: str) -> None:
    if result_type == "RaggedTensor":
        raise NotImplementedError("result_type='RaggedTensor': tensorweave has no "
                                  "RaggedTensor; use the default 'SparseTensor'.")
    if result_type != "SparseTensor":
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def _one_of(name, value, alias_name, alias):
    """`value`, or its deprecated alias; both given is TensorFlow's ValueError."""
    if alias is None:
        return value
    if value is not None:
        raise ValueError(f"Cannot specify both '{alias_name}' and '{name}'.")
    return alias


def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None):
    """Splits each string of `source` on `sep` into tokens (TF1's tf.string_split).

    Each byte of `sep` is a delimiter; an empty `sep` splits into single bytes (also inside
    multibyte UTF-8 characters). An empty string has no tokens.

    Args:
      source: a 1-D string Tensor.
      sep: a 0-D string, the delimiter bytes (default " ").
      skip_empty: if True, empty tokens are dropped.
      delimiter: deprecated alias of `sep`.
      result_type: "SparseTensor" ("RaggedTensor" is not supported here).
      name: a name for the operation (default scope "StringSplit").

    Returns:
      A SparseTensor of rank 2: indices [n, 2] (row of `source`, position in the row), the
      string tokens, and dense_shape [len(source), most tokens in a row].

    Raises:
      ValueError: if `source` is not 1-D or `sep` not 0-D, for both `sep` and `delimiter`,
        or an unknown `result_type`.
      NotImplementedError: for result_type "RaggedTensor".
    """
    sep = _one_of("sep", sep, "delimiter", delimiter)
    _check_result_type(result_type)
    with name_scope(name, "StringSplit", [source]):
        sep = convert_to_tensor(" " if sep is None else sep, dtype=_dtypes.string)
        source = convert_to_tensor(source, dtype=_dtypes.string)
        parts = apply_op(StringSplit, [source, sep], {"skip_empty": skip_empty},
                         name="StringSplit")
        return SparseTensor(*parts)


def strings_split(input=None, sep=None, maxsplit=-1,  # noqa: A002 - TF's argument name
                  result_type="SparseTensor", source=None, name=None):
    """Splits each string of `input` into tokens (TF1's tf.strings.split).

    With a non-empty `sep`, the whole separator splits and consecutive separators delimit
    empty tokens ("1<>2<><>3" on "<>" gives "1", "2", "", "3"); with `sep` None or "", runs
    of ASCII whitespace split and leading or trailing whitespace gives no empty token.

    Args:
      input: a string Tensor of any rank (unknown rank is taken as 1-D).
      sep: a 0-D string, the separator (default: whitespace).
      maxsplit: if > 0, at most this many splits per string, the rest being the last token;
        0 keeps each string whole.
      result_type: "SparseTensor" ("RaggedTensor" is not supported here).
      source: deprecated alias of `input`.
      name: a name for the operation (default scope "StringSplit").

    Returns:
      A SparseTensor of rank rank(input) + 1 (2 for a scalar): each token's index is the
      index of its string followed by its position; dense_shape is input's shape followed by
      the most tokens of any string.

    Raises:
      ValueError: if `sep` is not 0-D, for both `input` and `source`, or an unknown
        `result_type`.
      NotImplementedError: for result_type "RaggedTensor".
    """
    input = _one_of("input", input, "source", source)  # noqa: A001 - TF's argument name
    _check_result_type(result_type)
    with name_scope(name, "StringSplit", [input]):
        input = convert_to_tensor(input, dtype=_dtypes.string, name="input")  # noqa: A001
        rank = input.shape.ndims
        if rank == 0:
            from tensorweave.ops.array_ops import expand_dims
            input = expand_dims(input, 0)  # noqa: A001
        if rank is None or rank <= 1:
            return _split_vector(input, sep, maxsplit)
        return _split_tensor(input, sep, maxsplit)


def _split_vector(strings, sep, maxsplit) -> SparseTensor:
    sep = convert_to_tensor("" if sep is None else sep, dtype=_dtypes.string)
    parts = apply_op(StringSplitV2, [strings, sep], {"maxsplit": maxsplit},
                     name="StringSplitV2")
    return SparseTensor(*parts)


def _split_tensor(strings, sep, maxsplit) -> SparseTensor:
    """Splits a tensor of rank >= 2 flat, then unravels each token's row into the input's
    indices: index_k = row // prod(shape[k+1:]) % shape[k]. (Dimensions of 0 count as 1 there:
    such an input has no token, and the division must not fail.) As TensorFlow's RaggedTensor
    bounding shape, dense_shape has 0 for every dimension after a dimension of 0."""
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import reshape, shape
    from tensorweave.ops.math_ops import floordiv, floormod, maximum, minimum
    from tensorweave.ops.reduction_ops import cumprod
    dims = shape(strings, out_type=_dtypes.int64)
    flat = _split_vector(reshape(strings, [-1]), sep, maxsplit)
    rows = flat.indices[:, :1]
    divisors = maximum(dims, 1)
    strides = cumprod(divisors, exclusive=True, reverse=True)
    indices = concat([floormod(floordiv(rows, strides), divisors), flat.indices[:, 1:]], axis=1)
    bounded = dims * minimum(cumprod(dims, exclusive=True), 1)
    dense_shape = concat([bounded, flat.dense_shape[1:]], axis=0)
    return SparseTensor(indices, flat.values, dense_shape)
