"""Kernels of the string ops (ops/string_ops.py, ops/string_regex_ops.py).

String tensors are object arrays of bytes; each kernel maps a Python function over the flat
elements and reshapes. Formats and error messages follow TensorFlow's kernels: AsString builds
one printf format when the node is created (Python's % operator has C's semantics), Substr and
StringLength count UTF-8 characters as the bytes that are not continuation bytes, and regular
expressions run with `re` on the UTF-8 text (RE2's rewrite syntax is translated).
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.re2_syntax import python_pattern
from tensorweave.kernels.registry import kernel

_FLOATS = _dtypes.FLOATING
_FILL_FLAGS = " +-0#"


def _flat(strings) -> np.ndarray:
    return np.asarray(strings, dtype=object).reshape(-1)


def _strings(values, shape) -> np.ndarray:
    """An object array of `shape` holding `values` (a flat sequence of bytes)."""
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
    out[:] = values
    return out.reshape(shape)


def _map(fn, strings) -> np.ndarray:
    return _strings([fn(s) for s in _flat(strings)], np.shape(strings))


def _shown(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


# --- AsString ----------------------------------------------------------------------------------
@kernel("AsString")
class AsStringKernel:
    """Every element through one printf-style format built from the attrs, checked in TF's
    order. Unsigned integers use %u (the "+" and " " flags do nothing); strings are padded
    to `width` (and cut to `precision`) only when a width is given, else passed through."""

    def __init__(self, ctx):
        a = ctx.attrs
        dtype = a["T"]
        self.dtype = dtype
        fill, precision, width = a["fill"], a["precision"], max(a["width"], 0)
        self.floating = dtype in _FLOATS or dtype in _dtypes.COMPLEX
        if dtype != _dtypes.string and not self.floating:
            if a["scientific"] or a["shortest"]:
                raise invalid_argument("scientific and shortest format not supported for "
                                       f"datatype {dtype.name}")
            if precision > -1:
                raise invalid_argument(f"precision not supported for datatype {dtype.name}")
        if len(fill) > 1:
            raise invalid_argument("Fill string must be one or fewer characters")
        if a["scientific"] and a["shortest"]:
            raise invalid_argument("Cannot select both scientific and shortest notation")
        if fill and fill not in _FILL_FLAGS:
            raise invalid_argument(f'Fill argument not supported: "{fill}"')
        if dtype == _dtypes.string:
            kind = "s"
        elif self.floating:
            kind = "g" if a["shortest"] else "e" if a["scientific"] else "f"
        else:
            kind = "d"
            if dtype.is_unsigned:
                fill = fill.replace("+", "").replace(" ", "")
        spec = (str(width) if width else "") + (f".{precision}" if precision > -1 else "")
        if kind == "s":
            # A string field only pads (with spaces) or left-aligns: other flags do nothing.
            self.fmt = ("%" + ("-" if fill == "-" else "") + spec + "s").encode()
            self.passthrough = width == 0
        else:
            self.fmt = "%" + fill + spec + kind
        # C pads inf and nan with spaces even with the 0 flag; Python would use zeros.
        self.nonfinite_fmt = "%" + fill.replace("0", "") + spec + kind

    def _float(self, x: float) -> str:
        return (self.fmt if math.isfinite(x) else self.nonfinite_fmt) % x

    def compute(self, ctx, values):
        dtype = self.dtype
        flat = np.asarray(values).reshape(-1)
        if dtype == _dtypes.string:
            if self.passthrough:
                return np.asarray(values, dtype=object).copy()
            texts = [self.fmt % v for v in flat]   # bytes: width counts bytes, as C
        elif dtype == _dtypes.bool:
            texts = [b"true" if v else b"false" for v in flat]
        elif dtype in _dtypes.COMPLEX:
            texts = [f"({self._float(float(v.real))},{self._float(float(v.imag))})".encode()
                     for v in flat]
        elif self.floating:
            texts = [self._float(v).encode() for v in flat.astype(np.float64).tolist()]
        else:
            texts = [(self.fmt % v).encode() for v in flat.tolist()]
        return _strings(texts, np.shape(values))


# --- joins -------------------------------------------------------------------------------------
@kernel("StringJoin")
class StringJoinKernel:
    """Elementwise join; scalar inputs broadcast, the others must share one shape."""

    def __init__(self, ctx):
        sep = ctx.attrs["separator"]
        self.sep = sep.encode() if isinstance(sep, str) else sep

    def compute(self, ctx, *inputs):
        shape = ()
        for value in inputs:
            s = np.shape(value)
            if s == ():
                continue
            if shape and s != shape:
                raise invalid_argument(f"Input shapes do not match: {dims_text(shape)} vs. "
                                       f"{dims_text(s)}")
            shape = s
        columns = [_flat(np.broadcast_to(np.asarray(v, dtype=object), shape)) for v in inputs]
        size = int(np.prod(shape, dtype=np.int64))
        return _strings([self.sep.join(parts) for parts in zip(*columns)] if columns
                        else [b""] * size, shape)


@kernel("ReduceJoin")
class ReduceJoinKernel:
    """Joins along the given axes; the first axis listed varies fastest in the joined order."""

    def __init__(self, ctx):
        sep = ctx.attrs["separator"]
        self.sep = sep.encode() if isinstance(sep, str) else sep
        self.keep = ctx.attrs["keep_dims"]

    def compute(self, ctx, inputs, reduction_indices):
        array = np.asarray(inputs, dtype=object)
        rank = array.ndim
        axes = []
        for axis in np.ravel(reduction_indices).tolist():
            if not -rank <= axis < rank:
                raise errors.OutOfRangeError(
                    None, None, f"Invalid reduction dimension {axis} for input with {rank} "
                    "dimension(s)")
            if axis % rank in axes:
                raise invalid_argument(f"Duplicate reduction dimension {axis}")
            axes.append(axis % rank)
        kept = [i for i in range(rank) if i not in axes]
        out_shape = tuple(array.shape[i] for i in kept)
        n_out = int(np.prod(out_shape, dtype=np.int64))
        n_joined = int(np.prod([array.shape[i] for i in axes], dtype=np.int64))
        rows = np.transpose(array, kept + axes[::-1]).reshape(n_out, n_joined)
        joined = _strings([self.sep.join(row) for row in rows], out_shape)
        if self.keep:
            joined = joined.reshape([1 if i in axes else d for i, d in enumerate(array.shape)])
        return joined


# --- per-string transformations ----------------------------------------------------------------
def _utf8_length(s: bytes) -> int:
    return len(s) - sum(1 for b in s if 0x80 <= b < 0xC0)


@kernel("StringLength")
class StringLengthKernel:
    """Bytes, or UTF-8 characters (bytes that are not continuation bytes)."""

    def __init__(self, ctx):
        self.fn = len if ctx.attrs["unit"] == "BYTE" else _utf8_length

    def compute(self, ctx, strings):
        flat = _flat(strings)
        return np.fromiter((self.fn(s) for s in flat), np.int32, len(flat)).reshape(
            np.shape(strings))


class _CaseKernel:
    """ASCII case mapping with encoding "", Unicode case mapping with "utf-8"."""

    method = ""

    def __init__(self, ctx):
        encoding = ctx.attrs["encoding"]
        if encoding not in ("", "utf-8"):
            raise invalid_argument("only utf-8 or '' (no encoding) is supported, received "
                                   f"{encoding}")
        self.utf8 = encoding == "utf-8"

    def compute(self, ctx, strings):
        method = self.method
        if self.utf8:
            return _map(lambda s: getattr(s.decode("utf-8", "replace"), method)().encode(),
                        strings)
        return _map(lambda s: getattr(s, method)(), strings)   # bytes: ASCII letters only


@kernel("StringLower")
class StringLowerKernel(_CaseKernel):
    method = "lower"


@kernel("StringUpper")
class StringUpperKernel(_CaseKernel):
    method = "upper"


@kernel("StringStrip")
def _string_strip(ctx, strings):
    return _map(bytes.strip, strings)   # ASCII whitespace, like absl::StripAsciiWhitespace


def _forward_chars(s: bytes, at: int, count: int) -> tuple[int, bool]:
    """The byte offset `count` UTF-8 characters after `at` (stopping at the end), and whether
    there were that many: TF's ForwardNUTF8CharPositions (a negative count moves nothing and
    fails)."""
    moved = 0
    while moved < count and at < len(s):
        at += 1
        while at < len(s) and 0x80 <= s[at] < 0xC0:
            at += 1
        moved += 1
    return at, moved == count


def _back_chars(s: bytes, at: int, count: int) -> tuple[int, bool]:
    """`_forward_chars` backwards: TF's BackNUTF8CharPositions."""
    moved = 0
    while moved < count and at > 0:
        at -= 1
        while at > 0 and 0x80 <= s[at] < 0xC0:
            at -= 1
        moved += 1
    return at, moved == count


