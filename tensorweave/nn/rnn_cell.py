"""tf.nn.rnn_cell: the TF1 recurrent cells and wrappers."""
from tensorweave.layers.rnn_cell_base import LSTMStateTuple, RNNCell
from tensorweave.layers.rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper
from tensorweave.layers.rnn_cells import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    MultiRNNCell,
)

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper"]
