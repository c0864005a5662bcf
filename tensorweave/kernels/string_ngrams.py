"""StringNGrams' kernel (ops/string_ngrams_ops.py), as TensorFlow's StringNGramsOp.

The same checks of the row splits, the same pad widths, short-sequence rule and n-gram text.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel


def _bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else value


@kernel("StringNGrams")
class StringNGramsKernel:
    """Row by row: for each width in turn, the n-grams of the row padded on both sides."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.separator = _bytes(attrs["separator"])
        self.left_pad, self.right_pad = _bytes(attrs["left_pad"]), _bytes(attrs["right_pad"])
        self.widths = list(attrs["ngram_widths"])
        self.pad_width = attrs["pad_width"]
        self.preserve_short = attrs["preserve_short_sequences"]

    def _padding(self, width: int) -> int:
        """Pads per side: pad_width (width - 1 when negative), never more than width - 1."""
        return min(self.pad_width if self.pad_width >= 0 else width - 1, width - 1)

    def _count(self, length: int, width: int) -> int:
        return max(0, length + 2 * self._padding(width) - width + 1)

    def _grams(self, tokens: list, count: int, width: int) -> list:
        """`count` n-grams of `width` over `tokens` with padding on both sides."""
        pad = self._padding(width)
        out = []
        for i in range(count):
            left = max(0, pad - i)
            right = max(0, pad - (count - (i + 1)))
            start = 0 if left > 0 else i - pad
            used = tokens[start:start + width - left - right]
            out.append(self.separator.join([self.left_pad] * left + used +
                                           [self.right_pad] * right))
        return out

    def _check_splits(self, splits: np.ndarray, size: int) -> None:
        if not splits.size:
            return
        previous = int(splits[0])
        if previous != 0:
            raise invalid_argument(f"First split value must be 0, got {previous}")
        for split in splits[1:].tolist():
            if not previous <= split <= size:
                raise invalid_argument(f"Invalid split value {split}, must be in "
                                       f"[{previous}, {size}]")
            previous = split
        if previous != size:
            raise invalid_argument("Last split value must be data size. Expected "
                                   f"{size}, got {previous}")

    def compute(self, ctx, data, splits):
        if any(width <= 0 for width in self.widths):
            raise invalid_argument("ngram_widths must contain positive values")
        data, splits = np.asarray(data, dtype=object), np.asarray(splits)
        flat = [_bytes(s) for s in data.reshape(-1).tolist()]
        self._check_splits(splits, len(flat))
        if not flat or not splits.size:   # TensorFlow's output is then shaped like the data
            return np.full(data.shape, b"", dtype=object), np.zeros_like(splits)
        grams, out_splits = [], [0]
        for begin, end in zip(splits[:-1].tolist(), splits[1:].tolist()):
            tokens = flat[begin:end]
            row = []
            for width in self.widths:
                row += self._grams(tokens, self._count(len(tokens), width), width)
            if self.preserve_short and tokens and not row:
                row = self._whole_sequence(tokens)
            grams += row
            out_splits.append(out_splits[-1] + len(row))
        return np.array(grams + [None], dtype=object)[:-1], \
            np.array(out_splits, dtype=splits.dtype)

    def _whole_sequence(self, tokens: list) -> list:
        """The one n-gram of a sequence too short for any: all of it, with its padding."""
        if self.pad_width < 0:
            raise invalid_argument("Pad width should be >= 0 when preserve_short_sequences is "
                                   "True and ngram_widths are not provided, got "
                                   f"{self.pad_width}")
        return self._grams(tokens, 1, len(tokens) + 2 * self.pad_width)
