"""Gamma and Poisson kernels, stateful and stateless: TensorFlow's samples, bit for bit.

RandomGamma, RandomPoissonV2, StatelessRandomGammaV3 and StatelessRandomPoisson sample;
RandomGammaGrad is the reparameterization gradient's derivative.

TensorFlow's CPU samplers (core/kernels/random_op.cc RandomGammaOp, random_poisson_op.cc
PoissonFunctor, stateless_random_gamma_op.cc) number the outputs parameter-major, output
`o = param * samples + sample`, and draw output o from its own copy of the Philox generator
skipped 256 * o blocks (kReservedSamplesPerOutput), so the numbers do not depend on sharding;
output o is stored at `[sample, param]`. A sampler takes as many blocks as its rejection loop
needs (there is no bound, a sample may run into the next one's blocks), so the Philox rounds
run inside the compiled loop, one block at a time (`philox.philox_block`). The stateful ops
hold TF's GuardedPhiloxRandom (`PhiloxStream`) and reserve 256 * outputs blocks per run; the
stateless ops start at the key and counter of StatelessRandomGetKeyCounter.

Blocks are read as TF's distributions read them, in double whatever the output type: a
uniform block holds two doubles (words 0-1 and 2-3, TF's Uint64ToDouble), a normal block two
Box-Muller doubles (sin, cos). Like TF's UNIFORM macro and RandomSampleBuffer, a sampler keeps
one normal and one uniform block, takes their values last first, and draws the next block from
the shared generator when one runs out. Gamma: -log1p(-u) for alpha == 1, else Marsaglia-Tsang
(d = alpha - 1/3, or alpha + 2/3 times u^(1/alpha) for alpha < 1). Poisson: Knuth's product of
uniforms for rates below 10, else Hormann's transformed rejection; a count above the output
type's largest value is rejected, and an infinite rate gives the type's NumTraits infinity
(inf, or 0 for integers). The results are cast as TF casts them: to float16 through float32,
to an integer by truncation.

Where TensorFlow's sampler never returns (a NaN rate, or a rate whose counts all exceed the
output type, like 1e10 as int32), the kernel fails with InvalidArgumentError instead.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import philox
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.math_special import igamma_derivative
from tensorweave.kernels.philox import philox_block
from tensorweave.kernels.random import output_shape
from tensorweave.kernels.random_philox import PhiloxStream
from tensorweave.kernels.registry import kernel, register_pure
from tensorweave.kernels.stateless_random import box_muller_double, check_seed, uint64_to_double

_RESERVED_BLOCKS = 256           # TF's kReservedSamplesPerOutput: blocks skipped per output
_MAX_ATTEMPTS = 1 << 16          # Hormann rejections before a rate counts as never sampled


@loop_helper
def _uniform_pair(gen, block):
    """The two uniform doubles of Philox block `block` past the counter, as TF's
    UniformDistribution<double> reads them. `gen`: the key's two words and the counter's low
    and high halves, uint64 [4]."""
    w0, w1, w2, w3 = philox_block(gen[0], gen[1], gen[2], gen[3], block)
    return uint64_to_double(w0, w1), uint64_to_double(w2, w3)


# The samplers keep TF's buffers in local variables: a buffer holds a block's two values and
# how many are left (taken last first); the next block is drawn when none is.
def _gamma_loop(gen, alpha, out):
    """out[s, i] = TF's Gamma(alpha[i], 1) draw for output i * samples + s, in double."""
    samples = out.shape[0]
    one = np.uint64(1)
    for i in range(alpha.size):
        a = alpha[i]
        boost = a < 1.0                       # alpha < 1: draw for alpha + 1, times u^(1/alpha)
        d = a + (2.0 / 3 if boost else -1.0 / 3)
        c = 1.0 / 3 / np.sqrt(d)
        for s in range(samples):
            block = np.uint64(_RESERVED_BLOCKS) * np.uint64(i * samples + s)
            if a == 1.0:                      # exponential: the block's second uniform
                out[s, i] = -np.log1p(-_uniform_pair(gen, block)[1])
                continue
            normals = uniforms = 0            # Marsaglia and Tsang (2000)
            n0 = n1 = u0 = u1 = 0.0
            while True:
                if normals == 0:
                    n0, n1 = box_muller_double(*_uniform_pair(gen, block))
                    block, normals = block + one, 2
                normals -= 1
                x = n1 if normals else n0
                v = 1 + c * x
                if v <= 0:
                    continue
                v = v * v * v
                if uniforms == 0:
                    u0, u1 = _uniform_pair(gen, block)
                    block, uniforms = block + one, 2
                uniforms -= 1
                u = u1 if uniforms else u0
                if u < 1 - 0.0331 * (x * x) * (x * x) or \
                        np.log(u) < 0.5 * x * x + d * (1 - v + np.log(v)):
                    res = d * v
                    if boost:
                        if uniforms == 0:
                            u0, u1 = _uniform_pair(gen, block)
                            uniforms = 2
                        uniforms -= 1
                        res *= (u1 if uniforms else u0) ** (1 / a)
                    out[s, i] = res
                    break


