"""OpCase: one table row per op behaviour; the harness turns it into forward and shape checks.

A row names a builder (public TF1 API calls on input tensors), a NumPy reference, input
generators and dtypes. `check_forward` runs the op on constants and on fully-shaped
placeholders and compares with the reference; `check_shapes` feeds placeholders of unknown
dimensions and of unknown rank and checks that the static shape the shape function inferred is
compatible with (and, when inputs are fully known, equal to) what the kernel returned.
`op_types_of` reports which op types a row builds, for the meta-test that every registered op
has a row. `check_gradient` compares the gradient of a random weighting of the outputs with
central differences in float64.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import tensorweave as tf
from tensorweave.autodiff.gradients import as_list


@dataclass
class OpCase:
    """One op behaviour to check against NumPy."""

    name: str
    build: Callable                      # (*tensors) -> Tensor or list of Tensors
    ref: Callable                        # (*arrays) -> array or list of arrays
    inputs: Sequence                     # arrays, or callables (rng, np_dtype) -> array
    dtypes: Sequence = (tf.float32,)
    rtol: float = 1e-5
    atol: float = 1e-6
    unknown_shapes: bool = True          # also build with unknown dims / rank
    grad: bool = True                    # differentiable (checked once autodiff exists)
    fixed_dtypes: Sequence = field(default_factory=tuple)  # per-input dtype overrides

    def __str__(self) -> str:
        return self.name


def materialize_inputs(case: OpCase, dtype) -> list[np.ndarray]:
    """The case's inputs as arrays of `dtype` (or their fixed dtype), from a seeded generator."""
    rng = np.random.RandomState(0)
    out = []
    for i, spec in enumerate(case.inputs):
        want = case.fixed_dtypes[i] if i < len(case.fixed_dtypes) and case.fixed_dtypes[i] \
            else dtype
        np_dtype = object if want == tf.string else want.as_numpy_dtype
        value = spec(rng, np_dtype) if callable(spec) else spec
        arr = np.asarray(value)
        if want != tf.string:
            arr = arr.astype(np_dtype)
        out.append(arr)
    return out


def _dtype_of(arr: np.ndarray):
    return tf.string if arr.dtype == object else tf.as_dtype(arr.dtype)


def _as_array(x) -> np.ndarray:
    """`x` as an array; bytes (a scalar string fetch) as a 0-d object array, because a NumPy
    |S array would drop trailing NUL bytes."""
    return np.array(x, dtype=object) if isinstance(x, bytes) else np.asarray(x)


def _compare(case, got, expected, label):
    got, expected = _as_array(got), _as_array(expected)
    assert got.shape == expected.shape, f"{case.name} {label}: shape {got.shape} != " \
        f"{expected.shape}"
    if expected.dtype.kind in "biuSO" or got.dtype.kind in "bSO":
        np.testing.assert_array_equal(got, expected, err_msg=f"{case.name} {label}")
    else:
        np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=case.atol,
                                   equal_nan=True, err_msg=f"{case.name} {label}")


def check_forward(case: OpCase, dtype) -> None:
    """Runs the op on constants and on fed placeholders; compares with the NumPy reference."""
    arrays = materialize_inputs(case, dtype)
    expected = as_list(case.ref(*arrays))
    with tf.Graph().as_default():
        consts = as_list(case.build(*[tf.constant(a) for a in arrays]))
        holders = [tf.placeholder(_dtype_of(a), a.shape) for a in arrays]
        fed = as_list(case.build(*holders))
        with tf.Session() as sess:
            got_const = sess.run(consts)
            got_fed = sess.run(fed, dict(zip(holders, arrays)))
    assert len(got_const) == len(expected), f"{case.name}: {len(got_const)} outputs"
    for i, (g, f, e, t) in enumerate(zip(got_const, got_fed, expected, fed)):
        _compare(case, g, e, f"output {i} (constants)")
        _compare(case, f, e, f"output {i} (fed)")
        static = t.shape
        assert static.is_compatible_with(np.shape(f)), \
            f"{case.name}: static shape {static} vs kernel {np.shape(f)}"
        if static.is_fully_defined():
            assert tuple(static.as_list()) == np.shape(f), \
                f"{case.name}: static shape {static} != kernel shape {np.shape(f)}"
        # A scalar string fetch is `bytes`, as in TF: its array dtype is object, not |S.
        got_dtype = _as_array(f).dtype
        assert got_dtype == _np_dtype(t.dtype), \
            f"{case.name}: dtype {got_dtype} != static {t.dtype}"


