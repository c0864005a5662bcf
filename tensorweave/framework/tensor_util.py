"""Python/NumPy values → NumPy arrays with TensorFlow's dtype rules, and constant_value.

TF infers int32 for Python ints (int64 past int32), float32 for Python floats, keeps NumPy
dtypes, turns text into bytes, and refuses lossy conversions (1.5 into int32) with TypeError.
As in TF, None is a ValueError, and any other object that is neither number nor text (a dict,
a function, a list or object array holding one) is a TypeError.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_NOT_CONVERTIBLE = ("Failed to convert elements of {} to Tensor. Consider casting elements to a "
                    "supported type. See https://www.tensorflow.org/api_docs/python/tf/dtypes "
                    "for supported TF dtypes.")


def _python_array(value) -> np.ndarray:
    """`value` as an array; NumPy makes an object array of what is neither number nor text."""
    try:
        arr = np.array(value)
    except ValueError as e:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {e}") from None
    if arr.dtype.kind in "SU":
        # NumPy's fixed-width strings drop trailing NUL bytes (serialized protos end in them).
        exact = np.array(value, dtype=object)
        if exact.shape == arr.shape:
            return exact
    return arr


def _default_dtype(arr: np.ndarray) -> _dtypes.DType:
    kind = arr.dtype.kind
    if kind == "f":
        return _dtypes.float32
    if kind in "iu":
        if arr.size and kind == "u" and arr.max() > np.iinfo(np.int64).max:
            return _dtypes.uint64   # Python ints in [2**63, 2**64), as TF infers them
        if arr.size and (arr.min() < _INT32_MIN or arr.max() > _INT32_MAX):
            return _dtypes.int64
        return _dtypes.int32
    if kind == "b":
        return _dtypes.bool
    if kind == "c":
        return _dtypes.complex128
    if kind in "USO":
        return _dtypes.string
    raise TypeError(f"Failed to convert object of type {arr.dtype} to Tensor.")


def _check_fits(arr: np.ndarray, dtype: _dtypes.DType, value) -> None:
    """TypeError for Python values that `dtype` cannot hold exactly (TF's _AssertCompatible)."""
    kind = arr.dtype.kind
    target = dtype.base_dtype
    if arr.size == 0 and kind == "f":
        return  # an empty list ([] becomes float64) holds no value to lose: any dtype fits
    if target == _dtypes.string:
        if kind not in "USO":
            raise TypeError(f"Expected string, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        return
    if kind in "USO":
        raise TypeError(f"Expected {target.name}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.")
    if target.is_bool and kind != "b":
        raise TypeError(f"Expected bool, got {value!r} of type '{type(value).__name__}' "
                        "instead.")
    if (target.is_integer and kind not in "iub") or (kind == "b" and not target.is_bool):
        raise TypeError(f"Expected {target.name}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.")
    if target.is_integer and kind in "iu" and arr.size:
        if arr.min() < target.min or arr.max() > target.max:
            raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {target.name}: "
                            "out of range.")
    if target.is_floating and kind == "c":
        raise TypeError(f"Expected {target.name}, got complex value {value!r}.")


def to_numpy(value, dtype: _dtypes.DType | None = None) -> np.ndarray:
    """`value` as an ndarray of `dtype` (or the dtype TF would infer)."""
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        as_text = dtype is None or dtype.base_dtype == _dtypes.string
        if arr.dtype.kind in "US" or (arr.dtype == object and as_text and _needs_bytes(arr)):
            arr = np.vectorize(_to_bytes, otypes=[object])(arr) if arr.size else arr.astype(object)
        if dtype is None:
            return arr
        return _cast(arr, dtype)
    if value is None:
        raise ValueError("None values not supported.")
    if isinstance(value, (str, bytes)):
        arr = np.array(_to_bytes(value), dtype=object)
    else:
        arr = _python_array(value)
    inferred = dtype is None
    if inferred:
        dtype = _default_dtype(arr)
    else:
        _check_fits(arr, dtype, value)
    if dtype.base_dtype == _dtypes.string:
        out = np.empty(arr.shape, dtype=object)
        try:
            for idx, v in np.ndenumerate(arr):
                out[idx] = _to_bytes(v)
        except TypeError:
            if not inferred:
                raise
            # Inferred as strings, but an element is not text (an object, or 1 in [1, "a"]).
            raise TypeError(_NOT_CONVERTIBLE.format(value)) from None
        return out
    return arr.astype(_dtypes.numpy_dtype(dtype), copy=False)


def _cast(arr: np.ndarray, dtype: _dtypes.DType) -> np.ndarray:
    target = _dtypes.numpy_dtype(dtype)
    if arr.dtype == target:
        return arr
    if dtype.base_dtype == _dtypes.string:
        if arr.dtype != object:
            raise TypeError(f"Expected string, got array of {arr.dtype}.")
        return arr
    if arr.dtype == object:
        raise TypeError(f"Expected {dtype.name}, got an array of strings.")
    return arr.astype(target)


def _needs_bytes(arr: np.ndarray) -> bool:
    """Whether a string object array holds more than bytes: TF encodes `str` as UTF-8 (as in a
    list) and refuses any other object with TypeError."""
    return not all(isinstance(v, bytes) for v in arr.flat)


def _to_bytes(v) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, np.bytes_):
        return bytes(v)
    raise TypeError(f"Expected string, got {v!r} of type '{type(v).__name__}' instead.")


# --- constant values known at graph-construction time --------------------------------------
def constant_value(tensor, partial: bool = False):
    """The NumPy value of `tensor` if the graph fixes it (Const, Shape of a known shape, ...).

    Returns None when it is not known statically. As in TensorFlow (whose value is read from
    the Const's TensorProto) the array is new: a constant's own array is the runtime's,
    read-only once a session binds it. Shape functions read `static_value` itself.
    """
    from tensorweave.framework.static_value import static_value
    value = static_value(tensor)
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


def make_ndarray(tensor_proto) -> np.ndarray:
    """NumPy array from a TensorProto (TF's tf.make_ndarray)."""
    from tensorweave.framework import graph_io
    return graph_io.tensor_proto_to_ndarray(tensor_proto)


def make_tensor_proto(values, dtype=None, shape=None):
    """TensorProto from a value (TF's tf.make_tensor_proto)."""
    from tensorweave.framework import graph_io
    arr = to_numpy(values, _dtypes.as_dtype(dtype) if dtype is not None else None)
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(shape)) if arr.size == 1 else arr.reshape(shape)
    return graph_io.ndarray_to_tensor_proto(arr)
