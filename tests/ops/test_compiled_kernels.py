"""The compiled loops (kernels/jit.py) give bit for bit what the NumPy formulations give."""
import math

import numpy as np
import pytest

from tensorweave.kernels import bias_rows, nn, pool, reduction, training
from tensorweave.kernels.jit import compiled, loop_helper


class _Ctx:
    op_type = "MaxPoolGrad"

    def __init__(self, k, s, padding):
        self.attrs = {"ksize": [1, k, k, 1], "strides": [1, s, s, 1], "padding": padding,
                      "data_format": "NHWC", "explicit_paddings": []}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 7, 7, 3), (1, 5, 6, 9)])
@pytest.mark.parametrize("k,s,padding", [(2, 2, "SAME"), (3, 3, "SAME"), (2, 3, "VALID"),
                                         (2, 2, "VALID")])
def test_max_pool_grad_loop_matches_slices(dtype, shape, k, s, padding):
    rng = np.random.RandomState(0)
    x = rng.randint(-3, 3, shape).astype(dtype)   # many ties: the first maximum must win
    x.flat[::7] = np.nan                          # a NaN window routes nowhere
    x.flat[::5] = -np.inf                         # -inf ties with SAME padding
    ctx = _Ctx(k, s, padding)
    y = pool.MaxPoolKernel(ctx).compute(None, x)
    dy = rng.randn(*y.shape).astype(dtype)
    grad = pool.MaxPoolGradKernel(ctx)
    assert grad.loop is not None
    compiled = grad.compute(None, x, y, dy)
    grad.loop = None
    sliced = grad.compute(None, x, y, dy)
    np.testing.assert_array_equal(compiled, sliced)
    assert compiled.dtype == sliced.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 7, 7, 3), (1, 5, 6, 9), (3, 9, 8, 4)])
@pytest.mark.parametrize("k,s,padding", [(2, 2, "SAME"), (3, 3, "SAME"), (2, 3, "VALID"),
                                         (3, 2, "SAME"), (3, 1, "VALID"), (1, 1, "VALID")])
