"""StringToHashBucketFast (FarmHash Fingerprint64), StringToHashBucket (TensorFlow's legacy
Hash64) and StringToHashBucketStrong (keyed SipHash-2-4): bucket ids equal TensorFlow 2.21's,
recorded on strings of every length class of the hash (0 to 257 bytes: the short-string branches
and the 64-byte rounds), with the largest bucket count (2^63 - 1: nearly the whole hash) and with
small ones; names, aliases and errors as TensorFlow's. SipHash is also checked against its
reference test vectors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.string_hash import siphash_strings
from tensorweave.testing.op_case import OpCase, case_tests

LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128,
           129, 200, 256, 257]
STRINGS = np.array([bytes((i * 37 + n) % 256 for i in range(n)) for n in LENGTHS], dtype=object)
MOST = 2 ** 63 - 1

# tf.string_to_hash_bucket_fast(STRINGS, MOST) and tf.string_to_hash_bucket(STRINGS, MOST) in
# TensorFlow 2.21.
FAST = [
    1936946117179621456, 5161771770385946686, 215211846435920116, 1310518540512506342,
    2487965632156106292, 5141182862322928259, 1834011893438859213, 6040168605833782793,
    6276060847516013858, 7602117738390822661, 4338871769482718964, 2791110717120146389,
    4558981489161244025, 7492443725646880329, 6388605105871875305, 2327144085378135765,
    5213845212530662045, 8227390773859669985, 8749411048411321520, 7764283926731322967,
    5327592947755901336, 8111992462467435357, 8617028698217406159, 6325110817993080408,
    8941533033611201257, 3005855981698145248, 3822675293225738857]
LEGACY = [
    105434511174508092, 2499542889307245882, 4306066795171280751, 9218688406081211773,
    4893559769797486235, 4934846214106576096, 5680440411717569976, 8755084806041197413,
    2931888962540301560, 2332275204672169093, 82308079045583186, 6704056873640382555,
    3369427137535716160, 1743636437389489371, 2623505690733965255, 3223614364812657317,
    8763317500711442767, 7932144573133554871, 5344800594479312306, 525670973142665207,
    993181116772010095, 4097008117304938460, 860142614546321505, 2943318287958929870,
    1102728422163413093, 167346902478375708, 4655365736845292614]
# The same with 1000 and 10 buckets.
FAST_1000 = [263, 686, 116, 342, 99, 66, 20, 600, 665, 468, 964, 389, 25, 136, 112, 765, 852, 792,
             327, 774, 143, 164, 966, 408, 64, 55, 664]
LEGACY_10 = [9, 2, 8, 3, 5, 3, 3, 3, 0, 0, 6, 2, 0, 8, 2, 7, 7, 1, 6, 4, 5, 0, 5, 0, 3, 8, 4]

# SipHash's reference key (bytes 0..15) and tf.strings.to_hash_bucket_strong with it: STRINGS with
# MOST buckets; STRINGS as 3x9 with 1000 buckets and key [-1, 2^63 - 1]; TEXT with MOST buckets
# and key [1, 2] (all in TensorFlow 2.21).
SIP_KEY = [0x0706050403020100, 0x0F0E0D0C0B0A0908]
STRONG = [
    8246050544436514353, 7949783270536452002, 7416667209042931345, 4029201469448531224,
    7159362184936465465, 2429941105079145136, 5247709676150952182, 2928326824354111388,
    2130191282677507216, 4050536847836796972, 8189446104649858982, 8506333738864126996,
    3292688929688559940, 5687377726186755391, 6496402543882790287, 7814349510394841673,
    746400819354369559, 9151360040894092480, 1437603505724024595, 6812367116982420842,
    2785426781476436575, 561789537636962714, 2590412221476730729, 7751316348957782097,
    1201834309979452044, 4717121466632930285, 5773639214624742352]
STRONG_1000 = [313, 822, 296, 611, 801, 483, 791, 797, 828, 96, 334, 935, 537, 202, 939, 124,
               365, 81, 594, 357, 780, 734, 734, 475, 419, 326, 784]
TEXT = np.array([b"", "h\u00e9llo".encode(), "\u4e16\u754c".encode(), b"\xff\x00\x80",
                 b"x" * 1000], dtype=object)   # UTF-8, and bytes that are not
STRONG_TEXT = [443797209252341628, 7197311347977518225, 8052603795710911411, 2453876496299088799,
               5111343065251529886]


def _recorded(values, shape=(-1,)):
    expected = np.array(values, dtype=np.int64).reshape(shape)
    return lambda strings: expected


def _fixed(strings):
    return lambda rng, dt: strings


CASES = [
    OpCase("hash_bucket_fast", lambda s: tf.string_to_hash_bucket_fast(s, MOST),
           _recorded(FAST), [_fixed(STRINGS)], dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_fast_small", lambda s: tf.strings.to_hash_bucket_fast(s, 1000),
           _recorded(FAST_1000, (3, 9)), [_fixed(STRINGS.reshape(3, 9))],
           dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_fast_empty", lambda s: tf.string_to_hash_bucket_fast(s, 7),
           lambda s: np.zeros((2, 0), np.int64), [_fixed(np.zeros((2, 0), dtype=object))],
           dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_legacy", lambda s: tf.string_to_hash_bucket(s, MOST),
           _recorded(LEGACY), [_fixed(STRINGS)], dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_legacy_small", lambda s: tf.strings.to_hash_bucket(s, num_buckets=10),
           _recorded(LEGACY_10, (9, 3)), [_fixed(STRINGS.reshape(9, 3))], dtypes=(tf.string,),
           grad=False),
    OpCase("hash_bucket_strong", lambda s: tf.strings.to_hash_bucket_strong(s, MOST, SIP_KEY),
           _recorded(STRONG), [_fixed(STRINGS)], dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_strong_small",
           lambda s: tf.string_to_hash_bucket_strong(s, 1000, key=[-1, 2 ** 63 - 1]),
           _recorded(STRONG_1000, (3, 9)), [_fixed(STRINGS.reshape(3, 9))],
           dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_strong_text", lambda s: tf.strings.to_hash_bucket_strong(s, MOST, [1, 2]),
           _recorded(STRONG_TEXT), [_fixed(TEXT)], dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_strong_one_bucket",
           lambda s: tf.strings.to_hash_bucket_strong(s, 1, [1, 2]),
           lambda s: np.zeros((), np.int64), [_fixed(np.array(b"TensorFlow", dtype=object))],
           dtypes=(tf.string,), grad=False),
    OpCase("hash_bucket_strong_empty", lambda s: tf.strings.to_hash_bucket_strong(s, 5, [3, 4]),
           lambda s: np.zeros((0, 3), np.int64), [_fixed(np.zeros((0, 3), dtype=object))],
           dtypes=(tf.string,), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def test_siphash_reference_vectors():
    """SipHash-2-4 of bytes 0..n-1 under key bytes 0..15: the vectors of the reference
    implementation (vectors.h; n = 15 is the paper's Appendix A example)."""
    messages = np.array([bytes(range(n)) for n in (0, 1, 7, 8, 15, 63)], dtype=object)
    hashes = siphash_strings(messages, np.uint64(SIP_KEY[0]), np.uint64(SIP_KEY[1]))
    assert [int(h) for h in hashes] == [
        0x726FDB47DD0E0E31, 0x74F839C593DC67FD, 0xAB0200F58B01D137, 0x93F5F5799A932462,
        0xA129CA6149BE45E5, 0x958A324CEB064572]


def test_tensorflow_documentation_examples():
    """tf.strings.to_hash_bucket(["Hello", "TensorFlow", "2.x"], 3) is [2, 0, 1] in TF's
    docs; the fast hash gives [0, 2, 2] in TensorFlow 2.21."""
    with tf.Graph().as_default():
        words = tf.constant(["Hello", "TensorFlow", "2.x"])
        with tf.Session() as sess:
            fast, legacy = sess.run([tf.strings.to_hash_bucket_fast(words, 3),
                                     tf.strings.to_hash_bucket(words, 3)])
    assert fast.tolist() == [0, 2, 2] and legacy.tolist() == [2, 0, 1]


def test_names_aliases_and_static_shape():
    with tf.Graph().as_default():
        fast = tf.string_to_hash_bucket_fast([["a", "b"]], 3, name="hh")
        assert (fast.op.name, fast.op.type) == ("hh", "StringToHashBucketFast")
        assert fast.op.inputs[0].op.name == "hh/input"
        assert fast.dtype == tf.int64 and fast.shape.as_list() == [1, 2]
        assert fast.op.get_attr("num_buckets") == 3
        legacy = tf.string_to_hash_bucket(input=["a"], num_buckets=5)
        assert (legacy.op.name, legacy.op.type) == ("StringToHashBucket", "StringToHashBucket")
        assert legacy.op.inputs[0].op.name == "StringToHashBucket/string_tensor"
        assert tf.strings.to_hash_bucket is tf.string_to_hash_bucket
        strong = tf.string_to_hash_bucket_strong([["a"], ["b"]], 7, [5, -6])
        assert (strong.op.name, strong.op.type) == ("StringToHashBucketStrong",) * 2
        assert strong.op.inputs[0].op.name == "StringToHashBucketStrong/input"
        assert strong.dtype == tf.int64 and strong.shape.as_list() == [2, 1]
        assert strong.op.get_attr("num_buckets") == 7 and strong.op.get_attr("key") == [5, -6]
        assert tf.strings.to_hash_bucket_strong is tf.string_to_hash_bucket_strong


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.string_to_hash_bucket_fast(["a"], 0), ValueError,
     "Attr 'num_buckets' of 'StringToHashBucketFast' Op passed 0 less than minimum 1."),
    (lambda: tf.string_to_hash_bucket(["a"], -2), ValueError,
     "Attr 'num_buckets' of 'StringToHashBucket' Op passed -2 less than minimum 1."),
    (lambda: tf.string_to_hash_bucket(["a"], num_buckets=5, input=["b"]), ValueError,
     "Cannot specify both 'string_tensor' and 'input'."),
    (lambda: tf.string_to_hash_bucket_fast([1], 3), TypeError, "Expected string"),
    (lambda: tf.strings.to_hash_bucket_strong(["a"], 0, [1, 2]), ValueError,
     "Attr 'num_buckets' of 'StringToHashBucketStrong' Op passed 0 less than minimum 1."),
    (lambda: tf.strings.to_hash_bucket_strong(["a"], 3, None), TypeError,
     "Expected list for 'key' argument to 'string_to_hash_bucket_strong' Op, not None."),
    (lambda: tf.strings.to_hash_bucket_strong([1], 3, [1, 2]), TypeError, "Expected string"),
])
def test_graph_construction_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
        assert message in str(info.value)


@pytest.mark.parametrize("key", [[], [1], [1, 2, 3]])
def test_strong_key_must_have_two_elements(key):
    """As in TensorFlow, any key list builds; the kernel rejects it when the graph runs."""
    with tf.Graph().as_default():
        buckets = tf.strings.to_hash_bucket_strong(["a"], 5, key)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
                sess.run(buckets)
