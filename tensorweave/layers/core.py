"""Dense, Dropout and Flatten layers and their functional forms (tf.layers)."""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.layers.base import Layer, smart_cond
from tensorweave.layers.input_spec import InputSpec
from tensorweave.ops import init_ops

# TF1 signatures default to an initializer instance; one shared instance.
_ZEROS = init_ops.zeros_initializer()

__all__ = ["Dense", "dense", "Dropout", "dropout", "Flatten", "flatten"]


def _nn():
    from tensorweave import nn
    return nn


class Dense(Layer):
    """outputs = activation(inputs @ kernel + bias)."""

    _base_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=_ZEROS, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer or init_ops.glorot_uniform_initializer()
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = self.bias = None
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        input_shape = _ts.as_shape(input_shape)
        last = _ts.dimension_value(input_shape[-1]) if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", [last, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        from tensorweave.ops.linalg_ops import matmul, tensordot
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
        else:
            outputs = matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = _nn().bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=_ZEROS, kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the densely-connected layer (tf.layers.dense)."""
    layer = Dense(units, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name, _reuse=reuse)
    return layer(inputs)


class Dropout(Layer):
    """Randomly zeroes `rate` of the units in training and scales the rest by 1/(1-rate)."""

    _base_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        from tensorweave.ops.array_ops import identity
        return smart_cond(
            training,
            lambda: _nn().dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                  rate=self.rate),
            lambda: identity(inputs))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Functional interface of dropout (tf.layers.dropout); `training` may be a tensor."""
    return Dropout(rate, noise_shape, seed, name)(inputs, training=training)


class Flatten(Layer):
    """Flattens every dimension but the batch dimension."""

    _base_name = "flatten"

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        from tensorweave.ops.array_join_ops import stack
        from tensorweave.ops.array_ops import reshape, shape, transpose
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 2:
            inputs = transpose(inputs, [0] + list(range(2, rank)) + [1])
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else None
        if dims is not None and all(d is not None for d in dims[1:]):
            flat = 1
            for d in dims[1:]:
                flat *= d
            return reshape(inputs, [-1, flat])
        return reshape(inputs, stack([shape(inputs)[0], -1]))


def flatten(inputs, name=None, data_format="channels_last"):
    """Functional interface of Flatten (tf.layers.flatten)."""
    return Flatten(data_format=data_format, name=name)(inputs)
