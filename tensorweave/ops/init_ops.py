"""Initializers: callables `init(shape, dtype=None, partition_info=None) -> Tensor` (TF1)."""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes

__all__ = ["zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "variance_scaling_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer", "orthogonal_initializer",
           "identity_initializer", "uniform_unit_scaling_initializer",
           "he_uniform", "he_normal", "lecun_uniform", "lecun_normal"]


class Initializer:
    """Base class: subclasses build the initial value's ops for a shape and dtype."""

    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def _dtype(self, dtype):
        return _dtypes.as_dtype(dtype) if dtype is not None else self.dtype

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.array_creation_ops import zeros
        return zeros(shape, self._dtype(dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.array_creation_ops import ones
        return ones(shape, self._dtype(dtype))


class Constant(Initializer):
    """A given value, broadcast (scalar) or reshaped to the variable's shape."""

    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        from tensorweave.ops.constant_op import constant
        return constant(self.value, dtype=self._dtype(dtype), shape=shape,
                        verify_shape=self.verify_shape if verify_shape is None else verify_shape)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform in [minval, maxval)."""

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.random_ops import random_uniform
        dtype = self._dtype(dtype)
        maxval = self.maxval if self.maxval is not None else (1 if dtype.is_floating else None)
        return random_uniform(shape, self.minval, maxval, dtype, seed=self.seed)


class RandomNormal(Initializer):
    """Normal with the given mean and standard deviation."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.random_ops import random_normal
        return random_normal(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class TruncatedNormal(RandomNormal):
    """Normal, re-drawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.random_ops import truncated_normal
        return truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                seed=self.seed)


def _fans(shape) -> tuple[float, float]:
    """TF's fan-in/fan-out: receptive field × channels for conv kernels."""
    shape = list(shape)
    if not shape:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance scale / n, n the fan-in, fan-out or their average."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32):
        super().__init__(dtype)
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops import random_ops
        dtype = self._dtype(dtype)
        # A part of a partitioned variable is scaled as the full variable (TF's rule).
        fan_in, fan_out = _fans(partition_info.full_shape if partition_info is not None
                                else shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, n[self.mode])
        if self.distribution == "truncated_normal":
            # 0.879... is the stddev of a unit normal truncated to two stddevs.
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class UniformUnitScaling(Initializer):
    """Uniform in [-m, m], m = factor * sqrt(3 / input_size): keeps the scale of a layer's
    input (TF1's deprecated uniform_unit_scaling_initializer). input_size is the product of all
    dimensions but the last (of the full variable for a partition), at least 1."""

    def __init__(self, factor=1.0, seed=None, dtype=_dtypes.float32):
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"Argument `dtype` is expected to be floating point. Received: "
                             f"{dtype}.")
        super().__init__(dtype)
        self.factor, self.seed = factor, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.random_ops import random_uniform
        scale_shape = partition_info.full_shape if partition_info is not None else shape
        input_size = max(float(np.prod([float(d) for d in list(scale_shape)[:-1]])), 1.0)
        max_val = math.sqrt(3 / input_size) * self.factor
        return random_uniform(shape, -max_val, max_val, self._dtype(dtype), seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform with limit sqrt(6 / (fan_in + fan_out)): get_variable's default."""

    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian, times `gain`.

    Built in the graph as TF's init_ops.Orthogonal: random_normal of the flattened shape
    (rows = product of all but the last dimension, transposed when wider than tall), Qr,
    q * sign(diag(r)), back to `shape`, times gain. So the values follow TF's seeds and each
    run of the initializer draws a fresh matrix (with an op seed, the same one every session).
    """

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.array_matrix_ops import diag_part, matrix_transpose
        from tensorweave.ops.array_ops import reshape
        from tensorweave.ops.linalg_qr_svd_ops import qr
        from tensorweave.ops.math_unary_ops import sign
        from tensorweave.ops.random_ops import random_normal
        dtype = self._dtype(dtype)
        shape = list(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must be "
                             f"at least two-dimensional. Received shape={shape}")
        num_rows = int(np.prod(shape[:-1], dtype=np.int64))
        num_cols = int(shape[-1])
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_normal(flat_shape, dtype=dtype, seed=self.seed)
        q, r = qr(a, full_matrices=False)
        q *= sign(diag_part(r))  # makes Q uniform over the orthogonal matrices
        if num_rows < num_cols:
            q = matrix_transpose(q)
        return self.gain * reshape(q, shape)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """The identity matrix times `gain` (2-D shapes only)."""

    def __init__(self, gain=1.0, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.gain = gain

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.constant_op import constant
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        return constant(self.gain * np.eye(*shape), dtype=self._dtype(dtype))


def he_uniform(seed=None):
    """Uniform with limit sqrt(6 / fan_in)."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def he_normal(seed=None):
    """Truncated normal with stddev sqrt(2 / fan_in)."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    """Uniform with limit sqrt(3 / fan_in)."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    """Truncated normal with stddev sqrt(1 / fan_in)."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity
uniform_unit_scaling_initializer = UniformUnitScaling