def _utf8_substr(s: bytes, pos: int, length: int):
    """The substring of `length` characters at character `pos`, or None if `pos` is outside
    `s`. As TF: a negative `length` gives b"" for pos >= 0 and fails for pos < 0."""
    if pos >= 0:
        start, ok = _forward_chars(s, 0, pos)
        end = _forward_chars(s, start, length)[0] if ok else start
        return s[start:end] if ok else None
    end, ok = _back_chars(s, len(s), max(0, -pos - length))
    if ok:
        start, ok = _back_chars(s, end, -pos - max(0, -pos - length))
    return s[start:end] if ok else None


def _byte_substr(s: bytes, pos: int, length: int):
    """The substring of `length` bytes (negative: to the end) at `pos`, or None if `pos` is
    outside `s`."""
    start = pos + len(s) if pos < 0 else pos
    if not 0 <= start <= len(s):
        return None
    return s[start:] if length < 0 else s[start:start + length]


@kernel("Substr")
class SubstrKernel:
    """Substrings, elementwise when `pos` is a scalar or shaped like `input`, else with
    broadcasting, which TensorFlow implements for results of rank 1 and 2 only. Error
    messages are TF's: UTF-8 ones name the flat index (or the row), byte ones the string."""

    def __init__(self, ctx):
        self.utf8 = ctx.attrs["unit"] == "UTF8_CHAR"

    def compute(self, ctx, strings, pos, length):
        in_shape, pos_shape = np.shape(strings), np.shape(pos)
        if pos_shape != np.shape(length):
            raise invalid_argument("pos and len should have the same shape, got: "
                                   f"{dims_text(pos_shape)} vs. {dims_text(np.shape(length))}")
        shape = in_shape
        broadcast = pos_shape not in ((), in_shape)
        if broadcast:
            try:
                shape = np.broadcast_shapes(in_shape, pos_shape)
            except ValueError:
                raise invalid_argument(f"Incompatible shapes: {dims_text(in_shape)} vs. "
                                       f"{dims_text(pos_shape)}") from None
            if len(shape) not in (1, 2):
                raise errors.UnimplementedError(
                    None, None, f"Substr broadcast not implemented for {len(shape)} dimensions")
        strings = np.broadcast_to(np.asarray(strings, dtype=object), shape)
        pos, length = np.broadcast_to(pos, shape), np.broadcast_to(length, shape)
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(*shape):
            s, p = strings[index], int(pos[index])
            part = (_utf8_substr if self.utf8 else _byte_substr)(s, p, int(length[index]))
            if part is None:
                raise invalid_argument(self._out_of_range(s, p, index, shape, broadcast))
            out[index] = part
        return out

    def _out_of_range(self, s: bytes, pos: int, index: tuple, shape, broadcast: bool) -> str:
        if not broadcast:
            where = str(int(np.ravel_multi_index(index, shape)) if shape else 0)
        elif len(index) == 1 or self.utf8:
            where = str(index[0])
        else:
            where = f"({index[0]}, {index[1]})"
        if self.utf8:
            return f"pos {pos} out of range for string at index {where}"
        return f"pos {pos} out of range for string b'{_shown(s)}' at index {where}"


