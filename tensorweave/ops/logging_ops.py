"""Assertions, logging and the clock: Assert, check_numerics, Print, tf.print, tf.timestamp.

tf.print is StringFormat + PrintV2; tf.timestamp is Timestamp, the wall-clock time when it runs.

These ops are stateful so that no graph pass folds or merges them away. Assert and PrintV2 have
no outputs: they run only when fetched or used as a control dependency, as in TF1 graph mode.
Their text follows TensorFlow's formats (see `kernels/logging.py`).

TensorFlow guards an Assert whose data is not all string/int32 with a cond (AssertGuard) so
the data need not be copied to the host; here the Assert op is always added directly (named
"<scope>/Assert"), which behaves the same on a CPU.
"""
from __future__ import annotations

import sys

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OP_REGISTRY, Arg, Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like

__all__ = ["Assert", "Print", "check_numerics", "print", "timestamp"]

Assert_ = define_op(
    "Assert", inputs=["condition: bool", Arg("data", type_list_attr="T")],
    attrs=[Attr("T", "list(type)", minimum=1), Attr("summarize", "int", 3)],
    is_stateful=True, doc="InvalidArgumentError listing `data` if `condition` is false.")

CheckNumerics = define_op(
    "CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.FLOATING), Attr("message", "string")],
    shape_fn=shape_fns.unchanged, is_stateful=True,
    doc="Passes `tensor` through; InvalidArgumentError if it holds NaN or Inf.")

CheckNumericsV2 = define_op(
    "CheckNumericsV2", inputs=["tensor: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.FLOATING), Attr("message", "string")],
    shape_fn=shape_fns.unchanged, is_stateful=True,
    doc="CheckNumerics telling -Inf from +Inf (what enable_check_numerics inserts).")


def _check_numerics_gradient(op, grad):
    """The gradient passes through, checked too (TensorFlow's gradient of CheckNumerics)."""
    message = op.get_attr("message")
    message = message.decode() if isinstance(message, bytes) else message
    message = "Not a number (NaN) or infinity (Inf) values detected in gradient. " + message
    return [apply_op(OP_REGISTRY[op.type], [grad], {"message": message})]


CheckNumerics.gradient(_check_numerics_gradient)
CheckNumericsV2.gradient(_check_numerics_gradient)

Print_ = define_op(
    "Print", inputs=["input: T", Arg("data", type_list_attr="U")], outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("U", "list(type)", minimum=0), Attr("message", "string", ""),
           Attr("first_n", "int", -1), Attr("summarize", "int", 3)],
    shape_fn=shape_fns.unchanged, is_stateful=True,
    doc="Identity on `input` that logs `message` and `data` to stderr.")

@Print_.gradient
def _print_gradient(op, grad):
    """Print is an identity of its first input; the printed data get no gradient (TF's)."""
    return [grad] + [None] * (len(op.inputs) - 1)


StringFormat = define_op(
    "StringFormat", inputs=[Arg("inputs", type_list_attr="T")], outputs=["output: string"],
    attrs=[Attr("T", "list(type)", minimum=0), Attr("template", "string", "%s"),
           Attr("placeholder", "string", "%s"), Attr("summarize", "int", 3)],
    shape_fn=shape_fns.scalar, not_differentiable=True,
    doc="A scalar string: `template` with each placeholder replaced by an input's text.")

PrintV2 = define_op(
    "PrintV2", inputs=["input: string"],
    attrs=[Attr("output_stream", "string", "stderr"), Attr("end", "string", "\n")],
    is_stateful=True, doc="Writes the scalar string `input` + `end` to `output_stream`.")

Timestamp = define_op(
    "Timestamp", outputs=["ts: float64"], shape_fn=shape_fns.scalar, is_stateful=True,
    not_differentiable=True, doc="Seconds since the Unix epoch when the op runs.")


