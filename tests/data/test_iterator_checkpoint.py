"""Checkpointing tf.data iterators: make_saveable_from_iterator, SerializeIterator and
DeserializeIterator through tf.train.Saver and MonitoredTrainingSession, checked against the
elements the saved iterator itself goes on to produce."""
import json
import logging
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.dataset_seeds import SeedSource, random_seeds
from tensorweave.ops import iterator_checkpoint_ops

D = tf.data.Dataset


def _interleave_of_shuffles():
    return D.range(4).interleave(lambda x: D.range(6).map(lambda y: y + 10 * x).shuffle(4),
                                 cycle_length=2, block_length=2)


# name -> (make the dataset, elements before saving, elements compared after restoring)
PIPELINES = {
    "range": (lambda: D.range(20), 7, 5),
    "shuffle_seeded": (lambda: D.range(30).shuffle(8, seed=5), 11, 10),
    "shuffle_unseeded": (lambda: D.range(30).shuffle(8), 11, 10),
    "shuffle_repeat_across_epochs": (lambda: D.range(10).shuffle(10).repeat(4), 23, 12),
    "repeat_batch": (lambda: D.range(7).repeat().batch(3), 5, 6),
    "shuffle_and_repeat_batch": (
        lambda: D.range(50).apply(tf.data.experimental.shuffle_and_repeat(16)).batch(8), 9, 7),
    "map_batch": (lambda: D.from_tensor_slices(np.arange(40.0, dtype=np.float32))
                  .shuffle(12).map(lambda x: x * 2.0 + 1.0).batch(4), 3, 5),
    "map_filter": (lambda: D.range(40).map(lambda x: x * 3)
                   .filter(lambda x: tf.equal(x % 2, 0)), 6, 6),
    "interleave_unseeded_inner": (_interleave_of_shuffles, 9, 10),
    "sample_from_datasets_unseeded": (lambda: tf.data.experimental.sample_from_datasets(
        [D.range(0, 100), D.range(100, 200)], [0.3, 0.7]), 8, 12),
    "batch_prefetch_dict": (lambda: D.from_tensor_slices({"a": np.arange(12), "b": np.arange(
        12.0)}).shuffle(5).batch(5).prefetch(1), 1, 2),
}


def _build(make, one_shot=False):
    """The iterator, its get_next and a Saver of the saveable in SAVEABLE_OBJECTS."""
    dataset = make()
    it = (tf.data.make_one_shot_iterator(dataset) if one_shot
          else tf.data.make_initializable_iterator(dataset))
    nxt = it.get_next()
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                         tf.data.experimental.make_saveable_from_iterator(it))
    return it, nxt, tf.train.Saver()


def test_seed_source_draws_the_same_sequence_from_the_same_root():
    outer, first = SeedSource(), SeedSource()
    with outer:
        with first:
            draws = [random_seeds() for _ in range(3)]
        after = random_seeds()            # the outer source is active again
    with SeedSource(first.root):
        assert [random_seeds() for _ in range(3)] == draws
    with SeedSource(outer.root):
        assert random_seeds() == after
    assert len({tuple(d) for d in draws}) == 3
    assert random_seeds() != random_seeds()   # no source active: fresh seeds


def _take(sess, nxt, n):
    return [sess.run(nxt) for _ in range(n)]


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, dict):
            assert g.keys() == w.keys()
            for k in w:
                np.testing.assert_array_equal(g[k], w[k])
        else:
            np.testing.assert_array_equal(g, w)


def _save_then_continue(make, before, after, path, one_shot=False):
    """Runs `before` elements, saves, and returns the `after` elements that follow."""
    with tf.Graph().as_default():
        it, nxt, saver = _build(make, one_shot)
        with tf.Session() as sess:
            if not one_shot:
                sess.run(it.initializer)
            _take(sess, nxt, before)
            saver.save(sess, path)
            return _take(sess, nxt, after)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_restore_continues_where_the_saved_iterator_was(name, tmp_path):
    make, before, after = PIPELINES[name]
    path = str(tmp_path / "ckpt")
    want = _save_then_continue(make, before, after, path)
    with tf.Graph().as_default():   # a fresh graph built the same way
        it, nxt, saver = _build(make)
        for _ in range(2):           # two fresh sessions: the restore does not depend on history
            with tf.Session() as sess:
                sess.run(it.initializer)
                _take(sess, nxt, 3)
                saver.restore(sess, path)
                _assert_same(_take(sess, nxt, after), want)


