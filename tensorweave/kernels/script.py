"""Kernel of PyFunc / PyFuncStateless: call the registered Python function, check its results.

Kernels run in Python with the GIL held, so the callable needs no further locking; concurrent
steps simply take turns. Conversion and errors follow TensorFlow's `FuncRegistry`: inputs are
NumPy arrays (0-d ones as NumPy scalars, strings as bytes); results are converted with
`np.asarray` and must then have exactly the declared dtype; an exception of the callable maps
to an error class by its Python type, its message being "<Type>: <text>" and the traceback.
"""
from __future__ import annotations

import traceback

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels.decode import data_type_string
from tensorweave.kernels.registry import kernel
from tensorweave.ops.script_ops import lookup_callback

# TensorFlow's py_func.cc mapping; IndexError, KeyError, OpErrors ... become UnknownError.
_ERROR_FOR = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
)
def python_error(exc: BaseException) -> errors.OpError:
    """The OpError TensorFlow reports for an exception of Python code it called (a py_func,
    a from_generator generator): its class by the exception's type, its message
    "<Type>: <text>" and the traceback."""
    cls = next((c for types, c in _ERROR_FOR if isinstance(exc, types)), errors.UnknownError)
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    error = cls(None, None, f"{type(exc).__name__}: {exc}\n{trace}")
    error.__cause__ = exc
    return error


def python_argument(value):
    """What the callable receives for one input: a private, writable copy. The function may
    write into its arguments, as TensorFlow's may, without changing a constant (read-only
    here, shared by every step) or the array the user fed. (TF 1.x hands a ref variable's
    own buffer over, so such a write changes the variable; here it never does.)"""
    array = np.array(value, copy=True)
    return array[()] if array.ndim == 0 else array


def _convert(value) -> np.ndarray:
    """TensorFlow's FuncRegistry._convert: NumPy's conversion, bytes/str kept as objects."""
    result = np.asarray(value, order="C")
    if result.dtype.char == "S" and result is not value:
        return np.asarray(value, order="C", dtype=object)
    if result.dtype.char == "U" and result is not value:
        encoded = np.vectorize(lambda x: x.encode("utf8"), otypes=[object])(value)
        return np.asarray(encoded, order="C", dtype=object)
    if result.dtype.char == "U":
        return result.astype(np.bytes_)   # ASCII only, as in TF
    return result


def _dtype_of(array: np.ndarray):
    if array.dtype.kind in "OS":
        return _dtypes.string
    try:
        return _dtypes.as_dtype(array.dtype)
    except TypeError:
        return None


@kernel(("PyFunc", "PyFuncStateless"))
class PyFuncKernel:
    """Looks the callable up by token at each call (its graph may be gone), runs it, checks
    the number and dtypes of the results."""

    def __init__(self, ctx):
        self.token = ctx.attrs["token"]
        self.out_types = list(ctx.attrs["Tout"])

    def compute(self, ctx, *inputs):
        func = lookup_callback(self.token)
        try:
            if func is None:
                raise ValueError(f"Could not find callback with key={self.token} in the "
                                 "registry.")
            ret = func(*[python_argument(v) for v in inputs])
            if isinstance(ret, (tuple, list)):
                values = [_convert(x) for x in ret]
            elif ret is None:
                values = []
            else:
                values = [_convert(ret)]
        except Exception as exc:  # noqa: BLE001 - every error of user code is reported
            raise python_error(exc) from exc
        if len(values) != len(self.out_types):
            raise errors.InvalidArgumentError(
                None, None, f"{self.token} returns {len(values)} values, but expects to see "
                f"{len(self.out_types)} values.")
        outs = [self._check(i, v, want) for i, (v, want) in
                enumerate(zip(values, self.out_types))]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _check(self, i: int, value: np.ndarray, want):
        got = _dtype_of(value)
        if got != want:
            shown = data_type_string(got) if got is not None else str(value.dtype)
            raise errors.InvalidArgumentError(
                None, None, f"{i}-th value returned by {self.token} is {shown}, but expects "
                f"{data_type_string(want)}")
        if want == _dtypes.string:
            out = np.empty(value.shape, dtype=object)
            out.reshape(-1)[:] = [x if isinstance(x, bytes) else
                                  str(x).encode("utf-8") for x in value.reshape(-1)]
            return out
        return value
