"""Logging and assertion kernels, Timestamp's clock, and TensorFlow's two text forms of tensors.

`summarize_v1` is the style of Assert and Print: the first `limit` elements in row-major order,
nested rows in brackets without separators (`[[0 1 2...]...]`), "..." where elements were cut,
strings C-escaped (`a\\"b`).
`summarize_v2` is the style of tf.print (StringFormat): NumPy-like, the first and last `limit`
entries of every dimension around a "...", rows on separate indented lines, strings quoted.
Floats print with the fewest of 6/9 (float32) or 15/17 (float64) significant digits that read
back exactly, as TensorFlow's C++ runtime prints them.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel

# --- element formatting -----------------------------------------------------------------------
_ESCAPES = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}


def _c_escape(raw: bytes) -> str:
    """C-style escaping that keeps UTF-8 (bytes >= 0x80) intact."""
    out = bytearray()
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b].encode()
        elif b < 0x20 or b == 0x7F:
            out += f"\\{b:03o}".encode()
        else:
            out.append(b)
    return out.decode("utf-8", errors="replace")


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _float_text(v, short: int, full: int, np_type) -> str:
    text = f"{v:.{short}g}"
    if np.isfinite(v) and np_type(text) != v:
        text = f"{v:.{full}g}"
    return text


def _element_formatter(dtype: np.dtype, quote: bool):
    """A function turning one element of `dtype` into TensorFlow's text for it."""
    kind = dtype.kind
    if kind == "b":
        return lambda v: "1" if v else "0"
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "f":
        if dtype == np.float64:
            return lambda v: _float_text(float(v), 15, 17, np.float64)
        return lambda v: _float_text(np.float32(v), 6, 9, np.float32)
    if kind in "OSU":
        # Both formats C-escape strings (Assert's message shows a quote as \"); tf.print's
        # also quotes them.
        if quote:
            return lambda v: '"' + _c_escape(_as_bytes(v)) + '"'
        return lambda v: _c_escape(_as_bytes(v))
    return None  # complex and other types: see _unprintable


def _unprintable(total: int, limit: int) -> str:
    """TensorFlow's text for element types it cannot print: '?' per shown element, flat."""
    return " ".join(["?"] * limit) + ("..." if total > limit else "")


def summarize_v1(value, limit: int) -> str:
    """Assert/Print text of `value` (without the outer brackets the callers add)."""
    arr = np.asarray(value)
    total = arr.size
    limit = total if limit < 0 else min(limit, total)
    fmt = _element_formatter(arr.dtype, quote=False)
    if fmt is None:
        return _unprintable(total, limit)
    flat = arr.reshape(-1)
    texts = [fmt(flat[i]) for i in range(limit)]
    suffix = "..." if total > limit else ""
    if arr.ndim == 0:
        return " ".join(texts) + suffix
    shape, last = arr.shape, arr.ndim - 1
    pos = 0

    def walk(d: int) -> str:
        nonlocal pos
        if d == last:
            take = min(shape[d], limit - pos)
            row = " ".join(texts[pos:pos + take])
            pos += take
            cut = take < shape[d] and d != 0
            return row + ("..." if cut else "")
        parts = []
        for _ in range(shape[d]):
            if pos >= limit:
                break
            parts.append("[" + walk(d + 1) + "]")
        return "".join(parts)

    return walk(0) + suffix


def summarize_v2(value, summarize: int) -> str:
    """tf.print text of `value`: `summarize` leading and trailing entries per dimension."""
    arr = np.asarray(value)
    fmt = _element_formatter(arr.dtype, quote=True)
    ends = arr.size if summarize < 0 else min(summarize, arr.size)
    if fmt is None:
        text = _unprintable(arr.size, ends)
        return text if arr.ndim == 0 else f"[{text}]"
    if arr.ndim == 0:
        return fmt(arr[()])
    last = arr.ndim - 1

    def walk(sub, d: int) -> str:
        n = sub.shape[0]
        # Blocks of higher dimensions are set apart by more blank lines (as numpy does): one
        # newline per dimension below this one, then the indent.
        spacing = " " if d == last else "\n" * (last - d) + " " * (d + 1)
        item = fmt if d == last else (lambda s: walk(s, d + 1))
        out = ["["]
        for i in range(min(ends, n)):
            if i:
                out.append(spacing)
            out.append(item(sub[i]))
        if n > 2 * ends:
            out.append(spacing + "...")
        for i in range(max(ends, n - ends), n):
            out.append(spacing)
            out.append(item(sub[i]))
        out.append("]")
        return "".join(out)

    return walk(arr, 0)


