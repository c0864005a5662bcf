"""String decoding ops: DecodeRaw, DecodeCSV, StringToNumber, SerializeTensor, ParseTensor.

SerializeTensor / ParseTensor carry a tensor as a serialized TensorProto in a string.

Input pipelines read records as strings and decode them with these ops; their kernels live in
kernels/decode.py. None of them is differentiable.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, TypeAttr, define_op
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["decode_csv", "decode_json_example", "decode_raw", "parse_tensor", "serialize_tensor",
           "string_to_number"]

_d = _dtypes
RAW_TYPES = (_d.float16, _d.float32, _d.float64, _d.int32, _d.uint16, _d.uint8, _d.int16,
             _d.int8, _d.int64, _d.complex64, _d.complex128, _d.bool, _d.bfloat16)
CSV_TYPES = (_d.float32, _d.float64, _d.int32, _d.int64, _d.string)
NUMBER_TYPES = (_d.float32, _d.float64, _d.int32, _d.int64, _d.uint32, _d.uint64)


def _decode_raw_shape(ctx):
    """The input's shape plus one dimension: the elements of each string."""
    return ctx.input_shape(0).concatenate([None])


def _decode_csv_shape(ctx):
    """Every column is shaped like `records`; each default is a scalar or of length 0 or 1."""
    for shape in ctx.input_shapes[1:]:
        shape = shape.with_rank_at_most(1)
        if shape.ndims == 1 and shape[0].value is not None and shape[0].value > 1:
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a "
                             "scalar.")
    return [ctx.input_shape(0)] * (len(ctx.inputs) - 1)


DecodeRaw = define_op(
    "DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
    attrs=[TypeAttr("out_type", RAW_TYPES), Attr("little_endian", "bool", True)],
    shape_fn=_decode_raw_shape, not_differentiable=True)

DecodeJSONExample = define_op(
    "DecodeJSONExample", inputs=["json_examples: string"], outputs=["binary_examples: string"],
    shape_fn=lambda ctx: ctx.input_shape(0), not_differentiable=True,
    doc="tf.train.Example protos written in protobuf's JSON mapping, serialized as binary.")


def decode_json_example(json_examples, name=None):
    """The binary serializations of Example protos given in protobuf's JSON mapping (as
    `json_format.MessageToJson` writes them), shaped like `json_examples`.

    Running it raises InvalidArgumentError ("Error while parsing JSON: ...") for text that is
    not an Example in JSON.
    """
    return apply_op(DecodeJSONExample, [json_examples], {}, name=name)


DecodeCSV = define_op(
    "DecodeCSV", inputs=["records: string", Arg("record_defaults", type_list_attr="OUT_TYPE")],
    outputs=[Arg("output", type_list_attr="OUT_TYPE")],
    attrs=[Attr("OUT_TYPE", "list(type)", allowed=frozenset(CSV_TYPES), minimum=1),
           Attr("field_delim", "string", ","), Attr("use_quote_delim", "bool", True),
           Attr("na_value", "string", ""), Attr("select_cols", "list(int)", [])],
    shape_fn=_decode_csv_shape, not_differentiable=True)

StringToNumber = define_op(
    "StringToNumber", inputs=["string_tensor: string"], outputs=["output: out_type"],
    attrs=[TypeAttr("out_type", NUMBER_TYPES, default=_d.float32)],
    shape_fn=lambda ctx: ctx.input_shape(0), not_differentiable=True)

SerializeTensor = define_op(
    "SerializeTensor", inputs=["tensor: T"], outputs=["serialized: string"],
    shape_fn=lambda ctx: _ts.TensorShape([]), not_differentiable=True)

ParseTensor = define_op(
    "ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"],
    attrs=[TypeAttr("out_type")],
    shape_fn=shape_fns.unknown, not_differentiable=True)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None,
               bytes=None):  # noqa: A002 - TF1's deprecated argument name
    """Reinterprets the bytes of each string as a vector of `out_type` numbers.

    Args:
      input_bytes: string Tensor; every string must have the same length, a multiple of
        `out_type`'s size.
      out_type: the element type (half, float, double, int8/16/32/64, uint8/16, complex, bool,
        bfloat16).
      little_endian: whether multi-byte numbers are stored little-endian.
      name: the op name.
      bytes: deprecated alias of `input_bytes`.

    Returns:
      A Tensor of shape `input_bytes.shape + [length / size]`.
    """
    if bytes is not None:
        if input_bytes is not None:
            raise ValueError("Cannot specify both 'bytes' and 'input_bytes'")
        input_bytes = bytes
    if input_bytes is None or out_type is None:
        raise ValueError("decode_raw needs input_bytes and out_type")
    return apply_op(DecodeRaw, [input_bytes],
                    {"out_type": _d.as_dtype(out_type), "little_endian": little_endian},
                    name=name or "DecodeRaw")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Converts CSV records to one tensor per column.

    Args:
      records: string Tensor, one CSV line per element.
      record_defaults: one default per column, each a scalar or 1-element list of the column's
        type (float32, float64, int32, int64, string); an empty one makes the column required.
      field_delim: the one-character field separator.
      use_quote_delim: treat double quotes as quoting fields ("" is an escaped quote).
      name: the op name.
      na_value: a field equal to this string takes the column's default.
      select_cols: sorted column indices to keep (one per default).

    Returns:
      A list of Tensors shaped like `records`, one per column.

    Raises:
      ValueError: if select_cols is not strictly increasing, negative, or of the wrong length.
    """
    if select_cols is not None:
        select_cols = list(select_cols)
        if any(c < 0 for c in select_cols):
            raise ValueError("select_cols contains negative values.")
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    defaults = [convert_to_tensor(d) for d in record_defaults]
    for d in defaults:
        if d.dtype.base_dtype not in CSV_TYPES:
            raise TypeError(f"Value passed to parameter 'record_defaults' has DataType "
                            f"{d.dtype.base_dtype.name} not in list of allowed values: "
                            "float32, float64, int32, int64, string")
    return apply_op(DecodeCSV, [records, defaults],
                    {"field_delim": field_delim, "use_quote_delim": use_quote_delim,
                     "na_value": na_value, "select_cols": select_cols or []},
                    name=name or "DecodeCSV")


def string_to_number(string_tensor=None, out_type=_d.float32, name=None,
                     input=None):  # noqa: A002 - TF1's deprecated argument name
    """Parses each string as a number of `out_type` (float32 by default).

    Args:
      string_tensor: string Tensor.
      out_type: float32, float64, int32, int64, uint32 or uint64.
      name: the op name.
      input: deprecated alias of `string_tensor`.

    Raises:
      InvalidArgumentError: at run time for a string that is not a number of that type.
    """
    string_tensor = input if string_tensor is None else string_tensor
    return apply_op(StringToNumber, [string_tensor], {"out_type": _d.as_dtype(out_type)},
                    name=name or "StringToNumber")


def serialize_tensor(tensor, name=None):
    """A scalar string holding `tensor` as a serialized TensorProto."""
    return apply_op(SerializeTensor, [tensor], name=name or "SerializeTensor")


def parse_tensor(serialized, out_type, name=None):
    """The tensor of a serialized TensorProto; its dtype must be `out_type`.

    Raises:
      InvalidArgumentError: at run time if the proto does not parse or has another dtype.
    """
    return apply_op(ParseTensor, [serialized], {"out_type": _d.as_dtype(out_type)},
                    name=name or "ParseTensor")
