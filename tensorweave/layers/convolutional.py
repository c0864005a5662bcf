"""Convolution and pooling layers and their functional forms (tf.layers)."""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.layers.base import Layer
from tensorweave.layers.input_spec import InputSpec
from tensorweave.ops import init_ops

# TF1 signatures default to an initializer instance; one shared instance.
ZEROS_INITIALIZER = init_ops.zeros_initializer()

__all__ = ["Conv1D", "conv1d", "Conv2D", "conv2d", "Conv2DTranspose", "conv2d_transpose",
           "SeparableConv2D", "separable_conv2d", "MaxPooling1D", "max_pooling1d",
           "MaxPooling2D", "max_pooling2d", "AveragePooling1D", "average_pooling1d",
           "AveragePooling2D", "average_pooling2d"]


def nn_module():
    """The tf.nn module, imported on first use rather than when this module loads."""
    from tensorweave import nn
    return nn


def _tuple(value, n: int, what: str) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. "
                         f"Received: {value}")
    return value


def tf_data_format(data_format: str, rank: int) -> str:
    """A layer's 'channels_last' / 'channels_first' as the op's format string ('NHWC', ...)."""
    if data_format in (None, "channels_last"):
        return {1: "NWC", 2: "NHWC", 3: "NDHWC"}[rank]
    if data_format == "channels_first":
        return {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
    raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                     f"'channels_last'. Received: {data_format}")


class Conv(Layer):
    """N-D convolution (N = 1, 2 or 3), optional bias and activation."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=ZEROS_INITIALIZER, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, rank, "kernel_size")
        self.strides = _tuple(strides, rank, "strides")
        self.padding = padding.upper()
        if self.padding not in ("VALID", "SAME"):
            raise ValueError(f"The `padding` argument must be 'valid' or 'same': {padding}")
        self.data_format = data_format or "channels_last"
        self.dilation_rate = _tuple(dilation_rate, rank, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer or init_ops.glorot_uniform_initializer()
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = self.bias = None
        self.input_spec = InputSpec(min_ndim=rank + 2)

    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def build(self, input_shape):
        input_shape = _ts.as_shape(input_shape)
        channels = _ts.dimension_value(input_shape[self._channel_axis()])
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={self._channel_axis(): channels})
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels,
                                                                          self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _convolve(self, inputs):
        nn = nn_module()
        fmt = tf_data_format(self.data_format, self.rank)
        if self.rank == 1:
            return nn.conv1d(inputs, self.kernel, stride=self.strides[0], padding=self.padding,
                             data_format=fmt, dilations=self.dilation_rate[0])
        strides = [1, 1] + list(self.strides) if fmt == "NCHW" else \
            [1] + list(self.strides) + [1]
        dilations = [1, 1] + list(self.dilation_rate) if fmt == "NCHW" else \
            [1] + list(self.dilation_rate) + [1]
        return nn.conv2d(inputs, self.kernel, strides=strides, padding=self.padding,
                         data_format=fmt, dilations=dilations)

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            fmt = "NCHW" if self.data_format == "channels_first" and self.rank >= 2 else "NHWC"
            if self.rank == 1 and self.data_format == "channels_first":
                from tensorweave.ops.array_ops import reshape
                outputs = outputs + reshape(self.bias, [1, self.filters, 1])
            else:
                outputs = nn_module().bias_add(outputs, self.bias, data_format=fmt)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


class Conv1D(Conv):
    """1-D convolution layer (kernel [width, in, out])."""

    _base_name = "conv1d"

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(1, filters, kernel_size, **kwargs)


class Conv2D(Conv):
    """2-D convolution layer (kernel [height, width, in, out])."""

    _base_name = "conv2d"

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(2, filters, kernel_size, **kwargs)


def call_conv_layer(cls, inputs, filters, kernel_size, reuse, layer_args: dict):
    """Builds `cls` from a functional call's arguments (all keyword) and applies it."""
    layer_args = {k: v for k, v in layer_args.items()
                  if k not in ("inputs", "filters", "kernel_size", "reuse")}
    return cls(filters, kernel_size, _reuse=reuse, **layer_args)(inputs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=ZEROS_INITIALIZER,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 1-D convolution layer (tf.layers.conv1d)."""
    return call_conv_layer(Conv1D, inputs, filters, kernel_size, reuse, locals())


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=ZEROS_INITIALIZER,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 2-D convolution layer (tf.layers.conv2d)."""
    return call_conv_layer(Conv2D, inputs, filters, kernel_size, reuse, locals())


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution (kernel [height, width, out, in])."""

    _base_name = "conv2d_transpose"

    def build(self, input_shape):
        input_shape = _ts.as_shape(input_shape)
        channels = _ts.dimension_value(input_shape[self._channel_axis()])
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined.")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [self.filters,
                                                                          channels],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _convolve(self, inputs):
        from tensorweave.ops.array_join_ops import stack
        from tensorweave.ops.array_ops import shape
        nn = nn_module()
        fmt = tf_data_format(self.data_format, 2)
        h_axis, w_axis = (2, 3) if fmt == "NCHW" else (1, 2)
        dims = shape(inputs)
        out_sizes = []
        for axis, k, s, d in zip((h_axis, w_axis), self.kernel_size, self.strides,
                                 self.dilation_rate):
            k_eff = (k - 1) * d + 1
            size = dims[axis] * s
            if self.padding == "VALID":
                size = size + max(k_eff - s, 0)
            out_sizes.append(size)
        out_shape = [dims[0], self.filters, *out_sizes] if fmt == "NCHW" else \
            [dims[0], *out_sizes, self.filters]
        strides = [1, 1] + list(self.strides) if fmt == "NCHW" else \
            [1] + list(self.strides) + [1]
        return nn.conv2d_transpose(inputs, self.kernel, stack(out_shape), strides,
                                   padding=self.padding, data_format=fmt)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=ZEROS_INITIALIZER,
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional interface of the transposed convolution layer."""
    return Conv2DTranspose(filters, kernel_size, strides=strides, padding=padding,
                           data_format=data_format, activation=activation, use_bias=use_bias,
                           kernel_initializer=kernel_initializer,
                           bias_initializer=bias_initializer,
                           kernel_regularizer=kernel_regularizer,
                           bias_regularizer=bias_regularizer,
                           activity_regularizer=activity_regularizer,
                           kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                           trainable=trainable, name=name, _reuse=reuse)(inputs)


class SeparableConv2D(Conv2D):
    """Depthwise 2-D convolution followed by a pointwise (1×1) convolution."""

    _base_name = "separable_conv2d"

    def __init__(self, filters, kernel_size, depth_multiplier=1,
                 depthwise_initializer=None, pointwise_initializer=None, **kwargs):
        super().__init__(filters, kernel_size, **kwargs)
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer = depthwise_initializer or \
            init_ops.glorot_uniform_initializer()
        self.pointwise_initializer = pointwise_initializer or \
            init_ops.glorot_uniform_initializer()

    def build(self, input_shape):
        input_shape = _ts.as_shape(input_shape)
        channels = _ts.dimension_value(input_shape[self._channel_axis()])
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer)

    def _convolve(self, inputs):
        fmt = tf_data_format(self.data_format, 2)
        strides = [1, 1] + list(self.strides) if fmt == "NCHW" else \
            [1] + list(self.strides) + [1]
        return nn_module().separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                            strides, self.padding, rate=self.dilation_rate,
                                            data_format=fmt)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, name=None, reuse=None, **kwargs):
    """Functional interface of the separable convolution layer."""
    return SeparableConv2D(filters, kernel_size, depth_multiplier=depth_multiplier,
                           strides=strides, padding=padding, data_format=data_format,
                           dilation_rate=dilation_rate, activation=activation,
                           use_bias=use_bias, name=name, _reuse=reuse, **kwargs)(inputs)