def test_restore_in_a_fresh_session_of_the_same_graph(tmp_path):
    path = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        it, nxt, saver = _build(lambda: D.range(100).shuffle(20).repeat().batch(7))
        with tf.Session() as sess:
            sess.run(it.initializer)
            _take(sess, nxt, 30)
            saver.save(sess, path)
            want = _take(sess, nxt, 10)
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, path)
            _assert_same(_take(sess, nxt, 10), want)
            sess.run(it.initializer)   # re-initializing starts over
            _take(sess, nxt, 1)
            saveable = tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)[0]
            assert json.loads(sess.run(saveable.specs[0].ref))["produced"] == 1


def test_replay_over_many_position_blocks(tmp_path):
    """A long replay through the positions fast path (more than one 2**16 block)."""
    path = str(tmp_path / "ckpt")
    make = lambda: D.range(200_000).shuffle(5000).repeat().batch(1000)  # noqa: E731
    want = _save_then_continue(make, 450, 3, path)
    with tf.Graph().as_default():
        it, nxt, saver = _build(make)
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, path)
            _assert_same(_take(sess, nxt, 3), want)


def test_one_shot_iterator_restores_without_being_run(tmp_path):
    make = lambda: D.range(30).shuffle(10)  # noqa: E731
    path, unused = str(tmp_path / "ckpt"), str(tmp_path / "unused")
    with tf.Graph().as_default():
        _, nxt, saver = _build(make, one_shot=True)
        with tf.Session() as sess:
            saver.save(sess, unused)            # saving starts the iterator
            first = _take(sess, nxt, 4)
            saver.save(sess, path)
            want = _take(sess, nxt, 6)
    with tf.Graph().as_default():
        _, nxt, saver = _build(make, one_shot=True)
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert _take(sess, nxt, 6) == want
        with tf.Session() as sess:
            saver.restore(sess, unused)
            assert _take(sess, nxt, 4) == first


def test_saveable_names_and_checkpoint_tensor(tmp_path):
    with tf.Graph().as_default() as g:
        it, nxt, saver = _build(lambda: D.range(10))
        saveable = tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)[0]
        assert type(saveable).__name__ == "_IteratorSaveable"
        assert saveable.name == "IteratorV2:0"
        assert [s.name for s in saveable.specs] == ["IteratorV2:0_STATE"]
        assert g.get_operation_by_name("save/DeserializeIterator").inputs[0].name == \
            "IteratorV2:0"
        with tf.Session() as sess:
            sess.run(it.initializer)
            _take(sess, nxt, 3)
            path = saver.save(sess, str(tmp_path / "ckpt"))
            state = json.loads(sess.run(saveable.specs[0].ref))
    assert tf.train.list_variables(path) == [("IteratorV2:0_STATE", [])]
    assert state == {"format": "tensorweave.IteratorState", "version": 1, "pipeline": "range",
                     "types": ["int64"], "produced": 3, "exhausted": False,
                     "seed_root": state["seed_root"]}
    assert isinstance(state["seed_root"], int)


def test_iterator_and_variables_in_one_sharded_checkpoint(tmp_path):
    path = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(D.range(10).shuffle(10))
        nxt = it.get_next()
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver([v, tf.data.experimental.make_saveable_from_iterator(it)],
                               sharded=True)
        with tf.Session() as sess:
            sess.run([it.initializer, v.initializer])
            _take(sess, nxt, 4)
            saver.save(sess, path)
            want = _take(sess, nxt, 6)
            sess.run(v.assign(5.0))
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert (_take(sess, nxt, 6), sess.run(v)) == (want, 1.0)


