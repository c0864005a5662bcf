"""The `tensorweave` command: inspect-checkpoint and to-tensorflow-checkpoint."""
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import cli
from tensorweave.train import checkpoint_format as fmt


@pytest.fixture
def prefix(tmp_path):
    path = str(tmp_path / "model-7")
    fmt.write_checkpoint(path, ["w", "step"], [np.array([[1.5, 2.5]], np.float32), np.int64(7)],
                         [tf.float32, tf.int64])
    tf.train.update_checkpoint_state(str(tmp_path), path)
    return path


def test_lists_tensors(prefix, tmp_path, capsys):
    assert cli.main(["inspect-checkpoint", prefix]) == 0
    assert capsys.readouterr().out == "step (DT_INT64) []\nw (DT_FLOAT) [1,2]\n"
    assert cli.main(["inspect-checkpoint", str(tmp_path)]) == 0
    assert "w (DT_FLOAT) [1,2]" in capsys.readouterr().out


def test_prints_one_or_all_values(prefix, capsys):
    assert cli.main(["inspect-checkpoint", prefix, "--tensor", "w"]) == 0
    assert capsys.readouterr().out == "tensor_name:  w\n[[1.5 2.5]]\n"
    assert cli.main(["inspect-checkpoint", prefix, "--all"]) == 0
    assert capsys.readouterr().out == "tensor_name:  step\n7\ntensor_name:  w\n[[1.5 2.5]]\n"


def test_errors_exit_nonzero(prefix, tmp_path, capsys):
    assert cli.main(["inspect-checkpoint", prefix, "--tensor", "nope"]) == 1
    assert "NotFoundError: Key nope not found in checkpoint" in capsys.readouterr().err
    assert cli.main(["inspect-checkpoint", str(tmp_path / "absent")]) == 1
    assert "Failed to find any matching files" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2


def test_to_tensorflow_checkpoint_rewrites_in_place(prefix, tmp_path, capsys):
    assert cli.main(["to-tensorflow-checkpoint", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{prefix}: in TensorFlow's checkpoint format\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "checkpoint", "model-7.data-00000-of-00001", "model-7.index"]
    assert fmt.read_index(prefix).tensorflow
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), [[1.5, 2.5]])
    assert cli.main(["to-tensorflow-checkpoint", prefix]) == 0     # already: left as it is
    assert cli.main(["to-tensorflow-checkpoint", str(tmp_path / "absent")]) == 1
    assert "to-tensorflow-checkpoint: NotFoundError" in capsys.readouterr().err


def test_runs_as_a_module(prefix):
    proc = subprocess.run([sys.executable, "-m", "tensorweave.cli", "inspect-checkpoint",
                           prefix], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "step (DT_INT64) []\nw (DT_FLOAT) [1,2]\n"