class _Pooling(Layer):
    """Max or average pooling over 1, 2 or 3 spatial dimensions."""

    def __init__(self, rank, kind, pool_size, strides, padding="valid",
                 data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rank, self.kind = rank, kind
        self.pool_size = _tuple(pool_size, rank, "pool_size")
        self.strides = _tuple(strides if strides is not None else pool_size, rank, "strides")
        self.padding = padding.upper()
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(ndim=rank + 2)

    def call(self, inputs):
        from tensorweave.ops.array_ops import expand_dims, squeeze
        nn = nn_module()
        channels_first = self.data_format == "channels_first"
        size, strides = list(self.pool_size), list(self.strides)
        if self.rank == 3:
            pool = nn.max_pool3d if self.kind == "max" else nn.avg_pool3d
            return pool(inputs, size, strides, self.padding,
                        data_format=tf_data_format(self.data_format, 3))
        pool = nn.max_pool if self.kind == "max" else nn.avg_pool
        if self.rank == 1:
            axis = 2 if channels_first else 1
            inputs = expand_dims(inputs, axis)
            size, strides = [1] + size, [1] + strides
        fmt = "NCHW" if channels_first else "NHWC"
        ksize = [1, 1] + size if channels_first else [1] + size + [1]
        kstrides = [1, 1] + strides if channels_first else [1] + strides + [1]
        out = pool(inputs, ksize, kstrides, self.padding, data_format=fmt)
        if self.rank == 1:
            out = squeeze(out, [2 if channels_first else 1])
        return out


def pooling_class(rank, kind, base_name):
    """A pooling layer class for `rank` spatial dimensions and `kind` ('max' or 'avg')."""
    class Pool(_Pooling):
        _base_name = base_name

        def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                     name=None, **kwargs):
            super().__init__(rank, kind, pool_size, strides, padding, data_format, name,
                             **kwargs)

    Pool.__name__ = Pool.__qualname__ = "".join(p.capitalize() for p in base_name.split("_"))
    Pool.__doc__ = f"{kind.capitalize()} pooling over {rank} spatial dimension(s)."
    return Pool


MaxPooling1D = pooling_class(1, "max", "max_pooling1d")
MaxPooling2D = pooling_class(2, "max", "max_pooling2d")
AveragePooling1D = pooling_class(1, "avg", "average_pooling1d")
AveragePooling2D = pooling_class(2, "avg", "average_pooling2d")


def pooling_function(cls):
    """The functional form of pooling layer class `cls`, named after its `_base_name`."""
    def pool(inputs, pool_size, strides, padding="valid", data_format="channels_last",
             name=None):
        return cls(pool_size, strides, padding, data_format, name)(inputs)
    pool.__name__ = cls._base_name
    pool.__doc__ = f"Functional interface of {cls.__name__} (tf.layers.{cls._base_name})."
    return pool


max_pooling1d = pooling_function(MaxPooling1D)
max_pooling2d = pooling_function(MaxPooling2D)
average_pooling1d = pooling_function(AveragePooling1D)
average_pooling2d = pooling_function(AveragePooling2D)
