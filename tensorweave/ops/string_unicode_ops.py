"""UnicodeTranscode: strings re-encoded from one Unicode encoding to another.

TensorFlow's other unicode ops (unicode_decode, unicode_encode, unicode_split) produce or take
RaggedTensors, which tensorweave does not have. The kernel is in kernels/string_unicode.py.
"""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op

__all__ = ["unicode_transcode"]

OUTPUT_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
ERRORS = ("strict", "replace", "ignore")

UnicodeTranscode = define_op(
    "UnicodeTranscode", inputs=["input: string"], outputs=["output: string"],
    attrs=[Attr("input_encoding", "string"), Attr("output_encoding", "string"),
           Attr("errors", "string", "replace"), Attr("replacement_char", "int", 65533),
           Attr("replace_control_characters", "bool", False)],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="Each string decoded from input_encoding and encoded in output_encoding.")


def _check_choice(attr: str, value: str, choices) -> str:
    if value not in choices:
        allowed = ", ".join(f'"{c}"' for c in choices)
        raise ValueError(f"Attr '{attr}' of 'UnicodeTranscode' Op passed string '{value}' "
                         f"not in: {allowed}.")
    return value


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Transcodes each string from `input_encoding` to `output_encoding`
    (tf.strings.unicode_transcode).

    Invalid input sequences are handled as `errors` says, each maximal invalid subsequence
    counting once (b"x\\xe2\\x82y" has one).

    Args:
      input: a string Tensor.
      input_encoding: the encoding of `input`, e.g. "UTF-8", "UTF-16-BE", "UTF-32-BE",
        "ISO-8859-1"; an unknown one is an InvalidArgumentError when the op runs.
      output_encoding: one of "UTF-8", "UTF-16-BE", "UTF-32-BE".
      errors: "replace" (each invalid sequence becomes `replacement_char`), "ignore" (dropped)
        or "strict" (InvalidArgumentError).
      replacement_char: the code point replacing invalid sequences; a surrogate gives U+FFFD,
        one above U+10FFFF is an InvalidArgumentError when the op runs.
      replace_control_characters: also replace (or with "ignore", drop) the C0 control
        characters U+0000 to U+001F.
      name: a name for the operation.

    Returns:
      A string Tensor shaped like `input`.

    Raises:
      ValueError: for an `output_encoding` or `errors` not listed above.
    """
    attrs = {"input_encoding": input_encoding,
             "output_encoding": _check_choice("output_encoding", output_encoding,
                                              OUTPUT_ENCODINGS),
             "errors": _check_choice("errors", errors, ERRORS),
             "replacement_char": replacement_char,
             "replace_control_characters": replace_control_characters}
    return apply_op(UnicodeTranscode, [input], attrs, name=name or "UnicodeTranscode")
