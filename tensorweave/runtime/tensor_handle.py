"""TensorHandle: what fetching a tf.get_session_handle tensor returns (ops/session_ops.py).

It names a value kept in its session. It can be fed for any tensor of its dtype (its value is
read back first) or for a handle placeholder (its string). A value lives until `delete()`, until
the session closes, or, once its handle is garbage collected, until the session's next run
after DEAD_HANDLES_THRESHOLD such handles have piled up (TensorFlow's batching).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes


class TensorHandle:
    """A value kept in a session (what fetching a get_session_handle tensor returns)."""

    def __init__(self, handle, dtype, session):
        self._handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        self._dtype = _dtypes.as_dtype(dtype)
        self._session = session
        self._deleted = False

    def __del__(self):
        if not self._deleted:
            try:
                self._session.register_dead_handle(self._handle)
            except Exception:  # noqa: BLE001 - at interpreter exit, nothing is left to free
                pass

    def __str__(self) -> str:
        return self._handle

    def __repr__(self) -> str:
        return f"<TensorHandle {self._handle} dtype={self._dtype.name}>"

    @property
    def handle(self) -> str:
        return self._handle

    def get_raw_handle(self) -> str:
        return self._handle

    def to_numpy_array(self) -> np.ndarray:
        """The handle as a feed value for a handle placeholder."""
        return np.array(self._handle.encode(), dtype=object)

    def eval(self):
        """The kept value, read back in its session."""
        holder, tensor = self._session.handle_reader(self)
        return self._session.run(tensor, {holder: self._handle})

    def delete(self) -> None:
        """Frees the kept value."""
        holder, deleter = self._session.handle_deleter(self._handle, 0)
        self._session.run(deleter, {holder: self._handle})
        self._deleted = True
