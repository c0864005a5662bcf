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
    if isinstance(template, dict):   # values by sorted key, keys in the template's order
        by_key = dict(zip(sorted(template), children))
        return type(template)((key, by_key[key]) for key in template)
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
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but flat_sequence "
                         f"had {len(flat_sequence)} items.  Structure: {structure}, "
                         f"flat_sequence: {flat_sequence}.")
    position = [0]

    def build(template):
        if not is_nested(template):
            value = flat_sequence[position[0]]
            position[0] += 1
            return value
        return _rebuild(template, [build(c) for c in _children(template)])
    return build(structure)


def _describe(x) -> str:
    return f"type={type(x).__name__} str={x}"


class _Leaf:
    """Stands for a leaf when a structure is printed in outline ("[., (.,)]")."""

    def __repr__(self) -> str:
        return "."


def _outline(structure) -> str:
    return repr(pack_sequence_as(structure, [_Leaf()] * len(flatten(structure))))


def _first_difference(a, b, check_types: bool):
    """(error class, TensorFlow's words) for the first place `a` and `b` nest differently,
    or None."""
    if is_nested(a) != is_nested(b):
        seq, other = (a, b) if is_nested(a) else (b, a)
        return ValueError, (f'Substructure "{_describe(seq)}" is a sequence, while '
                            f'substructure "{_describe(other)}" is not')
    if not is_nested(a):
        return None
    if check_types and type(a) is not type(b) and not (
            isinstance(a, list) and isinstance(b, list)):
        return TypeError, (f"The two namedtuples don't have the same sequence type. First "
                           f"structure {_describe(a)} has type {type(a).__name__}, while "
                           f"second structure {_describe(b)} has type {type(b).__name__}")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        return ValueError, (f"The two dictionaries don't have the same set of keys. First "
                            f"structure has keys {_describe(sorted(a))}, while second "
                            f"structure has keys {_describe(sorted(b))}")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        return ValueError, (f"The two structures don't have the same number of elements. "
                            f"First structure: {_describe(a)}. Second structure: "
                            f"{_describe(b)}")
    for x, y in zip(ca, cb):
        found = _first_difference(x, y, check_types)
        if found is not None:
            return found
    return None


def assert_same_structure(a, b, check_types: bool = True) -> None:
    """ValueError (TypeError for differing sequence types) unless `a` and `b` nest alike, in
    TensorFlow's words."""
    found = _first_difference(a, b, check_types)
    if found is None:
        return
    error, detail = found
    raise error(f"The two structures don't have the same nested structure.\n\n"
                f"First structure: {_describe(a)}\n\nSecond structure: {_describe(b)}\n\n"
                f"More specifically: {detail}\nEntire first structure:\n{_outline(a)}\n"
                f"Entire second structure:\n{_outline(b)}")


def map_structure(fn, *structures):
    """`fn` applied leaf-wise across structures of the same shape."""
    first = structures[0]
    for other in structures[1:]:
        assert_same_structure(first, other)
    flat = [flatten(s) for s in structures]
    return pack_sequence_as(first, [fn(*leaves) for leaves in zip(*flat)])
