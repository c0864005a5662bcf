"""Kernel registry: an op's execution, keyed by (op type, device type) with dtype constraints.

A kernel is one of
  * a function `fn(ctx, *inputs) -> output | tuple` (`@kernel`),
  * a pure function `fn(*inputs)` that needs no context (`register_pure`, e.g. operator.add),
  * a class built once per node, `Cls(ctx)` parsing attrs, then `.compute(ctx, *inputs)`,
  * an asynchronous class with `.compute_async(ctx, step, inputs, done)` that completes later.
Flags tell the executor how to run it: `expensive` kernels go to the inter-op pool, `needs_step`
kernels get the step state, `returns_view` kernels may alias an input buffer.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from tensorweave.framework import dtypes as _dtypes


@dataclass(frozen=True)
class KernelDef:
    """One registration: what runs `op_type` on `device_type` for the allowed dtypes."""

    op_type: str
    device_type: str
    impl: Callable | type
    constraints: dict = field(default_factory=dict)   # attr name -> frozenset of DTypes
    is_class: bool = False
    is_async: bool = False
    pure: bool = False
    needs_step: bool = False
    expensive: bool = False
    returns_view: bool = False

    def accepts(self, attrs: dict) -> bool:
        for attr_name, allowed in self.constraints.items():
            value = attrs.get(attr_name)
            if value is None:
                continue
            values = value if isinstance(value, list) else (value,)
            if any(v.base_dtype not in allowed for v in values):
                return False
        return True


_KERNELS: dict[tuple[str, str], list[KernelDef]] = {}


def _constraints(dtypes, type_attr) -> dict:
    if dtypes is None:
        return {}
    if isinstance(dtypes, dict):
        return {k: frozenset(_dtypes.as_dtype(d) for d in v) for k, v in dtypes.items()}
    return {type_attr: frozenset(_dtypes.as_dtype(d) for d in dtypes)}


def register(kdef: KernelDef) -> None:
    _KERNELS.setdefault((kdef.op_type, kdef.device_type), []).append(kdef)


def kernel(op_types: str | Iterable[str], device: str = "CPU", dtypes=None, type_attr: str = "T",
           expensive: bool = False, needs_step: bool = False, returns_view: bool = False):
    """Decorator registering a kernel function or class for one or more op types."""
    names = (op_types,) if isinstance(op_types, str) else tuple(op_types)

    def decorate(impl):
        is_class = isinstance(impl, type)
        is_async = is_class and hasattr(impl, "compute_async")
        for name in names:
            register(KernelDef(name, device, impl, _constraints(dtypes, type_attr), is_class,
                               is_async, False, needs_step, expensive, returns_view))
        return impl
    return decorate


def register_pure(op_type: str, fn: Callable, device: str = "CPU", dtypes=None,
                  type_attr: str = "T", expensive: bool = False,
                  returns_view: bool = False) -> None:
    """Registers `fn(*inputs)` (no context) as the kernel of `op_type`."""
    register(KernelDef(op_type, device, fn, _constraints(dtypes, type_attr), pure=True,
                       expensive=expensive, returns_view=returns_view))


# Kernels registered for this device type serve every device type (the runtime's _Send/_Recv).
ANY_DEVICE = "*"


def register_as(op_type: str, registered: str) -> None:
    """Registers every kernel of the op type `registered` for `op_type` too (an older op whose
    inputs, outputs and attrs those kernels read the same way)."""
    for (name, device), kdefs in list(_KERNELS.items()):
        if name == registered:
            for kdef in kdefs:
                register(replace(kdef, op_type=op_type, device_type=device))


def find_kernel(op_type: str, device_type: str, attrs: dict) -> KernelDef | None:
    """The first registration of `op_type` on `device_type` (else on ANY_DEVICE) whose dtype
    constraints hold."""
    for key in ((op_type, device_type), (op_type, ANY_DEVICE)):
        for kdef in _KERNELS.get(key, ()):
            if kdef.accepts(attrs):
                return kdef
    return None


def registered_op_types(device_type: str = "CPU") -> set[str]:
    return {name for (name, dev) in _KERNELS if dev in (device_type, ANY_DEVICE)}
