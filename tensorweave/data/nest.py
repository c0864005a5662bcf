"""Nested element structures of tf.data: tuples, namedtuples and dicts of leaves.

As in tf.data, a Python list is a leaf (it becomes one tensor), so is a SparseTensorValue (a
namedtuple that stands for one SparseTensor), dict keys are visited in sorted order, and `pack`
rebuilds a structure from its flat leaves.
"""
from __future__ import annotations

from tensorweave.framework.sparse_tensor import SparseTensorValue


def is_nested(value) -> bool:
    return isinstance(value, dict) or _is_tuple(value)


def _is_tuple(value) -> bool:
    return isinstance(value, tuple) and not isinstance(value, SparseTensorValue)


def flatten(structure) -> list:
    """The leaves of `structure` in tf.nest order."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if _is_tuple(structure):
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
    if _is_tuple(structure):
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
    if _is_tuple(a) or _is_tuple(b):
        return (_is_tuple(a) and _is_tuple(b) and len(a) == len(b)
                and all(same_structure(x, y) for x, y in zip(a, b)))
    return True


def assert_shallow_structure(shallow, structure) -> None:
    """Raises TensorFlow's TypeError or ValueError unless `structure` nests as `shallow` does
    down to `shallow`'s leaves (below them it may nest further): tf.data's
    `assert_shallow_structure`, with its messages."""
    if not is_nested(shallow):
        return
    if not is_nested(structure):
        raise TypeError("If shallow structure is a sequence, input must also be a sequence. "
                        f"Input has type: '{type(structure).__name__}'.")
    if not isinstance(structure, type(shallow)):
        raise TypeError("The two structures don't have the same sequence type. Input structure "
                        f"has type '{type(structure).__name__}', while shallow structure has "
                        f"type '{type(shallow).__name__}'.")
    if len(structure) != len(shallow):
        raise ValueError("The two structures don't have the same sequence length. Input "
                         f"structure has length {len(structure)}, while shallow structure has "
                         f"length {len(shallow)}.")
    if isinstance(shallow, dict):
        if set(structure) != set(shallow):
            raise ValueError("The two structures don't have the same keys. Input structure has "
                             f"keys {list(structure)}, while shallow structure has keys "
                             f"{list(shallow)}.")
        shallow, structure = sorted(shallow.items()), sorted(structure.items())
    for shallow_item, item in zip(shallow, structure):
        assert_shallow_structure(shallow_item, item)