def _convert_list(values, prefix: str) -> list[Tensor]:
    """Python values become Consts named `<prefix>_<i>` (like TF's generated wrappers)."""
    return [v if isinstance(v, Tensor) else convert_to_tensor(v, name=f"{prefix}_{i}")
            for i, v in enumerate(values)]


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF1's name
    """Asserts that the given condition is true (TF1's tf.Assert).

    If `condition` is false when the op runs, the step fails with InvalidArgumentError
    "assertion failed: [d0] [d1] ..." listing the first `summarize` entries of each `data`
    tensor. The op has no outputs: fetch it, or make other ops depend on it with
    `tf.control_dependencies`.

    Args:
      condition: a scalar boolean Tensor (or Python bool).
      data: a non-empty list of Tensors (or Python values) to print when the assertion fails.
      summarize: how many entries of each tensor to print (default 3; negative: all).
      name: a name scope for the op (default "Assert").

    Returns:
      The Assert Operation.

    Raises:
      TypeError: if `condition` is not boolean or `data` is not a list.
      ValueError: if `data` is empty.
    """
    if isinstance(data, Tensor) or not isinstance(data, (list, tuple)):
        raise TypeError("values must be a sequence.")
    if not data:
        raise ValueError("Attr 'T' of 'Assert' Op passed list of length 0 less than "
                         "minimum 1.")
    if isinstance(condition, Tensor) and condition.dtype.base_dtype != _dtypes.bool:
        raise TypeError(f"Input 'condition' of 'Assert' Op has type "
                        f"{condition.dtype.base_dtype.name} that does not match expected type "
                        "of bool.")
    attrs = {} if summarize is None else {"summarize": summarize}
    with name_scope(name, "Assert", [condition, data]):
        with name_scope(None, "Assert") as op_name:
            if not isinstance(condition, Tensor):
                condition = convert_to_tensor(condition, dtype=_dtypes.bool, name="condition")
            data = _convert_list(data, "data")
            return apply_op(Assert_, [condition, data], attrs, name=op_name)


def check_numerics(tensor, message, name=None):
    """Checks a tensor for NaN and Inf values (TF1's tf.check_numerics).

    Args:
      tensor: a floating-point Tensor.
      message: the text the error starts with.
      name: a name for the operation (default "CheckNumerics").

    Returns:
      `tensor`'s value, unchanged; running it fails with InvalidArgumentError
      "<message> : Tensor had NaN values" (or "Inf", or "Inf and NaN") if any is present.

    Raises:
      TypeError: for a non-floating `tensor`.
    """
    return apply_op(CheckNumerics, [tensor], {"message": str(message)}, name=name)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Prints a list of tensors as a side effect of computing `input_` (TF1's tf.Print).

    The returned tensor equals `input_`; whenever it is computed, `message` followed by the
    first `summarize` entries of each `data` tensor (each in brackets) is written to stderr.
    Deprecated in TensorFlow in favour of `tf.print`.

    Args:
      input_: the Tensor passed through.
      data: a list of Tensors (or Python values) to print.
      message: a string prefix for the printed line.
      first_n: print only the first `first_n` times the op runs in a session (negative or
        None: always).
      summarize: entries printed per tensor (default 3; negative: all).
      name: a name for the operation (default "Print").

    Returns:
      A Tensor with the value, shape and dtype of `input_`.

    Raises:
      TypeError: if `data` is not a list.
    """
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"Expected list for 'data' argument to 'Print' Op, not {data!r}.")
    attrs = {}
    for key, value in (("message", message), ("first_n", first_n), ("summarize", summarize)):
        if value is not None:
            attrs[key] = str(value) if key == "message" else int(value)
    with name_scope(name, "Print") as op_name:
        data = _convert_list(data, "data")
        return apply_op(Print_, [input_, data], attrs, name=op_name)


# --- tf.print --------------------------------------------------------------------------------
_LOG_STREAMS = {"info": "log(info)", "warning": "log(warning)", "warn": "log(warning)",
                "error": "log(error)"}


def _stream_name(output_stream) -> str:
    """PrintV2's `output_stream` attr for what the user passed."""
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    if output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    from tensorweave.platform import tf_logging
    for attr, stream in _LOG_STREAMS.items():
        if output_stream is getattr(tf_logging, attr, None):
            return stream
    levels = {tf_logging.INFO: "log(info)", tf_logging.WARN: "log(warning)",
              tf_logging.ERROR: "log(error)"}
    if type(output_stream) is int and output_stream in levels:
        return levels[output_stream]
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError(f"Unsupported output stream, logging level, or file.{output_stream}. "
                     "Supported streams are sys.stdout, sys.stderr, tf.logging.info, "
                     "tf.logging.warning, tf.logging.error. File needs to be in the form of "
                     "'file://<filepath>'.")


class _Slot:
    """Stands for a tensor inside a printed Python structure; its repr is the placeholder."""

    def __init__(self, placeholder: str):
        self.placeholder = placeholder

    def __repr__(self) -> str:
        return self.placeholder


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor) or is_tensor_like(x)


