"""Kernels of StringToHashBucketFast, StringToHashBucket and StringToHashBucketStrong: a 64-bit
hash of each string's bytes, modulo `num_buckets` (ops/string_hash_ops.py).

The hashes are TensorFlow's, bit for bit, so bucket ids agree with models trained there:
StringToHashBucketFast uses FarmHash's Fingerprint64 (farmhashna::Hash64, the function
TensorFlow's `Fingerprint64` calls), StringToHashBucket TensorFlow's legacy `Hash64`
(MurmurHash64A with seed 0xDECAFCAFFE), StringToHashBucketStrong SipHash-2-4 keyed by its
`key` attr (highwayhash::SipHash, which TensorFlow calls). All run as compiled loops
(kernels/jit.py) over one buffer holding every string back to back, with wrapping unsigned
64-bit arithmetic: every constant is a np.uint64, so no operation mixes in a signed integer
(which numba would widen to float64). `fingerprint_rows` runs the same Fingerprint64 over the
rows of a byte matrix, for the Fingerprint op (kernels/fingerprint.py).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.registry import kernel

_K0 = np.uint64(0xC3A5C85C97CB3127)
_K1 = np.uint64(0xB492B66FBE98F273)
_K2 = np.uint64(0x9AE16A3B2F90404F)
_MURMUR = np.uint64(0xC6A4A7935BD1E995)
_LEGACY_SEED = np.uint64(0xDECAFCAFFE)
_U = np.uint64
# SipHash's initialization constants: "somepseudorandomlygeneratedbytes".
_SIP_V0 = np.uint64(0x736F6D6570736575)
_SIP_V1 = np.uint64(0x646F72616E646F6D)
_SIP_V2 = np.uint64(0x6C7967656E657261)
_SIP_V3 = np.uint64(0x7465646279746573)


# --- FarmHash primitives -----------------------------------------------------------------------
@loop_helper
def _fetch(buf, p, nbytes):
    """The little-endian word of `nbytes` bytes at byte p, as a uint64."""
    v = _U(0)
    for i in range(nbytes):
        v |= _U(buf[p + i]) << _U(8 * i)
    return v


@loop_helper
def _fetch64(buf, p):
    return _fetch(buf, p, 8)


@loop_helper
def _rotate(v, shift):
    """Rotates right by `shift` (1..63)."""
    return (v >> shift) | (v << (_U(64) - shift))


@loop_helper
def _shift_mix(v):
    return v ^ (v >> _U(47))


@loop_helper
def _hash_len16(u, v, mul):
    """Murmur-inspired mix of two words."""
    a = (u ^ v) * mul
    a ^= a >> _U(47)
    b = (v ^ a) * mul
    b ^= b >> _U(47)
    return b * mul


@loop_helper
def _len_0_to_16(buf, s, n):
    un = _U(n)
    if n >= 8:
        mul = _K2 + un * _U(2)
        a = _fetch64(buf, s) + _K2
        b = _fetch64(buf, s + n - 8)
        c = _rotate(b, _U(37)) * mul + a
        d = (_rotate(a, _U(25)) + b) * mul
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + un * _U(2)
        a = _fetch(buf, s, 4)
        return _hash_len16(un + (a << _U(3)), _fetch(buf, s + n - 4, 4), mul)
    if n > 0:
        y = _U(buf[s]) + (_U(buf[s + (n >> 1)]) << _U(8))
        z = un + (_U(buf[s + n - 1]) << _U(2))
        return _shift_mix((y * _K2) ^ (z * _K0)) * _K2
    return _K2


@loop_helper
def _len_17_to_32(buf, s, n):
    mul = _K2 + _U(n) * _U(2)
    a = _fetch64(buf, s) * _K1
    b = _fetch64(buf, s + 8)
    c = _fetch64(buf, s + n - 8) * mul
    d = _fetch64(buf, s + n - 16) * _K2
    return _hash_len16(_rotate(a + b, _U(43)) + _rotate(c, _U(30)) + d,
                       a + _rotate(b + _K2, _U(18)) + c, mul)


@loop_helper
def _len_33_to_64(buf, s, n):
    mul = _K2 + _U(n) * _U(2)
    a = _fetch64(buf, s) * _K2
    b = _fetch64(buf, s + 8)
    c = _fetch64(buf, s + n - 8) * mul
    d = _fetch64(buf, s + n - 16) * _K2
    y = _rotate(a + b, _U(43)) + _rotate(c, _U(30)) + d
    z = _hash_len16(y, a + _rotate(b + _K2, _U(18)) + c, mul)
    e = _fetch64(buf, s + 16) * mul
    f = _fetch64(buf, s + 24)
    g = (y + _fetch64(buf, s + n - 32)) * mul
    h = (z + _fetch64(buf, s + n - 24)) * mul
    return _hash_len16(_rotate(e + f, _U(43)) + _rotate(g, _U(30)) + h,
                       e + _rotate(f + a, _U(18)) + g, mul)


@loop_helper
def _weak_len32(buf, s, a, b):
    """FarmHash's WeakHashLen32WithSeeds of the 32 bytes at s: a pair of words."""
    w, x = _fetch64(buf, s), _fetch64(buf, s + 8)
    y, z = _fetch64(buf, s + 16), _fetch64(buf, s + 24)
    a += w
    b = _rotate(b + a + z, _U(21))
    c = a
    a += x
    a += y
    b += _rotate(a, _U(44))
    return a + z, b + c