# --- regular expressions -----------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _compile(pattern: str):
    """The pattern, RE2 syntax translated to Python's (re2_syntax.py), compiled once."""
    try:
        return re.compile(python_pattern(pattern))
    except (re.error, ValueError) as e:
        raise invalid_argument(f"Invalid pattern: {pattern}, error: {e}") from None


def _scalar_text(value) -> str:
    item = np.asarray(value, dtype=object).reshape(-1)[0]
    return item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else str(item)


def _decode(s: bytes) -> str:
    return s.decode("utf-8", "surrogateescape")


def _encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _full_match(pattern: str, strings) -> np.ndarray:
    regex = _compile(pattern)
    flat = _flat(strings)
    return np.fromiter((regex.fullmatch(_decode(s)) is not None for s in flat), bool,
                       len(flat)).reshape(np.shape(strings))


@kernel("StaticRegexFullMatch")
class StaticRegexFullMatchKernel:
    def __init__(self, ctx):
        self.pattern = ctx.attrs["pattern"]
        _compile(self.pattern)

    def compute(self, ctx, strings):
        return _full_match(self.pattern, strings)


@kernel("RegexFullMatch")
def _regex_full_match(ctx, strings, pattern):
    return _full_match(_scalar_text(pattern), strings)


def _rewriter(regex, rewrite: str, replace_global: bool):
    """RE2's rewrite string as a function of a match; None if RE2 would reject it, in which
    case RE2 leaves the string unchanged: a group the pattern lacks, or (replacing the first
    match only) a stray backslash. GlobalReplace ignores Rewrite's failure at a stray
    backslash, so each match becomes the rewrite's text before it."""
    parts, i = [], 0
    while i < len(rewrite):
        c = rewrite[i]
        if c != "\\":
            parts.append(c)
            i += 1
            continue
        nxt = rewrite[i + 1:i + 2]
        if nxt.isdigit():
            if int(nxt) > regex.groups:
                return None
            parts.append(int(nxt))
        elif nxt == "\\":
            parts.append("\\")
        elif replace_global:
            break
        else:
            return None
        i += 2
    return lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)


