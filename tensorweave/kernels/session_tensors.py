"""Kernels of the session tensor store (ops/session_ops.py): values kept between runs, in the
session (the kernels' context's session object), freed with it."""
from __future__ import annotations

import itertools
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel


class _Store:
    def __init__(self):
        self.values: dict[str, np.ndarray] = {}
        self.ids = itertools.count()
        self.lock = threading.Lock()


_STORES_LOCK = threading.Lock()


def _store(ctx) -> _Store:
    """The store of the session running the kernel (made on first use)."""
    owner = ctx.session
    store = getattr(owner, "_session_tensor_store", None)
    if store is None:
        with _STORES_LOCK:
            store = getattr(owner, "_session_tensor_store", None)
            if store is None:
                store = _Store()
                owner._session_tensor_store = store
    return store


def _key(handle) -> str:
    handle = handle.item() if isinstance(handle, np.ndarray) else handle
    return handle.decode(errors="replace") if isinstance(handle, bytes) else str(handle)


@kernel("GetSessionHandle")
def _get_session_handle(ctx, value):
    store = _store(ctx)
    with store.lock:
        handle = f"{ctx.node_name};{next(store.ids)};{ctx.device.name}"
        store.values[handle] = np.array(value, copy=True)
    return np.array(handle.encode(), dtype=object)


@kernel("GetSessionTensor")
def _get_session_tensor(ctx, handle):
    key = _key(handle)
    value = _store(ctx).values.get(key)
    if value is None:
        raise errors.InvalidArgumentError(
            None, None, f"The tensor with handle '{key}' is not in the session store.")
    dtype = ctx.attrs["dtype"]
    if value.dtype != np.dtype(dtype.as_numpy_dtype):
        raise errors.InternalError(
            None, None, f"Output 0 of type {value.dtype.name} does not match declared output "
            f"type {dtype.name} for node {ctx.node_name}")
    return value


@kernel("DeleteSessionTensor")
def _delete_session_tensor(ctx, handle):
    key = _key(handle)
    store = _store(ctx)
    with store.lock:
        if store.values.pop(key, None) is None:
            raise errors.InvalidArgumentError(
                None, None, f"The tensor with handle '{key}' is not in the session store.")
