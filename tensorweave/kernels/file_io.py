"""Kernels of the file and encoding ops (ops/file_io_ops.py): MatchingFiles, WriteFile,
EncodeBase64, DecodeBase64 and DecodeCompressed.

Strings are object arrays of bytes. Base64 is the web-safe alphabet ('-' and '_'), as in
TensorFlow; decoding accepts missing padding and rejects anything else (TF's checks and
messages). `decompress` is shared with the fixed-length record reader's `encoding`.
"""
from __future__ import annotations

import base64
import binascii
import glob
import os
import re
import zlib

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel

# TF's compression_type -> zlib's wbits (GZIP: +16 selects the gzip wrapper).
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS + 16}
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_ZLIB_ERROR = re.compile(r"Error (-?\d+) while decompressing data: (.*)")


def _as_bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _map_strings(fn, strings) -> np.ndarray:
    """`fn` applied to every element of an object array of strings, in its shape."""
    strings = np.asarray(strings, dtype=object)
    out = np.empty(strings.shape, dtype=object)
    out.reshape(-1)[:] = [fn(_as_bytes(s)) for s in strings.reshape(-1)]
    return out


def decompress(data: bytes, kind: str) -> bytes:
    """`data` inflated as a "ZLIB" or "GZIP" stream; DataLossError (TF's message) if broken."""
    try:
        return zlib.decompress(data, _WBITS[kind])
    except zlib.error as e:
        match = _ZLIB_ERROR.match(str(e))
        detail = f"with error {match[1]}: {match[2]}" if match else f": {e}"
        raise errors.DataLossError(None, None, f"inflate() failed {detail}") from None


@kernel("MatchingFiles")
def _matching_files(ctx, pattern):
    """The matches of all the patterns, sorted together as bytes (TF sorts the combined list,
    so [g*, f*] gives f0 f1 g0; a file two patterns match appears twice). TF's glob matches
    dot files too."""
    names = []
    for p in np.asarray(pattern, dtype=object).reshape(-1):
        names.extend(n.encode() for n in glob.glob(_as_bytes(p).decode(), include_hidden=True))
    out = np.empty(len(names), dtype=object)
    out[:] = sorted(names)
    return out


# OSError subclasses -> TF's error codes for file-system failures (anything else: NotFound).
_OS_ERRORS = {PermissionError: errors.PermissionDeniedError,
              NotADirectoryError: errors.FailedPreconditionError,
              IsADirectoryError: errors.FailedPreconditionError}


@kernel("WriteFile")
def _write_file(ctx, filename, contents):
    """Writes `contents`, creating missing parent directories as TensorFlow does."""
    path = _as_bytes(filename.item()).decode()
    try:
        parent = os.path.dirname(path)
        if parent and not os.path.lexists(parent):
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(_as_bytes(contents.item()))
    except OSError as e:
        cls = _OS_ERRORS.get(type(e), errors.NotFoundError)
        raise cls(None, None, f"{path}; {e.strerror}") from None


@kernel("EncodeBase64")
class EncodeBase64Kernel:
    """Web-safe base64, '=' padding only when the `pad` attr asks for it."""

    def __init__(self, ctx):
        self.pad = ctx.attrs["pad"]

    def compute(self, ctx, x):
        encode = base64.urlsafe_b64encode
        return _map_strings(encode if self.pad else lambda s: encode(s).rstrip(b"="), x)


def _decode_base64(s: bytes) -> bytes:
    """TF's Base64Decode: padding is recognised only at the end of a whole 4-char group."""
    if len(s) % 4 == 0 and s.endswith(b"="):
        s = s[:-2] if s.endswith(b"==") else s[:-1]
    tail = len(s) % 4
    body = s[:len(s) - tail] if tail == 1 else s
    if not _BASE64.issuperset(body):
        raise invalid_argument("Invalid character found in base64.")
    if tail == 1:
        raise invalid_argument("Base64 string length cannot be 1 modulo 4.")
    return binascii.a2b_base64(s.translate(bytes.maketrans(b"-_", b"+/")) + b"=" * (-tail % 4))


@kernel("DecodeBase64")
def _decode_base64_kernel(ctx, x):
    return _map_strings(_decode_base64, x)


@kernel("DecodeCompressed")
class DecodeCompressedKernel:
    """Inflates each element ("" passes them through); the kind is checked once."""

    def __init__(self, ctx):
        self.kind = ctx.attrs["compression_type"]
        if self.kind == "ZSTD":   # TF has it; Python's zlib does not
            raise errors.UnimplementedError(None, None, "DecodeCompressed: ZSTD is not "
                                            "supported")
        if self.kind not in ("", "ZLIB", "GZIP"):
            raise invalid_argument("Only ZLIB, ZSTD, GZIP or NONE are supported compressions")

    def compute(self, ctx, data):
        if not self.kind:
            return data
        return _map_strings(lambda s: decompress(s, self.kind), data)
