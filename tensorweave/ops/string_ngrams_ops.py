"""StringNGrams (tf.strings.ngrams): n-grams of the strings along the last axis of a tensor.

The op works on TensorFlow's ragged layout: a flat vector of strings and the row splits that
cut it into sequences; it returns the n-grams of every sequence, flat, with their own splits.
tensorweave has no RaggedTensor, so `ngrams` takes dense tensors only, where every sequence
(every row of the last axis) has the same length and so the same number of n-grams: the result
is dense too, as TensorFlow returns it for dense input (of shape [..., number of n-grams]; a
1-D input gives a 1-D result). The graph holds the StringNGrams op of TensorFlow with the same
attrs; the ops around it that cut the input into rows and reshape the result differ from
TensorFlow's RaggedTensor plumbing. Kernel: kernels/string_ngrams.py. Not differentiable.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import reshape, shape
from tensorweave.ops.reduction_ops import reduce_prod

__all__: list[str] = []   # tf.strings.ngrams only: tensorweave/strings exports it


def _string_ngrams_shape(ctx):
    """A vector of n-grams of unknown length, and splits shaped like the input's."""
    dims_with_rank(ctx.input_shape(0)._dims, 1)
    splits = dims_with_rank(ctx.input_shape(1)._dims, 1)
    return [_ts.unknown_shape(rank=1), _ts.TensorShape(splits)]


StringNGrams = define_op(
    "StringNGrams", inputs=["data: string", "data_splits: Tsplits"],
    outputs=["ngrams: string", "ngrams_splits: Tsplits"],
    attrs=[Attr("separator", "string"), Attr("ngram_widths", "list(int)", minimum=0),
           Attr("left_pad", "string"), Attr("right_pad", "string"), Attr("pad_width", "int"),
           Attr("preserve_short_sequences", "bool"),
           TypeAttr("Tsplits", _dtypes.INDEX, default=_dtypes.int64)],
    shape_fn=_string_ngrams_shape, not_differentiable=True,
    doc="The n-grams of each row of ragged string data, and their row splits.")


def _pads(pad_values, padding_width):
    """(left pad, right pad), checked as TensorFlow checks them."""
    text = (str, bytes)
    if pad_values is None:
        left = right = ""
    elif isinstance(pad_values, (list, tuple)):
        if not isinstance(pad_values[0], text) or not isinstance(pad_values[1], text):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        left, right = pad_values[0], pad_values[1]
    elif isinstance(pad_values, text):
        left = right = pad_values
    else:
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    return left, right


def _row_splits(data):
    """The splits of equal rows along the last axis: [0, n, 2n, ..., rows * n] as int64."""
    dims = shape(data, out_type=_dtypes.int64)
    rows = reduce_prod(dims[:-1])
    return _range(rows + 1, dtype=_dtypes.int64) * dims[-1]


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """Creates the n-grams of `data`: windows of adjacent strings along its last axis, joined.

    For example, `tf.strings.ngrams(["A", "B", "C", "D"], 2)` is `["A B", "B C", "C D"]`, and
    with `pad_values="#"` and width 3, each sequence is first padded with two "#" on each side:
    `["# # A", "# A B", "A B C", "B C D", "C D #", "D # #"]`.

    Unlike TensorFlow's, this function takes dense tensors only (tensorweave has no
    RaggedTensor). Every sequence then has the same length, and the result is dense, as
    TensorFlow returns it for dense input.

    Args:
      data: A string Tensor of known rank >= 1; its last axis holds the sequences.
      ngram_width: A positive int, or a list or tuple of them: the n-gram widths, each
        producing its n-grams in turn.
      separator: The string put between the elements of an n-gram.
      pad_values: None (no padding), a string padding both ends, or a pair (left, right).
      padding_width: How many pad values to add on each side (at most width - 1 are used);
        by default width - 1. Requires `pad_values`.
      preserve_short_sequences: If true, a non-empty sequence too short for any n-gram gives
        one n-gram of the whole (padded) sequence.
      name: A name scope (default "StringNGrams").

    Returns:
      A string Tensor of shape `data.shape[:-1] + [number of n-grams per sequence]`.

    Raises:
      TypeError: if `pad_values` is not a string, a pair of strings or None.
      ValueError: if `padding_width` is below 1 or given without `pad_values`, a width is below
        1, or the rank of `data` is 0 or unknown.
    """
    with name_scope(name, "StringNGrams", [data]):
        left_pad, right_pad = _pads(pad_values, padding_width)
        data = convert_to_tensor(data, name="data", dtype=_dtypes.string)
        rank = data.shape.ndims
        if rank is None:
            raise ValueError("Rank of data must be known.")
        if rank == 0:
            raise ValueError("Data must have rank>0")
        if pad_values is None:
            padding_width = 0
        elif padding_width is None:
            padding_width = -1   # the op's "width - 1 for each width"
        widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
        if any(width < 1 for width in widths):
            raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
        dense_shape = concat([shape(data)[:-1], [-1]], axis=0) if rank > 1 else None
        with name_scope(None, "RaggedFromTensor"):    # the rows, in the op's ragged layout
            flat = reshape(data, [-1]) if rank > 1 else data
            splits = _row_splits(data)
        grams, _ = apply_op(StringNGrams, [flat, splits], {
            "separator": separator, "ngram_widths": widths, "left_pad": left_pad,
            "right_pad": right_pad, "pad_width": padding_width,
            "preserve_short_sequences": preserve_short_sequences})
        return grams if dense_shape is None else reshape(grams, dense_shape)
