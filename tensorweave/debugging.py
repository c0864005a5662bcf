"""tf.debugging: assertions and numeric checks (re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.check_extra_ops import (
    assert_proper_iterable,
    assert_rank_in,
    assert_same_float_dtype,
)
from tensorweave.ops.check_numerics_callback import (
    disable_check_numerics,
    enable_check_numerics,
)
from tensorweave.ops.check_ops import (
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_rank_at_least,
    assert_scalar,
    assert_type,
    is_numeric_tensor,
)
from tensorweave.ops.check_ops import verify_tensor_all_finite as assert_all_finite
from tensorweave.ops.check_shapes_ops import assert_shapes
from tensorweave.ops.logging_ops import Assert, check_numerics
from tensorweave.ops.math_extra_ops import is_non_decreasing, is_strictly_increasing
from tensorweave.ops.math_unary_ops import is_finite, is_inf, is_nan
from tensorweave.platform.debug_switches import (
    get_log_device_placement,
    set_log_device_placement,
)
