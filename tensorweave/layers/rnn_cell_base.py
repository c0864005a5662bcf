"""RNNCell: the TF1 recurrent-cell interface on top of tf.layers' Layer, and LSTMStateTuple.

A cell maps (inputs, state) to (output, new_state). Like a layer, its first call opens a
variable scope named after the cell (`lstm_cell`, `gru_cell`, ... made unique in the enclosing
scope, or the `scope` argument) and builds the variables there; later calls reuse them, which is
how static_rnn and dynamic_rnn share one set of weights over all time steps.
"""
from __future__ import annotations

import collections

from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.layers.base import Layer
from tensorweave.ops import rnn_util
from tensorweave.ops import variable_scope as vs

__all__ = ["RNNCell", "LSTMStateTuple"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The (c, h) state of an LSTM: cell state `c` and output/hidden state `h`."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent dtypes for internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


class RNNCell(Layer):
    """Abstract recurrent cell: subclasses give state_size, output_size, build and call."""

    @property
    def state_size(self):
        """An int, TensorShape or nest of them: the per-example state shape(s)."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        """An int, TensorShape or nest of them: the per-example output shape(s)."""
        raise NotImplementedError("Abstract method")

    def __call__(self, inputs, state, scope=None):
        """Runs the cell on `inputs` [batch, depth] and `state`; returns (output, new_state).

        Args:
          inputs: a [batch_size, input_depth] Tensor (depth must be known on the first call).
          state: a Tensor or nest of Tensors matching `state_size`.
          scope: on the first call, the variable scope to build in instead of the cell's name.
        """
        if scope is not None and self._scope is None:
            with vs.variable_scope(scope) as captured:
                self._scope = captured
        return super().__call__(inputs, state)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state tensor(s) for `batch_size` rows (a Python int or scalar Tensor)."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return rnn_util.zero_state_tensors(self.state_size, batch_size, dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """The zero state, sized and typed from `inputs` when they are given."""
        if inputs is not None:
            batch_size = rnn_util.batch_size_of(nest.flatten(inputs))
            dtype = dtype or nest.flatten(inputs)[0].dtype
        return self.zero_state(batch_size, dtype)

    # --- cells that hold other cells (MultiRNNCell, wrappers) report their variables too ----
    _child_cells: tuple = ()

    @property
    def variables(self) -> list:
        return self._variables + [v for c in self._child_cells for v in c.variables]

    weights = variables

    @property
    def trainable_variables(self) -> list:
        if not self.trainable:
            return []
        own = list(self._trainable_variables)
        return own + [v for c in self._child_cells for v in c.trainable_variables]

    trainable_weights = trainable_variables

    def _input_depth(self, input_shape) -> int:
        """The static last dimension of the inputs; cells need it to size their kernels."""
        input_shape = _ts.as_shape(input_shape)
        depth = input_shape[-1] if input_shape.ndims else None
        if _ts.dimension_value(depth) is None:
            raise ValueError(f"Expected inputs.shape[-1] to be known, received shape: "
                             f"{input_shape}")
        return _ts.dimension_value(depth)

