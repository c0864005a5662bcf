"""Checks a restore against a checkpoint's index before any variable is touched.

Restores are all-or-nothing: every requested key, dtype and shape is compared with the index
first, and every problem is reported at once — missing keys with the closest names the
checkpoint does have (NotFoundError), dtype and shape mismatches side by side
(InvalidArgumentError) — so a failed restore never leaves some variables restored and others
not.
"""
from __future__ import annotations

import difflib

from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.shape_text import shape_text


def _shape_str(shape) -> str:
    if shape is None:
        return "?"
    return shape_text(_ts.as_shape(shape), unknown_rank="<unknown>")


def missing_key_lines(missing, available) -> list:
    """One line per missing key, in TF's wording, with close matches from `available`."""
    lines = []
    for name in missing:
        close = difflib.get_close_matches(name, available, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        lines.append(f"  Key {name} not found in checkpoint{hint}")
    return lines


def check_restorable(index, names, dtypes, shapes=None, reshape=False) -> None:
    """Raises if any of `names` cannot be restored as the given dtypes (and shapes).

    Args:
      index: the checkpoint's CheckpointIndex.
      names: checkpoint keys to restore.
      dtypes: the dtype each key is restored as.
      shapes: optional static shapes the values must be compatible with (None: any).
      reshape: compare element counts instead of shapes (Saver(reshape=True)).

    Raises:
      NotFoundError: keys are missing (every missing key is listed; mismatches too).
      InvalidArgumentError: dtypes or shapes differ (every mismatch is listed).
    """
    shapes = list(shapes) if shapes is not None else [None] * len(names)
    missing, mismatched = [], []
    for name, dtype, shape in zip(names, dtypes, shapes):
        entry = index.entries.get(name)
        if entry is None:
            missing.append(name)
            continue
        dtype_ok = entry.dtype == dtype.base_dtype
        shape_ok = shape is None or _shape_fits(entry.shape, shape, reshape)
        if not (dtype_ok and shape_ok):
            mismatched.append((name, dtype.base_dtype.name, _shape_str(shape),
                               entry.dtype.name, _shape_str(entry.shape)))
    if not missing and not mismatched:
        return
    where = f"checkpoint {index.prefix}"
    parts = []
    if missing:
        parts.append(f"{len(missing)} of {len(names)} tensors to restore are not in the "
                     f"{where}:")
        parts.extend(missing_key_lines(missing, sorted(index.entries)))
    if mismatched:
        parts.append(f"{len(mismatched)} tensors do not match the {where} "
                     "(the graph's variable, then the checkpoint's tensor):")
        width = max(len(m[0]) for m in mismatched)
        for name, g_dtype, g_shape, c_dtype, c_shape in mismatched:
            parts.append(f"  {name:<{width}}  graph: {g_dtype} {g_shape}   "
                         f"checkpoint: {c_dtype} {c_shape}")
    parts.append("Nothing was restored.")
    message = "\n".join(parts)
    if missing:
        raise errors.NotFoundError(None, None, message)
    raise errors.InvalidArgumentError(None, None, message)


def _shape_fits(stored, wanted, reshape: bool) -> bool:
    wanted = _ts.as_shape(wanted)
    if reshape:
        count = wanted.num_elements()
        stored_count = 1
        for d in stored:
            stored_count *= d
        return count is None or count == stored_count
    return wanted.is_compatible_with(_ts.TensorShape(list(stored)))
