"""Stateless random kernels: TensorFlow's exact numbers for a given `seed`, in every run.

Each kernel turns the [2] seed into a Philox key and counter (`philox.stateless_key_counter`),
the stream the fills below take (the stateful random ops of kernels/random.py give them theirs),
and maps the Philox words to values with TensorFlow's distributions
(core/lib/random/random_distributions.h), in TensorFlow's order (the CPU `FillPhiloxRandom`):
output group g (4 floats, or 2 doubles / int64s) comes from Philox block `counter + g`; a
truncated-normal group, which may reject draws, reserves 256 blocks per value group and starts
at block `counter + g * 256` (doubles: `g * 128`). Nothing is kept between runs: the kernels
are pure functions of their inputs.

Float bits: uniform floats take the low mantissa bits of one word (float32: 23, float16: 10,
bfloat16: 7) under the exponent of 1.0, minus 1; a float64 takes 20 + 32 bits of two words.
Normals are Box-Muller on pairs, in float32 for the 16/32-bit types (the 16-bit types round the
float32 result) and in float64 for doubles. The Box-Muller loop is compiled (`jit.compiled`)
so that log, sin and cos are the C library's float and double functions, as in TensorFlow.

StatelessMultinomial, which shares the stateful op's sampling, is in kernels/multinomial.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.philox import philox_blocks, stateless_key_counter
from tensorweave.kernels.random import output_shape
from tensorweave.kernels.registry import kernel

_TRUNCATED_RESERVED_SAMPLES = 256   # TF's kReservedSamplesPerOutput for variable-sample fills


# --- Box-Muller: compiled so log/sin/cos are libm's logf/sinf/cosf and log/sin/cos ----------
def _box_muller_f32(u1, u2, out):
    """TF's BoxMullerFloat on uniform pairs (u1, u2) -> out[i] = (sin, cos) * radius."""
    eps = np.float32(1.0e-7)
    for i in range(u1.size):
        a = u1[i]
        if a < eps:
            a = eps
        v = np.float32(2.0 * np.pi * np.float64(u2[i]))   # 2.0f * M_PI is a double in C
        r = np.sqrt(np.float32(-2.0) * np.log(a))
        out[i, 0] = np.sin(v) * r
        out[i, 1] = np.cos(v) * r


@loop_helper
def box_muller_double(u1, u2):
    """TF's BoxMullerDouble on one uniform pair: (sin, cos) of 2 pi u2, times the radius."""
    if u1 < 1.0e-7:
        u1 = 1.0e-7
    v = 2.0 * np.pi * u2
    r = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v) * r, np.cos(v) * r


def _box_muller_f64(u1, u2, out):
    """TF's BoxMullerDouble on uniform pairs (u1, u2)."""
    for i in range(u1.size):
        out[i, 0], out[i, 1] = box_muller_double(u1[i], u2[i])


