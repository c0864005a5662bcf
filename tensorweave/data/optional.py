"""tf.data.experimental.Optional: an element that may be absent, and its spec OptionalSpec.

An `Optional` is a scalar variant tensor (ops/optional_ops.py) plus the static element spec of
the value it may hold: a nested structure of TensorSpecs, SparseTensorSpecs and OptionalSpecs,
like a dataset element's. The value travels as the flat component tensors `flat_specs`
describes, so `get_value()` rebuilds the same structure with the spec's dtypes and shapes. An
Optional crosses `tf.cond` and `tf.while_loop` as its variant tensor (the flow-carrier protocol
of ops/loop_vars.py), so a loop can carry one, e.g. to drain an iterator while `has_value()`.
"""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import TensorSpec, flat_specs, from_flat, spec_of
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import optional_ops

__all__ = ["Optional", "OptionalSpec", "get_next_as_optional"]


class Optional:
    """A value that may be absent: TF's tf.data.experimental.Optional in graph mode.

    Made by `Optional.from_value`, `Optional.empty` or `Iterator.get_next_as_optional()`;
    `has_value()` and `get_value()` are ops on its variant tensor, evaluated when run.
    """

    def __init__(self, variant_tensor: Tensor, element_spec):
        self._variant_tensor = variant_tensor
        self._element_spec = element_spec

    @staticmethod
    def from_value(value) -> Optional:
        """An Optional holding `value`.

        Args:
          value: a (nested) structure of tensors, SparseTensors, Optionals or values convertible
            to tensors (tuples and dicts nest; a list is one tensor).

        Returns:
          An `Optional` whose `element_spec` is that of `value`.

        Raises:
          ValueError: if `value` holds no tensor at all.
        """
        with name_scope("optional") as scope:
            with name_scope("value"):
                leaves = [_as_leaf(v) for v in nest.flatten(value)]
                element_spec = nest.pack(value, [_spec_of(v) for v in leaves])
            components = [t for v in leaves for t in _components(v)]
            return Optional(optional_ops.optional_from_value(components, name=scope),
                            element_spec)

    @staticmethod
    def empty(element_spec) -> Optional:
        """An Optional holding nothing, typed as holding a value of `element_spec`.

        Args:
          element_spec: a (nested) structure of `tf.TensorSpec`s (or other specs) of the value
            it could hold.

        Returns:
          An `Optional` whose `has_value()` is False.
        """
        return Optional(optional_ops.optional_none(), element_spec)

    def has_value(self, name=None) -> Tensor:
        """A bool scalar tensor: whether this Optional holds a value."""
        return optional_ops.optional_has_value(self._variant_tensor, name=name)

    def get_value(self, name=None):
        """The value this Optional holds, as the element spec's structure of tensors.

        Args:
          name: a name for the op (default "OptionalGetValue").

        Returns:
          The value's (nested) tensors, with the element spec's dtypes and static shapes.

        Raises:
          InvalidArgumentError: when run on an Optional that holds no value.
        """
        specs = flat_specs(self._element_spec)
        with name_scope(name, "OptionalGetValue") as scope:
            flat = optional_ops.optional_get_value(
                self._variant_tensor, [s.dtype for s in specs], [s.shape for s in specs],
                name=scope)
        return from_flat(self._element_spec, flat)

    @property
    def element_spec(self):
        """The (nested) spec of the value this Optional may hold."""
        return self._element_spec

    @property
    def _type_spec(self) -> OptionalSpec:
        return OptionalSpec(self._element_spec)

    def _as_flow(self) -> Tensor:
        return self._variant_tensor

    def _with_flow(self, flow: Tensor) -> Optional:
        return Optional(flow, self._element_spec)


class OptionalSpec:
    """The static type of an Optional: the spec of the value it may hold (TF's OptionalSpec,
    exported as tf.data.experimental.OptionalStructure).

    Inside another structure (an Optional of Optionals) it travels as one scalar variant.
    """

    __slots__ = ("_element_spec",)
    value_type = Optional

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @staticmethod
    def from_value(value: Optional) -> OptionalSpec:
        return OptionalSpec(value.element_spec)

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and self._element_spec == other._element_spec

    __hash__ = None

    def __repr__(self):
        return f"OptionalSpec({self._element_spec!r},)"

    def component_specs(self) -> list[TensorSpec]:
        return [TensorSpec([], _dtypes.variant)]

    def from_components(self, tensors) -> Optional:
        return Optional(tensors[0], self._element_spec)


def get_next_as_optional(iterator) -> Optional:
    """`iterator.get_next_as_optional()`: the next element as an Optional, empty at the end.

    Args:
      iterator: a `tf.data.Iterator`.

    Returns:
      An `Optional` of the iterator's element spec.
    """
    return iterator.get_next_as_optional()


def _as_leaf(value):
    """A leaf of `Optional.from_value`'s value as a Tensor, SparseTensor or Optional."""
    if isinstance(value, (Optional, SparseTensor)):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    return convert_to_tensor(value)


def _spec_of(leaf):
    return leaf._type_spec if isinstance(leaf, Optional) else spec_of(leaf)


def _components(leaf) -> list[Tensor]:
    """The tensors `leaf` travels as: its spec's `component_specs()`, in order."""
    if isinstance(leaf, Optional):
        return [leaf._variant_tensor]
    if isinstance(leaf, SparseTensor):
        return [leaf.indices, leaf.values, leaf.dense_shape]
    return [leaf]
