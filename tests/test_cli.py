"""The `tensorweave` command: inspect-checkpoint and to-tensorflow-checkpoint."""
import signal
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import cli
from tensorweave.train import checkpoint_format as fmt
from tests.distributed.loopback import free_port


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


@pytest.fixture
def saved_model(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.identity(tf.matmul(x, tf.constant([[1.0], [2.0], [3.0]])), name="y")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    return export_dir


def test_saved_model_show_prints_what_saved_model_cli_prints(saved_model, capsys):
    assert cli.main(["saved-model", "show", "--dir", saved_model]) == 0
    assert capsys.readouterr().out == "The given SavedModel contains the following tag-sets:\n" \
                                      "'serve'\n"
    assert cli.main(["saved-model", "show", "--dir", saved_model, "--tag_set", "serve"]) == 0
    assert capsys.readouterr().out.endswith('SignatureDef key: "serving_default"\n')
    assert cli.main(["saved-model", "show", "--dir", saved_model, "--tag_set", "serve",
                     "--signature_def", "serving_default"]) == 0
    assert capsys.readouterr().out == (
        "The given SavedModel SignatureDef contains the following input(s):\n"
        "  inputs['x'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (-1, 3)\n"
        "      name: x:0\n"
        "The given SavedModel SignatureDef contains the following output(s):\n"
        "  outputs['y'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (-1, 1)\n"
        "      name: y:0\n"
        "Method name is: tensorflow/serving/predict\n")
    assert cli.main(["saved-model", "show", "--dir", saved_model, "--all"]) == 0
    shown = capsys.readouterr().out
    assert "signature_def['serving_default']:" in shown and "'MatMul'" in shown
    assert cli.main(["saved-model", "show", "--dir", saved_model, "--tag_set", "train"]) == 1
    assert "Please use one of the following tag-sets: ['serve']" in capsys.readouterr().err


def test_saved_model_run_prints_each_output(saved_model, capsys):
    assert cli.main(["saved-model", "run", "--dir", saved_model, "--tag_set", "serve",
                     "--signature_def", "serving_default",
                     "--input_exprs", "x=[[1, 1, 1], [1, 2, 3]]"]) == 0
    assert capsys.readouterr().out == "Result for output key y:\n[[ 6.]\n [14.]]\n"
    assert cli.main(["saved-model", "run", "--dir", saved_model, "--tag_set", "serve",
                     "--signature_def", "nope", "--input_exprs", "x=[[1, 1, 1]]"]) == 1
    assert 'Could not find signature "nope". Please choose from: serving_default' in \
        capsys.readouterr().err
    assert cli.main(["saved-model", "run", "--dir", saved_model, "--tag_set", "serve",
                     "--signature_def", "serving_default", "--input_exprs", "z=[1]"]) == 1
    assert "Inputs ['z'] are not in signature" in capsys.readouterr().err


def test_server_runs_a_task_until_interrupted():
    assert cli.parse_cluster_spec("ps|a:1,worker|b:2;c:3") == {"ps": ["a:1"],
                                                              "worker": ["b:2", "c:3"]}
    with pytest.raises(ValueError, match="Invalid job specification"):
        cli.parse_cluster_spec("ps:a:1")
    port = free_port()
    child = subprocess.Popen([sys.executable, "-m", "tensorweave.cli", "server", "--cluster_spec",
                              f"local|localhost:{port}", "--job_name", "local"],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline().strip()
        assert line == f"Started server with target: grpc://localhost:{port}"
        with tf.Graph().as_default(), tf.Session(f"grpc://localhost:{port}") as sess:
            assert sess.run(tf.constant(6) * 7) == 42
        child.send_signal(signal.SIGINT)
        assert child.wait(20) == 0
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
