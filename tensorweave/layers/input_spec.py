"""tf.layers.InputSpec: what a layer accepts (rank, dtype, sizes of given axes), checked when
it is called, with TensorFlow's messages (`Input 0 of layer "dense" is incompatible with the
layer: expected min_ndim=2, found ndim=1. ...`)."""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts

__all__ = ["InputSpec", "assert_input_compatibility"]


class InputSpec:
    """The rank (`ndim`, or bounds `min_ndim` / `max_ndim`), `dtype`, full `shape` or sizes of
    some `axes` ({axis: size}) a layer's input must have; None leaves a property free."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None):
        self.dtype = _dtypes.as_dtype(dtype).name if dtype is not None else None
        self.shape = tuple(_ts.as_shape(shape).as_list()) if shape is not None else None
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = {int(k): v for k, v in (axes or {}).items()}
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim is not None else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                                 f"value: {max_dim}")

    def __repr__(self) -> str:
        fields = [f"{k}={getattr(self, k)}" for k in ("dtype", "shape", "ndim", "max_ndim",
                                                      "min_ndim")
                  if getattr(self, k) is not None]
        if self.axes:
            fields.append(f"axes={self.axes}")
        return f"InputSpec({', '.join(fields)})"


def assert_input_compatibility(input_spec, inputs, layer_name: str) -> None:
    """ValueError unless each input meets its spec (a spec or a list of them)."""
    if not input_spec:
        return
    specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
    tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(tensors) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(tensors)} input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(tensors, specs)):
        if spec is not None:
            _check(index, x, spec, layer_name)


def _check(index: int, x, spec: InputSpec, layer_name: str) -> None:
    shape = x.shape
    rank = shape.ndims
    prefix = f'Input {index} of layer "{layer_name}" is incompatible with the layer: '
    full = f"Full shape received: {tuple(shape)}" if rank is not None else ""
    for kind, bound, bad in (("ndim", spec.ndim, lambda r, b: r != b),
                             ("max_ndim", spec.max_ndim, lambda r, b: r > b),
                             ("min_ndim", spec.min_ndim, lambda r, b: r < b)):
        if bound is not None and rank is not None and bad(rank, bound):
            raise ValueError(f"{prefix}expected {kind}={bound}, found ndim={rank}. {full}")
    if spec.dtype is not None and x.dtype.base_dtype.name != spec.dtype:
        raise ValueError(f"{prefix}expected dtype={spec.dtype}, found "
                         f"dtype={x.dtype.base_dtype.name}")
    if rank is None:
        return
    dims = shape.as_list()
    for axis, value in spec.axes.items():
        size = dims[axis] if -rank <= axis < rank else None
        if value is not None and size is not None and size != value:
            raise ValueError(f"{prefix}expected axis {axis} of input shape to have value "
                             f"{value}, but received input with shape {tuple(dims)}")
    if spec.shape is not None and len(spec.shape) == rank:
        for want, have in zip(spec.shape, dims):
            if want is not None and have is not None and want != have:
                raise ValueError(f"{prefix}expected shape={spec.shape}, found "
                                 f"shape={tuple(dims)}")