def _np_dtype(dtype):
    return np.dtype(object) if dtype.base_dtype == tf.string else \
        np.dtype(dtype.base_dtype.as_numpy_dtype)


def check_shapes(case: OpCase, dtype) -> None:
    """Shape functions with unknown dims and unknown rank agree with the kernel's output."""
    arrays = materialize_inputs(case, dtype)
    for mode in ("unknown_dims", "unknown_rank"):
        with tf.Graph().as_default():
            holders = []
            for a in arrays:
                shape = [None] * a.ndim if mode == "unknown_dims" else None
                holders.append(tf.placeholder(_dtype_of(a), shape))
            try:
                outs = as_list(case.build(*holders))
            except (ValueError, TypeError) as e:
                raise AssertionError(f"{case.name}: building with {mode} failed: {e}") from e
            with tf.Session() as sess:
                got = sess.run(outs, dict(zip(holders, arrays)))
        for t, g in zip(outs, got):
            assert t.shape.is_compatible_with(np.shape(g)), \
                f"{case.name} ({mode}): static {t.shape} vs kernel {np.shape(g)}"


def op_types_of(case: OpCase, dtype=None) -> set[str]:
    """The op types the row's builder creates (for the every-op-has-a-row meta-test)."""
    arrays = materialize_inputs(case, dtype or case.dtypes[0])
    with tf.Graph().as_default() as g:
        case.build(*[tf.placeholder(_dtype_of(a), a.shape) for a in arrays])
    return {op.type for op in g.get_operations()}


def parametrize(cases: Sequence[OpCase]):
    """(case, dtype) pairs with readable ids, for pytest.mark.parametrize."""
    import pytest
    return pytest.mark.parametrize(
        "case,dtype", [pytest.param(c, d, id=f"{c.name}-{d.name}") for c in cases
                       for d in c.dtypes])


def case_tests(cases: Sequence[OpCase], gradients: bool = False) -> tuple:
    """An op family's standard tests over its OpCase table: forward against NumPy, shape
    function against the kernel and, with `gradients`, every differentiable row against
    central differences. Bind them at module level so pytest collects them:
    `test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)`."""
    import pytest

    @parametrize(cases)
    def test_forward(case, dtype):
        check_forward(case, dtype)

    @parametrize(cases)
    def test_shapes(case, dtype):
        check_shapes(case, dtype)

    if not gradients:
        return test_forward, test_shapes

    @pytest.mark.parametrize("case", [c for c in cases if c.grad], ids=str)
    def test_gradient(case):
        check_gradient(case)
    return test_forward, test_shapes, test_gradient


def check_gradient(case: OpCase, tolerance: float = 1e-5) -> None:
    """Gradient of sum_k <w_k, output_k> w.r.t. every floating input vs central differences.

    Runs in float64 (inputs of fixed non-float dtypes, such as indices, stay as they are).
    """
    from tensorweave.autodiff.checker import compute_gradient
    arrays = materialize_inputs(case, tf.float64)
    rng = np.random.RandomState(1)
    with tf.Graph().as_default():
        holders = [tf.placeholder(_dtype_of(a), a.shape) for a in arrays]
        outs = as_list(case.build(*holders))
        with tf.Session() as sess:  # outputs whose static shape depends on fed values
            shapes = [np.shape(v) for v in sess.run(outs, dict(zip(holders, arrays)))]
        terms = []
        for out, shape in zip(outs, shapes):
            if not out.dtype.base_dtype.is_floating:
                continue
            weight = rng.uniform(0.5, 1.5, size=shape).astype(np.float64)
            terms.append(tf.reduce_sum(tf.cast(out, tf.float64) * weight))
        assert terms, f"{case.name}: no floating output to differentiate"
        objective = tf.add_n(terms) if len(terms) > 1 else terms[0]
        with tf.Session():
            for i, (holder, value) in enumerate(zip(holders, arrays)):
                if not holder.dtype.is_floating:
                    continue
                others = {h: a for j, (h, a) in enumerate(zip(holders, arrays)) if j != i}
                theoretical, numerical = compute_gradient(
                    holder, value.shape, objective, [], x_init_value=value,
                    delta=1e-6, extra_feed_dict=others)
                err = float(np.max(np.abs(theoretical - numerical))) if value.size else 0.0
                scale = max(1.0, float(np.max(np.abs(numerical))) if value.size else 1.0)
                assert err <= tolerance * scale, \
                    f"{case.name}: gradient of input {i} off by {err:.3g}\n" \
                    f"theoretical {theoretical.ravel()[:8]}\nnumerical {numerical.ravel()[:8]}"
