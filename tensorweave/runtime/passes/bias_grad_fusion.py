"""Bias-gradient fusion: a ReLU's gradient and the bias gradient summed from it, in one pass.

  Sum(ReluGrad(g, f), axes = all but the last)  =>  _FusedReluGradBiasAddGrad(g, f) : 1
  BiasAddGrad(ReluGrad(g, f))   (NHWC)          =>  the same
  ... of _FusedMaxPoolGradReluGrad(x, y, dy)      =>  _FusedMaxPoolGradReluGradBiasAddGrad : 1

A layer `relu(x @ w + b)` (or `relu(conv(x, w) + b)`, or with `tf.nn.bias_add`) gets the
gradient of its bias by summing the ReLU's gradient over every axis but the channel axis: `+ b`
differentiates to a Sum over the broadcast axes (constant after constant folding), bias_add to
a BiasAddGrad. Unfused, that sum reads the full-size gradient again; the fused kernels add it
up while writing it (kernels/nn.py, kernels/pool.py). The fused node keeps the gradient's name,
so its other readers (the weight and input gradients) read output 0 unchanged; the Sum's or
BiasAddGrad's readers read output 1 (a fetched one becomes an Identity of it, keeping its
name). The ReLU gradient then has no in-place variant (memory
pass), which its own pass over memory more than pays for.

Numerics: a ReluGrad's fused sum adds row after row, the order of the Sum kernel's row loop
and of NumPy's reduction over leading axes, so with Sum both outputs are bit-identical;
BiasAddGrad sums with a BLAS product, and the pooled version sums per batch chunk and then the
chunks in order (fixed chunks: the same for any thread count), so those bias gradients differ
from the unfused ones by the rounding of a reassociated float sum (relative ~1e-6 in float32).

Conditions: the gradient node is pure, float32/float64, of known rank >= 2 with a known last
dimension, on the sum's device; the Sum reduces exactly the leading axes (a constant) without
keep_dims, or the BiasAddGrad is NHWC. Part of the
remapping switch; runs after pool_grad_fusion (which makes `_FusedMaxPoolGradReluGrad`).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import REMAPPING, PassOptions
from tensorweave.runtime.passes.rewrite import Editor, is_pure, make_node

_DTYPES = (_dtypes.float32, _dtypes.float64)
# The op a gradient producer becomes when it also sums its result.
_WITH_SUMS = {"ReluGrad": "_FusedReluGradBiasAddGrad",
              "_FusedMaxPoolGradReluGrad": "_FusedMaxPoolGradReluGradBiasAddGrad"}


@register_pass("bias_grad_fusion", order=84, toggle=REMAPPING)
def fuse_bias_gradients(graph, options: PassOptions | None = None):
    """Folds each bias-gradient sum of a ReLU gradient into the node making that gradient."""
    ed = Editor(graph, options or PassOptions.defaults(graph))
    for node in list(graph):
        if node.name in graph.nodes and node.op in ("Sum", "BiasAddGrad"):
            _fuse(ed, node)
    ed.sweep()
    return graph


def _sums_leading_axes(ed: Editor, node, rank: int) -> bool:
    """Whether the Sum/BiasAddGrad `node` reduces a rank-`rank` tensor over all but its last
    axis, returning a vector."""
    if node.op == "BiasAddGrad":
        return node.attrs.get("data_format", "NHWC") == "NHWC"
    axes = ed.const_value(node.inputs[1])
    if axes is None or node.attrs.get("keep_dims") or axes.dtype.kind not in "iu":
        return False
    return sorted(int(a) % rank for a in np.ravel(axes)) == list(range(rank - 1)) and \
        len(np.ravel(axes)) == rank - 1


def _fuse(ed: Editor, total) -> None:
    gradient = total.inputs[0]
    producer = ed.producer(gradient)
    fused_op = _WITH_SUMS.get(producer.op)
    shape = producer.output_shapes[0] if producer.output_shapes else None
    if fused_op is None or gradient[1] != 0 or producer.attrs.get("T") not in _DTYPES or \
            not is_pure(producer) or not is_pure(total) or producer.device != total.device or \
            shape is None or shape.ndims is None or shape.ndims < 2 or shape[-1] is None or \
            not _sums_leading_axes(ed, total, shape.ndims):
        return
    fused = make_node(producer.name, fused_op, producer.attrs, list(producer.inputs), producer,
                      ed.graph, [producer.output_dtypes[0]] * 2,
                      [shape, total.output_shapes[0]], list(producer.control_inputs))
    ed.substitute(producer, fused, "fuse_bias_gradient", f"{producer.name} + {total.name}")
    ed.replace(total, [(fused.name, 1)], "fuse_bias_gradient", total.name)
