"""Fingerprint (tf.fingerprint): byte-exact against TensorFlow 2.21 for strings (every
Fingerprint64 length class, one and several strings per row, ranks 1 to 3) and for numeric
tensors of many dtypes and shapes; shape function, names and errors as TensorFlow's."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

LENGTHS = [0, 1, 3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 128, 200]
STRINGS = np.array([bytes((i * 37 + n) % 256 for i in range(n)) for n in LENGTHS], dtype=object)
BF16 = [[1.1, 3.14159, -0.0, 1e30, 1.00390625, 1.01171875]]   # the last two round (ties)

# Each row's 8 bytes, in hex, from tf.fingerprint in TensorFlow 2.21.
RECORDED = {
    "strings": ['4f40902f3b6ae19a', '3e587eb1134ca247', 'e6b1cf4eabe52f12', '337e0b868f0787a2',
                '0866304658fdd2d3', '21d5edbc160c19d7', 'f4eefcd1e2c4363c', 'd56bbbc66804bc26',
                'e86cbdd97ee2a8d8', 'd5761d4637ad4b20', 'af546ffefd266cf9', '5676182c1847c0eb',
                'ce5e9830f2d595f7', 'e80ad177ebb416fc'],
    "string_pairs": ['02c681c70f5a8d34', '55e20e1e3fffcaba', 'f185d8be40b4c4e0',
                     'a16e20a103cfd40c', 'b030f3328015a14b', '4b8605ac4e83afd9',
                     'c706a9d7429ebe85'],
    "strings_3d": ['59a7926ccdaf3bb4', '66541cc05f3e7eb2'],
    "string_row": ['d19fb00d9af24ea1'],
    "int32": ['a8061dbff941713a', 'e6050b55813bb508', '6e62d39d3a3ff8b5'],
    "int64": ['8271a484f91a6065', '33402e17403d9901'],
    "float32": ['fbcdf76e1b6d1374', 'c7af07c98a3d266a', 'aecc74c301446054', '2af0cab7e2519172',
                '15d3cc2e7467ddff', '70c630c0860bc549', '34eb7b0598d17ba6', '9badb8ef06438329',
                '21cf9e5c80e0359c', '2aabd357fb927904'],
    "float64": ['a08775d99ffe87d6', 'f991241619cf7bed', 'b346d4e2c2c6e189', 'd6635a7579616d90'],
    "uint8": ['eaffd6b2b24d709b', '3970a934543a2774', 'ff35f3434f16a93a'],
    "bool": ['ecd07633908e3d00', 'f7d6009c377718ec'],
    "int16": ['d3c5214b78f5788a', '48406f133c8d47de', '017947fb733189eb'],
    "complex128": ['390e45ad5b4ba626', '61828fcf8613fea8'],
    "bfloat16": ['26458181971910b9'],
    "float16": ['a5975ff409032ec3'],
    "no_columns": ['4f40902f3b6ae19a'] * 3,     # Fingerprint64 of no bytes
    "no_rows": [],
}


def _recorded(key):
    expected = np.array([list(bytes.fromhex(h)) for h in RECORDED[key]], np.uint8)
    return lambda *inputs: expected.reshape(-1, 8)


def _fixed(value):
    return lambda rng, dt: np.asarray(value, dtype=object if dt is object else dt)


def _case(key, value, dtype, build=tf.fingerprint):
    return OpCase(key, build, _recorded(key), [_fixed(value)], dtypes=(dtype,), grad=False)


CASES = [
    _case("strings", STRINGS, tf.string),
    _case("string_pairs", STRINGS.reshape(7, 2), tf.string),
    _case("strings_3d", STRINGS.reshape(2, 7, 1), tf.string),
    _case("string_row", STRINGS.reshape(1, 14), tf.string),
    _case("int32", np.arange(12).reshape(3, 4), tf.int32),
    _case("int64", np.arange(12).reshape(2, 3, 2), tf.int64),
    _case("float32", np.linspace(-1, 1, 10), tf.float32),
    _case("float64", np.linspace(-1, 1, 200).reshape(4, 50), tf.float64),
    _case("uint8", np.arange(30).reshape(3, 10), tf.uint8),
    _case("bool", [[True, False], [False, False]], tf.bool),
    _case("int16", np.arange(-30, 30).reshape(3, 4, 5), tf.int16),
    _case("complex128", [[1 + 2j, -3j], [0.5, 1e-300j]], tf.complex128),
    _case("float16", [[1.1, 3.14159, -0.0, 65504.0]], tf.float16),
    _case("bfloat16", BF16, tf.float32, lambda x: tf.fingerprint(tf.cast(x, tf.bfloat16))),
    _case("no_columns", np.zeros([3, 0]), tf.float32),
    _case("no_rows", np.zeros([0, 3]), tf.string),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_names_and_static_shapes():
    with tf.Graph().as_default():
        out = tf.fingerprint([1, 2])
        assert (out.op.name, out.op.type, out.dtype) == ("Fingerprint", "Fingerprint", tf.uint8)
        assert [t.op.name for t in out.op.inputs] == ["Fingerprint/data", "Fingerprint/method"]
        assert out.shape.as_list() == [2, 8] and out.op.get_attr("T") == tf.int32
        assert tf.fingerprint(["a"], name="fp").op.name == "fp"
        method = tf.placeholder(tf.string)
        assert tf.fingerprint(tf.placeholder(tf.float32), method).shape.as_list() == [None, None]
        assert tf.fingerprint(tf.placeholder(tf.float32, [5, None]), method).shape.as_list() == \
            [5, None]
        assert tf.fingerprint(tf.placeholder(tf.float32, [None, 2])).shape.as_list() == [None, 8]
        held = tf.fingerprint([1, 2], tf.constant("farmhash64"))
        assert _run(held).tolist() == _run(out).tolist()
        assert tf.gradients(tf.cast(tf.fingerprint(tf.constant([1.0])), tf.float32),
                            tf.constant([1.0])) == [None]


@pytest.mark.parametrize("build,message", [
    (lambda: tf.fingerprint(tf.constant(1)), "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.fingerprint([1, 2], method="md5"), "Unsupported method: md5"),
    (lambda: tf.fingerprint([1, 2], method=["farmhash64"]), "Shape must be rank 0 but is rank 1"),
])
def test_graph_construction_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
        assert message in str(info.value)


@pytest.mark.parametrize("data,method,message", [
    (5, "farmhash64", "`data` should have at least one dimension: []"),
    ([1], "md5", "Unsupported fingerprint method: md5"),
    ([1], ["farmhash64"], "`method` should be a scalar string: [1]"),
])
def test_run_time_errors(data, method, message):
    with tf.Graph().as_default():
        d, m = tf.placeholder(tf.int32), tf.placeholder(tf.string)
        out = tf.fingerprint(d, m)
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out, {d: data, m: method})
        assert message in str(info.value)
