"""TensorFlow's fused LSTM step: LSTMBlockCell and its gradient op LSTMBlockCellGrad.

One op computes a whole LSTM time step (TF's lstm_ops, the op behind tf.contrib.rnn's
LSTMBlockCell), so a cell is one node instead of a dozen elementwise ones and the gradient of a
loop body saves six gate arrays instead of every intermediate. With xh = [x, h_prev] and
gates = xh @ w + b split in TF's order [i, ci, f, o] (the i, j, f, o of BasicLSTMCell, so the
same kernel and bias serve both):

    i = sigmoid(i + cs_prev * wci)                 (peepholes only when use_peephole)
    f = sigmoid(f + forget_bias + cs_prev * wcf)
    ci = tanh(ci)
    cs = clip(ci * i + cs_prev * f, cell_clip)     (no clipping when cell_clip < 0)
    o = sigmoid(o + cs * wco)
    co = tanh(cs);  h = co * o

LSTMBlockCellGrad turns the gradients of cs and h into cs_prev's and the pre-activation gate
gradients dicfo (and the peephole weights'); the registered gradient of LSTMBlockCell then
gets x, h_prev, w and b from dicfo with two products and a bias sum, as TensorFlow's does. As
in TensorFlow the backward pass treats the cell clip as the identity. float64 is accepted
besides TF's half and float32 so the numerical gradient checks can run in double precision.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_dim, shape_dims
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import shape
from tensorweave.ops.array_slicing_ops import slice as _slice
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.nn_ops import BiasAddGrad

__all__ = ["lstm_block_cell"]

BLOCK_CELL_TYPES = _T = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64})
_CELL_INPUTS = ["x: T", "cs_prev: T", "h_prev: T", "w: T", "wci: T", "wcf: T", "wco: T", "b: T"]
_GATES = ["i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T"]


def _batch_and_cell(ctx) -> tuple:
    """(batch, cell_size) merged over x, cs_prev, h_prev, w ([depth, 4 cell]) and b."""
    x, cs_prev, h_prev, w = (shape_dims(ctx.input_shape(i), 2) for i in range(4))
    batch = merge_dim(merge_dim(x[0], cs_prev[0]), h_prev[0])
    cell = merge_dim(cs_prev[1], h_prev[1])
    for four_cells in (w[1], shape_dims(ctx.input_shape(7), 1)[0]):
        if four_cells is not None:
            if four_cells % 4:
                raise ValueError(f"The gate dimension must be a multiple of 4, got {four_cells}")
            cell = merge_dim(cell, four_cells // 4)
    for i in (4, 5, 6):
        cell = merge_dim(cell, shape_dims(ctx.input_shape(i), 1)[0])
    return batch, cell


def _block_cell_shape(ctx):
    """Seven [batch, cell_size] outputs."""
    return [_ts.TensorShape(_batch_and_cell(ctx))] * 7


def _block_cell_grad_shape(ctx):
    """cs_prev_grad [batch, cell], dicfo [batch, 4 cell], three peephole gradients [cell]."""
    batch, cell = _batch_and_cell(ctx)
    for i in range(8, 16):
        dims = shape_dims(ctx.input_shape(i), 2)
        batch, cell = merge_dim(batch, dims[0]), merge_dim(cell, dims[1])
    vec = _ts.TensorShape([cell])
    return [_ts.TensorShape([batch, cell]),
            _ts.TensorShape([batch, None if cell is None else 4 * cell]), vec, vec, vec]


LSTMBlockCell = define_op(
    "LSTMBlockCell", inputs=_CELL_INPUTS, outputs=[*_GATES, "h: T"],
    attrs=[Attr("forget_bias", "float", 1.0), Attr("cell_clip", "float", 3.0),
           Attr("use_peephole", "bool", False), TypeAttr("T", _T)],
    shape_fn=_block_cell_shape)

LSTMBlockCellGrad = define_op(
    "LSTMBlockCellGrad", inputs=[*_CELL_INPUTS, *_GATES, "cs_grad: T", "h_grad: T"],
    outputs=["cs_prev_grad: T", "dicfo: T", "wci_grad: T", "wcf_grad: T", "wco_grad: T"],
    attrs=[Attr("use_peephole", "bool"), TypeAttr("T", _T)],
    shape_fn=_block_cell_grad_shape)


@LSTMBlockCell.gradient
def _lstm_block_cell_grad(op, *grads):
    """TensorFlow's: LSTMBlockCellGrad gives cs_prev's gradient and dicfo; then
    [x, h_prev]'s gradient is dicfo @ w^T split in two, w's is [x, h_prev]^T @ dicfo and b's
    the column sums of dicfo. Only cs and h carry gradients (the gate outputs are saved
    values), so the others are ignored and a missing one of cs or h counts as zeros."""
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, h = op.outputs
    cs_grad = grads[1] if grads[1] is not None else zeros_like(cs)
    h_grad = grads[6] if grads[6] is not None else zeros_like(h)
    cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad = apply_op(
        LSTMBlockCellGrad, [x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                            cs_grad, h_grad],
        {"use_peephole": op._attrs["use_peephole"]})
    xh_grad = matmul(dicfo, w, transpose_b=True)
    input_size = x.shape.with_rank(2).as_list()[1]
    if input_size is None:   # e.g. a loop body imported from a GraphDef, without its shapes
        input_size = shape(x)[1]
    x_grad = _slice(xh_grad, (0, 0), [-1, input_size])
    h_prev_grad = _slice(xh_grad, [0, input_size], (-1, -1))
    w_grad = matmul(concat([x, h_prev], 1), dicfo, transpose_a=True)
    b_grad = apply_op(BiasAddGrad, [dicfo], {"data_format": "NHWC"})
    return [x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad]


def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1.0, cell_clip=3.0,
                    use_peephole=False, name=None):
    """Computes one LSTM time step in one op (TensorFlow's `tf.raw_ops.LSTMBlockCell`).

    Args:
      x: [batch, input_size] inputs of this step (half, float32 or float64).
      cs_prev: [batch, cell_size] cell state of the previous step.
      h_prev: [batch, cell_size] output of the previous step.
      w: [input_size + cell_size, 4 * cell_size] weights, gate columns in the order i, ci, f,
        o.
      wci, wcf, wco: [cell_size] peephole weights (read only when `use_peephole`).
      b: [4 * cell_size] bias.
      forget_bias: added to the forget gate before its sigmoid.
      cell_clip: clips the cell state to [-cell_clip, cell_clip]; negative: no clipping.
      use_peephole: whether the peephole weights are used.
      name: a name for the operation.

    Returns:
      (i, cs, f, o, ci, co, h): the input gate, cell state, forget gate, output gate, cell
      input, tanh of the cell state and the output, each [batch, cell_size].
    """
    return apply_op(LSTMBlockCell, [x, cs_prev, h_prev, w, wci, wcf, wco, b],
                    {"forget_bias": float(forget_bias), "cell_clip": float(cell_clip),
                     "use_peephole": bool(use_peephole)}, name=name)
