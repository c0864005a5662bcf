"""TensorFlow's runtime error classes and canonical error codes (`tf.errors`).

`OpError` carries the failing node's `node_def`, the `op` (the graph `Operation`, when known), a
message and a canonical error code; one subclass exists per code, with TensorFlow's constructor
signatures (`InvalidArgumentError(node_def, op, message)`), so runtime errors can be caught by
class exactly as in TensorFlow.

Errors pickle (the distributed runtime sends them between processes). An `Operation` belongs to
one process's graph, so a pickled error keeps `node_def`, `message` and the code but not `op`:
after unpickling, `op` is None.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", "exception_type_from_error_code", "error_code_from_exception_type",
]

# Canonical error codes (tensorflow/core/protobuf/error_codes.proto).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class InaccessibleTensorError(ValueError):
    """A fetch of a tensor or op the graph marked not fetchable (one built inside a cond
    branch or a while loop: its value exists only within that block)."""


class OpError(Exception):
    """A generic error raised when TensorFlow execution fails.

    Whenever possible the runtime raises a more specific subclass, such as
    `InvalidArgumentError` or `OutOfRangeError`.

    Args:
        node_def: The `NodeDef` of the op that failed, if known; otherwise None.
        op: The `Operation` that failed, if known; otherwise None.
        message: The message describing the failure.
        error_code: The canonical error code (an int, e.g. `INVALID_ARGUMENT`).
        *args: Optionally, a dict of experimental payloads (string keys and values).
    """

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int | None,
                 *args: Any) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self._experimental_payloads = dict(args[0]) if args and args[0] else {}

    @property
    def message(self) -> str:
        """The error message that describes the error."""
        return self._message

    @property
    def op(self) -> Any:
        """The `Operation` that failed, or None (e.g. for ops synthesized by the runtime)."""
        return self._op

    @property
    def node_def(self) -> Any:
        """The `NodeDef` of the op that failed, or None."""
        return self._node_def

    @property
    def error_code(self) -> int | None:
        """The canonical integer error code of this error."""
        return self._error_code

    @property
    def experimental_payloads(self) -> dict[str, str]:
        """Extra key/value details attached to the error."""
        return self._experimental_payloads

    def __str__(self) -> str:
        return str(self._message)

    def _init_args(self) -> tuple[Any, ...]:
        """Positional constructor arguments that rebuild this error (used by pickle)."""
        return (self._node_def, None, self._message, self._error_code)

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        args = self._init_args()
        if self._experimental_payloads:
            args += (self._experimental_payloads,)
        return type(self), args


class _CodedError(OpError):
    """Base of the subclasses whose error code is fixed by the class (`_code`)."""

    _code: int = UNKNOWN

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        super().__init__(node_def, op, message, self._code, *args)

    def _init_args(self) -> tuple[Any, ...]:
        return (self._node_def, None, self._message)


class CancelledError(_CodedError):
    """Raised when an operation or step is cancelled.

    For example, a long-running queue enqueue is cancelled when its queue is closed with
    `cancel_pending_enqueues=True` or when the session is closed.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = CANCELLED


class UnknownError(OpError):
    """Unknown error, e.g. an error from another error space or a Python exception in a kernel.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
        error_code: The error code; `UNKNOWN` by default.
    """

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int = UNKNOWN,
                 *args: Any) -> None:
        super().__init__(node_def, op, message, error_code, *args)


class InvalidArgumentError(_CodedError):
    """Raised when an operation receives an invalid argument (bad value or shape, missing feed).

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = INVALID_ARGUMENT


def invalid_argument(message: str) -> InvalidArgumentError:
    """An InvalidArgumentError without node or op: the executor adds them and the creation site."""
    return InvalidArgumentError(None, None, message)


class DeadlineExceededError(_CodedError):
    """Raised when a deadline (e.g. `timeout_in_ms`) expires before an operation completes.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = DEADLINE_EXCEEDED


class NotFoundError(_CodedError):
    """Raised when a requested entity (e.g. a file or a checkpoint variable) was not found.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = NOT_FOUND


class AlreadyExistsError(_CodedError):
    """Raised when an entity that we attempted to create already exists.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = ALREADY_EXISTS


class PermissionDeniedError(_CodedError):
    """Raised when the caller does not have permission to run an operation.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = PERMISSION_DENIED


class UnauthenticatedError(_CodedError):
    """Raised when the request does not have valid authentication credentials.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = UNAUTHENTICATED


class ResourceExhaustedError(_CodedError):
    """Raised when some resource (memory, quota, disk space) has been exhausted.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = RESOURCE_EXHAUSTED


class FailedPreconditionError(_CodedError):
    """Raised when the system is not in a state to run an operation.

    Most commonly raised when reading a variable before it has been initialized.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = FAILED_PRECONDITION


class AbortedError(_CodedError):
    """Raised when an operation was aborted, typically due to a concurrent action.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = ABORTED


class OutOfRangeError(_CodedError):
    """Raised when an operation iterates past the valid input range.

    For example, dequeuing from a closed, empty queue or reading past the end of a dataset.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = OUT_OF_RANGE


class UnimplementedError(_CodedError):
    """Raised when an operation has not been implemented for the given arguments.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = UNIMPLEMENTED


class InternalError(_CodedError):
    """Raised when the runtime breaks one of its own invariants.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = INTERNAL


class UnavailableError(_CodedError):
    """Raised when the runtime (e.g. a remote worker) is currently unavailable.

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = UNAVAILABLE


class DataLossError(_CodedError):
    """Raised when unrecoverable data loss or corruption is encountered (e.g. a bad checkpoint).

    Args:
        node_def: The `NodeDef` of the op that failed, or None.
        op: The `Operation` that failed, or None.
        message: The message describing the failure.
    """

    _code = DATA_LOSS


_CODE_TO_EXCEPTION_CLASS: dict[int, type[OpError]] = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
}
_EXCEPTION_CLASS_TO_CODE: dict[type[OpError], int] = {
    cls: code for code, cls in _CODE_TO_EXCEPTION_CLASS.items()}


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    """Returns the `OpError` subclass for a canonical error code.

    Args:
        error_code: A canonical error code from 1 (`CANCELLED`) to 16 (`UNAUTHENTICATED`).

    Returns:
        The exception class, e.g. `InvalidArgumentError` for `INVALID_ARGUMENT`.

    Raises:
        KeyError: If `error_code` is not the code of an error class.
    """
    return _CODE_TO_EXCEPTION_CLASS[error_code]


def error_code_from_exception_type(cls: type) -> int:
    """Returns the canonical error code of an exception class.

    A subclass of one of the error classes gets its parent's code; any other class gets
    `UNKNOWN`.

    Args:
        cls: An exception class.

    Returns:
        The canonical error code.
    """
    for klass in getattr(cls, "__mro__", ()):
        code = _EXCEPTION_CLASS_TO_CODE.get(klass)
        if code is not None:
            return code
    return UNKNOWN


def _make_specific_exception(node_def: Any, op: Any, message: str, error_code: int) -> OpError:
    """Builds the exception of the class matching `error_code` (UnknownError if none)."""
    cls = _CODE_TO_EXCEPTION_CLASS.get(error_code)
    if cls is None or cls is UnknownError:
        return UnknownError(node_def, op, message, error_code)
    return cls(node_def, op, message)
