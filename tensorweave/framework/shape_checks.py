"""Shape-function helpers in TensorFlow's words: merging sizes and shapes, checking ranks.

Op shape functions (`tensorweave/ops/`) raise ValueError with the messages TensorFlow's
InferenceContext gives (`Dimensions must be equal, but are 2 and 3`, `Shape must be rank 2 but
is rank 3`), which graph construction then wraps with the node's text. Dims are tuples of ints
with None for unknown sizes, and None for an unknown rank.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.shape_text import dims_text


def merge_dim(a, b):
    """Two sizes (None: unknown) that must agree: the known one."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def merge_dims(a, b):
    """Two dims tuples that must agree (InferenceContext::Merge): the more specific one."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if len(a) != len(b):
        raise ValueError(f"Shapes must be equal rank, but are {len(a)} and {len(b)}")
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x is not None and y is not None and x != y:
            raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                             f"Shapes are {dims_text(a)} and {dims_text(b)}.")
        out.append(y if x is None else x)
    return tuple(out)


def merge_shapes(a: _ts.TensorShape, b: _ts.TensorShape) -> _ts.TensorShape:
    """`merge_dims` of two TensorShapes."""
    return _ts.TensorShape(merge_dims(a._dims, b._dims))


def dims_with_rank(dims, rank: int) -> tuple:
    """`dims` checked to have `rank` entries (an unknown rank becomes `rank` unknown sizes)."""
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {len(dims)}")
    return tuple(dims)


def shape_with_rank(shape: _ts.TensorShape, rank: int) -> _ts.TensorShape:
    """A TensorShape checked like `dims_with_rank`."""
    return _ts.TensorShape(dims_with_rank(shape._dims, rank))


def shape_dims(shape: _ts.TensorShape, rank: int) -> list:
    """`shape`'s sizes (None where unknown) as a list of `rank`, checked like `dims_with_rank`."""
    return list(dims_with_rank(shape._dims, rank))