@loop_helper
def _fingerprint64(buf, s, n):
    """farmhashna::Hash64 of buf[s:s+n]: by length class, 64-byte rounds past 64 bytes."""
    if n <= 16:
        return _len_0_to_16(buf, s, n)
    if n <= 32:
        return _len_17_to_32(buf, s, n)
    if n <= 64:
        return _len_33_to_64(buf, s, n)
    seed = _U(81)
    x = seed
    y = seed * _K1 + _U(113)
    z = _shift_mix(y * _K2 + _U(113)) * _K2
    v1, v2, w1, w2 = _U(0), _U(0), _U(0), _U(0)
    x = x * _K2 + _fetch64(buf, s)
    end = s + ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    while True:   # C's do-while: at least one round
        x = _rotate(x + y + v1 + _fetch64(buf, s + 8), _U(37)) * _K1
        y = _rotate(y + v2 + _fetch64(buf, s + 48), _U(42)) * _K1
        x ^= w2
        y += v1 + _fetch64(buf, s + 40)
        z = _rotate(z + w1, _U(33)) * _K1
        v1, v2 = _weak_len32(buf, s, v2 * _K1, x + w1)
        w1, w2 = _weak_len32(buf, s + 32, z + w2, y + _fetch64(buf, s + 16))
        z, x = x, z
        s += 64
        if s == end:
            break
    mul = _K1 + ((z & _U(0xFF)) << _U(1))
    s = last64
    w1 += _U((n - 1) & 63)
    v1 += w1
    w1 += v1
    x = _rotate(x + y + v1 + _fetch64(buf, s + 8), _U(37)) * mul
    y = _rotate(y + v2 + _fetch64(buf, s + 48), _U(42)) * mul
    x ^= w2 * _U(9)
    y += v1 * _U(9) + _fetch64(buf, s + 40)
    z = _rotate(z + w1, _U(33)) * mul
    v1, v2 = _weak_len32(buf, s, v2 * mul, x + w1)
    w1, w2 = _weak_len32(buf, s + 32, z + w2, y + _fetch64(buf, s + 16))
    z, x = x, z
    return _hash_len16(_hash_len16(v1, w1, mul) + _shift_mix(y) * _K0 + z,
                       _hash_len16(v2, w2, mul) + x, mul)


