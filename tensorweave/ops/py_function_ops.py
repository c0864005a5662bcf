"""tf.py_function in graph mode: a Python function as an EagerPyFunc op.

Like tf.py_func (ops/script_ops.py, whose callback registry and kernel it shares), but with
tf.py_function's conventions: the function receives array values with a `.numpy()` method
(standing in for TensorFlow's EagerTensors; NumPy operations work on them directly), and its
results are converted to the `Tout` dtypes (a Python float for a float32 output is fine; a
value that does not convert, such as a string for a float output, is InvalidArgumentError
"TypeError: Cannot convert ..."). tensorweave has no eager mode, so TensorFlow ops cannot run
inside the function, and the op has no gradient (TensorFlow differentiates it with a tape).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.ops.script_ops import register_callback

__all__ = ["py_function"]

EagerPyFunc = define_op(
    "EagerPyFunc", inputs=[Arg("input", type_list_attr="Tin")],
    outputs=[Arg("output", type_list_attr="Tout")],
    attrs=[Attr("token", "string"), Attr("is_async", "bool", False),
           Attr("Tin", "list(type)", minimum=0), Attr("Tout", "list(type)", minimum=0)],
    shape_fn=shape_fns.unknown, is_stateful=True,
    doc="Calls the Python function registered under `token` on the inputs' values.")


class EagerValue(np.ndarray):
    """An input value as the function sees it: an ndarray that also answers `.numpy()`."""

    def numpy(self):
        value = self.view(np.ndarray)
        return value[()] if value.ndim == 0 else value


def _as_output(value, dtype):
    """`value` converted to `dtype` as convert_to_tensor would, TypeError if it cannot be."""
    if isinstance(value, EagerValue):
        value = value.view(np.ndarray)
    array = np.asarray(value)
    if dtype == _dtypes.string:
        return array
    kind = array.dtype.kind
    if kind in "OSU" or (kind in "fc" and (dtype.is_integer or dtype == _dtypes.bool)) or \
            (kind == "c" and not dtype.is_complex):
        from tensorweave.kernels.decode import data_type_string  # TensorFlow's spelling: "float"
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                        f"{data_type_string(dtype.base_dtype)}")
    return array.astype(dtype.as_numpy_dtype, copy=False)


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TF's argument name
    """Wraps a Python function as an op that runs it on the inputs' values (tf.py_function).

    Args:
      func: a callable taking one value per input (arrays with a `.numpy()` method) and
        returning a value, a list of values (one per `Tout` entry) or None (for `Tout=[]`).
        Without `func`, a decorator is returned.
      inp: a list of Tensors (or a single Tensor).
      Tout: a DType (one output Tensor is returned) or a list of DTypes (a list of Tensors; an
        empty list returns the Operation).
      name: a name for the operation (default "EagerPyFunc").

    Returns:
      A Tensor, a list of Tensors or the Operation, according to `Tout`.

    Raises:
      ValueError: if `func` is not callable.
      InvalidArgumentError (when the op runs): if a result does not convert to its dtype, or
        `func` returns the wrong number of values or raises ValueError/TypeError; the other
        errors map as for tf.py_func.
    """
    if func is None:
        return lambda f: py_function(f, inp, Tout, name)
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func} of type "
                         f"{type(func)}.")
    single = not isinstance(Tout, (list, tuple))
    out_types = [_dtypes.as_dtype(Tout)] if single else [_dtypes.as_dtype(t) for t in Tout]

    def call(*values):
        ret = func(*[np.asarray(v).view(EagerValue) for v in values])
        if ret is None:
            return None
        # One output: the whole value is it (a list becomes a 1-D tensor, as in TF).
        results = [ret] if single or not isinstance(ret, (list, tuple)) else list(ret)
        if len(results) != len(out_types):
            return results  # the kernel reports the count
        return [_as_output(v, t) for v, t in zip(results, out_types)]

    token = register_callback(call, get_default_graph())
    inputs = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    result = apply_op(EagerPyFunc, [inputs], {"token": token, "Tout": out_types}, name=name)
    return result[0] if single else result