def _poisson_loop(gen, rate, highest, infinity, out):
    """out[s, i] = TF's Poisson(rate[i]) draw for output i * samples + s, in double (`infinity`
    for an infinite rate: the output type's NumTraits infinity, 0 for integers); returns the
    first output index whose sampler does not return (see the module docstring), or -1."""
    samples = out.shape[0]
    one = np.uint64(1)
    for i in range(rate.size):
        lam = rate[i]
        if lam < 10:                          # Knuth: count uniforms until their product is
            limit = np.exp(-lam)              # at most e^-rate
            for s in range(samples):
                block = np.uint64(_RESERVED_BLOCKS) * np.uint64(i * samples + s)
                uniforms, u0, u1 = 0, 0.0, 0.0
                prod, x = 1.0, 0.0
                while True:
                    if uniforms == 0:
                        u0, u1 = _uniform_pair(gen, block)
                        block, uniforms = block + one, 2
                    uniforms -= 1
                    prod = prod * (u1 if uniforms else u0)
                    if prod <= limit and x <= highest:
                        out[s, i] = x
                        break
                    x += 1
            continue
        if lam == np.inf:
            out[:, i] = infinity
            continue
        # Hormann (1993): k = floor(G(u)) for G(u) = (2a / (0.5 - |u|) + b) u + rate + 0.43,
        # accepted at once inside a rectangle under the density, else by the log test. Each
        # attempt takes one block: u its second value, v its first.
        log_rate = np.log(lam)
        b = 0.931 + 2.53 * np.sqrt(lam)
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        for s in range(samples):
            block = np.uint64(_RESERVED_BLOCKS) * np.uint64(i * samples + s)
            for _ in range(_MAX_ATTEMPTS):
                v, u = _uniform_pair(gen, block)
                block += one
                u -= 0.5
                u_shifted = 0.5 - abs(u)
                k = np.floor((2 * a / u_shifted + b) * u + lam + 0.43)
                if k > highest:
                    continue
                if u_shifted >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2):
                    break
                if k < 0 or (u_shifted < 0.013 and v > u_shifted):
                    continue
                if np.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b)) <= \
                        -lam + k * log_rate - math.lgamma(k + 1):
                    break
            else:
                return i * samples + s
            out[s, i] = k
    return -1


# --- drawing and casting ----------------------------------------------------------------------
def _generator(key_words, counter_words) -> np.ndarray:
    """A Philox (key, counter) as the samplers take it: uint64 [4] of the key's two 32-bit
    words and the counter's low and high 64 bits."""
    k0, k1 = key_words
    c0, c1, c2, c3 = counter_words
    return np.array([k0, k1, c0 | c1 << 32, c2 | c3 << 32], np.uint64)


def _cast(x: np.ndarray, dtype: _dtypes.DType) -> np.ndarray:
    """Doubles as TF's static_cast makes them `dtype`: Eigen::half rounds through float, an
    integer truncates (a count past int64's range, 2**63, becomes its most negative value, as
    x86's conversion makes it)."""
    if dtype == _dtypes.float16:
        return x.astype(np.float32).astype(np.float16)
    if dtype.is_integer:
        info = np.iinfo(dtype.as_numpy_dtype)
        return np.where(x < 2.0 ** (info.bits - 1), x, info.min).astype(info.dtype)
    return x.astype(dtype.as_numpy_dtype)


def gamma_samples(gen, alpha: np.ndarray, samples: int, dtype: _dtypes.DType) -> np.ndarray:
    """TF's Gamma(alpha, 1) draws from the generator `gen`: [samples, alpha.size] of `dtype`."""
    out = np.empty((samples, alpha.size))
    compiled(_gamma_loop)(gen, np.ascontiguousarray(alpha, np.float64).reshape(-1), out)
    return _cast(out, dtype)


def poisson_samples(gen, rate: np.ndarray, samples: int, dtype: _dtypes.DType) -> np.ndarray:
    """TF's Poisson(rate) draws from the generator `gen`: [samples, rate.size] of `dtype`."""
    rate = np.ascontiguousarray(rate, np.float64).reshape(-1)
    out = np.empty((samples, rate.size))
    np_dtype = dtype.as_numpy_dtype
    highest, infinity = (float(np.iinfo(np_dtype).max), 0.0) if dtype.is_integer else \
        (float(np.finfo(np_dtype).max), np.inf)
    failed = compiled(_poisson_loop)(gen, rate, highest, infinity, out)
    if failed >= 0:
        raise invalid_argument(
            f"Cannot draw a Poisson sample of rate {rate[failed // samples]} as {dtype.name}: "
            "TensorFlow's sampler never returns for it")
    return _cast(out, dtype)


