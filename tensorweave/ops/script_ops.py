"""Python functions as graph ops: tf.py_func and tf.numpy_function (PyFunc, PyFuncStateless).

The op carries only a `token` attr ("pyfunc_<n>"); the callable is looked up by token when the
kernel runs (kernels/script.py). As in TensorFlow, the registry holds the callables weakly and
the outermost graph the op was built in (the user's graph, also for ops traced inside a
tf.data function) holds them strongly, so a callable lives exactly as long as that graph. A
GraphDef with a PyFunc therefore serializes (the token is an ordinary string attr), but running
it in a process where the graph that registered the token is gone fails with
InvalidArgumentError "Could not find callback with key=...".

Outputs have unknown shapes; the ops have no gradient (tf.gradients returns None through them).
"""
from __future__ import annotations

import itertools
import threading
import weakref

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.op_def import Arg, Attr, define_op

__all__ = ["numpy_function", "py_func"]


def _py_func_def(name: str, stateful: bool):
    return define_op(
        name, inputs=[Arg("input", type_list_attr="Tin")],
        outputs=[Arg("output", type_list_attr="Tout")],
        attrs=[Attr("token", "string"), Attr("Tin", "list(type)", minimum=0),
               Attr("Tout", "list(type)", minimum=0)],
        shape_fn=shape_fns.unknown, is_stateful=stateful, not_differentiable=True,
        doc="Calls the Python function registered under `token` on the inputs' values.")


PyFunc = _py_func_def("PyFunc", stateful=True)
PyFuncStateless = _py_func_def("PyFuncStateless", stateful=False)


class _Callback:
    """A registered callable; a weakref-able holder, so any callable (a ufunc, a bound
    method) can sit in the weak registry while its graph keeps this holder alive."""

    __slots__ = ("func", "__weakref__")

    def __init__(self, func):
        self.func = func


_REGISTRY: weakref.WeakValueDictionary[str, _Callback] = weakref.WeakValueDictionary()
_IDS = itertools.count()
_LOCK = threading.Lock()


def _owning_graph(graph):
    """The outermost graph: a function graph (tf.data) is traced and thrown away, its
    enclosing graph is what the user keeps."""
    while getattr(graph, "outer", None) is not None:
        graph = graph.outer
    return graph


def register_callback(func, graph) -> str:
    """Registers `func`, ties its lifetime to `graph`'s outermost graph, returns the token."""
    holder = _Callback(func)
    with _LOCK:
        token = f"pyfunc_{next(_IDS)}"
        _REGISTRY[token] = holder
    owner = _owning_graph(graph)
    if not hasattr(owner, "_py_funcs_used_in_graph"):
        owner._py_funcs_used_in_graph = []
    owner._py_funcs_used_in_graph.append(holder)
    return token


def lookup_callback(token: str):
    """The callable registered under `token`, or None if its graph is gone (or never was)."""
    holder = _REGISTRY.get(token)
    return None if holder is None else holder.func


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF1's argument name
    """Wraps a Python function and uses it as a TensorFlow op (TF1's tf.py_func).

    `func` receives the inputs' values as NumPy arrays (0-d values as NumPy scalars, strings as
    bytes) and returns NumPy arrays (or values NumPy converts) of exactly the `Tout` dtypes:
    a returned value is not cast, so returning a Python float for a float32 output fails with
    InvalidArgumentError, as in TensorFlow. Returned `str` values of a string output are
    encoded as UTF-8.

    The function runs in the session's process while the step runs, with the GIL held. It is
    not serialized with the graph: a GraphDef holding the op runs only where the graph that
    built it is alive.

    Args:
      func: a Python callable taking one argument per input.
      inp: a list of Tensors (or values convertible to them).
      Tout: a DType (the op has one output, returned as a Tensor) or a list of DTypes (a list
        of Tensors is returned; an empty list returns the Operation).
      stateful: whether the function has side effects or is non-deterministic (PyFunc); a
        stateless function (PyFuncStateless) may be folded or merged by graph optimizations.
      name: a name for the operation.

    Returns:
      A Tensor, a list of Tensors or the Operation, according to `Tout`.

    Raises (when the op runs):
      InvalidArgumentError: if `func` returns a wrong number of values or a value of another
        dtype, or raises ValueError or TypeError.
      OutOfRangeError, UnimplementedError, ResourceExhaustedError: if `func` raises
        StopIteration, NotImplementedError, MemoryError.
      UnknownError: if `func` raises any other exception.
    """
    single = not isinstance(Tout, (list, tuple))
    out_types = [_dtypes.as_dtype(Tout)] if single else [_dtypes.as_dtype(t) for t in Tout]
    graph = get_default_graph()
    token = register_callback(func, graph)
    inputs = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    op_def = PyFunc if stateful else PyFuncStateless
    result = apply_op(op_def, [inputs], {"token": token, "Tout": out_types},
                      name=name or op_def.name)
    if single:
        return result[0]
    return result


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """Wraps a Python function taking and returning NumPy arrays as an op (tf.numpy_function).

    The same op and rules as `py_func`: see there.

    Args:
      func: a Python callable taking one NumPy array per input.
      inp: a list of Tensors.
      Tout: a DType or a list of DTypes of the outputs.
      stateful: PyFunc (True) or PyFuncStateless (False).
      name: a name for the operation.

    Returns:
      A Tensor, a list of Tensors or the Operation, according to `Tout`.
    """
    return py_func(func, inp, Tout, stateful=stateful, name=name)
