"""Kernels of the special functions: gamma family, erfc/erfinv/ndtri, scaled Bessel, betainc,
zeta/polygamma, xlogy/xdivy/xlog1py, and d/da of the incomplete gamma function.

SciPy's ufuncs compute the values; where TensorFlow (Eigen's Cephes ports) defines an edge case
differently the kernel says so in a `np.where` with the rule in a comment (igamma(0, x) is NaN in
TensorFlow but 1 in SciPy, for example). SciPy has no float16 loops, so float16 inputs are
computed in float32 and the result is cast back: every kernel returns its input's dtype.

`igamma_derivative` has no SciPy counterpart: it is Eigen's forward-mode differentiation of the
series and continued-fraction evaluations of igamma, vectorized (each iteration advances every
element that has not converged yet), in float64. It serves IgammaGradA here and RandomGammaGrad
(the implicit reparameterization derivative of a Gamma sample) in `kernels/random_gamma.py`.
"""
from __future__ import annotations

import numpy as np
import scipy  # scipy.special loads on first use (SciPy imports submodules lazily)

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import register_pure

_NAN = np.nan
_INF = np.inf


def in_input_dtype(fn):
    """`fn(*arrays)` computed in float32 for float16 inputs, returned in the first input's
    dtype (SciPy returns float64 for float16 arguments)."""
    def kernel(*args):
        dtype = np.result_type(args[0])
        if dtype == np.float16:
            args = [np.asarray(a, np.float32) for a in args]
        return np.asarray(fn(*args)).astype(dtype, copy=False)
    kernel.__name__ = kernel.__qualname__ = fn.__name__
    kernel.__doc__ = fn.__doc__
    return kernel


# --- unary --------------------------------------------------------------------------------------
def _lgamma(x):
    """log|Gamma(x)|; +inf at -inf as in TensorFlow (SciPy gives -inf)."""
    return np.where(np.isneginf(x), _INF, scipy.special.gammaln(x))


def _digamma(x):
    """psi(x); NaN at the poles 0, -1, -2, ... and at -inf (SciPy gives +-inf at 0)."""
    return np.where((x <= 0) & (np.floor(x) == x), _NAN, scipy.special.psi(x))


# SciPy functions are looked up when a kernel first runs, not at import.
for _op_type, _fn in (("Lgamma", _lgamma), ("Digamma", _digamma),
                      ("Erfc", lambda x: scipy.special.erfc(x)),
                      ("Erfinv", lambda x: scipy.special.erfinv(x)),
                      ("Ndtri", lambda x: scipy.special.ndtri(x)),
                      ("BesselI0e", lambda x: scipy.special.i0e(x)),
                      ("BesselI1e", lambda x: scipy.special.i1e(x))):
    register_pure(_op_type, in_input_dtype(_fn), dtypes=_dtypes.FLOATING)


# --- binary -------------------------------------------------------------------------------------
def _igamma(a, x):
    """P(a, x): 0 at x == 0 whatever a is, else NaN for a <= 0 or x < 0 (Eigen's order)."""
    value = np.where((x < 0) | (a <= 0), _NAN, scipy.special.gammainc(a, x))
    return np.where(x == 0, 0, value)


def _igammac(a, x):
    """Q(a, x) = 1 - P(a, x): NaN for a <= 0 or x < 0 (SciPy gives Q(0, x) = 0)."""
    return np.where((x < 0) | (a <= 0), _NAN, scipy.special.gammaincc(a, x))


def _zeta(x, q):
    """Hurwitz zeta: inf at x == 1; at a pole q = 0, -1, ... inf for even x > 1, else NaN; 0
    for q > 1 once q**-x, the first term, underflows (SciPy gives NaN at x = inf or 1e30)."""
    pole = (q <= 0) & (np.floor(q) == q) & (x > 1)
    value = np.where(pole, np.where(np.rint(x / 2) == x / 2, _INF, _NAN), scipy.special.zeta(x, q))
    with np.errstate(over="ignore", under="ignore"):
        value = np.where((q > 1) & (np.power(q, -x, dtype=np.float64) == 0), 0, value)
    return np.where(x == 1, _INF, value)