# --- kernels ----------------------------------------------------------------------------------
@kernel("Assert")
class AssertKernel:
    """Raises InvalidArgumentError listing the summarized data when the condition is false."""

    def __init__(self, ctx):
        self.summarize = ctx.attrs["summarize"]

    def compute(self, ctx, condition, *data):
        if np.ndim(condition) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"In[0] should be a scalar: {list(np.shape(condition))}")
        if not condition:
            shown = " ".join(f"[{summarize_v1(d, self.summarize)}]" for d in data)
            raise errors.InvalidArgumentError(None, None, f"assertion failed: {shown}")


@kernel("CheckNumerics", returns_view=True)
class CheckNumericsKernel:
    """Passes its input through; InvalidArgumentError naming the message on NaN or Inf."""

    signed = False   # CheckNumericsV2 tells -Inf from +Inf

    def __init__(self, ctx):
        self.message = ctx.attrs["message"]

    def compute(self, ctx, x):
        if np.isfinite(x).all():
            return x
        raise errors.InvalidArgumentError(
            None, None, f"{self.message} : Tensor had {self._found(x)} values")

    def _found(self, x) -> str:
        if self.signed:
            kinds = [kind for kind, present in (
                ("-Inf", np.isneginf(x).any()), ("+Inf", np.isposinf(x).any()),
                ("NaN", np.isnan(x).any())) if present]
        else:
            kinds = [kind for kind, present in (("Inf", np.isinf(x).any()),
                                                ("NaN", np.isnan(x).any())) if present]
        if len(kinds) < 3:
            return " and ".join(kinds)
        return ", ".join(kinds[:-1]) + ", and " + kinds[-1]   # TensorFlow's words


@kernel("CheckNumericsV2", returns_view=True)
class CheckNumericsV2Kernel(CheckNumericsKernel):
    signed = True


@kernel("Print", returns_view=True)
class PrintKernel:
    """Identity that writes message + summarized data to stderr, the first `first_n` times
    (every time if first_n < 0); the count lives in the kernel, one per session and node."""

    def __init__(self, ctx):
        self.message = ctx.attrs["message"]
        self.first_n = ctx.attrs["first_n"]
        self.summarize = ctx.attrs["summarize"]
        self.calls = 0

    def compute(self, ctx, x, *data):
        if self.first_n >= 0:
            if self.calls >= self.first_n:
                return x
            self.calls += 1
        text = "".join(f"[{summarize_v1(d, self.summarize)}]" for d in data)
        sys.stderr.write(f"{self.message}{text}\n")
        sys.stderr.flush()
        return x


@kernel("StringFormat")
class StringFormatKernel:
    """Fills the template's placeholders with the tf.print text of each input."""

    def __init__(self, ctx):
        self.pieces = ctx.attrs["template"].split(ctx.attrs["placeholder"])
        self.summarize = ctx.attrs["summarize"]
        if len(self.pieces) - 1 != len(ctx.input_dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"num placeholders in template and num inputs must match: "
                f"{len(self.pieces) - 1} vs. {len(ctx.input_dtypes)}")

    def compute(self, ctx, *inputs):
        out = [self.pieces[0]]
        for value, piece in zip(inputs, self.pieces[1:]):
            out.append(summarize_v2(value, self.summarize))
            out.append(piece)
        return np.array("".join(out).encode(), dtype=object)


def _write_stream(name: str):
    """The function that emits a PrintV2 message for `output_stream` = name."""
    if name in ("stdout", "stderr"):
        def write(text):
            stream = getattr(sys, name)  # looked up per call: redirection is honoured
            stream.write(text)
            stream.flush()
        return write
    if name.startswith("log(") and name.endswith(")"):
        from tensorweave.platform import tf_logging
        log = {"info": tf_logging.info, "warning": tf_logging.warning,
               "error": tf_logging.error}.get(name[4:-1])
        if log is not None:
            return lambda text: log(text[:-1] if text.endswith("\n") else text)
    if name.startswith("file://"):
        path = name[len("file://"):]

        def append(text):
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
        return append
    raise errors.InvalidArgumentError(None, None, f"Unknown output stream: {name}")


@kernel("PrintV2")
class PrintV2Kernel:
    def __init__(self, ctx):
        self.write = _write_stream(ctx.attrs["output_stream"])
        self.end = ctx.attrs["end"]

    def compute(self, ctx, message):
        message = np.asarray(message)
        if message.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, f"Input is expected to be scalar, but got shape "
                f"{list(message.shape)}")
        self.write(_as_bytes(message[()]).decode("utf-8", errors="replace") + self.end)


@kernel("Timestamp")
def _timestamp(ctx):
    """Whole microseconds since the epoch, in seconds: TensorFlow's EnvTime::NowMicros() / 1e6."""
    return np.float64(time.time_ns() // 1000) / 1e6
