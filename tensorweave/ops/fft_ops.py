"""Discrete Fourier transforms: FFT/IFFT (1-3D, complex to complex), RFFT/IRFFT (1-3D, real to
half-spectrum and back), and TF1's wrappers `tf.signal.fft`, ..., `tf.signal.irfft3d`.

The inner-most 1, 2 or 3 dimensions are transformed; outer dimensions are a batch. RFFT's
`fft_length` crops or (in the wrapper, by padding) extends the input; its output keeps
`fft_length[-1] // 2 + 1` entries of the last dimension. Gradients follow TensorFlow: the FFT's is
`size * IFFT(grad)`; RFFT's and IRFFT's fold the Hermitian-duplicated entries back in (TF
registers none for RFFT3D and IRFFT3D: tf.gradients raises LookupError). Kernels live in
`kernels/fft.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d"]

_REAL = (_dtypes.float32, _dtypes.float64)
_COMPLEX = (_dtypes.complex64, _dtypes.complex128)
_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


# --- shape functions ---------------------------------------------------------------------------
def _rank_at_least(shape, rank: int):
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def _complex_fft_shape(rank: int):
    def shape_fn(ctx):
        return _rank_at_least(ctx.input_shape(0), rank)
    return shape_fn


def _real_fft_shape(rank: int, forward: bool):
    """The inner `rank` dimensions become `fft_length` (RFFT: the last one `n // 2 + 1`)."""
    def shape_fn(ctx):
        shape = _rank_at_least(ctx.input_shape(0), rank)
        (n,) = dims_with_rank(ctx.input_shape(1)._dims, 1)
        if n is not None and n != rank:
            raise ValueError(f"Dimension must be {rank} but is {n}")
        if shape.ndims is None:
            return shape
        lengths = ctx.static_value(1)
        if lengths is None:
            inner = [None] * rank
        else:
            inner = [int(v) for v in np.ravel(lengths)]
            if forward and inner[-1] != 0:
                inner[-1] = inner[-1] // 2 + 1
        return shape[:-rank].concatenate(inner)
    return shape_fn


def _complex_op(name: str, rank: int):
    return define_op(name, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                     attrs=[TypeAttr("Tcomplex", _COMPLEX, _dtypes.complex64)],
                     shape_fn=_complex_fft_shape(rank))


def _real_op(name: str, rank: int, forward: bool):
    src, dst = ("Treal", "Tcomplex") if forward else ("Tcomplex", "Treal")
    return define_op(name, inputs=[f"input: {src}", "fft_length: int32"],
                     outputs=[f"output: {dst}"],
                     attrs=[TypeAttr("Treal", _REAL, _dtypes.float32),
                            TypeAttr("Tcomplex", _COMPLEX, _dtypes.complex64)],
                     shape_fn=_real_fft_shape(rank, forward))


FFT, IFFT = _complex_op("FFT", 1), _complex_op("IFFT", 1)
FFT2D, IFFT2D = _complex_op("FFT2D", 2), _complex_op("IFFT2D", 2)
FFT3D, IFFT3D = _complex_op("FFT3D", 3), _complex_op("IFFT3D", 3)
RFFT, IRFFT = _real_op("RFFT", 1, True), _real_op("IRFFT", 1, False)
RFFT2D, IRFFT2D = _real_op("RFFT2D", 2, True), _real_op("IRFFT2D", 2, False)
RFFT3D, IRFFT3D = _real_op("RFFT3D", 3, True), _real_op("IRFFT3D", 3, False)
_PAIRS = {1: (FFT, IFFT, RFFT, IRFFT), 2: (FFT2D, IFFT2D, RFFT2D, IRFFT2D),
          3: (FFT3D, IFFT3D, RFFT3D, IRFFT3D)}


# --- gradients ---------------------------------------------------------------------------------
def _fft_size(t, rank: int, dtype):
    """The number of points of a `rank`-D transform over `t`'s inner dimensions, as `dtype`."""
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import cast
    from tensorweave.ops.reduction_ops import reduce_prod
    return cast(reduce_prod(shape(t)[-rank:]), dtype)


def _register_complex_grads(rank: int) -> None:
    forward, inverse = _PAIRS[rank][:2]

    @forward.gradient
    def _fft_grad(op, grad):
        """FFT's adjoint is size * IFFT."""
        return [apply_op(inverse, [grad]) * _fft_size(grad, rank, grad.dtype)]

    @inverse.gradient
    def _ifft_grad(op, grad):
        """IFFT's adjoint is FFT / size."""
        from tensorweave.ops.math_ops import cast
        real = grad.dtype.real_dtype
        return [apply_op(forward, [grad]) * cast(1.0 / _fft_size(grad, rank, real), grad.dtype)]