# --- kernels ----------------------------------------------------------------------------------
class _StatefulSampler:
    """shape, parameters -> `draw(gen, params, samples, dtype)` shaped shape + params.shape,
    from the node's GuardedPhiloxRandom (256 blocks reserved per output and run)."""

    draw = None

    def __init__(self, ctx):
        self.stream = PhiloxStream(ctx.attrs["seed"], ctx.attrs["seed2"])
        self.dtype = ctx.output_dtypes[0]

    def compute(self, ctx, shape, params):
        params, sample_shape = np.asarray(params), output_shape(shape)
        samples = int(np.prod(sample_shape, dtype=np.int64))
        shape = sample_shape + params.shape
        if samples * params.size == 0:
            return np.zeros(shape, self.dtype.as_numpy_dtype)
        gen = _generator(*self.stream.reserve(samples * params.size))
        return type(self).draw(gen, params, samples, self.dtype).reshape(shape)


@kernel("RandomGamma")
class RandomGammaKernel(_StatefulSampler):
    draw = staticmethod(gamma_samples)


@kernel("RandomPoissonV2")
class RandomPoissonKernel(_StatefulSampler):
    draw = staticmethod(poisson_samples)


def _make_shape(shape) -> tuple[int, ...]:
    """TF's tensor::MakeShape: a vector's values as the dimensions of a shape."""
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise invalid_argument("shape must be a vector of {int32,int64}, got shape "
                               f"{dims_text(shape.shape)}")
    return output_shape(shape)


def _stateless_draw(ctx, draw, shape, generator, params):
    """`draw(generator(), ...)` of the output `shape`, whose trailing dimensions must be the
    parameters' (`generator` is called only when there is something to draw)."""
    dtype = ctx.output_dtypes[0]
    params = np.asarray(params)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return np.zeros(shape, dtype.as_numpy_dtype)
    if params.ndim > len(shape) or shape[len(shape) - params.ndim:] != params.shape:
        raise invalid_argument("Shape passed in must end with broadcasted shape.")
    return draw(generator(), params, int(np.prod(shape, dtype=np.int64)) // params.size,
                dtype).reshape(shape)


@kernel("StatelessRandomGammaV3")
def _stateless_random_gamma_v3(ctx, shape, key, counter, alg, alpha):
    """TF's StatelessRandomOpBaseWithKeyCounter checks, in its order, then `gamma_samples`
    from the Philox key and counter given as inputs (`alg` 1, Philox, or 3, auto-select)."""
    alg, key, counter = np.asarray(alg), np.asarray(key), np.asarray(counter)
    if alg.ndim != 0:
        raise invalid_argument(f"input 3 (0-based) must have shape [], not {dims_text(alg.shape)}")
    alg_id = 1 if int(alg) == 3 else int(alg)
    if key.shape != (1,):
        raise invalid_argument(f"key must have shape [1], not {dims_text(key.shape)}. (Note "
                               "that batched keys are not supported yet.)")
    if counter.ndim != 1 or counter.size < alg_id:
        raise invalid_argument(
            f"counter must be a vector with length at least {alg_id}; got shape: "
            f"{dims_text(counter.shape)}. (Note that batched counters are not supported yet.)")
    shape = _make_shape(shape)

    def generator():
        if alg_id != 1:
            raise invalid_argument(f"Unsupported algorithm id: {alg_id}")
        # TF reads two counter words even from a 1-word counter (past its end); here: 0
        low, high = np.append(counter.astype(np.uint64), np.uint64(0))[:2]
        return np.array([int(key[0]) & 0xFFFFFFFF, int(key[0]) >> 32, low, high], np.uint64)
    return _stateless_draw(ctx, gamma_samples, shape, generator, alpha)


@kernel("StatelessRandomPoisson")
def _stateless_random_poisson(ctx, shape, seed, lam):
    """TF's StatelessRandomOpBase checks, then `poisson_samples` from the seed's GenerateKey."""
    shape, seed = _make_shape(shape), check_seed(seed)
    return _stateless_draw(ctx, poisson_samples, shape,
                           lambda: _generator(*philox.stateless_key_counter(seed)), lam)


register_pure("RandomGammaGrad", lambda alpha, sample: igamma_derivative(alpha, sample, True),
              dtypes=(_dtypes.float32, _dtypes.float64))
