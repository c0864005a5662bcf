"""tf.quantization: the fake-quantization ops of quantization-aware training (re-exports only).

TensorFlow's quantize / dequantize / quantized_concat work on quantized integer types
(qint8, quint8, ...), which tensorweave does not have; they are not here.
"""
from tensorweave.ops.fake_quant_ops import (
    fake_quant_with_min_max_args,
    fake_quant_with_min_max_args_gradient,
    fake_quant_with_min_max_vars,
    fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel,
    fake_quant_with_min_max_vars_per_channel_gradient,
)

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]