def _register_real_grads(rank: int) -> None:
    rfft_op, irfft_op = _PAIRS[rank][2:]

    @rfft_op.gradient
    def _rfft_grad(op, grad):
        """RFFT's adjoint: Re(sum_k grad_k e^{+2 pi i k.n / N}) over the kept half spectrum.

        That is size/2 * IRFFT(grad * mask) with the DC (and, for even N, the Nyquist) entries
        of the last axis doubled, since IRFFT counts every other entry twice (TensorFlow's
        formula, with its extra terms folded into the mask).
        """
        from tensorweave.ops.math_ops import cast
        lengths = op.inputs[1]
        half = _hermitian_mask(grad, lengths, 2.0, 1.0)
        attrs = {"Tcomplex": grad.dtype, "Treal": grad.dtype.real_dtype}
        out = apply_op(irfft_op, [grad * cast(half, grad.dtype), lengths], attrs)
        return [out * (0.5 * _fft_size(op.inputs[0], rank, out.dtype)), None]

    @irfft_op.gradient
    def _irfft_grad(op, grad):
        """IRFFT's adjoint: RFFT(grad) / size, doubled where the half spectrum stands for two
        entries (all but DC and, for even N, Nyquist)."""
        from tensorweave.ops.math_ops import cast
        lengths = op.inputs[1]
        half = _hermitian_mask(op.inputs[0], lengths, 1.0, 2.0)
        scale = half / _fft_size(grad, rank, grad.dtype)
        attrs = {"Treal": grad.dtype, "Tcomplex": op.inputs[0].dtype}
        return [apply_op(rfft_op, [grad, lengths], attrs) * cast(scale, attrs["Tcomplex"]), None]


def _hermitian_mask(t, fft_length, edge: float, middle: float):
    """[edge, middle, ..., middle, edge-if-even-length] over `t`'s last dimension (real)."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import shape
    dtype = t.dtype.real_dtype
    is_odd = fft_length[-1] % 2
    last = shape(t)[-1]
    return concat([[edge], middle * ones([last - 2 + is_odd], dtype),
                   edge * ones([1 - is_odd], dtype)], 0)


for _rank in (1, 2, 3):
    _register_complex_grads(_rank)
for _rank in (1, 2):   # TensorFlow registers no gradient for RFFT3D / IRFFT3D
    _register_real_grads(_rank)


# --- wrappers ----------------------------------------------------------------------------------
def _complex_wrapper(op_def, rank: int, what: str):
    def transform(input, name=None):  # noqa: A002 - TF1's argument name
        return apply_op(op_def, [input], name=name)
    transform.__name__ = op_def.name.lower()
    transform.__doc__ = f"""{what}

    Args:
      input: a complex64 or complex128 Tensor of rank >= {rank}; outer dimensions are a
        batch.
      name: the op name (default "{op_def.name}").

    Returns:
      A Tensor of the same shape and dtype.

    Raises:
      TypeError: for a non-complex input.
      ValueError: if the input's rank is too small.
    """
    return transform


fft = _complex_wrapper(FFT, 1, "Fast Fourier transform over the inner-most dimension.")
ifft = _complex_wrapper(IFFT, 1, "Inverse fast Fourier transform over the inner-most dimension.")
fft2d = _complex_wrapper(FFT2D, 2, "2-D fast Fourier transform over the 2 inner-most dimensions.")
ifft2d = _complex_wrapper(IFFT2D, 2, "2-D inverse fast Fourier transform over the 2 inner-most "
                                  "dimensions.")
fft3d = _complex_wrapper(FFT3D, 3, "3-D fast Fourier transform over the 3 inner-most dimensions.")
ifft3d = _complex_wrapper(IFFT3D, 3, "3-D inverse fast Fourier transform over the 3 inner-most "
                                  "dimensions.")


def _infer_fft_length(x, rank: int, inverse: bool):
    """`x`'s inner dimensions (IRFFT: the last one 2 * (n - 1)), statically when known."""
    from tensorweave.ops.array_join_ops import stack, unstack
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import maximum
    inner = x.shape[-rank:]
    if inner.is_fully_defined():
        dims = inner.as_list()
        if inverse:
            dims[-1] = max(0, 2 * (dims[-1] - 1))
        return convert_to_tensor(dims, _dtypes.int32)
    dims = shape(x)[-rank:]
    if not inverse:
        return dims
    dims = unstack(dims, num=rank)
    dims[-1] = maximum(0, 2 * (dims[-1] - 1))
    return stack(dims)


