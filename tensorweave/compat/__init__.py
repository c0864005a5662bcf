"""tf.compat: `tf.compat.v1` is tensorweave itself (it implements the v1 API), plus TF's
bytes/text conversions."""
import sys as _sys

v1 = _sys.modules["tensorweave"]


def as_bytes(bytes_or_text, encoding="utf-8"):
    """`bytes_or_text` as bytes (text encoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """`bytes_or_text` as str (bytes decoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """`value` as str: bytes decoded, anything else through str()."""
    return as_text(value, encoding) if isinstance(value, bytes) else str(value)
