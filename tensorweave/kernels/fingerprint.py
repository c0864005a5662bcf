"""Fingerprint's kernel (ops/fingerprint_ops.py): TensorFlow's FingerprintOp, byte for byte.

Numeric rows are hashed as their raw bytes (the machine's little-endian layout, as in
TensorFlow); bfloat16, stored here as float32, as the 2-byte bfloat16 values TensorFlow holds.
A string row is hashed through its strings' fingerprints: with one string per row, the row's
fingerprint is the string's; with more, it is the fingerprint of their fingerprints' bytes, one
after another.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.string_hash import fingerprint_rows, hash_strings
from tensorweave.ops.fingerprint_ops import FINGERPRINT_SIZE, METHOD


def _little_endian_bytes(hashes: np.ndarray) -> np.ndarray:
    """uint64 values as rows of their 8 little-endian bytes (TensorFlow's CopyToBuffer)."""
    return hashes.astype("<u8").view(np.uint8).reshape(-1, FINGERPRINT_SIZE)


def _row_bytes(data: np.ndarray, rows: int) -> np.ndarray:
    """The raw bytes of each row of a numeric array, as a [rows, bytes per row] matrix."""
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return raw.reshape(rows, raw.size // rows if rows else 0)


def _bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns of float32-stored values: rounded to nearest even, NaN to the
    quiet NaN, as TensorFlow converts float32 to bfloat16."""
    values = np.ascontiguousarray(values, np.float32)
    bits = values.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) >> 16
    nan = np.where(np.signbit(values), 0xFFC0, 0x7FC0)
    return np.where(np.isnan(values), nan, rounded).astype(np.uint16)


@kernel("Fingerprint")
class FingerprintKernel:
    """[batch, 8] uint8: the little-endian Fingerprint64 of each row (the dtype parsed once)."""

    def __init__(self, ctx):
        self.bfloat16 = ctx.attrs["T"] == _dtypes.bfloat16

    def compute(self, ctx, data, method):
        method = np.asarray(method, dtype=object)
        if method.ndim != 0:
            raise invalid_argument("`method` should be a scalar string: "
                                   f"{dims_text(method.shape)}")
        if method[()] != METHOD:
            raise invalid_argument("Unsupported fingerprint method: "
                                   f"{method[()].decode(errors='replace')}")
        data = np.asarray(data)
        if data.ndim == 0:
            raise invalid_argument(f"`data` should have at least one dimension: {dims_text([])}")
        rows = data.shape[0]
        if data.dtype != object:
            if self.bfloat16:
                data = _bfloat16_bits(data)
            return _little_endian_bytes(fingerprint_rows(_row_bytes(data, rows)))
        per_string = hash_strings(data.reshape(-1))
        if per_string.size == rows:          # one string per row: its fingerprint is the row's
            return _little_endian_bytes(per_string)
        return _little_endian_bytes(fingerprint_rows(_row_bytes(per_string, rows)))
