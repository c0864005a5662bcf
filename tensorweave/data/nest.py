"""Nested element structures of tf.data: tuples, namedtuples and dicts of leaves.

As in tf.data, a Python list is a leaf (it becomes one tensor), dict keys are visited in sorted
order, and `pack` rebuilds a structure from its flat leaves.
"""
from __future__ import annotations


def is_nested(value) -> bool:
    return isinstance(value, (tuple, dict))


def flatten(structure) -> list:
    """The leaves of `structure` in tf.nest order."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack(structure, flat):
    """`structure` with its leaves replaced, in order, by the items of `flat`."""
    it = iter(flat)
    result = _pack(structure, it)
    if next(it, _END) is not _END:
        raise ValueError("Structure had fewer leaves than the flat sequence")
    return result


_END = object()


def _pack(structure, it):
    if isinstance(structure, dict):
        packed = {k: _pack(structure[k], it) for k in sorted(structure)}
        return type(structure)((k, packed[k]) for k in structure)
    if isinstance(structure, tuple):
        items = [_pack(s, it) for s in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    value = next(it, _END)
    if value is _END:
        raise ValueError("Structure had more leaves than the flat sequence")
    return value


def map_structure(fn, structure):
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def same_structure(a, b) -> bool:
    """Whether `a` and `b` nest the same way (same tuple lengths, same dict keys)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(same_structure(a[k], b[k]) for k in a))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_structure(x, y) for x, y in zip(a, b)))
    return True
