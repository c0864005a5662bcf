"""The TF1 recurrent cells: BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell and MultiRNNCell.

Weights and math are TensorFlow's, so checkpoints and results line up: every cell multiplies
the concatenation [inputs, h] by one kernel (`kernel`, or `gates/kernel` + `candidate/kernel`
for the GRU) and adds `bias`. LSTM gates come in the order i, j, f, o, with `forget_bias`
added to f; the GRU computes its r, u gates first, then the candidate from [inputs, r * h].

The LSTM cells run a step as one LSTMBlockCell op (TensorFlow's fused cell, whose gate layout
i, ci, f, o is this i, j, f, o) whenever it computes the same thing: tanh activation, no cell
clipping (the fused gradient treats the clip as the identity) and a float type; the outputs are
the unfused formula's bit for bit (kernels/lstm.py), and the variables are the same.
"""
from __future__ import annotations

from tensorweave.framework import nest
from tensorweave.layers.rnn_cell_base import LSTMStateTuple, RNNCell
from tensorweave.ops import init_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.array_creation_ops import zeros
from tensorweave.ops.array_join_ops import concat, split
from tensorweave.ops.array_slicing_ops import slice as _slice
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.math_ops import clip_by_value
from tensorweave.ops.math_unary_ops import sigmoid, tanh
from tensorweave.ops.nn_ops import bias_add, relu
from tensorweave.ops.rnn_lstm_ops import BLOCK_CELL_TYPES, lstm_block_cell

__all__ = ["BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell"]

_ACTIVATIONS = {"tanh": tanh, "sigmoid": sigmoid, "relu": relu}


def _activation(activation):
    """A callable activation from a callable, one of TF's names, or None (tanh)."""
    if activation is None:
        return tanh
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"Unknown activation function: {activation}")
        return _ACTIVATIONS[activation]
    return activation


def _fusable(activation, state) -> bool:
    """Whether an LSTM step can be one LSTMBlockCell op (see the module docstring)."""
    return activation is tanh and state.dtype.base_dtype in BLOCK_CELL_TYPES


def _block_step(inputs, c, h, kernel, bias, forget_bias, peepholes=None):
    """(new_c, new_h) of one LSTMBlockCell op; `peepholes` = (w_i_diag, w_f_diag, w_o_diag)."""
    use_peephole = peepholes is not None
    if not use_peephole:
        peepholes = (zeros([c.shape[-1]], dtype=c.dtype.base_dtype),) * 3
    outputs = lstm_block_cell(inputs, c, h, kernel, *peepholes, bias, forget_bias=forget_bias,
                              cell_clip=-1.0, use_peephole=use_peephole)
    return outputs[1], outputs[6]


def _linear(inputs, h, kernel, bias):
    """[inputs, h] @ kernel + bias: the one affine map every cell is built from."""
    return bias_add(matmul(concat([inputs, h], 1), kernel), bias)


