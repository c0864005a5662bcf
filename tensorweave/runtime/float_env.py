"""Denormal floats flush to zero in kernel threads, as in TensorFlow's thread pools.

A float below the smallest normal (1.2e-38 for float32) takes the CPU's slow microcoded path,
up to a hundred times the cost of a normal operation. Training makes such values routinely:
Adam's first moment of a weight whose unit has gone dead decays by beta1 every step and turns
denormal after about 800 steps (measured: mlp_train's Adam step went from 5.4 to 12-13 ms when
150,000 moments had decayed that far). TensorFlow runs every kernel with flush-to-zero and
denormals-are-zero set (`ScopedFlushDenormal` in its thread pools); so does tensorweave:

- threads the runtime owns (inter-op, partition and intra-op pools) set it once, for life;
- the thread that calls `Session.run` has it only for the duration of the step
  (`enter` / `leave`), so the caller's own NumPy code keeps IEEE behaviour.

The switch is glibc's `fegetenv` / `fesetenv` on the floating-point environment, whose layout
is known per architecture: on x86-64 the SSE control register MXCSR (FTZ bit 15, DAZ bit 6),
on AArch64 the FPCR (FZ bit 24). On any other platform or C library this does nothing.
"""
from __future__ import annotations

import ctypes
import platform
import struct
import threading

# (offset of the control register in glibc's fenv_t, the flush bits, sizeof(fenv_t))
_LAYOUTS = {"x86_64": (28, (1 << 15) | (1 << 6), 32), "AMD64": (28, (1 << 15) | (1 << 6), 32),
            "aarch64": (0, 1 << 24, 8), "arm64": (0, 1 << 24, 8)}


def _load():
    """(fegetenv, fesetenv, layout), or None where the layout or the functions are unknown."""
    layout = _LAYOUTS.get(platform.machine())
    if layout is None:
        return None
    try:
        libm = ctypes.CDLL("libm.so.6")
        get_env, set_env = libm.fegetenv, libm.fesetenv
    except (OSError, AttributeError):
        return None
    get_env.argtypes, get_env.restype = (ctypes.c_void_p,), ctypes.c_int
    set_env.argtypes, set_env.restype = (ctypes.c_char_p,), ctypes.c_int
    return get_env, set_env, layout


_FUNCTIONS = _load()
_REGISTER = struct.Struct("<I")
_scratch = threading.local()


def enter():
    """Sets flushing in the calling thread; returns what `leave` needs to undo it (None when
    flushing was already on, or is unsupported here)."""
    if _FUNCTIONS is None:
        return None
    get_env, set_env, (offset, bits, size) = _FUNCTIONS
    env = getattr(_scratch, "env", None)
    if env is None:
        env = _scratch.env = ctypes.create_string_buffer(size)
    get_env(env)
    register = _REGISTER.unpack_from(env, offset)[0]
    if register & bits == bits:
        return None
    saved = env.raw
    set_env(saved[:offset] + _REGISTER.pack(register | bits) + saved[offset + 4:])
    return saved


def leave(saved) -> None:
    """Restores the environment `enter` replaced."""
    if saved is not None:
        _FUNCTIONS[1](saved)


def flush_in_this_thread() -> None:
    """For a thread the runtime owns: flushing on for the thread's life (a pool initializer)."""
    enter()
