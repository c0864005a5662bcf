"""Kernels of StringSplit and StringSplitV2 (ops/string_split_ops.py).

Each splits every string of a vector into tokens and returns the SparseTensor parts: int64
indices [n, 2] (row, position in row), the tokens, and the dense shape [rows, most tokens].
The token rules are TensorFlow's kernels', which are not Python's `split` everywhere:

* StringSplit: an empty string gives no token, even with skip_empty=False; an empty delimiter
  gives one token per byte; a longer delimiter is a set of one-byte delimiters.
* StringSplitV2 (Python's str.split, mostly): a non-empty `sep` splits on the whole separator
  and keeps empty tokens; an empty `sep` splits on runs of ASCII whitespace. `maxsplit` 0
  gives the whole string as one token, and after `maxsplit` whitespace splits the rest (after
  its leading whitespace, possibly empty) is one more token.

Tokens come from a Python split per string (strings are Python bytes here); the SparseTensor
parts are then built with vectorized NumPy.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def _as_bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _check_vector_and_scalar(strings, separator, separator_name: str) -> None:
    """TensorFlow's run-time checks: a vector of strings and a scalar separator."""
    if np.ndim(strings) != 1:
        raise invalid_argument(f"input must be a vector, got shape: {dims_text(np.shape(strings))}")
    if np.ndim(separator) != 0:
        raise invalid_argument(f"{separator_name} must be a scalar, got shape: "
                               f"{dims_text(np.shape(separator))}")


def _sparse_parts(token_lists):
    """(indices, values, dense_shape) of a SparseTensor holding token_lists[i] in row i."""
    counts = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
    total = int(counts.sum())
    rows = np.repeat(np.arange(len(token_lists), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    columns = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    values = np.empty(total, dtype=object)
    values[:] = [token for tokens in token_lists for token in tokens]
    shape = np.array([len(token_lists), counts.max(initial=0)], dtype=np.int64)
    return np.stack([rows, columns], axis=1), values, shape


@functools.lru_cache(maxsize=64)
def _any_byte_of(delimiter: bytes):
    """A regular expression matching any one byte of `delimiter`."""
    return re.compile(b"[" + re.escape(delimiter) + b"]")


def _split_on_chars(text: bytes, delimiter: bytes, skip_empty: bool) -> list:
    """StringSplit's tokens of one string (see the module docstring)."""
    if not text:
        return []
    if not delimiter:
        return [text[i:i + 1] for i in range(len(text))]
    if len(delimiter) == 1:
        tokens = text.split(delimiter)
    else:
        tokens = _any_byte_of(delimiter).split(text)
    return [t for t in tokens if t] if skip_empty else tokens


def _split_v2(text: bytes, sep: bytes, maxsplit: int) -> list:
    """StringSplitV2's tokens of one string (see the module docstring)."""
    if maxsplit == 0:
        return [text]
    if sep:
        return text.split(sep, maxsplit)
    tokens = text.split(None, maxsplit)
    if 0 < maxsplit == len(tokens):  # TF keeps the (empty) rest after the last allowed split
        tokens.append(b"")
    return tokens


class _SplitKernel:
    """Checks the inputs, splits every string with `tokens(text, separator)`, builds the
    SparseTensor parts."""

    separator_name = ""

    def compute(self, ctx, strings, separator):
        _check_vector_and_scalar(strings, separator, self.separator_name)
        separator = _as_bytes(np.asarray(separator, dtype=object).item())
        return _sparse_parts([self.tokens(_as_bytes(s), separator) for s in strings])


@kernel("StringSplit")
class StringSplitKernel(_SplitKernel):
    """Splits each string on any byte of `delimiter`."""

    separator_name = "delimiter"

    def __init__(self, ctx):
        self.skip_empty = ctx.attrs["skip_empty"]

    def tokens(self, text: bytes, delimiter: bytes) -> list:
        return _split_on_chars(text, delimiter, self.skip_empty)


@kernel("StringSplitV2")
class StringSplitV2Kernel(_SplitKernel):
    """Splits each string on `sep` (or whitespace), at most `maxsplit` times."""

    separator_name = "sep"

    def __init__(self, ctx):
        self.maxsplit = ctx.attrs["maxsplit"]

    def tokens(self, text: bytes, sep: bytes) -> list:
        return _split_v2(text, sep, self.maxsplit)