class BasicRNNCell(RNNCell):
    """The Elman cell: output = new_state = activation([inputs, state] @ kernel + bias)."""

    _base_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units],
                                     initializer=init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        output = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """The LSTM without peepholes or projection (Zaremba et al.); LSTMCell is the full one.

    c' = sigmoid(f + forget_bias) * c + sigmoid(i) * activation(j);
    h' = activation(c') * sigmoid(o), with i, j, f, o = split([inputs, h] @ kernel + bias, 4).
    """

    _base_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        n = self._num_units
        self._kernel = self.add_weight("kernel", [depth + n, 4 * n])
        self._bias = self.add_weight("bias", [4 * n],
                                     initializer=init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        c, h = state if self._state_is_tuple else split(state, 2, axis=1)
        if _fusable(self._activation, c):
            new_c, new_h = _block_step(inputs, c, h, self._kernel, self._bias,
                                       self._forget_bias)
        else:
            i, j, f, o = split(_linear(inputs, h, self._kernel, self._bias), 4, axis=1)
            new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * self._activation(j)
            new_h = self._activation(new_c) * sigmoid(o)
        new_state = (LSTMStateTuple(new_c, new_h) if self._state_is_tuple
                     else concat([new_c, new_h], 1))
        return new_h, new_state


class LSTMCell(RNNCell):
    """The LSTM with optional peepholes, cell clipping and an output projection.

    As BasicLSTMCell, plus: peepholes add w_i_diag * c and w_f_diag * c to the i and f gates
    and w_o_diag * c' to o; `cell_clip` clips c'; `num_proj` projects the output h' through
    `projection/kernel` (then clipped by `proj_clip`), and h' is what the state carries.
    """

    _base_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if (num_unit_shards or 1) != 1 or (num_proj_shards or 1) != 1:
            raise NotImplementedError("Sharded LSTMCell weights (num_unit_shards, "
                                      "num_proj_shards > 1) are not supported by tensorweave.")
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = None if num_proj is None else int(num_proj)
        self._proj_clip = proj_clip
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def _h_depth(self) -> int:
        return self._num_proj or self._num_units

    @property
    def state_size(self):
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, self._h_depth)
        return self._num_units + self._h_depth

    output_size = property(lambda self: self._h_depth)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        n, init = self._num_units, self._initializer
        self._kernel = self.add_weight("kernel", [depth + self._h_depth, 4 * n],
                                       initializer=init)
        self._bias = self.add_weight("bias", [4 * n],
                                     initializer=init_ops.zeros_initializer(dtype=self.dtype))
        if self._use_peepholes:
            self._w_f_diag, self._w_i_diag, self._w_o_diag = (
                self.add_weight(name, [n], initializer=init)
                for name in ("w_f_diag", "w_i_diag", "w_o_diag"))
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/kernel", [n, self._num_proj],
                                                initializer=init)
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = _slice(state, [0, 0], [-1, self._num_units])
            m_prev = _slice(state, [0, self._num_units], [-1, self._h_depth])
        if self._cell_clip is None and self._num_proj is None and \
                _fusable(self._activation, c_prev):
            peepholes = (self._w_i_diag, self._w_f_diag, self._w_o_diag) \
                if self._use_peepholes else None
            c, m = _block_step(inputs, c_prev, m_prev, self._kernel, self._bias,
                               self._forget_bias, peepholes)
        else:
            c, m = self._unfused_step(inputs, c_prev, m_prev)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state

    def _unfused_step(self, inputs, c_prev, m_prev):
        """(c, m) of the formula op by op: other activations, cell clipping, projections."""
        i, j, f, o = split(_linear(inputs, m_prev, self._kernel, self._bias), 4, axis=1)
        f = f + self._forget_bias
        if self._use_peepholes:
            f = f + self._w_f_diag * c_prev
            i = i + self._w_i_diag * c_prev
        c = sigmoid(f) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            o = o + self._w_o_diag * c
        m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        return c, m


class GRUCell(RNNCell):
    """The gated recurrent unit (Cho et al. 2014).

    r, u = split(sigmoid([inputs, h] @ gates/kernel + gates/bias), 2);
    c = activation([inputs, r * h] @ candidate/kernel + candidate/bias);
    h' = u * h + (1 - u) * c. The gate bias starts at 1 unless `bias_initializer` is given.
    """

    _base_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        n, kernel_init, bias_init = self._num_units, self._kernel_initializer, \
            self._bias_initializer
        self._gate_kernel = self.add_weight("gates/kernel", [depth + n, 2 * n],
                                            initializer=kernel_init)
        self._gate_bias = self.add_weight(
            "gates/bias", [2 * n],
            initializer=bias_init or init_ops.constant_initializer(1.0, dtype=self.dtype))
        self._candidate_kernel = self.add_weight("candidate/kernel", [depth + n, n],
                                                 initializer=kernel_init)
        self._candidate_bias = self.add_weight(
            "candidate/bias", [n],
            initializer=bias_init or init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        gates = sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = split(gates, 2, axis=1)
        c = self._activation(_linear(inputs, r * state, self._candidate_kernel,
                                     self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: cell i reads cell i-1's output; variables under `cell_i`."""

    _base_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._child_cells = tuple(self._cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple "
                             f"is not set. State sizes are: {[c.state_size for c in cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size, dtype):
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        from tensorweave.framework.scopes import name_scope
        with name_scope(type(self).__name__ + "ZeroState"):
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def call(self, inputs, state):
        if self._state_is_tuple and not nest.is_nested(state):
            raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, "
                             f"but received: {state}")
        output, new_states, start = inputs, [], 0
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cell_state = state[i]
                else:
                    cell_state = _slice(state, [0, start], [-1, cell.state_size])
                    start += cell.state_size
                output, cell_state = cell(output, cell_state)
            new_states.append(cell_state)
        return output, tuple(new_states) if self._state_is_tuple else concat(new_states, 1)