def _box_muller(u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """[m, 2] normal pairs from m uniform pairs, in u1's float type."""
    fn = _box_muller_f64 if u1.dtype == np.float64 else _box_muller_f32
    out = np.empty((u1.size, 2), u1.dtype)
    compiled(fn)(np.ascontiguousarray(u1), np.ascontiguousarray(u2), out)
    return out


# --- words to uniform floats ------------------------------------------------------------
def _uint32_to_float(w: np.ndarray) -> np.ndarray:
    """TF's Uint32ToFloat: 23 random mantissa bits under 1.0's exponent, minus 1."""
    return ((w & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)


@loop_helper
def uint64_to_double(hi, lo):
    """TF's Uint64ToDouble: 20 bits of `hi` and all of `lo` as the mantissa of [1, 2), minus 1;
    that is exactly mantissa * 2**-52, computed so for words and arrays of words alike."""
    return ((hi & np.uint32(0xFFFFF)) * 4294967296.0 + lo) * 2.0**-52


def _to_bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded (to nearest even) to bfloat16, stored as float32."""
    bits = x.astype(np.float32).view(np.uint32)
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    out = (rounded & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(x), x, out).astype(np.float32)


def _cast_float32(x: np.ndarray, dtype: _dtypes.DType) -> np.ndarray:
    """A float32 result in a 16-bit output type, rounded as TF's Eigen::half/bfloat16 do."""
    if dtype == _dtypes.bfloat16:
        return _to_bfloat16(x)
    return x.astype(dtype.as_numpy_dtype)


# --- the fills ------------------------------------------------------------------------------
def _words(stream, n_blocks: int) -> np.ndarray:
    """The first `n_blocks` Philox blocks of `stream` (a (key, counter) pair), flat: uint32
    [4 * n_blocks]."""
    key, counter = stream
    return philox_blocks(key, counter, np.arange(n_blocks, dtype=np.uint64)).reshape(-1)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def uniform(stream, n: int, dtype: _dtypes.DType) -> np.ndarray:
    """n values of TF's UniformDistribution for a float `dtype`, in [0, 1)."""
    if dtype == _dtypes.float64:
        w = _words(stream, _ceil_div(n, 2)).reshape(-1, 2)
        return uint64_to_double(w[:, 0], w[:, 1])[:n]
    w = _words(stream, _ceil_div(n, 4))[:n]
    if dtype == _dtypes.float16:
        bits = ((w & np.uint32(0x3FF)) | np.uint32(15 << 10)).astype(np.uint16)
        return bits.view(np.float16) - np.float16(1)
    if dtype == _dtypes.bfloat16:
        bits = ((w & np.uint32(0x7F)) | np.uint32(127 << 7)) << np.uint32(16)
        return bits.view(np.float32) - np.float32(1)
    return _uint32_to_float(w)


def _normal_pairs(w: np.ndarray, dtype: _dtypes.DType) -> np.ndarray:
    """Box-Muller pairs from words w (float: 2 words per pair; float64: 4), in order."""
    if dtype == _dtypes.float64:
        w = w.reshape(-1, 4)
        return _box_muller(uint64_to_double(w[:, 0], w[:, 1]),
                           uint64_to_double(w[:, 2], w[:, 3]))
    w = w.reshape(-1, 2)
    return _box_muller(_uint32_to_float(w[:, 0]), _uint32_to_float(w[:, 1]))


def normal(stream, n: int, dtype: _dtypes.DType) -> np.ndarray:
    """n values of TF's NormalDistribution: 4 per block (float64: 2)."""
    per_block = 2 if dtype == _dtypes.float64 else 4
    values = _normal_pairs(_words(stream, _ceil_div(n, per_block)), dtype).reshape(-1)[:n]
    return values if dtype == _dtypes.float64 else _cast_float32(values, dtype)


def truncated_normal(stream, n: int, dtype: _dtypes.DType) -> np.ndarray:
    """n values of TF's TruncatedNormalDistribution: group g of 4 (float64: 2) values takes the
    first normals with |x| < 2 from the blocks starting at `counter + g * skip`."""
    group = 2 if dtype == _dtypes.float64 else 4
    skip = group * _TRUNCATED_RESERVED_SAMPLES // 4
    key, counter = stream
    n_groups = _ceil_div(n, group)
    out = np.empty((n_groups, group), np.float64 if dtype == _dtypes.float64 else np.float32)
    todo = np.arange(n_groups, dtype=np.uint64)
    n_blocks = 2   # a group needs about 1.05 blocks; the few groups that need more retry
    while todo.size:
        offsets = todo[:, None] * np.uint64(skip) + np.arange(n_blocks, dtype=np.uint64)
        words = philox_blocks(key, counter, offsets.reshape(-1))
        values = _normal_pairs(words, dtype).reshape(todo.size, -1)
        done = np.empty(todo.size, np.bool_)
        compiled(_first_accepted)(values, todo.astype(np.intp), out, done)
        todo, n_blocks = todo[~done], n_blocks * 2
    values = out.reshape(-1)[:n]
    return values if dtype == _dtypes.float64 else _cast_float32(values, dtype)


def _first_accepted(values, rows, out, done):
    """out[rows[r]] = the first out.shape[1] values of row r with magnitude below 2, in order;
    done[r]: whether row r had that many."""
    group = out.shape[1]
    for r in range(rows.size):
        taken = 0
        for j in range(values.shape[1]):
            v = values[r, j]
            if abs(v) < 2.0:
                out[rows[r], taken] = v
                taken += 1
                if taken == group:
                    break
        done[r] = taken == group


def uniform_int(stream, n: int, lo: int, hi: int, dtype: _dtypes.DType) -> np.ndarray:
    """n integers in [lo, hi): TF's modular method, lo + (bits % (hi - lo)) with 32-bit words
    (int32) or a 64-bit word from two (int64), wrapping like C's unsigned arithmetic."""
    if dtype == _dtypes.int64:
        w = _words(stream, _ceil_div(n, 2)).reshape(-1, 2)[:n].astype(np.uint64)
        bits, span = w[:, 0] | w[:, 1] << np.uint64(32), np.uint64((hi - lo) % (1 << 64))
        return (np.uint64(lo % (1 << 64)) + bits % span).view(np.int64)
    bits, span = _words(stream, _ceil_div(n, 4))[:n], np.uint32((hi - lo) % (1 << 32))
    return (np.uint32(lo % (1 << 32)) + bits % span).view(np.int32)


def uniform_full_int(stream, n: int, dtype: _dtypes.DType) -> np.ndarray:
    """n integers over dtype's whole range: one word each (int32), or two (int64)."""
    if dtype == _dtypes.int64:
        w = _words(stream, _ceil_div(n, 2)).reshape(-1, 2)[:n].astype(np.uint64)
        return (w[:, 0] | w[:, 1] << np.uint64(32)).view(np.int64)
    return _words(stream, _ceil_div(n, 4))[:n].view(np.int32)


# --- kernels --------------------------------------------------------------------------------
def check_seed(seed) -> np.ndarray:
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise invalid_argument(f"seed must have shape [2], not {dims_text(seed.shape)}")
    return seed


def _fill(draw):
    """A kernel (ctx, shape, seed) -> draw(seed, size, dtype) reshaped to `shape`."""
    def compute(ctx, shape, seed):
        shape, seed = output_shape(shape), check_seed(seed)
        dtype = ctx.output_dtypes[0]
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return np.zeros(shape, dtype.as_numpy_dtype)
        return draw(stateless_key_counter(seed), n, dtype).reshape(shape)
    return compute


kernel("StatelessRandomUniform")(_fill(uniform))
kernel("StatelessRandomNormal")(_fill(normal))
kernel("StatelessTruncatedNormal")(_fill(truncated_normal))
kernel("StatelessRandomUniformFullInt")(_fill(uniform_full_int))


@kernel("StatelessRandomGetKeyCounter")
def _stateless_random_get_key_counter(ctx, seed):
    """The Philox key (one uint64 of two words) and counter (two uint64) of GenerateKey."""
    (k0, k1), (c0, c1, c2, c3) = stateless_key_counter(check_seed(seed))
    return np.array([k0 | k1 << 32], np.uint64), \
        np.array([c0 | c1 << 32, c2 | c3 << 32], np.uint64)


@kernel("StatelessRandomUniformInt", type_attr="dtype")
def _stateless_random_uniform_int(ctx, shape, seed, minval, maxval):
    shape, seed = output_shape(shape), check_seed(seed)
    for what, v in (("minval", minval), ("maxval", maxval)):
        if np.ndim(v) != 0:
            raise invalid_argument(f"{what} must be 0-D, got shape {dims_text(np.shape(v))}")
    dtype = ctx.output_dtypes[0]
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:   # TF checks the range only when there is something to draw
        return np.zeros(shape, dtype.as_numpy_dtype)
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise invalid_argument(f"Need minval < maxval, got {lo} >= {hi}")
    return uniform_int(stateless_key_counter(seed), n, lo, hi, dtype).reshape(shape)

