"""Compiled loops for the hot kernels: numba's `njit`, imported on first use, cached on disk.

A kernel asks for its compiled loop when it is instantiated (`compiled(fn)`), so importing
tensorweave never imports numba (about a second) and a process that runs no such kernel never
pays for it. `cache=True` keeps the machine code beside this package: each signature compiles
once per install (a few seconds), later processes load it in milliseconds. No fastmath: the
loops do TensorFlow's operations in TensorFlow's order, in the array's dtype, so results stay
bit for bit what the NumPy formulas give. `error_model="numpy"`: division by zero gives inf
or NaN as in NumPy instead of raising, and without the per-division check the loops vectorize
(measured: the Adam loop 5x faster on in-cache arrays). `nogil` lets kernels on other threads
run meanwhile.
"""
from __future__ import annotations

import functools
import types

import numpy as np

# The dtypes the compiled loops are built for; other dtypes keep the NumPy formulations.
LOOP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def loop_input(node, min_elements: int) -> bool:
    """Whether `node`'s input 0 is statically known to hold at least `min_elements` elements
    of a loop dtype (its attr T): what the cost model asks of a kernel that splits its loop."""
    size = node.input_shapes[0].num_elements() if node.input_shapes else None
    dtype = node.attrs.get("T")
    return size is not None and size >= min_elements and dtype is not None and \
        np.dtype(dtype.as_numpy_dtype) in LOOP_DTYPES


@functools.cache
def compiled(fn, signatures: tuple = ()):
    """`fn` compiled with numba (one dispatcher per function, shared by every kernel). The
    `loop_helper` functions it calls are compiled first and bound in its module in their
    place (a compiled loop can only call compiled functions). With `signatures`, just those
    are compiled (or loaded) now and numba converts each call's arguments to one of them."""
    import numba

    for name in fn.__code__.co_names:
        helper = fn.__globals__.get(name)
        if isinstance(helper, types.FunctionType) and getattr(helper, "_loop_helper", False):
            fn.__globals__[name] = compiled(helper)   # (a dispatcher already, once bound)
    jit = numba.njit(list(signatures), cache=True, nogil=True, error_model="numpy") \
        if signatures else numba.njit(cache=True, nogil=True, error_model="numpy")
    return jit(fn)


def loop_helper(fn):
    """Marks `fn` as called by compiled loops: it is compiled when the first of them is."""
    fn._loop_helper = True
    return fn


def _one_more(x):
    return x + 1


def load_runtime() -> None:
    """Brings numba up now (its import, type system and LLVM JIT: 1-2 s and 190 MB, mostly
    shared-library pages) rather than in the first step that runs a compiled kernel: for host
    programs that want start-up costs paid up front, like the benchmarks' framework load."""
    compiled(_one_more)(1)
