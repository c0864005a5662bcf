"""Philox-4x32-10 (Salmon et al., 2011) as TensorFlow runs it, vectorized over counters.

`philox_blocks(key, counter, offsets)` returns the 4 uint32 words of each block
`counter + offset` (a 128-bit counter add), exactly the sequence of TensorFlow's
`random::PhiloxRandom` (core/lib/random/philox_random.h). `stateless_key_counter(seed)` is
TensorFlow's `GenerateKey` (core/kernels/stateless_random_ops.cc): one Philox call scrambles
the two seeds into the key and the high half of the counter, so every stateless op seeded
with the same pair draws the same words. The 32x32->64-bit products are done on uint64 arrays.
"""
from __future__ import annotations

import numpy as np

_M32 = np.uint64(0xFFFFFFFF)
_MUL_A, _MUL_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_WEYL_A, _WEYL_B = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10


def philox_blocks(key: tuple[int, int], counter: tuple[int, int, int, int],
                  offsets) -> np.ndarray:
    """The Philox output for counters `counter + offsets` (offsets < 2**64): uint32 [n, 4]."""
    offsets = np.asarray(offsets, dtype=np.uint64).reshape(-1)
    with np.errstate(over="ignore"):
        c = np.uint64(counter[0] | counter[1] << 32) + offsets    # wraps modulo 2**64
        high = np.uint64(counter[2] | counter[3] << 32) + (c < offsets).astype(np.uint64)
    c0, c1 = c & _M32, c >> np.uint64(32)
    c2, c3 = high & _M32, high >> np.uint64(32)
    k0, k1 = key
    for r in range(_ROUNDS):
        if r:
            k0, k1 = (k0 + _WEYL_A) & 0xFFFFFFFF, (k1 + _WEYL_B) & 0xFFFFFFFF
        p0, p1 = _MUL_A * c0, _MUL_B * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & _M32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & _M32)
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def stateless_key_counter(seed) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """TensorFlow's GenerateKey: the Philox (key, counter) a 2-element int seed stands for."""
    s0, s1 = (int(v) & ((1 << 64) - 1) for v in np.ravel(seed))  # int32 sign-extends, as in C
    counter = (s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32)
    mix = [int(w) for w in philox_blocks((0x3EC8F720, 0x02461E29), counter, [0])[0]]
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])