def _polygamma(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for integer n >= 1, digamma for n == 0, NaN for
    other n (Eigen's definition, which also fixes the poles through `_zeta`)."""
    n1 = n + 1
    sign = np.where(np.fmod(n1, 2) == 0, 1, -1).astype(np.result_type(n1))
    value = np.where(n == 0, _digamma(x), sign * np.exp(scipy.special.gammaln(n1)) * _zeta(n1, x))
    return np.where((np.floor(n) != n) | (n < 0), _NAN, value)


def _xlogy(x, y):
    """x * log(y), and 0 wherever x == 0 (even for y NaN, as in TensorFlow)."""
    return np.where(x == 0, 0, x * np.log(y))


def _xlog1py(x, y):
    """x * log1p(y), and 0 wherever x == 0."""
    return np.where(x == 0, 0, x * np.log1p(y))


def _xdivy(x, y):
    """x / y, and 0 wherever x == 0."""
    return np.where(x == 0, 0, x / y)


def _igamma_grad_a(a, x):
    """d/da P(a, x)."""
    return igamma_derivative(a, x, sample=False)


for _op_type, _fn in (("Igamma", _igamma), ("Igammac", _igammac)):
    register_pure(_op_type, in_input_dtype(_fn), dtypes=_dtypes.FLOATING)
for _op_type, _fn in (("Zeta", _zeta), ("Polygamma", _polygamma),
                      ("IgammaGradA", _igamma_grad_a)):
    register_pure(_op_type, in_input_dtype(_fn), dtypes=(_dtypes.float32, _dtypes.float64))
for _op_type, _fn in (("Xlogy", _xlogy), ("Xlog1py", _xlog1py), ("Xdivy", _xdivy)):
    register_pure(_op_type, in_input_dtype(_fn), dtypes=_dtypes.FLOATING | _dtypes.COMPLEX)


# --- Betainc ------------------------------------------------------------------------------------


def _betainc(a, b, x):
    """I_x(a, b) for inputs of one shape or scalars (TensorFlow does not broadcast further);
    NaN for a <= 0 or b <= 0 (SciPy defines I_x(0, b) = 1)."""
    named = (("a", a), ("b", b), ("x", x))
    for i, (n1, v1) in enumerate(named):
        for n2, v2 in named[i + 1:]:
            if np.ndim(v1) and np.ndim(v2) and np.shape(v1) != np.shape(v2):
                raise errors.InvalidArgumentError(
                    None, None, f"Shapes of {n1} and {n2} are inconsistent: "
                    f"{dims_text(np.shape(v1))} vs. {dims_text(np.shape(v2))}")
    return np.where((a <= 0) | (b <= 0), _NAN, scipy.special.betainc(a, b, x))


register_pure("Betainc", in_input_dtype(_betainc), dtypes=(_dtypes.float32, _dtypes.float64))


# --- d/da of the incomplete gamma function -------------------------------------------------------
# Eigen's Cephes constants for float64 and its iteration cap for the derivative modes.
_MACHEP = np.finfo(np.float64).eps / 2
_BIG = 1 / np.finfo(np.float64).eps
_BIGINV = np.finfo(np.float64).eps
_ITERATIONS = 500


def igamma_derivative(a, x, sample: bool):
    """d/da P(a, x) (`sample` False: IgammaGradA), or the derivative of a Gamma(a, 1) sample x
    with respect to a, -(dP/da) / (dP/dx) (`sample` True: RandomGammaGrad), broadcast over a
    and x, in the inputs' dtype. Zero at x == 0; NaN for a <= 0, x < 0 or NaN inputs."""
    dtype = np.result_type(a, x)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    a64, x64 = a64.ravel(), x64.ravel()
    out = np.zeros(a64.shape)
    with np.errstate(all="ignore"):
        invalid = (x64 < 0) | (a64 <= 0) | np.isnan(a64) | np.isnan(x64)
        use_cf = ~invalid & (x64 > 1) & (x64 > a64)
        use_series = ~invalid & ~use_cf & (x64 != 0)
        out[use_cf] = -_continued_fraction(a64[use_cf], x64[use_cf], sample)
        out[use_series] = _series(a64[use_series], x64[use_series], sample)
        out[invalid & (x64 != 0)] = _NAN
    return out.reshape(np.broadcast_shapes(np.shape(a), np.shape(x))).astype(dtype)


def _log_main_term(a, x):
    """log(x^a e^-x / Gamma(a)), and the mask where that term underflows to 0 (then so does
    the derivative: P is flat there)."""
    log_ax = a * np.log(x) - x - scipy.special.gammaln(a)
    return log_ax, (log_ax < -np.log(np.finfo(np.float64).max)) | np.isnan(log_ax)


def _series(a, x, sample: bool):
    """Derivative of P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n)), for
    x <= 1 or x <= a: the series and its a-derivative summed term by term."""
    log_ax, flat = _log_main_term(a, x)
    ax = np.exp(log_ax) / a
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc_da, dans_da = np.zeros_like(a), np.zeros_like(a)
    live = np.flatnonzero(~flat)
    for _ in range(_ITERATIONS):
        if live.size == 0:
            break
        r[live] += 1
        term = x[live] / r[live]
        dc = term * dc_da[live] - x[live] / (r[live] * r[live]) * c[live]
        dc_da[live] = dc
        dans_da[live] += dc
        c[live] *= term
        ans[live] += c[live]
        live = live[np.abs(dc) > _MACHEP * np.abs(dans_da[live])]
    dlogax_da = np.log(x) - scipy.special.psi(a + 1)
    if sample:
        value = -(dans_da + ans * dlogax_da) * x / a
    else:
        value = ans * ax * dlogax_da + dans_da * ax
    return np.where(flat, 0, value)


def _continued_fraction(a, x, sample: bool):
    """Derivative of Q(a, x) = 1 - P(a, x) by its continued fraction (x > 1 and x > a), the
    convergents p/q and their a-derivatives advanced together, rescaled when they grow."""
    log_ax, flat = _log_main_term(a, x)
    flat |= np.isinf(x)
    ax = np.exp(log_ax)
    y, c = 1 - a, np.zeros_like(a)
    z = x + y + 1
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a), -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    live = np.flatnonzero(~flat)
    for _ in range(_ITERATIONS):
        if live.size == 0:
            break
        c[live] += 1
        y[live] += 1
        z[live] += 2
        yc, zl, cl = y[live] * c[live], z[live], c[live]
        pk = pkm1[live] * zl - pkm2[live] * yc
        qk = qkm1[live] * zl - qkm2[live] * yc
        dpk = dpkm1[live] * zl - pkm1[live] - dpkm2[live] * yc + pkm2[live] * cl
        dqk = dqkm1[live] * zl - qkm1[live] - dqkm2[live] * yc + qkm2[live] * cl
        nonzero = qk != 0
        safe_qk = np.where(nonzero, qk, 1)
        new_ans = np.where(nonzero, pk / safe_qk, ans[live])
        new_dans = np.where(nonzero, (dpk - new_ans * dqk) / safe_qk, dans[live])
        done = nonzero & (np.abs(new_dans - dans[live]) <= _MACHEP)
        ans[live], dans[live] = new_ans, new_dans
        pkm2[live], pkm1[live], qkm2[live], qkm1[live] = pkm1[live], pk, qkm1[live], qk
        dpkm2[live], dpkm1[live], dqkm2[live], dqkm1[live] = dpkm1[live], dpk, dqkm1[live], dqk
        big = live[np.abs(pk) > _BIG]
        for arr in (pkm2, pkm1, qkm2, qkm1, dpkm2, dpkm1, dqkm2, dqkm1):
            arr[big] *= _BIGINV
        live = live[~done]
    dlogax_da = np.log(x) - scipy.special.psi(a)
    if sample:
        value = -(dans + ans * dlogax_da) * x
    else:
        value = ans * ax * dlogax_da + dans * ax
    return np.where(flat, 0, value)
