"""How TensorFlow's messages print shapes: `[2,?,3]`, and `?` or `<unknown>` for an unknown rank.

One notation, shared by every error message that names a shape, so that the text matches
TensorFlow's C++ runtime byte for byte: dimensions joined by "," without spaces, an unknown
dimension as `?`. An unknown rank prints as `?` in shape inference (InferenceContext) and as
`<unknown>` in PartialTensorShape::DebugString; callers pick which with `unknown_rank`.
"""
from __future__ import annotations

__all__ = ["dims_text", "shape_text"]


def dims_text(dims, unknown_rank: str = "?") -> str:
    """`[2,?,3]` for dims (ints, NumPy ints, None for unknown); `unknown_rank` if dims is None."""
    if dims is None:
        return unknown_rank
    return "[" + ",".join("?" if d is None else str(int(d)) for d in dims) + "]"


def shape_text(shape, unknown_rank: str = "?") -> str:
    """A TensorShape as `[2,?,3]`, or `unknown_rank` when its rank is unknown."""
    return dims_text(None if shape.ndims is None else shape.as_list(), unknown_rank)
