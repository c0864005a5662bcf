"""Typed op definitions: the data that says what an op is, validated when it is registered.

An `OpDef` names TensorFlow's op type (the registry key and NodeDef `op` field), its typed inputs
and outputs, its attrs with defaults and allowed dtypes, whether it is stateful, its shape
function and its gradient. Everything downstream (apply_op, kernels, autodiff, GraphDef import)
reads these records; nothing re-parses strings.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tensorweave.framework import dtypes as _dtypes

_NO_DEFAULT = object()

# The attr kinds an OpDef may declare; values are stored typed (DType, TensorShape, ...).
ATTR_KINDS = frozenset({
    "type", "int", "float", "bool", "string", "shape", "tensor", "func",
    "list(type)", "list(int)", "list(float)", "list(bool)", "list(string)", "list(shape)",
})


@dataclass(frozen=True)
class Arg:
    """One input or output: a dtype from a type attr, a fixed dtype, or a list of tensors.

    `type_attr` names the attr holding the dtype ("T"); `dtype` fixes it instead. With
    `number_attr` the arg is a list of that many tensors of one dtype; with `type_list_attr` a
    list whose dtypes are the attr's list. `is_ref` marks a reference (variable) argument.
    """

    name: str
    type_attr: str | None = None
    dtype: _dtypes.DType | None = None
    number_attr: str | None = None
    type_list_attr: str | None = None
    is_ref: bool = False

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


@dataclass(frozen=True)
class Attr:
    """A typed attr with an optional default and, for type attrs, the allowed dtypes."""

    name: str
    kind: str
    default: Any = _NO_DEFAULT
    allowed: frozenset | None = None
    minimum: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


def TypeAttr(name: str, allowed: Iterable | None = None, default: Any = _NO_DEFAULT) -> Attr:
    """A dtype attr; `allowed` restricts it (TypeError at graph construction otherwise)."""
    return Attr(name, "type", default, frozenset(allowed) if allowed is not None else None)


def arg(spec: str | Arg, **kwargs) -> Arg:
    """`Arg` from a short spec: "x: T", "n: int32", "values: N * T", "out: Tlist", "ref: Ref(T)"."""
    if isinstance(spec, Arg):
        return spec
    name, _, kind = (s.strip() for s in spec.partition(":"))
    is_ref = kind.startswith("Ref(")
    if is_ref:
        kind = kind[4:-1]
    if "*" in kind:
        number, _, type_part = (s.strip() for s in kind.partition("*"))
        return _typed_arg(name, type_part, number_attr=number, is_ref=is_ref, **kwargs)
    if kind.endswith("list"):
        return Arg(name, type_list_attr=kind, is_ref=is_ref, **kwargs)
    return _typed_arg(name, kind, is_ref=is_ref, **kwargs)


def _typed_arg(name: str, kind: str, **kwargs) -> Arg:
    try:
        return Arg(name, dtype=_dtypes.as_dtype(kind), **kwargs)
    except TypeError:
        return Arg(name, type_attr=kind, **kwargs)


@dataclass
class OpDef:
    """The meaning of one op type; mutable only to attach its gradient after definition."""

    name: str
    inputs: tuple[Arg, ...]
    outputs: tuple[Arg, ...]
    attrs: dict[str, Attr]
    shape_fn: Callable | None
    is_stateful: bool = False
    is_commutative: bool = False
    doc: str = ""
    grad_fn: Callable | None = None
    not_differentiable: bool = False
    # Precomputed so apply_op does no per-call introspection.
    type_attrs: tuple[str, ...] = field(default=(), init=False)
    single_output: bool = field(default=False, init=False)

    def __post_init__(self):
        self.type_attrs = tuple(n for n, a in self.attrs.items() if a.kind == "type")
        self.single_output = len(self.outputs) == 1 and not self.outputs[0].is_list

    def gradient(self, fn: Callable) -> Callable:
        """Decorator: registers `fn(op, *grads) -> [grad per input]` as this op's gradient;
        a second registration is an error (which one won would depend on import order)."""
        if self.grad_fn is not None:
            raise KeyError(f"Registering two gradients for op type {self.name!r}: "
                           f"{self.grad_fn.__module__}.{self.grad_fn.__qualname__} and "
                           f"{fn.__module__}.{fn.__qualname__}")
        self.grad_fn = fn
        return fn

    def __repr__(self) -> str:
        return f"OpDef({self.name!r})"


OP_REGISTRY: dict[str, OpDef] = {}


def define_op(name: str, inputs: Iterable = (), outputs: Iterable = (),
              attrs: Iterable[Attr] = (), shape_fn: Callable | None = None,
              is_stateful: bool = False, is_commutative: bool = False,
              not_differentiable: bool = False, doc: str = "") -> OpDef:
    """Defines and registers an op type; validates that every arg's attrs are declared."""
    if name in OP_REGISTRY:
        raise ValueError(f"Op type {name!r} is already defined")
    in_args = tuple(arg(a) for a in inputs)
    out_args = tuple(arg(a) for a in outputs)
    attr_map = {a.name: a for a in attrs}
    for a in attr_map.values():
        if a.kind not in ATTR_KINDS:
            raise ValueError(f"Op {name}: attr {a.name!r} has unknown kind {a.kind!r}")
    _declare_implicit_attrs(name, in_args + out_args, attr_map)
    op_def = OpDef(name, in_args, out_args, attr_map, shape_fn, is_stateful, is_commutative,
                   doc, not_differentiable=not_differentiable)
    OP_REGISTRY[name] = op_def
    return op_def


def _declare_implicit_attrs(op_name: str, args: tuple[Arg, ...], attr_map: dict) -> None:
    """Adds the type/number attrs an arg names but the definition left implicit."""
    for a in args:
        if a.type_attr and a.type_attr not in attr_map:
            attr_map[a.type_attr] = Attr(a.type_attr, "type")
        if a.number_attr and a.number_attr not in attr_map:
            attr_map[a.number_attr] = Attr(a.number_attr, "int", minimum=1)
        if a.type_list_attr and a.type_list_attr not in attr_map:
            attr_map[a.type_list_attr] = Attr(a.type_list_attr, "list(type)")
        for attr_name in (a.type_attr, a.number_attr, a.type_list_attr):
            if attr_name and attr_map[attr_name].kind not in ("type", "int", "list(type)"):
                raise ValueError(f"Op {op_name}: arg {a.name!r} names attr {attr_name!r} "
                                 f"of kind {attr_map[attr_name].kind}")


def get_op_def(name: str) -> OpDef:
    """The registered OpDef for `name`; KeyError naming the op type if it is unknown."""
    try:
        return OP_REGISTRY[name]
    except KeyError:
        raise KeyError(f"Op type not registered: {name!r}") from None