def _replace(pattern: str, rewrite: str, replace_global: bool, strings) -> np.ndarray:
    regex = _compile(pattern)
    fn = _rewriter(regex, rewrite, replace_global)
    if fn is None:
        return np.asarray(strings, dtype=object).copy()
    if not replace_global:
        return _map(lambda s: _encode(regex.sub(fn, _decode(s), count=1)), strings)
    return _map(lambda s: _encode(_global_replace(regex, fn, _decode(s))), strings)


def _global_replace(regex, fn, text: str) -> str:
    """Every match replaced, as RE2::GlobalReplace: an empty match where the previous match
    ended is skipped (Python's re.sub replaces it: "abc", "b*" -> "-a--c-", RE2 "-a-c-")."""
    out, pos, last_end = [], 0, None
    for m in regex.finditer(text):
        start, end = m.span()
        if start == end and start == last_end:
            continue
        out.append(text[pos:start])
        out.append(fn(m))
        pos = last_end = end
    out.append(text[pos:])
    return "".join(out)


@kernel("StaticRegexReplace")
class StaticRegexReplaceKernel:
    def __init__(self, ctx):
        self.pattern = ctx.attrs["pattern"]
        self.rewrite = ctx.attrs["rewrite"]
        self.replace_global = ctx.attrs["replace_global"]
        _compile(self.pattern)

    def compute(self, ctx, strings):
        return _replace(self.pattern, self.rewrite, self.replace_global, strings)


@kernel("RegexReplace")
class RegexReplaceKernel:
    def __init__(self, ctx):
        self.replace_global = ctx.attrs["replace_global"]

    def compute(self, ctx, strings, pattern, rewrite):
        return _replace(_scalar_text(pattern), _scalar_text(rewrite), self.replace_global,
                        strings)


@kernel("UnsortedSegmentJoin")
class UnsortedSegmentJoinKernel:
    """Each segment's strings joined in input order; a segment without rows is b""."""

    def __init__(self, ctx):
        separator = ctx.attrs["separator"]
        self.separator = separator.encode() if isinstance(separator, str) else separator

    def compute(self, ctx, inputs, segment_ids, num_segments):
        ids = np.asarray(segment_ids)
        count = int(num_segments)
        if ids.size and (ids.min() < 0 or ids.max() >= count):
            raise invalid_argument("segment_ids are not allowed to exceed num_segments or to "
                                   "have negative values.")
        rest = inputs.shape[ids.ndim:]
        rows = inputs.reshape((-1,) + rest)
        flat_ids = ids.reshape(-1)
        out = np.full((count,) + rest, b"", dtype=object)
        for segment in np.unique(flat_ids):
            members = rows[flat_ids == segment]
            for index in np.ndindex(*rest):
                out[(segment,) + index] = self.separator.join(
                    members[(slice(None),) + index])
        return out