def _pad_to_fft_length(x, rank: int, fft_length, inverse: bool):
    """Zero-pads `x`'s inner dimensions up to `fft_length` (IRFFT: the last to n // 2 + 1); the
    kernels crop longer inputs themselves."""
    from tensorweave.ops.array_creation_ops import zeros, zeros_like
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import rank as _rank
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.array_tile_pad_ops import pad
    from tensorweave.ops.math_ops import maximum
    if x.shape.ndims is not None and 0 in x.shape.as_list():
        return x
    lengths = static_value(fft_length)
    if lengths is not None and x.shape.ndims is not None and x.shape[-rank:].is_fully_defined():
        lengths = [int(v) for v in np.ravel(lengths)]
        if inverse:
            lengths[-1] = lengths[-1] // 2 + 1
        extra = [max(n - d, 0) for n, d in zip(lengths, x.shape[-rank:].as_list())]
        if not any(extra):
            return x
        return pad(x, [[0, 0]] * (x.shape.ndims - rank) + [[0, e] for e in extra])
    if inverse:
        fft_length = concat([fft_length[:-1], fft_length[-1:] // 2 + 1], 0)
    extra = maximum(0, fft_length - shape(x)[-rank:])
    outer = zeros([maximum(0, _rank(x) - rank)], fft_length.dtype)
    paddings = concat([outer, extra], 0)
    return pad(x, stack([zeros_like(paddings), paddings], axis=1))


def _real_transform(x, fft_length, rank: int, inverse: bool, name, default_name: str):
    """The RFFT/IRFFT wrappers: dtype checks, inferred `fft_length`, padding, the op."""
    with name_scope(name, default_name, [x, fft_length]) as scope:
        allowed = _COMPLEX if inverse else _REAL
        x = convert_to_tensor(x, preferred_dtype=allowed[0])
        kind = "IRFFT requires tf.complex64 or tf.complex128" if inverse else \
            "RFFT requires tf.float32 or tf.float64"
        if x.dtype.base_dtype not in allowed:
            raise ValueError(f"{kind} inputs, got: {x}")
        x.shape.with_rank_at_least(rank)
        if fft_length is None:
            fft_length = _infer_fft_length(x, rank, inverse)
        else:
            fft_length = convert_to_tensor(fft_length, _dtypes.int32)
        x = _pad_to_fft_length(x, rank, fft_length, inverse)
        rfft_op, irfft_op = _PAIRS[rank][2:]
        if inverse:
            attrs = {"Tcomplex": x.dtype.base_dtype, "Treal": x.dtype.real_dtype}
        else:
            attrs = {"Treal": x.dtype.base_dtype, "Tcomplex": _COMPLEX_OF[x.dtype.base_dtype]}
        return apply_op(irfft_op if inverse else rfft_op, [x, fft_length], attrs, name=scope)


def _real_wrapper(rank: int, inverse: bool):
    default_name = ("irfft" if inverse else "rfft") + ("" if rank == 1 else f"{rank}d")

    def transform(input_tensor, fft_length=None, name=None):
        return _real_transform(input_tensor, fft_length, rank, inverse, name, default_name)
    transform.__name__ = default_name
    inner = "inner-most dimension" if rank == 1 else f"{rank} inner-most dimensions"
    if inverse:
        what = (f"Inverse real-valued fast Fourier transform over the {inner}: a half spectrum "
                "(last dimension `fft_length[-1] // 2 + 1`) back to a real signal.")
        arg = "a complex64 or complex128 Tensor"
        default = "[d..., 2 * (last - 1)] of the input"
        out = f"A float Tensor whose {inner} are `fft_length`."
    else:
        what = (f"Real-valued fast Fourier transform over the {inner}: the non-redundant half "
                "of the spectrum of a real signal.")
        arg = "a float32 or float64 Tensor"
        default = "the input's inner dimensions"
        out = (f"A complex Tensor whose {inner} are `fft_length`, the last one "
               "`fft_length[-1] // 2 + 1`.")
    transform.__doc__ = f"""{what}

    Args:
      input_tensor: {arg} of rank >= {rank}; outer dimensions are a batch.
      fft_length: an int32 Tensor of shape [{rank}], the transform's size (default:
        {default}). Shorter inputs are zero-padded, longer ones cropped.
      name: the op name (default "{default_name.upper()}" under the scope "{default_name}").

    Returns:
      {out}

    Raises:
      ValueError: for an input of the wrong dtype or too small a rank.
    """
    return transform


rfft, irfft = _real_wrapper(1, False), _real_wrapper(1, True)
rfft2d, irfft2d = _real_wrapper(2, False), _real_wrapper(2, True)
rfft3d, irfft3d = _real_wrapper(3, False), _real_wrapper(3, True)
