"""Tensors kept in a session between runs: tf.get_session_handle, get_session_tensor and
delete_session_tensor, and the TensorHandle a fetched handle becomes (TF1's session_ops).

`sess.run(tf.get_session_handle(t))` leaves t's value in the session and returns a
TensorHandle whose string is "<op name>;<id>;<device>"; `get_session_tensor(handle, dtype)`
gives a string placeholder and the tensor it reads back (on the handle's device), and
`delete_session_tensor(handle)` a placeholder and the op that frees it. The TensorHandle class
is the session's (runtime/tensor_handle.py).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import device as _device
from tensorweave.ops.constant_op import placeholder

__all__ = ["delete_session_tensor", "get_session_handle", "get_session_tensor"]

GetSessionHandle = define_op(
    "GetSessionHandle", inputs=["value: T"], outputs=["handle: string"], attrs=[TypeAttr("T")],
    shape_fn=shape_fns.scalar, is_stateful=True, not_differentiable=True,
    doc="Keeps `value` in the session; outputs its handle string.")
GetSessionTensor = define_op(
    "GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"],
    attrs=[TypeAttr("dtype")], shape_fn=shape_fns.unknown,
    is_stateful=True, not_differentiable=True,
    doc="The value kept in the session under `handle`.")
DeleteSessionTensor = define_op(
    "DeleteSessionTensor", inputs=["handle: string"], attrs=[], is_stateful=True,
    doc="Frees the value kept in the session under `handle`.")


def get_session_handle(data, name=None):
    """A string tensor: running it keeps `data`'s value in the session and fetches a
    TensorHandle for it."""
    return apply_op(GetSessionHandle, [data], name=name)


def _handle_device(handle) -> str:
    """The device a handle's value lives on: the third field of its string."""
    text = getattr(handle, "handle", handle)   # a TensorHandle, or its string
    text = text.decode() if isinstance(text, bytes) else str(text)
    parts = text.split(";")
    return DeviceSpec.from_string(parts[2] if len(parts) == 3 else text).to_string()


def get_session_tensor(handle, dtype, name=None):
    """(string placeholder, tensor): feeding the placeholder a handle of the session makes
    the tensor its value; both on the handle's device."""
    with _device(_handle_device(handle)):
        holder = placeholder(_dtypes.string)
        return holder, apply_op(GetSessionTensor, [holder], {"dtype": _dtypes.as_dtype(dtype)},
                                name=name)


def delete_session_tensor(handle, name=None):
    """(string placeholder, op): running the op with a handle fed frees its value."""
    with _device(_handle_device(handle)):
        holder = placeholder(_dtypes.string)
        return holder, apply_op(DeleteSessionTensor, [holder], name=name)