def test_uninitialized_iterator_cannot_be_saved_or_restored(tmp_path):
    path = str(tmp_path / "ckpt")
    _save_then_continue(lambda: D.range(5), 2, 0, path)
    with tf.Graph().as_default():
        _, nxt, saver = _build(lambda: D.range(5))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match=r"Save\(\) failed because the iterator has not been "
                                     r"initialized"):
                saver.save(sess, str(tmp_path / "other"))
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match=r"Restore\(\) failed because the iterator has not been "
                                     r"initialized. Ensure that you have run the initializer "
                                     r"operation for this iterator before restoring it"):
                saver.restore(sess, path)
            with pytest.raises(tf.errors.FailedPreconditionError, match="GetNext"):
                sess.run(nxt)


@pytest.mark.parametrize("see_the_end", [True, False])
def test_exhausted_iterator_restores_at_its_end(see_the_end, tmp_path):
    path = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        it, nxt, saver = _build(lambda: D.range(4).batch(3))
        with tf.Session() as sess:
            sess.run(it.initializer)
            _take(sess, nxt, 2)
            if see_the_end:
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(nxt)
            saver.save(sess, path)
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, path)
            for _ in range(2):
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(nxt)


@pytest.mark.parametrize("other", [lambda: D.range(10).map(lambda x: tf.cast(x, tf.float32)),
                                   lambda: D.range(10).batch(2)])
def test_restore_into_another_pipeline_is_refused(other, tmp_path):
    path = str(tmp_path / "ckpt")
    _save_then_continue(lambda: D.range(10), 3, 0, path)
    with tf.Graph().as_default():
        it, nxt, saver = _build(other)
        with tf.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(tf.errors.NotFoundError,
                               match=r"Failed to restore dataset iterator from checkpoint: "
                                     r"the checkpoint holds an iterator over range of types "
                                     r"\['int64'\].*Make sure the dataset definition"):
                saver.restore(sess, path)
            assert np.asarray(sess.run(nxt)).ravel()[0] == 0   # left where it was


def _gen():
    yield from range(10)


EXTERNAL = {
    "PyFunc": lambda: D.range(10).map(lambda x: tf.py_func(lambda v: v * 2, [x], tf.int64)),
    "RandomUniform": lambda: D.range(10).map(
        lambda x: tf.cast(x, tf.float32) + tf.random_uniform([])),
}


@pytest.mark.parametrize("op", sorted(EXTERNAL))
@pytest.mark.parametrize("policy", [None, "fail", tf.data.experimental.ExternalStatePolicy.FAIL])
def test_fail_policy_refuses_external_state(op, policy, tmp_path):
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(EXTERNAL[op]())
        saveable = tf.data.experimental.make_saveable_from_iterator(it, policy)
        with tf.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(tf.errors.FailedPreconditionError, match=f"^{op} is stateful."):
                sess.run(saveable.specs[0].ref)


@pytest.mark.parametrize("policy", ["warn", "ignore"])
def test_warn_and_ignore_save_external_state(policy, tmp_path, caplog):
    path = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(EXTERNAL["PyFunc"]())
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it, policy)])
        with tf.Session() as sess, caplog.at_level(logging.WARNING, logger="tensorweave"):
            sess.run(it.initializer)
            _take(sess, nxt, 3)
            saver.save(sess, path)
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert sess.run(nxt) == 6
    warned = [r.getMessage() for r in caplog.records if "stateful" in r.getMessage()]
    assert warned == (["FAILED_PRECONDITION: PyFunc is stateful."] if policy == "warn" else [])


GENERATORS = {
    "direct": lambda: D.from_generator(_gen, tf.int64),
    "inner": lambda: D.range(2).interleave(lambda x: D.from_generator(_gen, tf.int64), 1),
}


