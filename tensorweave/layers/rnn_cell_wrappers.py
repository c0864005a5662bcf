"""Cell wrappers: DropoutWrapper, ResidualWrapper and DeviceWrapper.

A wrapper changes what happens around a cell's step but opens no variable scope of its own,
so the wrapped cell's variables keep their names (`cell_0/gru_cell/...`), as in TensorFlow.
"""
from __future__ import annotations

import hashlib

from tensorweave.framework import nest
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import device as _device_scope
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.layers.rnn_cell_base import LSTMStateTuple, RNNCell
from tensorweave.ops import rnn_util

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


class _Wrapper(RNNCell):
    """Delegates sizes and zero_state to the wrapped cell; subclasses wrap one step."""

    def __init__(self, cell):
        super().__init__()
        rnn_util.assert_like_rnncell("cell", cell)
        self.cell = cell
        self._child_cells = (cell,)

    wrapped_cell = property(lambda self: self.cell)
    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._step(inputs, state, lambda x, s: self.cell(x, s, scope=scope))

    def _step(self, inputs, state, call_cell):
        raise NotImplementedError


def _default_dropout_state_filter_visitor(substate):
    """Drop everything but an LSTM's cell state c (TF's default)."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _children(structure) -> list:
    return [structure[k] for k in sorted(structure)] if isinstance(structure, dict) \
        else list(structure)


def _drop_flags(visitor, structure) -> list:
    """Per leaf of `structure`, whether the visitor lets dropout reach it.

    The visitor sees each node from the root down: False stops there, True goes on into every
    child, and a structure of booleans (one per child) chooses children one by one.
    """
    decision = visitor(structure)
    if not nest.is_nested(structure):
        return [bool(decision)]
    children = _children(structure)
    choices = [decision] * len(children) if isinstance(decision, bool) else _children(decision)
    flags = []
    for child, go_on in zip(children, choices):
        flags += _drop_flags(visitor, child) if go_on else [False] * len(nest.flatten(child))
    return flags


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and (selected parts of its) new state.

    With `variational_recurrent=True` one mask per run is drawn for each of inputs, outputs and
    state ([1, size], shared by the batch and every time step: Gal & Ghahramani); this needs
    `dtype`, and `input_size` when inputs are dropped.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        self._seed = seed
        self._variational = variational_recurrent
        self._filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        if not callable(self._filter):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._keep = {}
        for kind, prob in (("input", input_keep_prob), ("state", state_keep_prob),
                           ("output", output_keep_prob)):
            known = static_value(prob) if isinstance(prob, Tensor) else prob
            if known is not None and not 0 <= float(known) <= 1:
                raise ValueError(f"Parameter {kind}_keep_prob must be between 0 and 1. "
                                 f"Received {float(known):g}")
            if known is None or float(known) < 1:  # a keep probability of 1 is no dropout
                self._keep[kind] = prob
        self._noise = {}
        if variational_recurrent and self._keep:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if "input" in self._keep and input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or "
                                 "is unknown, input_size must be provided")
            sizes = {"input": input_size, "state": cell.state_size, "output": cell.output_size}
            for kind in self._keep:
                self._noise[kind] = [self._batch_noise(size, dtype, kind, i)
                                     for i, size in enumerate(nest.flatten(sizes[kind]))]

    def _gen_seed(self, salt: str, index: int):
        """A per-tensor op seed derived from the wrapper's seed (None without one)."""
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt}_{index}".encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _batch_noise(self, size, dtype, kind: str, index: int):
        from tensorweave.framework import tensor_shape as _ts
        from tensorweave.ops.random_ops import random_uniform
        shape = [1] + _ts.as_shape(size).as_list()
        return random_uniform(shape, dtype=dtype,
                              seed=self._gen_seed(f"variational_{kind}", index))

    def _dropout(self, values, kind: str, flags=None):
        """`values` (a nest) with dropout of `kind` applied to the leaves `flags` allows."""
        if kind not in self._keep:
            return values
        from tensorweave.ops.math_unary_ops import floor
        from tensorweave.ops.nn_dropout_ops import dropout
        keep = self._keep[kind]
        leaves = nest.flatten(values)
        flags = flags or [True] * len(leaves)
        out = []
        for i, (value, drop) in enumerate(zip(leaves, flags)):
            if not drop:
                out.append(value)
            elif self._variational:
                out.append(value / keep * floor(keep + self._noise[kind][i]))
            else:
                out.append(dropout(value, keep_prob=keep, seed=self._gen_seed(kind, i)))
        return nest.pack_sequence_as(values, out)

    def _step(self, inputs, state, call_cell):
        output, new_state = call_cell(self._dropout(inputs, "input"), state)
        flags = _drop_flags(self._filter, new_state) if "state" in self._keep else None
        return self._dropout(output, "output"), self._dropout(new_state, "state", flags)


class ResidualWrapper(_Wrapper):
    """Adds the inputs to the outputs (or combines them with `residual_fn(inputs, outputs)`)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn or _add_residual

    def _step(self, inputs, state, call_cell):
        output, new_state = call_cell(inputs, state)
        return self._residual_fn(inputs, output), new_state


def _add_residual(inputs, outputs):
    """inputs + outputs leaf by leaf; the structures and shapes must agree."""
    def add(x, y):
        x.shape.assert_is_compatible_with(y.shape)
        return x + y
    return nest.map_structure(add, inputs, outputs)


class DeviceWrapper(_Wrapper):
    """Builds the cell's step (and its zero state) on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), _device_scope(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _step(self, inputs, state, call_cell):
        with _device_scope(self._device):
            return call_cell(inputs, state)

