"""tf.dtypes: the DType class, the dtype constants and the casts (re-exports only)."""
# ruff: noqa: A004, F401 - TF's names shadow builtins (bool); all are re-exports
from tensorweave.framework.dtypes import (
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from tensorweave.ops.complex_ops import complex
from tensorweave.ops.math_ops import saturate_cast
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.string_ops import as_string