@pytest.mark.parametrize("where", sorted(GENERATORS))
@pytest.mark.parametrize("policy, error, message", [
    ("fail", tf.errors.FailedPreconditionError, "PyFunc is stateful."),
    ("warn", tf.errors.UnimplementedError, "GeneratorDataset does not support checkpointing."),
    ("ignore", tf.errors.UnimplementedError, "GeneratorDataset does not support checkpointing."),
])
def test_from_generator_cannot_be_saved(where, policy, error, message):
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(GENERATORS[where]())
        saveable = tf.data.experimental.make_saveable_from_iterator(it, policy)
        with tf.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(error, match=f"^{message}"):
                sess.run(saveable.specs[0].ref)


def test_replayable_stateful_ops_pass_the_fail_policy(tmp_path):
    """Assert, Print and table lookups depend only on their inputs: saved under FAIL."""
    path = str(tmp_path / "ckpt")

    def checked(x):
        with tf.control_dependencies([tf.debugging.assert_non_negative(x)]):
            return tf.Print(table.lookup(x), [x])

    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.range(10, dtype=tf.int64), tf.range(100, 110, dtype=tf.int64)), -1)
        it, nxt, saver = _build(lambda: D.range(10).map(checked))
        with tf.Session() as sess:
            sess.run([tf.tables_initializer(), it.initializer])
            _take(sess, nxt, 4)
            saver.save(sess, path)
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert sess.run(nxt) == 104


def test_policy_argument_is_checked():
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(D.range(3))
        for bad in ["WARN", "bogus", 1]:
            with pytest.raises(ValueError, match=r"Invalid `ExternalStatePolicy.` Supported "
                               r"values include 'warn', 'ignore', and 'fail.' Received "
                               f"{bad}."):
                tf.data.experimental.make_saveable_from_iterator(it, bad)
        for policy, value in [("warn", 0), ("ignore", 1), (None, 2)]:
            saveable = tf.data.experimental.make_saveable_from_iterator(it, policy)
            assert saveable.specs[0].ref.op.get_attr("external_state_policy") == value
        with pytest.raises(TypeError, match="expects a tf.data Iterator"):
            tf.data.experimental.make_saveable_from_iterator(D.range(3))


def test_a_state_of_another_format_is_refused():
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(D.range(3))
        state = tf.placeholder(tf.string, [])
        restore = iterator_checkpoint_ops.deserialize_iterator(it._resource, state)
        serialized = tf.data.experimental.make_saveable_from_iterator(it).specs[0].ref
        with tf.Session() as sess:
            sess.run(it.initializer)
            saved = json.loads(sess.run(serialized))
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="not a tensorweave iterator state"):
                sess.run(restore, {state: b"junk"})
            with pytest.raises(tf.errors.InvalidArgumentError, match="format version 2, this "
                               "tensorweave reads version 1"):
                sess.run(restore, {state: json.dumps({**saved, "version": 2}).encode()})


def _train_on_iterator(ckpt_dir, last_step):
    """Steps of a MonitoredTrainingSession reading a one-shot iterator: the elements seen."""
    with tf.Graph().as_default():
        dataset = D.range(1000).shuffle(50, seed=7).batch(4)
        it = tf.data.make_one_shot_iterator(dataset)
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                             tf.data.experimental.make_saveable_from_iterator(it))
        step = tf.train.get_or_create_global_step()
        with tf.control_dependencies([step.assign_add(1)]):
            batch = tf.identity(it.get_next())
        seen = []
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt_dir, hooks=[tf.train.StopAtStepHook(last_step=last_step)],
                save_checkpoint_steps=3, save_summaries_steps=None,
                log_step_count_steps=None) as sess:
            while not sess.should_stop():
                seen.append(sess.run(batch))
        return seen


def test_monitored_training_session_resumes_the_iterator(tmp_path):
    ckpt_dir = str(tmp_path / "train")
    first = _train_on_iterator(ckpt_dir, 7)
    resumed = _train_on_iterator(ckpt_dir, 12)
    assert os.path.basename(tf.train.latest_checkpoint(ckpt_dir)) == "model.ckpt-12"
    assert (len(first), len(resumed)) == (7, 5)
    uninterrupted = _train_on_iterator(str(tmp_path / "once"), 12)
    _assert_same(first + resumed, uninterrupted)
