"""tf.raw_ops: every registered op as a keyword-only function of its OpDef's arguments.

`tf.raw_ops.ConcatV2(values=[a, b], axis=0)`, `tf.raw_ops.Cast(x=x, DstT=tf.float32)`: inputs
and attrs by their OpDef names, plus `name`; attrs a wrapper would infer (dtypes, list
lengths) are inferred. One output comes back as a tensor, several as a namedtuple of the
outputs' names (`tf.raw_ops.Unique(x=x).idx`), none as the Operation. Positional arguments
are refused with TensorFlow's TypeError. The functions are made on first use.
"""
from __future__ import annotations

import collections
import functools
import inspect
import re

from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OP_REGISTRY

# TensorFlow shows some OpDef arguments under other Python names (its api_defs):
# (op type, OpDef name) -> the keyword.
_KEYWORDS = {
    **{(op, "reduction_indices"): "axis" for op in (
        "All", "Any", "EuclideanNorm", "Max", "Mean", "Min", "Prod", "Sum")},
    ("ExpandDims", "dim"): "axis", ("Squeeze", "squeeze_dims"): "axis",
    ("Split", "split_dim"): "axis", ("SplitV", "split_dim"): "axis",
    ("Select", "t"): "x", ("Select", "e"): "y", ("Where", "input"): "condition",
    ("Conj", "x"): "input",
}


def _public_ops() -> list[str]:
    return sorted(name for name in OP_REGISTRY if not name.startswith("_"))


def __dir__() -> list[str]:
    return _public_ops()


def __getattr__(name: str):
    if name.startswith("_") or name not in OP_REGISTRY:
        raise AttributeError(f"module 'tensorweave.raw_ops' has no attribute {name!r}")
    return raw_op(name)


def snake_name(op_type: str) -> str:
    """TensorFlow's Python name of an op type: "ConcatV2" -> "concat_v2"."""
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", op_type)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


@functools.cache
def raw_op(op_type: str):
    """The keyword-only function of `op_type`."""
    op_def = OP_REGISTRY[op_type]
    input_names = [_KEYWORDS.get((op_type, a.name), a.name) for a in op_def.inputs]
    inferred = {a.type_attr for a in op_def.inputs if a.type_attr} | \
        {a.number_attr for a in op_def.inputs if a.number_attr} | \
        {a.type_list_attr for a in op_def.inputs if a.type_list_attr}
    attrs_left = [n for n in op_def.attrs if n not in inferred]
    # TensorFlow's order: inputs, the attrs that must be given, then those with defaults.
    attr_names = [n for n in attrs_left if not op_def.attrs[n].has_default] + \
        [n for n in attrs_left if op_def.attrs[n].has_default]
    attr_keys = {n: _KEYWORDS.get((op_type, n), n) for n in attr_names}
    keys = [*input_names, *attr_keys.values(), "name"]
    result = collections.namedtuple(f"{op_type}Result", [a.name for a in op_def.outputs]) \
        if len(op_def.outputs) > 1 else None
    python_name = snake_name(op_type)

    def call(*args, **kwargs):
        if args:
            raise TypeError(f"{python_name} only takes keyword args (possible keys: {keys}). "
                            "Please pass these args as kwargs instead.")
        unknown = [k for k in kwargs if k not in keys]
        if unknown:
            raise TypeError(f"{python_name}() got an unexpected keyword argument "
                            f"{unknown[0]!r}")
        missing = [repr(n) for n in input_names if n not in kwargs]
        if missing:   # Python's own words, as TensorFlow's generated functions give them
            listed = missing[0] if len(missing) == 1 else \
                " and ".join(missing) if len(missing) == 2 else \
                ", ".join(missing[:-1]) + ", and " + missing[-1]
            raise TypeError(f"{python_name}() missing {len(missing)} required positional "
                            f"argument{'s' if len(missing) > 1 else ''}: {listed}")
        attrs = {n: kwargs[key] for n, key in attr_keys.items() if key in kwargs}
        out = apply_op(op_def, [kwargs[n] for n in input_names], attrs, name=kwargs.get("name"))
        return result(*out) if result is not None and isinstance(out, list) else out

    call.__name__ = call.__qualname__ = op_type
    call.__doc__ = op_def.doc or f"The {op_type} op."
    call.__signature__ = inspect.Signature(
        [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY,
                           default=inspect.Parameter.empty if k in input_names else None)
         for k in keys])
    return call
