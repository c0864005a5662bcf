"""What crosses the wire: arrays as TensorProtos (checked on arrival) and errors as statuses.

An error travels as its canonical code and message, in the response body
(`store_errors_in_response_body`) or as the gRPC status of the call; either way the receiver
raises the same `tensorweave.errors` class.
"""
from __future__ import annotations

import math
import re

import numpy as np

from tensorweave.framework import errors, graph_io

_GRPC_CODES = None
# gRPC options of every server and channel: TensorFlow's take any protobuf (up to 2 GiB).
MESSAGE_SIZE_OPTIONS = [("grpc.max_receive_message_length", (1 << 31) - 1),
                        ("grpc.max_send_message_length", (1 << 31) - 1)]
# Protobuf messages stop at 2 GiB: no tensor arriving whole holds more than 2 GiB of 8-byte
# elements, so a small proto (a shape and no values) cannot make a receiver allocate more.
MAX_TENSOR_ELEMENTS = 1 << 28
# How a runtime error names its node (runtime/executor/kernel_errors.py).
_NODE_IN_MESSAGE = re.compile(r"\[\[node (?P<name>\S+) \(op (?P<op>[^)]*)\) on device "
                              r"(?P<device>\S+), defined at (?P<site>[^\]]*)\]\]")


def tensor_proto(value):
    """The TensorProto of a value (numbers as tensor_content, strings as string_val)."""
    return graph_io.ndarray_to_tensor_proto(np.asarray(value))


def ndarray(proto, what: str) -> np.ndarray:
    """The array a received TensorProto holds.

    Raises:
      InvalidArgumentError: for an unknown dtype, a negative dimension, a shape of more
        elements than a message can carry, or content whose size does not match the shape,
        naming `what` (the feed or fetch it is).
    """
    check_dims([d.size for d in proto.tensor_shape.dim], what)
    try:
        return graph_io.tensor_proto_to_ndarray(proto)
    except (TypeError, ValueError, KeyError) as e:
        raise errors.InvalidArgumentError(None, None, f"{what}: malformed TensorProto: "
                                          f"{e}") from None


def check_dims(dims: list[int], what: str) -> None:
    """InvalidArgumentError for a negative dimension, or more elements than a message can
    carry (a small proto may not ask for a huge array)."""
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(None, None, f"{what}: a dimension of the received "
                                          "tensor is negative")
    if math.prod(dims) > MAX_TENSOR_ELEMENTS:
        raise errors.InvalidArgumentError(None, None, f"{what}: the received tensor's shape "
                                          f"{dims} has more than {MAX_TENSOR_ELEMENTS} "
                                          "elements")


def raise_status(code: int, message: str, graph=None):
    """Raises the `tensorweave.errors` class of canonical `code` with `message`; a node the
    message names that `graph` (the client's) has becomes the error's `op`, and the line that
    created it replaces the server's (where the node was only imported)."""
    try:
        cls = errors.exception_type_from_error_code(code)
    except KeyError:
        cls = errors.UnknownError
    op = None
    match = _NODE_IN_MESSAGE.search(message) if graph is not None else None
    if match is not None:
        op = graph._ops_by_name.get(match["name"])
        if op is not None:
            file, line = op.creation_site
            message = (message[:match.start("site")] + f"{file}:{line}" +
                       message[match.end("site"):])
    raise cls(op.node_def if op is not None else None, op, message)


def grpc_code(code: int):
    """The grpc.StatusCode of canonical error `code` (their numbers are the same)."""
    global _GRPC_CODES
    if _GRPC_CODES is None:
        import grpc
        _GRPC_CODES = {status.value[0]: status for status in grpc.StatusCode}
    return _GRPC_CODES.get(code, _GRPC_CODES[2])


def raise_rpc_error(error, what: str):
    """Raises the `tensorweave.errors` class of a failed gRPC call `error` (a grpc.RpcError;
    anything else is an UnknownError); an unreachable peer's message says which call."""
    code = error.code() if hasattr(error, "code") else None
    if code is None:
        raise errors.UnknownError(None, None, f"{what}: {error!r}")
    details = error.details() or ""
    number = code.value[0]
    raise_status(number, f"{what}: {details}" if number in (4, 14) else details)
