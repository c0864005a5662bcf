"""3-D convolution and pooling layers and the 1-D separable convolution (tf.layers): Conv3D,
Conv3DTranspose, MaxPooling3D, AveragePooling3D, SeparableConv1D and their functional forms.

They reuse `convolutional`'s N-D convolution and pooling bases (weights, bias, activation,
layouts); only the op each one calls differs. Variable names and shapes follow TF's legacy
layers: `kernel` [kd, kh, kw, in, filters] (transposed: [kd, kh, kw, filters, in]), `bias`,
and for SeparableConv1D `depthwise_kernel` [k, in, depth_multiplier] and `pointwise_kernel`
[1, in * depth_multiplier, filters].
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.layers.convolutional import (
    ZEROS_INITIALIZER,
    Conv,
    Conv2DTranspose,
    call_conv_layer,
    nn_module,
    pooling_class,
    pooling_function,
    tf_data_format,
)
from tensorweave.ops import init_ops

__all__ = ["AveragePooling3D", "Conv3D", "Conv3DTranspose", "MaxPooling3D", "SeparableConv1D",
           "average_pooling3d", "conv3d", "conv3d_transpose", "max_pooling3d",
           "separable_conv1d"]


def _full(values, channels_first: bool) -> list:
    """[1, 1, *values] (channels first) or [1, *values, 1]."""
    return [1, 1, *values] if channels_first else [1, *values, 1]


def _channels(layer, input_shape) -> int:
    channels = _ts.dimension_value(_ts.as_shape(input_shape)[layer._channel_axis()])
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    return channels


class Conv3D(Conv):
    """3-D convolution layer (kernel [depth, height, width, in, out])."""

    _base_name = "conv3d"

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(3, filters, kernel_size, **kwargs)

    def _convolve(self, inputs):
        cf = self.data_format == "channels_first"
        return nn_module().conv3d(inputs, self.kernel, _full(self.strides, cf), self.padding,
                                  data_format=tf_data_format(self.data_format, 3),
                                  dilations=_full(self.dilation_rate, cf))


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=ZEROS_INITIALIZER,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 3-D convolution layer (tf.layers.conv3d)."""
    return call_conv_layer(Conv3D, inputs, filters, kernel_size, reuse, locals())


class Conv3DTranspose(Conv3D):
    """Transposed 3-D convolution (kernel [depth, height, width, out, in])."""

    _base_name = "conv3d_transpose"

    build = Conv2DTranspose.build   # the same weights: kernel [*k, filters, in], bias

    def _convolve(self, inputs):
        from tensorweave.ops.array_join_ops import stack
        from tensorweave.ops.array_ops import shape
        cf = self.data_format == "channels_first"
        dims = shape(inputs)
        axes = (2, 3, 4) if cf else (1, 2, 3)
        sizes = []
        for axis, k, s in zip(axes, self.kernel_size, self.strides):
            size = dims[axis] * s   # Keras's deconv_output_length
            sizes.append(size + max(k - s, 0) if self.padding == "VALID" else size)
        out_shape = [dims[0], self.filters, *sizes] if cf else [dims[0], *sizes, self.filters]
        return nn_module().conv3d_transpose(inputs, self.kernel, stack(out_shape),
                                            _full(self.strides, cf), padding=self.padding,
                                            data_format=tf_data_format(self.data_format, 3))


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=ZEROS_INITIALIZER,
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional interface of the transposed 3-D convolution layer."""
    return call_conv_layer(Conv3DTranspose, inputs, filters, kernel_size, reuse, locals())


class SeparableConv1D(Conv):
    """Depthwise 1-D convolution followed by a pointwise (width 1) convolution, run as a
    separable 2-D convolution over an inserted height of 1 (as Keras does)."""

    _base_name = "separable_conv1d"

    def __init__(self, filters, kernel_size, depth_multiplier=1, depthwise_initializer=None,
                 pointwise_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer or \
            init_ops.glorot_uniform_initializer()
        self.pointwise_initializer = pointwise_initializer or \
            init_ops.glorot_uniform_initializer()
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _convolve(self, inputs):
        from tensorweave.ops.array_ops import expand_dims, squeeze
        cf = self.data_format == "channels_first"
        axis = 2 if cf else 1
        out = nn_module().separable_conv2d(
            expand_dims(inputs, axis), expand_dims(self.depthwise_kernel, 0),
            expand_dims(self.pointwise_kernel, 0), _full(self.strides * 2, cf), self.padding,
            rate=(1, *self.dilation_rate), data_format="NCHW" if cf else "NHWC")
        return squeeze(out, [axis])


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
                     data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=ZEROS_INITIALIZER,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 1-D separable convolution layer."""
    return call_conv_layer(SeparableConv1D, inputs, filters, kernel_size, reuse, locals())


MaxPooling3D = pooling_class(3, "max", "max_pooling3d")
AveragePooling3D = pooling_class(3, "avg", "average_pooling3d")
max_pooling3d = pooling_function(MaxPooling3D)
average_pooling3d = pooling_function(AveragePooling3D)
