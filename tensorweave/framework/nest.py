"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt, as tf.nest.

Dicts flatten in sorted-key order; anything else is a leaf. cond, while_loop, map_fn and
tf.data pass structures of tensors through these.
"""
from __future__ import annotations

__all__ = ["flatten", "pack_sequence_as", "assert_same_structure", "map_structure",
           "is_nested"]


def is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x) -> list:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure) -> list:
    """The leaves of `structure` in order (a leaf alone gives a one-element list)."""
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _rebuild(template, children):
    if isinstance(template, dict):
        return type(template)(zip(sorted(template), children))
    if _is_namedtuple(template):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children)
    return list(children)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` rebuilt in the shape of `structure`."""
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(f"Structure had {n} elements, but flat_sequence had "
                         f"{len(flat_sequence)} elements. Structure: {structure}")
    position = [0]

    def build(template):
        if not is_nested(template):
            value = flat_sequence[position[0]]
            position[0] += 1
            return value
        return _rebuild(template, [build(c) for c in _children(template)])
    return build(structure)


def _describe(x) -> str:
    return type(x).__name__


def assert_same_structure(a, b, check_types: bool = True) -> None:
    """ValueError (TypeError for differing sequence types) unless `a` and `b` nest alike."""
    if is_nested(a) != is_nested(b):
        raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                         f"First structure: {a}\n\nSecond structure: {b}")
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b) and not (
            isinstance(a, list) and isinstance(b, list)):
        raise TypeError(f"The two structures don't have the same sequence type. First "
                        f"structure has type {_describe(a)}, while second structure has type "
                        f"{_describe(b)}.")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys: {sorted(a)} "
                         f"and {sorted(b)}")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError(f"The two structures don't have the same number of elements.\n\n"
                         f"First structure: {a}\n\nSecond structure: {b}")
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def map_structure(fn, *structures):
    """`fn` applied leaf-wise across structures of the same shape."""
    first = structures[0]
    for other in structures[1:]:
        assert_same_structure(first, other)
    flat = [flatten(s) for s in structures]
    return pack_sequence_as(first, [fn(*leaves) for leaves in zip(*flat)])