@loop_helper
def _legacy_hash64(buf, s, n):
    """TensorFlow's Hash64 (MurmurHash64A) of buf[s:s+n] with seed 0xDECAFCAFFE."""
    h = _LEGACY_SEED ^ (_U(n) * _MURMUR)
    end = s + (n // 8) * 8
    while s < end:
        k = _fetch64(buf, s) * _MURMUR
        k ^= k >> _U(47)
        h ^= k * _MURMUR
        h *= _MURMUR
        s += 8
    rest = n & 7
    if rest:
        for i in range(rest):
            h ^= _U(buf[s + i]) << _U(8 * i)
        h *= _MURMUR
    h ^= h >> _U(47)
    h *= _MURMUR
    return h ^ (h >> _U(47))


# --- SipHash-2-4 --------------------------------------------------------------------------------
@loop_helper
def _sip_rounds(v0, v1, v2, v3, rounds):
    """`rounds` SipRounds (an ARX network; a left rotation by r is a right rotation by 64 - r)."""
    for _ in range(rounds):
        v0 += v1
        v1 = _rotate(v1, _U(64 - 13)) ^ v0
        v0 = _rotate(v0, _U(32))
        v2 += v3
        v3 = _rotate(v3, _U(64 - 16)) ^ v2
        v0 += v3
        v3 = _rotate(v3, _U(64 - 21)) ^ v0
        v2 += v1
        v1 = _rotate(v1, _U(64 - 17)) ^ v2
        v2 = _rotate(v2, _U(32))
    return v0, v1, v2, v3


@loop_helper
def _siphash(buf, s, n, k0, k1):
    """SipHash-2-4 of buf[s:s+n] with key (k0, k1): 2 rounds per 8-byte word, the last word
    padded with zeros and holding n mod 256 in its top byte, then 4 finishing rounds."""
    v0, v1, v2, v3 = k0 ^ _SIP_V0, k1 ^ _SIP_V1, k0 ^ _SIP_V2, k1 ^ _SIP_V3
    end = s + (n // 8) * 8
    while s < end:
        m = _fetch64(buf, s)
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
        v0 ^= m
        s += 8
    m = _fetch(buf, s, n & 7) | (_U(n & 0xFF) << _U(56))
    v3 ^= m
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= m
    v2 ^= _U(0xFF)
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


# --- loops over every string -------------------------------------------------------------------
def _siphash_loop(buf, offsets, k0, k1, out):
    for i in range(out.size):
        out[i] = _siphash(buf, offsets[i], offsets[i + 1] - offsets[i], k0, k1)


def _fingerprint_loop(buf, offsets, out):
    for i in range(out.size):
        out[i] = _fingerprint64(buf, offsets[i], offsets[i + 1] - offsets[i])


def _legacy_loop(buf, offsets, out):
    for i in range(out.size):
        out[i] = _legacy_hash64(buf, offsets[i], offsets[i + 1] - offsets[i])


def _hash_pieces(buf, offsets, legacy: bool = False) -> np.ndarray:
    """The uint64 hash of each piece buf[offsets[i]:offsets[i + 1]] of a uint8 buffer."""
    out = np.empty(offsets.size - 1, np.uint64)
    compiled(_legacy_loop if legacy else _fingerprint_loop)(buf, offsets, out)
    return out


def _packed(strings) -> tuple[np.ndarray, np.ndarray]:
    """Every string of `strings` back to back in one uint8 buffer, and the offsets where each
    starts (plus the end)."""
    flat = np.asarray(strings, dtype=object).reshape(-1)
    lengths = np.fromiter((len(s) for s in flat), dtype=np.int64, count=flat.size)
    offsets = np.zeros(flat.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(b"".join(flat.tolist()), dtype=np.uint8), offsets


def hash_strings(strings, legacy: bool = False) -> np.ndarray:
    """The uint64 hash of each string of `strings` (any shape): Fingerprint64, or TensorFlow's
    legacy Hash64 with `legacy`."""
    buf, offsets = _packed(strings)
    return _hash_pieces(buf, offsets, legacy).reshape(np.shape(strings))


def siphash_strings(strings, k0: np.uint64, k1: np.uint64) -> np.ndarray:
    """The uint64 SipHash-2-4 of each string of `strings` (any shape) with key (k0, k1)."""
    buf, offsets = _packed(strings)
    out = np.empty(offsets.size - 1, np.uint64)
    compiled(_siphash_loop)(buf, offsets, _U(k0), _U(k1), out)
    return out.reshape(np.shape(strings))


def fingerprint_rows(rows: np.ndarray) -> np.ndarray:
    """Fingerprint64 of the bytes of each row of a 2-D uint8 array, as uint64."""
    count, width = rows.shape
    offsets = np.arange(count + 1, dtype=np.int64) * width
    return _hash_pieces(np.ascontiguousarray(rows).reshape(-1), offsets)


class _HashBucketKernel:
    """hash(string) mod num_buckets, as int64 (the attr is parsed once)."""

    legacy = False

    def __init__(self, ctx):
        self.num_buckets = np.uint64(ctx.attrs["num_buckets"])

    def compute(self, ctx, strings):
        return (hash_strings(strings, self.legacy) % self.num_buckets).astype(np.int64)


@kernel("StringToHashBucketFast")
class StringToHashBucketFastKernel(_HashBucketKernel):
    """Fingerprint64 (FarmHash) buckets."""


@kernel("StringToHashBucket")
class StringToHashBucketKernel(_HashBucketKernel):
    """Legacy Hash64 buckets."""

    legacy = True


@kernel("StringToHashBucketStrong")
class StringToHashBucketStrongKernel:
    """Keyed SipHash-2-4 buckets; the key's int64s are taken as uint64 words, as in TF."""

    def __init__(self, ctx):
        key = ctx.attrs["key"]
        if len(key) != 2:
            raise invalid_argument("Key must have 2 elements")
        self.k0, self.k1 = np.array(key, np.int64).view(np.uint64)
        self.num_buckets = np.uint64(ctx.attrs["num_buckets"])

    def compute(self, ctx, strings):
        hashes = siphash_strings(strings, self.k0, self.k1)
        return (hashes % self.num_buckets).astype(np.int64)
