"""TF1 summaries and FileWriter against TensorFlow 2.21's printed values.

Each expected value was printed by the same TF1 program under TensorFlow 2.21: PNG bytes (MD5;
TF writes them through libpng, whose row filters, zlib settings and IDAT chunking are
reproduced), WAV bytes, histogram protos, tags and op names, and when a FileWriter's first
event becomes readable.
"""
import glob
import hashlib
import os
import time

import numpy as np

import tensorweave as tf


def _run(*ops):
    with tf.Session() as sess:
        return [tf.Summary.FromString(b) for b in sess.run(list(ops))]


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_png_bytes_match_libpngs():
    rng = np.random.RandomState(2)
    images = [rng.rand(1, 64, 80, 3).astype(np.float32),
              (np.arange(50 * 70).reshape(1, 50, 70, 1) % 256).astype(np.uint8),
              rng.rand(1, 3, 2, 4).astype(np.float32),
              np.tile(np.linspace(0, 1, 200, dtype=np.float32)[None, :, None, None],
                      (1, 1, 150, 1)),
              (rng.rand(1, 120, 130, 3) * 255).astype(np.uint8)]
    expected = [(15504, "ae0eef488ee18cccc91772d87e16bdc1"),   # 2^14 window, 2 IDAT chunks
                (197, "1fbd2cab77adf5d877a5ef4f0ff55e9c"),
                (95, "d63e8b029984b2dc8e05d34447e1931e"),     # header rewritten to 2^8
                (338, "4305eb585b2b385e7b18b7daad478d8a"),
                (47053, "d0d3acbfb96f42b252789a2b81ade865")]  # 2^15 window, 6 IDAT chunks
    with tf.Graph().as_default():
        ops = [tf.summary.image(f"i{k}", tf.constant(x), max_outputs=1)
               for k, x in enumerate(images)]
        got = [s.value[0].image.encoded_image_string for s in _run(*ops)]
    assert [(len(b), _md5(b)) for b in got] == expected


def test_image_and_audio_batches():
    rng = np.random.RandomState(1)
    with tf.Graph().as_default():
        image = tf.summary.image("im", tf.constant(rng.rand(2, 4, 4, 3).astype(np.float32)))
        audio = tf.summary.audio(
            "au", tf.constant(rng.uniform(-1, 1, (2, 30)).astype(np.float32)), 8000)
        images, clips = _run(image, audio)
    assert [(v.tag, _md5(v.image.encoded_image_string)) for v in images.value] == [
        ("im/image/0", "774ba9c4452f5b09b4da9bc4828b4190"),
        ("im/image/1", "2afc7ada2d64d3ff1a29f016703906aa")]
    assert [(v.tag, _md5(v.audio.encoded_audio_string)) for v in clips.value] == [
        ("au/audio/0", "eb38b021d34d50738beea070e9011147"),
        ("au/audio/1", "2d30e99f84d774a296cba25f741b32f8")]


def test_histograms_of_ints_and_extreme_doubles():
    with tf.Graph().as_default():
        ints = tf.summary.histogram("hi", tf.constant([1, 2, 2, 3, -7, 0], tf.int32))
        doubles = tf.summary.histogram(
            "hd", tf.constant([1e-13, -1e-13, 1e30, 0.0], tf.float64))
        empty = tf.summary.histogram("hempty", tf.zeros([0]))
        protos = [s.value[0].histo for s in _run(ints, doubles, empty)]

    def fields(h):
        return ((h.min, h.max, h.num, h.sum, h.sum_squares),
                list(zip(h.bucket_limit, h.bucket)))

    dbl_max = 1.7976931348623157e+308
    assert fields(protos[0]) == (
        (-7.0, 3.0, 6.0, 1.0, 67.0),
        [(-7.466637793298873, 0.0), (-6.7878525393626115, 1.0), (0.0, 0.0), (1e-12, 1.0),
         (0.917246389039776, 0.0), (1.0089710279437536, 1.0), (1.9661990955585713, 0.0),
         (2.1628190051144287, 2.0), (2.8787120958073054, 0.0), (3.1665833053880363, 1.0),
         (dbl_max, 0.0)])
    assert fields(protos[1]) == (
        (-1e-13, 1e+30, 4.0, 1e+30, 1.0000000000000001e+60),
        [(-1e-12, 0.0), (0.0, 1.0), (1e-12, 2.0), (9.920775621859783e+19, 0.0),
         (dbl_max, 1.0)])
    assert fields(protos[2]) == ((dbl_max, -dbl_max, 0.0, 0.0, 0.0), [(dbl_max, 0.0)])


def test_tags_and_op_names_with_scopes_and_families():
    with tf.Graph().as_default():
        ops = []
        with tf.name_scope("a"):
            ops.append(tf.summary.scalar("loss", 1.0))
            ops.append(tf.summary.scalar("loss", 1.0))
            ops.append(tf.summary.scalar("loss", 1.0, family="f"))
            with tf.variable_scope("vs"):
                ops.append(tf.summary.histogram("h", [1.0]))
        ops.append(tf.summary.scalar("/lead", 1.0))
        ops.append(tf.summary.scalar("sp ace:x", 1.0, family="fa mily"))
        ops.append(tf.summary.image("im", tf.zeros([1, 2, 2, 1]), family="x"))
        ops.append(tf.summary.audio("au", tf.zeros([1, 2]), 100, family="x"))
        ops.append(tf.summary.tensor_summary("ts", [1], family="y"))
        tf.constant(1.0, name="n")
        ops.append(tf.summary.scalar("n", 1.0))
        merged = tf.summary.merge(ops[:2], name="my merge")
        collected = tf.summary.merge(ops[:2], collections=["mc"])
        assert [o.name for o in ops + [merged, collected]] == [
            "a/loss:0", "a/loss_1:0", "a/f/loss:0", "a/vs/h:0", "lead:0",
            "fa_mily/sp_ace_x:0", "x/im:0", "x/au:0", "y/ts:0", "n_1:0",
            "my_merge/my_merge:0", "Merge/MergeSummary:0"]
        assert [o.name for o in tf.get_collection("mc")] == ["Merge/MergeSummary:0"]
        tags = [[v.tag for v in s.value] for s in _run(*ops)]
    assert tags == [["a/loss"], ["a/loss_1"], ["f/a/f/loss"], ["a/vs/h"], ["lead"],
                    ["fa_mily/fa_mily/sp_ace_x"], ["x/x/im/image/0"], ["x/x/au/audio/0"],
                    ["y/y/ts"], ["n_1"]]


def test_the_first_event_is_readable_without_a_flush(tmp_path):
    """TF's writer thread flushes the first event it writes at once; later ones wait for
    flush_secs (here far away) or a flush."""
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=1000)
    try:
        for step in range(3):
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1)]),
                               step)
        (path,) = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
        deadline = time.monotonic() + 10
        steps = []
        while not steps and time.monotonic() < deadline:
            time.sleep(0.02)
            steps = [e.step for e in tf.train.summary_iterator(path) if e.HasField("summary")]
        assert steps[:1] == [0]
        writer.flush()
        assert [e.step for e in tf.train.summary_iterator(path)
                if e.HasField("summary")] == [0, 1, 2]
    finally:
        writer.close()
