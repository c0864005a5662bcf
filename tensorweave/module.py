"""tf.Module: a named container that finds the variables and modules held in its attributes.

TensorFlow's, in graph mode: the name (default: the class name in snake_case) must be a Python
identifier; the module takes a unique name scope when it is made ("mlp/", then "mlp_1/") and
`name_scope` re-enters that same scope, so variables made under it are "mlp/w:0".
`variables`, `trainable_variables`, `non_trainable_variables` and `submodules` walk the
attributes in name order, through lists, tuples and dicts (by key), first the module's own
values, then each submodule's in the order met, each value once.
"""
from __future__ import annotations

import functools
import re

from tensorweave.framework import nest
from tensorweave.framework.scopes import name_scope as _name_scope

__all__ = ["Module"]


class _ModuleScope:
    """A module's name scope: `name` is its full "scope/"; entering it re-enters the scope."""

    def __init__(self, name: str):
        self.name = name
        self._entered = []

    def __enter__(self) -> str:
        scope = _name_scope(self.name)
        self._entered.append(scope)
        return scope.__enter__()

    def __exit__(self, *exc_info):
        return self._entered.pop().__exit__(*exc_info)


def _snake(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class Module:
    """Base class of models and layers that own variables (see the module docstring)."""

    def __init__(self, name=None):
        if name is None:
            name = _snake(type(self).__name__)
        elif not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{name!r} is not a valid module name. Module names must be "
                             "valid Python identifiers (e.g. a valid class name).")
        self._name = name
        with _name_scope(name) as scope:
            self._scope = _ModuleScope(scope)

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> _ModuleScope:
        """The module's scope, to make its variables and ops under."""
        return self._scope

    @property
    def variables(self) -> tuple:
        """Every variable held by this module and its submodules."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """Every module held by this one, at any depth."""
        return tuple(self._flatten(predicate=lambda v: isinstance(v, Module)))

    def _flatten(self, recursive=True, predicate=None):
        """The values of the attributes (nested structures flattened) that `predicate`
        accepts, this module's first, then its submodules' (with `recursive`)."""
        seen: set[int] = set()
        yield from _walk(self, recursive, predicate or (lambda _: True), seen)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: `method` runs inside the module's name scope."""
        @functools.wraps(method)
        def in_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return in_scope


_IGNORED = frozenset({"_name", "_scope"})


def _walk(module, recursive, predicate, seen):
    submodules = []
    for key in sorted(vars(module)):
        if key in _IGNORED:
            continue
        for leaf in nest.flatten(vars(module)[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if recursive and isinstance(leaf, Module):
                submodules.append(leaf)
    for submodule in submodules:
        yield from _walk(submodule, recursive, predicate, seen)


def _is_variable(value) -> bool:
    from tensorweave.ops.variables import Variable
    return isinstance(value, Variable)
