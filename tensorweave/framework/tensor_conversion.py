"""convert_to_tensor: Tensors pass through; registered types convert themselves; values become
constants (through the hook `ops/constant_op.py` installs, so the framework imports no op)."""
from __future__ import annotations

from collections.abc import Callable

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape

_conversion_functions: list[tuple[int, type, Callable]] = []
_hooks: dict[str, Callable] = {}


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100):
    """Registers `conversion_func(value, dtype, name, as_ref) -> Tensor` for `base_type`."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda item: item[0])


def set_hook(kind: str, fn: Callable) -> None:
    """Installs 'constant' (value, dtype, name) or 'pack' (list of tensors/values, name)."""
    _hooks[kind] = fn


def _contains_tensor(value) -> bool:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False,
                      dtype_hint=None) -> Tensor:
    """Converts `value` (Tensor, Variable, NumPy array, Python value) to a Tensor."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value
    if isinstance(value, TensorShape):   # not tensor-like (is_tensor_like), but converts
        return _shape_to_tensor(value, dtype, name)
    if isinstance(value, Dimension):
        return _dimension_to_tensor(value, dtype, name)
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return convert_to_tensor(result, dtype=dtype, name=name)
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return _hooks["pack"](value, dtype=dtype, name=name or "packed")
    preferred = preferred_dtype if preferred_dtype is not None else dtype_hint
    if dtype is None and preferred is not None:
        try:
            return _hooks["constant"](value, _dtypes.as_dtype(preferred), name or "Const")
        except (TypeError, ValueError):
            pass
    return _hooks["constant"](value, dtype, name or "Const")


def is_tensor_like(value) -> bool:
    return isinstance(value, Tensor) or any(
        isinstance(value, base) for _, base, _ in _conversion_functions)


def _shape_to_tensor(shape, dtype=None, name=None):
    """A fully defined TensorShape as a 1-d int32 constant (int64 if a dimension needs it)."""
    if not shape.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
    dims = shape.as_list()
    wide = any(d >= 2**31 for d in dims)
    if dtype is None:
        dtype = _dtypes.int64 if wide else _dtypes.int32
    elif dtype == _dtypes.int32 and wide:
        raise ValueError(f"Cannot convert TensorShape {shape} to dtype int32; a dimension is "
                         "too large.")
    return _hooks["constant"](dims, dtype, name or "shape_as_tensor")


def _dimension_to_tensor(dim, dtype=None, name=None):
    """A known Dimension as a 0-d int32 constant (or the requested integer dtype)."""
    if dim.value is None:
        raise ValueError("Cannot convert an unknown Dimension to a Tensor.")
    return _hooks["constant"](dim.value, dtype or _dtypes.int32, name or "shape_as_tensor")
