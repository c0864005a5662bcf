"""convert_to_tensor: Tensors pass through; registered types convert themselves; values become
constants (through the hook `ops/constant_op.py` installs, so the framework imports no op).

Two kinds of registration, as in TensorFlow: the framework's own types (Variable, IndexedSlices,
PartitionedVariable) are also *tensor-like* (`is_tensor_like`, hence `tf.is_tensor`); types a
program registers with `tf.register_tensor_conversion_function` only convert.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape

_conversion_functions: list[tuple[int, type, Callable]] = []
_tensor_like_types: list[type] = []
_hooks: dict[str, Callable] = {}
# Values of these types become constants; no function may be registered for them.
_CONSTANT_OP_CONVERTIBLES = (int, float, np.generic, np.ndarray)


def register_tensor_conversion_function_internal(base_type, conversion_func,
                                                 priority: int = 100) -> None:
    """Registers one of the framework's own tensor-like types (see the module docstring)."""
    _register(base_type, conversion_func, priority)
    _tensor_like_types.append(base_type)


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100):
    """Registers a function for converting objects of `base_type` to `Tensor`.

    The function is called as `conversion_func(value, dtype=None, name=None, as_ref=False)` and
    must return a Tensor of `dtype` when one is given (creating it under `name`, if it makes
    one). It may return `NotImplemented` to let the next function try. Functions run in order
    of priority (smaller first), then of registration; every later `convert_to_tensor` of a
    `base_type` instance (and so every op taking one as an input) uses them.

    Args:
      base_type: A type, or a tuple of types, whose instances `conversion_func` converts.
      conversion_func: The function converting them.
      priority: An int; functions with smaller priorities run first. Defaults to 100.

    Raises:
      TypeError: if `base_type` is not a type or tuple of types, is a Python number or NumPy
        type (those always become constants), or `conversion_func` is not callable.
    """
    base_types = base_type if isinstance(base_type, tuple) else (base_type,)
    if any(not isinstance(x, type) for x in base_types):
        raise TypeError("Argument `base_type` must be a type or a tuple of types. "
                        f"Obtained: {base_type}")
    if any(issubclass(x, _CONSTANT_OP_CONVERTIBLES) for x in base_types):
        raise TypeError("Cannot register conversions for Python numeric types and NumPy "
                        "scalars and arrays.")
    _register(base_type, conversion_func, priority)


def _register(base_type, conversion_func, priority: int) -> None:
    if not callable(conversion_func):
        raise TypeError("Argument `conversion_func` must be callable. Received "
                        f"{conversion_func}.")
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
    preferred = preferred_dtype if preferred_dtype is not None else dtype_hint
    if preferred is not None:
        preferred = _dtypes.as_dtype(preferred)
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = _call_registered(fn, base_type, value, dtype, name, as_ref, preferred)
            if result is not NotImplemented:
                return result
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return _hooks["pack"](value, dtype=dtype, name=name or "packed")
    if dtype is None and preferred is not None:
        try:
            return _hooks["constant"](value, preferred, name or "Const")
        except (TypeError, ValueError):
            pass
    return _hooks["constant"](value, dtype, name or "Const")


def _call_registered(fn, base_type, value, dtype, name, as_ref, preferred):
    """A registered function's Tensor (or NotImplemented), checked as TensorFlow checks it: the
    preferred dtype is tried first, and a non-Tensor or a wrong dtype is a RuntimeError."""
    def fail(problem):
        prefix = "" if name is None else f"{name}: "
        return RuntimeError(f"{prefix}Conversion function {fn!r} for type {base_type} "
                            f"returned {problem}")

    result = None
    if dtype is None and preferred is not None:
        try:
            result = fn(value, dtype=preferred, name=name, as_ref=as_ref)
        except (TypeError, ValueError):
            pass   # only a preference: convert without it below
        else:
            if result is not NotImplemented and \
                    result.dtype.base_dtype != preferred.base_dtype:
                raise fail(f"incompatible dtype: requested = {preferred.base_dtype.name}, "
                           f"actual = {result.dtype.base_dtype.name}")
    if result is None:
        result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
    if result is NotImplemented:
        return result
    if not isinstance(result, Tensor):
        raise fail(f"non-Tensor: {result!r}")
    if dtype is not None and not dtype.is_compatible_with(result.dtype):
        raise fail(f"incompatible dtype: requested = {dtype.name}, actual = "
                   f"{result.dtype.name}")
    return result


def is_tensor_like(value) -> bool:
    """A Tensor, or one of the framework's tensor-like types (not a program's registrations)."""
    return isinstance(value, Tensor) or any(isinstance(value, t) for t in _tensor_like_types)


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
