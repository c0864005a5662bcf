"""tf.train.summary_iterator reads back the events FileWriter wrote."""
import os

import pytest

import tensorweave as tf


def _write_events(logdir):
    with tf.Graph().as_default():
        loss = tf.placeholder(tf.float32, [])
        summary = tf.summary.scalar("loss", loss)
        writer = tf.summary.FileWriter(logdir)
        with tf.Session() as sess:
            for step in range(3):
                writer.add_summary(sess.run(summary, {loss: step * 0.5}), step)
        writer.close()
    (name,) = os.listdir(logdir)
    return os.path.join(logdir, name)


def test_yields_every_event(tmp_path):
    path = _write_events(str(tmp_path))
    iterator = tf.train.summary_iterator(path)
    assert iter(iterator) is iterator
    events = list(iterator)
    assert isinstance(events[0], tf.Event) and events[0].file_version == "brain.Event:2"
    assert [(e.step, e.summary.value[0].tag, e.summary.value[0].simple_value)
            for e in events[1:]] == [(0, "loss", 0.0), (1, "loss", 0.5), (2, "loss", 1.0)]


def test_missing_file_fails_at_once(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.summary_iterator(str(tmp_path / "missing"))


def test_corrupt_file_is_data_loss(tmp_path):
    path = _write_events(str(tmp_path))
    with open(path, "r+b") as f:
        f.seek(20)
        f.write(b"\xff\xff")
    with pytest.raises(tf.errors.DataLossError):
        list(tf.train.summary_iterator(path))
