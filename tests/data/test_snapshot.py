"""Dataset.snapshot and tf.data.experimental.snapshot (data/snapshot.py,
kernels/dataset_snapshot.py): written by a first full pass, read back by later ones.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def counted(calls):
    """range(5) through a py_func that counts its calls, so a read-back shows none."""
    def bump(x):
        calls.append(int(x))
        return x
    return D.range(5).map(lambda x: tf.py_func(bump, [x], tf.int64, stateful=True))


def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def test_first_pass_writes_later_passes_read(tmp_path):
    calls = []
    ds = counted(calls).snapshot(str(tmp_path))
    assert ds.element_spec.dtype == tf.int64
    assert drain(ds) == [0, 1, 2, 3, 4] and calls == [0, 1, 2, 3, 4]
    assert len(files(tmp_path)) == 1
    assert drain(ds) == [0, 1, 2, 3, 4] and calls == [0, 1, 2, 3, 4]
    with tf.Session() as sess:
        assert sess.run(ds.cardinality()) == -2


def test_an_unfinished_pass_leaves_nothing(tmp_path):
    calls = []
    ds = counted(calls).apply(E.snapshot(str(tmp_path), compression="GZIP"))
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    with tf.Session() as sess:
        assert [sess.run(nxt) for _ in range(3)] == [0, 1, 2]
    assert files(tmp_path) == []
    assert drain(ds) == [0, 1, 2, 3, 4] and len(calls) == 8


def test_other_inputs_get_other_snapshots(tmp_path):
    assert drain(D.range(3).snapshot(str(tmp_path))) == [0, 1, 2]
    assert drain(D.range(4).snapshot(str(tmp_path))) == [0, 1, 2, 3]
    assert drain(D.range(4).map(lambda x: x + 1).snapshot(str(tmp_path))) == [1, 2, 3, 4]
    assert len(files(tmp_path)) == 3


def test_another_process_reads_the_snapshot(tmp_path):
    program = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.getcwd()!r})
        import tensorweave as tf
        from tensorweave.testing.datasets import drain_dataset
        calls = []
        def bump(x):
            calls.append(1)
            return x
        ds = tf.data.Dataset.range(4).map(
            lambda x: tf.py_func(bump, [x * 3], tf.int64, stateful=True))
        print([int(v) for v in drain_dataset(ds.snapshot({str(tmp_path)!r}))], len(calls))
    """)
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           check=True).stdout.split("\n")[0] for _ in range(2)]
    assert runs == ["[0, 3, 6, 9] 4", "[0, 3, 6, 9] 0"]


def test_reader_func_is_refused(tmp_path):
    with pytest.raises(ValueError, match="reader_func"):
        D.range(3).snapshot(str(tmp_path), reader_func=lambda datasets: datasets)
