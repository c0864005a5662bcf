"""Regular expressions on strings: RegexFullMatch, RegexReplace and their Static forms.

TensorFlow's wrappers pick the Static op (pattern and rewrite as attrs, compiled once) when the
pattern is a Python string, else the op taking them as scalar string tensors. Patterns are RE2
syntax; the kernels (kernels/strings_regex.py) run them with Python's `re` on the UTF-8 text,
which agrees with RE2 on the common syntax (classes, groups, repetition, anchors, \\d \\w \\s).
"""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op

__all__ = ["regex_replace"]


def _scalar_inputs_shape(*indices):
    """Input 0's shape, after checking that inputs `indices` are scalars."""
    def shape_fn(ctx):
        for i in indices:
            ndims = ctx.input_shape(i).ndims
            if ndims not in (None, 0):
                raise ValueError(f"Shape must be rank 0 but is rank {ndims}")
        return ctx.input_shape(0)
    return shape_fn


RegexFullMatch = define_op(
    "RegexFullMatch", inputs=["input: string", "pattern: string"], outputs=["output: bool"],
    shape_fn=_scalar_inputs_shape(1), not_differentiable=True,
    doc="Whether each string matches the scalar `pattern` as a whole.")

StaticRegexFullMatch = define_op(
    "StaticRegexFullMatch", inputs=["input: string"], outputs=["output: bool"],
    attrs=[Attr("pattern", "string")], shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="Whether each string matches the `pattern` attr as a whole.")

RegexReplace = define_op(
    "RegexReplace", inputs=["input: string", "pattern: string", "rewrite: string"],
    outputs=["output: string"], attrs=[Attr("replace_global", "bool", True)],
    shape_fn=_scalar_inputs_shape(1, 2), not_differentiable=True,
    doc="Each string with matches of the scalar `pattern` replaced by `rewrite`.")

StaticRegexReplace = define_op(
    "StaticRegexReplace", inputs=["input: string"], outputs=["output: string"],
    attrs=[Attr("pattern", "string"), Attr("rewrite", "string"),
           Attr("replace_global", "bool", True)],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="Each string with matches of the `pattern` attr replaced by the `rewrite` attr.")


def _is_text(value) -> bool:
    return isinstance(value, (str, bytes))


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def regex_full_match(input, pattern, name=None):  # noqa: A002 - TF's argument name
    """Whether each string matches `pattern` entirely (tf.strings.regex_full_match).

    Args:
      input: a string Tensor.
      pattern: an RE2 regular expression: a Python string (StaticRegexFullMatch) or a scalar
        string Tensor (RegexFullMatch).
      name: a name for the operation.

    Returns:
      A bool Tensor shaped like `input`.

    Raises:
      InvalidArgumentError (when the op runs): for an invalid pattern.
    """
    if _is_text(pattern):
        return apply_op(StaticRegexFullMatch, [input], {"pattern": _text(pattern)},
                        name=name or "StaticRegexFullMatch")
    return apply_op(RegexFullMatch, [input, pattern], name=name or "RegexFullMatch")


def regex_replace(input, pattern, rewrite, replace_global=True,  # noqa: A002 - TF's name
                  name=None):
    """Replaces matches of `pattern` with `rewrite` in each string (tf.regex_replace).

    Args:
      input: a string Tensor.
      pattern: an RE2 regular expression (a Python string or a scalar string Tensor).
      rewrite: the replacement: `\\1`..`\\9` insert groups, `\\0` the whole match, `\\\\` a
        backslash. A rewrite naming a group the pattern lacks leaves the string unchanged, as
        RE2 does.
      replace_global: replace every non-overlapping match (True) or only the first.
      name: a name for the operation.

    Returns:
      A string Tensor shaped like `input`.

    Raises:
      InvalidArgumentError (when the op runs): for an invalid pattern.
    """
    if _is_text(pattern) and _is_text(rewrite):
        return apply_op(StaticRegexReplace, [input],
                        {"pattern": _text(pattern), "rewrite": _text(rewrite),
                         "replace_global": replace_global}, name=name or "StaticRegexReplace")
    return apply_op(RegexReplace, [input, pattern, rewrite],
                    {"replace_global": replace_global}, name=name or "RegexReplace")