def _with_slots(x, slot: _Slot, tensors: list):
    """`x` with every tensor replaced by `slot` (recorded in `tensors`); dicts by sorted key."""
    if _is_tensor(x):
        tensors.append(x)
        return slot
    if isinstance(x, dict):
        return {k: _with_slots(x[k], slot, tensors) for k in sorted(x)}
    if isinstance(x, (list, tuple)):
        items = [_with_slots(v, slot, tensors) for v in x]
        if isinstance(x, list):
            return items
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    return x


def _template(inputs, sep: str):
    """(template, placeholder, tensors) for tf.print's inputs."""
    literal = sep + "".join(x for x in inputs if isinstance(x, str))
    placeholder, i = "{}", 0
    while placeholder in literal:
        placeholder, i = f"{{}}{i}", i + 1
    slot, pieces, tensors = _Slot(placeholder), [], []
    for x in inputs:
        if isinstance(x, str):
            pieces.append(x)
        elif _is_tensor(x):
            tensors.append(x)
            pieces.append(placeholder)
        else:
            pieces.append(str(_with_slots(x, slot, tensors)))
    return sep.join(pieces), placeholder, tensors


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """A scalar string Tensor: `template` with each `placeholder` replaced by the text of the
    matching tensor in `inputs` (TensorFlow's tf.strings.format).

    Raises:
      ValueError: if the number of placeholders differs from the number of inputs.
    """
    if isinstance(inputs, (Tensor,)) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    expected = template.count(placeholder)
    if expected != len(inputs):
        raise ValueError(f"The template expects {expected} tensors, but the inputs only has "
                         f"{len(inputs)}. Please ensure the number of placeholders in template "
                         "matches inputs length.")
    attrs = {"template": template, "placeholder": placeholder,
             "summarize": -1 if summarize is None else int(summarize)}
    return apply_op(StringFormat, [list(inputs)], attrs, name=name)


def print_v2(*inputs, **kwargs):
    """Prints the inputs (TF1's tf.print).

    Strings print as they are; tensors print NumPy-style, the first and last `summarize`
    entries of each dimension around "..." (strings quoted); Python structures holding tensors
    print like Python with the tensors' text in place. In graph mode this returns the PrintV2
    Operation, which prints only when it runs: fetch it, or use it as a control dependency.

    Args:
      *inputs: strings, Tensors and (nested) Python structures to print, separated by `sep`.
      output_stream: sys.stderr (default), sys.stdout, tf.logging.info/warning/error, or
        "file://<path>" (appended to).
      summarize: entries printed at each end of each dimension (default 3; None or -1: all).
      sep: the separator between inputs (default " ").
      end: printed after the inputs (default newline).
      name: a name for the operation.

    Returns:
      The PrintV2 Operation.

    Raises:
      ValueError: for an unknown keyword argument or an unsupported `output_stream`.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    name = kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream = _stream_name(output_stream)
    first = inputs[0] if len(inputs) == 1 else None
    if first is not None and _is_tensor(first):
        first = convert_to_tensor(first)
    if isinstance(first, Tensor) and first.dtype.base_dtype == _dtypes.string and \
            first.shape.ndims == 0:
        message = first  # a lone scalar string tensor prints as is
    else:
        template, placeholder, tensors = _template(inputs, sep)
        message = string_format(template, tensors, placeholder=placeholder,
                                summarize=summarize)
    return apply_op(PrintV2, [message], {"output_stream": stream, "end": end}, name=name)


print = print_v2  # noqa: A001 - TF1's `tf.print` (this module uses no builtin print)


def timestamp(name=None):
    """The time the op runs at, in seconds since the Unix epoch (tf.timestamp).

    The value has microsecond resolution, as in TensorFlow. The op is stateful: every run reads
    the clock again, and no graph optimization folds it into a constant or merges two of them.

    Args:
      name: A name for the operation (default "Timestamp").

    Returns:
      A scalar float64 Tensor.
    """
    return apply_op(Timestamp, [], name=name)
