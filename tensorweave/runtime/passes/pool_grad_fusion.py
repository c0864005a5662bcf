"""Pool-gradient fusion: the backward pass of relu -> max_pool becomes one kernel.

  ReluGrad(MaxPoolGrad(f, pooled, dy), f)  =>  _FusedMaxPoolGradReluGrad(f, pooled, dy)

`f` is the ReLU's output, pooled by MaxPool: the conv -> relu -> max_pool block of every
classic CNN. MaxPoolGrad routes each window's gradient to its first maximum and ReluGrad then
keeps it only where that maximum is positive; the fused kernel (kernels/fused.py) does both in
MaxPoolGrad's one compiled pass, so the full-size gradient is written once instead of being
written, read and written again (cnn_train: about 1.6M and 0.8M elements per step). Results
are bit-identical. The MaxPoolGrad must be pure, on the ReluGrad's device, float32/float64,
not fetched, depended on by no control edge and read by nothing but the ReluGrad. The fused
node takes the ReluGrad's name, so its readers are unchanged. Part of the remapping switch.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import REMAPPING, PassOptions
from tensorweave.runtime.passes.rewrite import Editor, is_pure, make_node, rewrite_each

_DTYPES = (_dtypes.float32, _dtypes.float64)
_POOL_ATTRS = ("T", "ksize", "strides", "padding", "explicit_paddings", "data_format")


@register_pass("pool_grad_fusion", order=81, toggle=REMAPPING)
def fuse_pool_relu_gradients(graph, options: PassOptions | None = None):
    """Fuses each ReluGrad of a MaxPoolGrad of the ReLU's own output."""
    return rewrite_each(Editor(graph, options or PassOptions.defaults(graph)), "ReluGrad", _fuse)


def _fuse(ed: Editor, relu_grad) -> None:
    gradient, features = relu_grad.inputs[:2]
    pool_grad = ed.producer(gradient)
    if pool_grad.op != "MaxPoolGrad" or pool_grad.inputs[0] != features or \
            pool_grad.attrs.get("T") not in _DTYPES or not is_pure(pool_grad) or \
            pool_grad.device != relu_grad.device or ed.is_preserved(pool_grad.name) or \
            ed.dependents.get(pool_grad.name) or ed.only_reader(gradient) is not relu_grad:
        return
    attrs = {k: pool_grad.attrs[k] for k in _POOL_ATTRS if k in pool_grad.attrs}
    control = list(relu_grad.control_inputs) + [c for c in pool_grad.control_inputs
                                                if c not in relu_grad.control_inputs]
    fused = make_node(relu_grad.name, "_FusedMaxPoolGradReluGrad", attrs,
                      list(pool_grad.inputs), relu_grad, ed.graph, relu_grad.output_dtypes,
                      relu_grad.output_shapes, control)
    ed.substitute(relu_grad, fused, "fuse_max_pool_grad_relu_grad",
                  f"{pool_grad.name} + {relu_grad.name}")
