"""Kernel of UnicodeTranscode (ops/string_unicode_ops.py), on Python's codecs.

TensorFlow transcodes with ICU. Python's UTF-8/16/32 decoders mark invalid input the way ICU
does (one error per maximal invalid subsequence: b"\\xe2\\x82" is one, a UTF-8-encoded
surrogate b"\\xed\\xa0\\x80" three), so a custom codecs error handler yields TensorFlow's
replacements. ICU's "UTF-16"/"UTF-32" read big-endian when there is no byte-order mark, where
Python would read the machine's order.
"""
from __future__ import annotations

import codecs
import re

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel

_OUTPUT = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_BOM_OR_BIG_ENDIAN = {"utf-16": (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE, "utf-16-be"),
                      "utf-32": (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE, "utf-32-be")}
_CONTROL = re.compile("[\x00-\x1f]")


def _replacing_with(char: str) -> str:
    """The name of a codecs error handler that puts `char` for each invalid sequence."""
    name = f"tensorweave-replace-{ord(char):x}" if char else "ignore"
    if char:
        try:
            codecs.lookup_error(name)
        except LookupError:
            codecs.register_error(name, lambda e: (char, e.end))
    return name


@kernel("UnicodeTranscode")
class UnicodeTranscodeKernel:
    """Decode with the input codec and the error policy, then encode; attrs checked once."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        name = attrs["input_encoding"]
        try:
            self.codec = codecs.lookup(name).name
        except LookupError:
            self.codec = None
        self.input_encoding = name
        self.output = _OUTPUT.get(attrs["output_encoding"])
        errors = attrs["errors"]
        code = attrs["replacement_char"]
        self.attr_error = None
        if self.output is None:
            self.attr_error = f"Unsupported output encoding: {attrs['output_encoding']}"
        elif errors not in ("strict", "replace", "ignore"):
            self.attr_error = f"errors policy must be one of strict, replace, ignore: {errors}"
        elif not 0 <= code <= 0x10FFFF:
            self.attr_error = "replacement_char out of unicode codepoint range"
        # ICU writes U+FFFD where the replacement is a surrogate it cannot encode.
        char = "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code) if self.attr_error is None \
            else ""
        self.strict = errors == "strict"
        self.replacement = "" if errors == "ignore" else char
        self.handler = "strict" if self.strict else _replacing_with(self.replacement)
        self.replace_control = attrs["replace_control_characters"]

    def _decode(self, data: bytes) -> str:
        codec = self.codec
        if codec in _BOM_OR_BIG_ENDIAN:
            big, little, plain = _BOM_OR_BIG_ENDIAN[codec]
            if not (data.startswith(big) or data.startswith(little)):
                codec = plain
        try:
            return data.decode(codec, self.handler)
        except UnicodeDecodeError:
            raise invalid_argument(f"Invalid formatting on input string: "
                                   f"{data[:40]!r}") from None

    def _transcode(self, data: bytes) -> bytes:
        text = self._decode(data)
        if self.replace_control:
            text = _CONTROL.sub(self.replacement, text)
        return text.encode(self.output)

    def compute(self, ctx, strings):
        if self.attr_error is not None:
            raise invalid_argument(self.attr_error)
        if self.codec is None:
            raise invalid_argument("Could not create converter for input encoding: "
                                   f"{self.input_encoding}")
        flat = np.asarray(strings, dtype=object).reshape(-1)
        out = np.empty(flat.shape, dtype=object)
        out[:] = [self._transcode(s) for s in flat]
        return out.reshape(np.shape(strings))
