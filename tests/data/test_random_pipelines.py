"""Property: random tf.data pipelines produce what a plain Python model of TF's semantics does.

The runtime takes shortcuts that must not show: maps of elementwise functions run on whole
batches, batches over sliced sources gather row positions, interleave keeps a cycle of open
generators. Each example chains random transformations (maps vectorizable and not, filters,
batch with and without drop_remainder, padded_batch, unbatch, flat_map, interleave, enumerate,
concatenate, take, skip, repeat, cache, prefetch) over int64 elements, drains a one-shot
iterator, and compares every element with the reference below, which applies each
transformation to a Python list. The reference's interleave order was checked against
TensorFlow 2.21 (cycle/block lengths 2/1, 3/2 and 1/1 over inner ranges of 1-3 elements).
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorweave as tf

D = tf.data.Dataset
I64 = np.int64


def _floor_mod(x, k):
    return np.mod(x, k)   # TensorFlow's FloorMod: the sign of the divisor, as Python's %


# Each transformation: kinds it applies to -> (kind after, graph version, reference version).
# Kinds: "scalar" int64 scalars, "vec" int64 vectors, "mat" int64 matrices (padded batches).
def _transformations(p):
    a, b, k = p % 5 - 2 or 3, p % 7 - 3, p % 4 + 2
    scalar = {
        "affine": ("scalar", lambda d: d.map(lambda x: x * a + b),
                   lambda xs: [x * a + b for x in xs]),
        "mod": ("scalar", lambda d: d.map(lambda x: tf.floormod(x, k)),
                lambda xs: [_floor_mod(x, k) for x in xs]),
        "square_mod": ("scalar", lambda d: d.map(lambda x: tf.square(x) % 11),
                       lambda xs: [_floor_mod(x * x, 11) for x in xs]),
        "where": ("scalar", lambda d: d.map(lambda x: tf.where(x > b, x, -x)),
                  lambda xs: [x if x > b else -x for x in xs]),
        "round_third": ("scalar", lambda d: d.map(
            lambda x: tf.cast(tf.round(tf.cast(x, tf.float64) / 3.0), tf.int64)),
            lambda xs: [I64(np.round(np.float64(x) / 3.0)) for x in xs]),
        "pair_sum": ("scalar", lambda d: d.map(lambda x: (x, x * 2)).map(lambda u, v: u + v + 1),
                     lambda xs: [x + 2 * x + 1 for x in xs]),
        "range": ("vec", lambda d: d.map(lambda x: tf.range(tf.floormod(x, 4))),
                  lambda xs: [np.arange(_floor_mod(x, 4), dtype=I64) for x in xs]),
        "filter": ("scalar", lambda d: d.filter(lambda x: tf.not_equal(tf.floormod(x, k), 0)),
                   lambda xs: [x for x in xs if _floor_mod(x, k) != 0]),
        "batch": ("vec", lambda d: d.batch(k), lambda xs: _batch(xs, k, False)),
        "batch_drop": ("vec", lambda d: d.batch(k, drop_remainder=True),
                       lambda xs: _batch(xs, k, True)),
        "flat_map": ("scalar", lambda d: d.flat_map(lambda x: D.from_tensors(x).repeat(k - 1)),
                     lambda xs: [x for x in xs for _ in range(k - 1)]),
        "interleave": ("scalar", lambda d: d.interleave(
            lambda x: D.range(tf.floormod(x, 3) + 1).map(lambda y: y + x * 10),
            cycle_length=k - 1, block_length=p % 2 + 1),
            lambda xs: _interleave([[y + x * 10 for y in range(_floor_mod(x, 3) + 1)]
                                    for x in xs], k - 1, p % 2 + 1)),
        "enumerate": ("scalar", lambda d: d.enumerate().map(lambda i, x: i * 100 + x),
                      lambda xs: [i * 100 + x for i, x in enumerate(xs)]),
        "concatenate": ("scalar", lambda d: d.concatenate(D.range(k)),
                        lambda xs: xs + list(range(k))),
    }
    vec = {
        "sum": ("scalar", lambda d: d.map(tf.reduce_sum), lambda xs: [np.sum(x) for x in xs]),
        "scale": ("vec", lambda d: d.map(lambda x: x * a - 1), lambda xs: [x * a - 1 for x in xs]),
        "reverse": ("vec", lambda d: d.map(lambda x: tf.reverse(x, [0])),
                    lambda xs: [x[::-1] for x in xs]),
        "unbatch": ("scalar", lambda d: d.unbatch(), lambda xs: [v for x in xs for v in x]),
        "filter_even": ("vec", lambda d: d.filter(lambda x: tf.equal(tf.reduce_sum(x) % 2, 0)),
                        lambda xs: [x for x in xs if np.sum(x) % 2 == 0]),
        "padded_batch": ("mat", lambda d: d.padded_batch(k, padded_shapes=[None]),
                         lambda xs: [_pad(xs[i:i + k]) for i in range(0, len(xs), k)]),
    }
    mat = {
        "row_sums": ("vec", lambda d: d.map(lambda m: tf.reduce_sum(m, axis=1)),
                     lambda xs: [np.sum(m, axis=1) for m in xs]),
        "unbatch": ("vec", lambda d: d.unbatch(), lambda xs: [row for m in xs for row in m]),
    }
    shared = {
        "take": (None, lambda d: d.take(k), lambda xs: xs[:k]),
        "skip": (None, lambda d: d.skip(p % 3), lambda xs: xs[p % 3:]),
        "repeat": (None, lambda d: d.repeat(2), lambda xs: xs + xs),
        "cache": (None, lambda d: d.cache(), lambda xs: xs),
        "prefetch": (None, lambda d: d.prefetch(p % 3 + 1), lambda xs: xs),
    }
    return {"scalar": {**scalar, **shared}, "vec": {**vec, **shared},
            "mat": {**mat, **shared}}


def _batch(xs, k, drop):
    out = [np.array(xs[i:i + k], dtype=I64).reshape(-1) for i in range(0, len(xs), k)]
    return [b for b in out if len(b) == k] if drop else out


def _pad(vectors):
    width = max(len(v) for v in vectors)
    out = np.zeros((len(vectors), width), I64)
    for row, v in zip(out, vectors):
        row[:len(v)] = v
    return out


def _interleave(inner, cycle_length, block_length):
    """TensorFlow's interleave order (InterleaveDatasetOp's loop): a slot whose sequence ends is
    closed and the cycle moves on; an empty slot takes the next input when the cycle reaches
    it."""
    inputs, slots, out = iter(inner), [None] * cycle_length, []
    i = block = n_open = 0
    end = False
    while not end or n_open:
        if slots[i] is not None:
            value = next(slots[i], None)
            if value is not None:
                out.append(value)
                block += 1
                if block == block_length:
                    block, i = 0, (i + 1) % cycle_length
                continue
            slots[i], n_open = None, n_open - 1
            block, i = 0, (i + 1) % cycle_length
        elif not end:
            sequence = next(inputs, None)
            if sequence is None:
                end = True
            else:
                slots[i], n_open = iter(sequence), n_open + 1
        else:
            block, i = 0, (i + 1) % cycle_length
    return out


SOURCES = {
    "range": ("scalar", lambda n: D.range(n), lambda n: list(range(n))),
    "slices": ("scalar", lambda n: D.from_tensor_slices(np.arange(n, dtype=I64) * 3 - 7),
               lambda n: list(np.arange(n, dtype=I64) * 3 - 7)),
    "rows": ("vec", lambda n: D.from_tensor_slices(np.arange(3 * n, dtype=I64).reshape(n, 3)),
             lambda n: list(np.arange(3 * n, dtype=I64).reshape(n, 3))),
}

pipelines = st.tuples(st.sampled_from(sorted(SOURCES)), st.integers(0, 30),
                      st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=6),
                      st.sampled_from([None, 1, 4]))


def _drain(dataset):
    with tf.Graph().as_default():
        nxt = tf.data.make_one_shot_iterator(dataset()).get_next()
        out = []
        with tf.Session() as sess:
            while len(out) < 5000:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out
    raise AssertionError("the pipeline did not end")


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(pipeline=pipelines)
def test_random_pipelines_match_the_reference(pipeline):
    source, n, steps, final_batch = pipeline
    kind, make_source, reference_source = SOURCES[source]
    chain, expected, names = [], reference_source(n), [source]
    for choice, p in steps:
        options = _transformations(p)[kind]
        name = sorted(options)[choice % len(options)]
        after, graph_version, reference_version = options[name]
        chain.append(graph_version)
        expected = reference_version(expected)
        kind = after or kind
        names.append(name)
    if final_batch is not None and kind == "scalar":
        chain.append(lambda d: d.batch(final_batch))
        expected = [np.array(expected[i:i + final_batch])
                    for i in range(0, len(expected), final_batch)]
        names.append(f"batch({final_batch})")

    def dataset():
        d = make_source(n)
        for transform in chain:
            d = transform(d)
        return d
    got = _drain(dataset)
    assert len(got) == len(expected), names
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, np.asarray(e, dtype=I64), err_msg=str(names))
