"""RE2 patterns (TensorFlow's regex engine) translated to Python `re` patterns.

The translation keeps RE2's meaning where the two dialects differ on common syntax:
- `\\w \\d \\s \\b` and their negations are ASCII-only in RE2 (Python's are Unicode);
- `$` without the `m` flag matches only at the end of the text (Python's also before a final
  newline), and `\\z` is RE2's end of text;
- POSIX classes such as `[[:digit:]]` exist in RE2 only;
- lookarounds and backreferences do not exist in RE2: ValueError, as RE2 rejects the pattern.
Other syntax is passed through unchanged.
"""
from __future__ import annotations

import re

_WORD = "0-9A-Za-z_"
_CLASS_ESCAPES = {"w": _WORD, "d": "0-9", "s": "\\t\\n\\f\\r "}
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
          "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
          "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
          "word": _WORD, "xdigit": "0-9A-Fa-f"}
_IS_WORD, _NOT_WORD = f"(?<=[{_WORD}])", f"(?<![{_WORD}])"
_BOUNDARY = f"(?:{_IS_WORD}(?![{_WORD}])|{_NOT_WORD}(?=[{_WORD}]))"
_NOT_BOUNDARY = f"(?:{_IS_WORD}(?=[{_WORD}])|{_NOT_WORD}(?![{_WORD}]))"
_MULTILINE_FLAG = re.compile(r"\(\?[a-zA-Z]*m")
_UNSUPPORTED_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?P=")


def _escape(pattern: str, i: int, in_class: bool) -> str:
    """The translation of the escape at pattern[i] (a backslash)."""
    nxt = pattern[i + 1:i + 2]
    if nxt in _CLASS_ESCAPES:
        body = _CLASS_ESCAPES[nxt]
        return body if in_class else f"[{body}]"
    if in_class:
        return pattern[i:i + 2]
    if nxt.isupper() and nxt.lower() in _CLASS_ESCAPES:
        return f"[^{_CLASS_ESCAPES[nxt.lower()]}]"
    if nxt == "b":
        return _BOUNDARY
    if nxt == "B":
        return _NOT_BOUNDARY
    if nxt == "z":
        return r"\Z"
    if nxt.isdigit() and nxt != "0":
        raise ValueError(f"invalid escape sequence: \\{nxt}")
    return pattern[i:i + 2]


def python_pattern(pattern: str) -> str:
    """`pattern` (RE2 syntax) as a Python `re` pattern; ValueError for syntax RE2 rejects."""
    for group in _UNSUPPORTED_GROUPS:
        if group in pattern:
            raise ValueError(f"invalid perl operator: {group}")
    multiline = _MULTILINE_FLAG.search(pattern) is not None
    out, i, in_class, n = [], 0, False, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(_escape(pattern, i, in_class))
            i += 2
        elif in_class and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2:end] if end > 0 else ""
            if name not in _POSIX:
                raise ValueError(f"invalid character class range: {pattern[i:end + 2]}")
            out.append(_POSIX[name])
            i = end + 2
        elif in_class:
            in_class = c != "]"
            out.append(c)
            i += 1
        elif c == "[":
            # A ']' right after '[' or '[^' is a literal member, not the end of the class.
            j = i + 1 + (pattern[i + 1:i + 2] == "^")
            j += pattern[j:j + 1] == "]"
            out.append(pattern[i:j])
            in_class, i = True, j
        else:
            out.append(r"\Z" if c == "$" and not multiline else c)
            i += 1
    return "".join(out)