def test_max_pool_loop_matches_slices(dtype, shape, k, s, padding):
    rng = np.random.RandomState(1)
    x = rng.randint(-3, 3, shape).astype(dtype)   # ties, including -0.0 against 0.0
    x.flat[::4] *= -0.0
    x.flat[::7] = np.nan
    x.flat[::5] = -np.inf
    kernel = pool.MaxPoolKernel(_Ctx(k, s, padding))
    assert kernel.loop is not None
    compiled = kernel.compute(None, x)
    kernel.loop = None
    sliced = kernel.compute(None, x)
    assert compiled.dtype == sliced.dtype == dtype and compiled.shape == sliced.shape
    np.testing.assert_array_equal(compiled, sliced)   # NaN where NaN; 0.0 and -0.0 alike


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nesterov", [False, True])
def test_adam_loop_matches_formula(dtype, nesterov):
    rng = np.random.RandomState(1)
    var, m, v, grad = (rng.randn(1000).astype(dtype) for _ in range(4))
    v = np.abs(v)
    scalars = [dtype(s) for s in (0.9 ** 3, 0.999 ** 3, 1e-3, 0.9, 0.999, 1e-8)]
    attrs = {"use_nesterov": nesterov}
    expected = [a.copy() for a in (var, m, v)]
    training._adam(attrs, np.empty_like, *expected, *scalars, grad)
    got = [a.copy() for a in (var, m, v)]
    training.compiled(training.adam_loop)(*training.adam_args(attrs, *got, *scalars, grad))
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(e, g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_step_size_matches_formula(dtype):
    """adam_args takes the root with math.sqrt and rounds it to the dtype: the same value as
    the formula's np.sqrt, over beta powers from the first step to the ten-thousandth."""
    one = dtype(1)
    for step in (1, 2, 3, 10, 77, 1000, 9999):
        b1p, b2p = dtype(0.9) ** dtype(step), dtype(0.999) ** dtype(step)
        for lr in (dtype(1e-3), dtype(0.1), dtype(3.3e-5)):
            expected = lr * np.sqrt(one - b2p) / (one - b1p)
            alpha = training.adam_args({"use_nesterov": False}, np.zeros(1, dtype), None, None,
                                       b1p, b2p, lr, 0.9, 0.999, 1e-8, None)[4]
            assert alpha.dtype == dtype and alpha == expected
    rng = np.random.RandomState(4)
    x = np.concatenate([rng.uniform(0, 1, 100_000), rng.uniform(0, 1e-30, 1000), [0.0, 1.0]])
    x = x.astype(dtype)
    rounded = np.array([dtype(math.sqrt(value)) for value in x])
    np.testing.assert_array_equal(rounded, np.sqrt(x))


def test_adam_step_size_of_a_negative_root_is_nan_as_in_tensorflow():
    """beta2 > 1 makes 1 - beta2_power negative: NaN, not a math domain error (TF: NaN)."""
    alpha = training.adam_args({"use_nesterov": False}, np.zeros(1, np.float32), None, None,
                               np.float32(0.9), np.float32(1.5), np.float32(0.1), 0.9, 1.5,
                               1e-8, None)[4]
    assert np.isnan(alpha) and alpha.dtype == np.float32


def test_gradient_descent_loop_matches_formula():
    rng = np.random.RandomState(2)
    var, delta = rng.randn(2, 1000).astype(np.float32)
    expected, got = var.copy(), var.copy()
    training._gradient_descent({}, np.empty_like, expected, np.float32(0.01), delta)
    training.compiled(training._gradient_descent_loop)(
        *training._gradient_descent_args({}, got, np.float32(0.01), delta))
    np.testing.assert_array_equal(expected, got)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_grad_loop_matches_numpy(dtype):
    rng = np.random.RandomState(3)
    g, x = rng.randn(2, 6, 50).astype(dtype)
    g.flat[::7] = np.nan                      # NaN * 0 stays NaN; negative g * 0 is -0.0
    x.flat[::5] = 0
    expected = g * (x > 0).astype(dtype)
    in_place = g.copy()
    assert nn.relu_grad_into(in_place, x, out=in_place) is in_place
    for got in (nn.relu_grad_into(g, x), nn.relu_grad_into(g.copy(), x, out=g.copy()),
                in_place):
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    strided = nn.relu_grad_into(g[:, ::2], x[:, ::2])   # NumPy's path
    np.testing.assert_array_equal(strided, expected[:, ::2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes,keep", [((64, 28, 28, 32), [0, 1, 2], False),
                                             ((1024, 64), [0], True),
                                             ((8, 128, 9, 8), [1, 0], False)])
def test_leading_sum_loop_matches_numpy(dtype, shape, axes, keep):
    x = np.random.RandomState(4).randn(*shape).astype(dtype)

    class Ctx:
        op_type, attrs, xp = "Sum", {"keep_dims": keep}, np

    got = reduction.ReductionKernel(Ctx).compute(None, x, np.array(axes, np.int32))
    expected = np.add.reduce(x, axis=tuple(axes), keepdims=keep)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


_BIAS_REFERENCES = {None: lambda v: v, "Relu": lambda v: np.maximum(v, 0),
                    "Relu6": lambda v: np.minimum(np.maximum(v, 0), 6)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("activation", [None, "Relu", "Relu6"])
@pytest.mark.parametrize("in_place", [False, True])
def test_bias_and_activation_loop_matches_numpy(dtype, activation, in_place):
    rng = np.random.RandomState(6)
    x = (rng.randn(300, 7, 32) * 10).astype(dtype)
    x[0, 0, :6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5.999]
    bias = rng.randn(32).astype(dtype)
    bias[4] = 0
    expected = _BIAS_REFERENCES[activation](x + bias)
    got = bias_rows.add_bias(x, bias, activation, out=x if in_place else None)
    assert got.dtype == x.dtype and (got is x) == in_place
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("x, bias, activation", [
    (np.ones((8, 8), np.float32), np.ones(8, np.float32), "Relu"),            # small
    (np.ones((128, 64), np.float32)[:, :32], np.ones(32, np.float32), None),  # strided
    (np.ones((256, 32), np.float32), np.ones(32, np.float64), None),          # mixed dtypes
    (np.ones((256, 32), np.float16), np.ones(32, np.float16), None),          # no loop dtype
    (np.ones((256, 32), np.float32), np.ones(16, np.float32), None),          # wrong length
    (np.ones((256, 32), np.float32), np.ones(32, np.float32), "Elu"),         # no loop for it
])
def test_bias_loop_declines_what_it_does_not_compute(x, bias, activation):
    assert bias_rows.add_bias(x, bias, activation) is None


def test_bias_loop_never_writes_into_a_read_only_array():
    x = np.ones((256, 32), np.float32)
    x.flags.writeable = False
    assert bias_rows.add_bias(x, np.ones(32, np.float32), out=x) is None
    np.testing.assert_array_equal(x, 1)


def test_sum_rows_loop_adds_row_after_row():
    x = np.array([[1e8, 1.0], [1.0, 2.0], [-1e8, 3.0]], np.float32)
    out = np.empty(2, np.float32)
    reduction.compiled(reduction._sum_rows_loop)(x, out)
    np.testing.assert_array_equal(out, [(np.float32(1e8) + 1) - np.float32(1e8), 6.0])


@loop_helper
def _double(x):
    for i in range(x.size):
        x[i] *= 2


def _twice(x):
    _double(x)
    _double(x)


def test_a_compiled_loop_calls_its_loop_helpers_compiled(monkeypatch):
    # Without numba's disk cache for this module's functions: a cached function is found
    # again by its module's name, which depends on pytest's import mode, so a cache written by
    # a run in one mode made every later run in the other fail (ModuleNotFoundError).
    import numba
    njit = numba.njit
    monkeypatch.setattr(numba, "njit", lambda *args, **kwargs: njit(*args, **{**kwargs,
                                                                          "cache": False}))
    twice = compiled(_twice)
    x = np.arange(4.0)
    twice(x)
    assert x.tolist() == [0.0, 4.0, 8.0, 12.0]
    assert hasattr(globals()["_double"], "py_func")   # bound in its place: a numba dispatcher
