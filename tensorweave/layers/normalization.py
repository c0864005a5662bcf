"""Batch normalization layer (tf.layers.batch_normalization), fused for 4-D and 5-D inputs.

In training it normalizes with the batch statistics and adds to UPDATE_OPS one op per moving
statistic: `moving -= (moving - batch) * (1 - momentum)` (TF's AssignMovingAvg). At inference
it uses the moving statistics. A `training` tensor selects between the two at run time.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers.base import Layer, smart_cond
from tensorweave.ops import init_ops
from tensorweave.ops.constant_op import constant

# TF1 signatures default to initializer instances; one shared instance each.
_ZEROS = init_ops.zeros_initializer()
_ONES = init_ops.ones_initializer()
_HALF = (_dtypes.float16, _dtypes.bfloat16)

__all__ = ["BatchNormalization", "batch_normalization"]


def _nn():
    from tensorweave import nn
    return nn


class BatchNormalization(Layer):
    """Normalizes each channel over the batch (and spatial dims), then scales and shifts."""

    _base_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=_ZEROS,
                 gamma_initializer=_ONES,
                 moving_mean_initializer=_ZEROS,
                 moving_variance_initializer=_ONES,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size or adjustment:
            raise NotImplementedError("renorm, virtual_batch_size and adjustment are not "
                                      "supported")
        self.axis = axis
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused

    def build(self, input_shape):
        input_shape = _ts.as_shape(input_shape)
        rank = input_shape.ndims
        if rank is None:
            raise ValueError("Input has undefined rank.")
        self._axis = self.axis % rank
        channels = _ts.dimension_value(input_shape[self._axis])
        if channels is None:
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: {input_shape}")
        self._rank = rank
        dtype = _dtypes.as_dtype(self.dtype or _dtypes.float32).base_dtype
        self._data_format = None if self.fused is False else _fused_format(rank, self._axis,
                                                                             dtype)
        self._use_fused = self.fused = self._data_format is not None
        # As TF, 16-bit layers keep float32 parameters and statistics.
        self._param_dtype = _dtypes.float32 if dtype in _HALF else dtype
        param = [channels]
        self.gamma = self.add_weight("gamma", param, dtype=self._param_dtype,
                                     initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", param, dtype=self._param_dtype,
                                    initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", param, dtype=self._param_dtype,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param,
                                               dtype=self._param_dtype,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)

    def _gamma_beta(self, inputs):
        from tensorweave.ops.array_creation_ops import ones, zeros
        channels = self.moving_mean.shape.as_list()
        dtype = self._param_dtype
        gamma = self.gamma if self.gamma is not None else ones(channels, dtype)
        beta = self.beta if self.beta is not None else zeros(channels, dtype)
        return gamma, beta

    def call(self, inputs, training=False):
        known = _known_bool(training)
        if self._use_fused:
            return self._fused_call(inputs, training, known)
        return self._unfused_call(inputs, training, known)

    def _fused_call(self, inputs, training, known):
        """FusedBatchNormV3; a `training` tensor picks the training or inference op at run
        time and sets momentum to 1 (no update) at inference, as tf_keras does."""
        nn = _nn()
        gamma, beta = self._gamma_beta(inputs)
        fmt = self._data_format

        def normalize(is_training):
            # With exponential_avg_factor 1 training ignores the moving statistics passed in.
            return nn.fused_batch_norm(inputs, gamma, beta, mean=self.moving_mean,
                                       variance=self.moving_variance, epsilon=self.epsilon,
                                       data_format=fmt, is_training=is_training)

        def train():
            return normalize(True)

        def infer():
            return normalize(False)

        if known is False:
            return infer()[0]
        output, mean, variance = smart_cond(training, train, infer)
        if known is None:
            momentum = smart_cond(training, lambda: constant(self.momentum),
                                  lambda: constant(1.0))
        else:
            momentum = constant(self.momentum)
        for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            self.add_update(_assign_moving_average(variable, value, momentum).op)
        return output

    def _unfused_call(self, inputs, training, known):
        """Moments, then batch_normalization; with a `training` tensor the statistics and
        each update are tf.conds (the update's false branch just reads the variable)."""
        nn = _nn()
        from tensorweave.ops.array_ops import reshape
        from tensorweave.ops.math_ops import cast
        input_dtype = inputs.dtype.base_dtype
        if input_dtype in _HALF:  # as TF: 16-bit inputs are normalized in float32
            inputs = cast(inputs, _dtypes.float32)
        gamma, beta = self._gamma_beta(inputs)
        mean, variance = self.moving_mean, self.moving_variance
        if known is not False:
            reduce_axes = [i for i in range(self._rank) if i != self._axis]
            batch_mean, batch_var = nn.moments(inputs, reduce_axes)
            mean = smart_cond(training, lambda: batch_mean, lambda: self.moving_mean.value())
            variance = smart_cond(training, lambda: batch_var,
                                  lambda: self.moving_variance.value())
            for variable, value in ((self.moving_mean, mean),
                                    (self.moving_variance, variance)):
                update = smart_cond(
                    training,
                    lambda v=variable, x=value: _assign_moving_average(v, x, self.momentum),
                    lambda v=variable: v.value())
                self.add_update(update.op)
        if self._axis != self._rank - 1:  # per-channel vectors broadcast only on the last axis
            broadcast = [1] * self._rank
            broadcast[self._axis] = -1
            mean, variance, beta, gamma = (reshape(t, broadcast)
                                           for t in (mean, variance, beta, gamma))
        outputs = nn.batch_normalization(inputs, mean, variance, beta, gamma, self.epsilon)
        return cast(outputs, input_dtype) if input_dtype in _HALF else outputs


def _fused_format(rank, axis, dtype):
    """The data format of TF's fused path, or None where TF's V1 layer does not fuse: only
    4-D inputs with channels on axis 1 or 3, 5-D ones on axis 1 or 4, and 16/32-bit floats
    (no float64), whether `fused` is None or True."""
    if dtype not in (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32):
        return None
    return {(4, 1): "NCHW", (4, 3): "NHWC", (5, 1): "NCDHW", (5, 4): "NDHWC"}.get((rank, axis))


def _known_bool(training):
    """`training` as a Python bool when known while building, else None."""
    if isinstance(training, bool):
        return training
    from tensorweave.framework.static_value import static_value
    known = static_value(convert_to_tensor(training))
    return None if known is None else bool(known)


def _assign_moving_average(variable, value, momentum):
    """`variable -= (variable - value) * (1 - momentum)` by AssignSub, named
    `<layer scope>/AssignMovingAvg[_n]` as tf_keras names it (no debiasing)."""
    from tensorweave.ops.math_ops import cast
    from tensorweave.ops.state_ops import assign_sub
    dtype = variable.dtype.base_dtype
    with name_scope("AssignMovingAvg") as scope:
        decay = convert_to_tensor(1.0 - momentum, name="decay")
        if decay.dtype.base_dtype != dtype:
            decay = cast(decay, dtype)
        delta = (variable.value() - cast(value, dtype)) * decay
        return assign_sub(variable, delta, name=scope)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True,
                        scale=True, beta_initializer=_ZEROS,
                        gamma_initializer=_ONES,
                        moving_mean_initializer=_ZEROS,
                        moving_variance_initializer=_ONES,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Functional interface of batch normalization (tf.layers.batch_normalization).

    Note: the moving statistics are updated by ops in `tf.GraphKeys.UPDATE_OPS`, which the
    training op must depend on, as in TF1.
    """
    del renorm_clipping, renorm_momentum
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer,
                               gamma_initializer, moving_mean_initializer,
                               moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, beta_constraint, gamma_constraint, renorm,
                               fused, trainable, virtual_batch_size, adjustment, name,
                               _reuse=reuse)
    return layer(inputs, training=training)
