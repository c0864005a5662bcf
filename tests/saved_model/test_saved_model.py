"""tf.saved_model (TF1): SavedModelBuilder, simple_save and loader.load round trips, assets and
main ops, signatures, TensorFlow's messages, and a SavedModel written by TensorFlow 2.21."""
import os
import shutil

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import meta_graph_pb2, saved_model_pb2, types_pb2
from tensorweave.saved_model import loader as loader_module
from tensorweave.saved_model.assets import asset_tensors

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                       "tf_saved_model")


def _linear_model(weights=((1.0,), (1.0,), (5.0,))):
    """x [None, 3] -> y = x @ w, w set to `weights` in a session that is returned."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable([[1.0], [2.0], [3.0]], name="w")
    y = tf.identity(tf.matmul(x, w), name="y")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run(w.assign(np.array(weights, np.float32)))
    return sess, x, y


def test_simple_save_then_load_restores_values_and_the_predict_signature(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        sess, x, y = _linear_model()
        with sess:
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    assert os.path.exists(os.path.join(export_dir, "variables", "variables.index"))
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], export_dir)
        assert isinstance(meta, meta_graph_pb2.MetaGraphDef)
        assert list(meta.meta_info_def.tags) == ["serve"]
        signature = meta.signature_def["serving_default"]
        assert signature.method_name == "tensorflow/serving/predict"
        assert signature.inputs["x"].name == "x:0" and signature.outputs["y"].name == "y:0"
        assert signature.inputs["x"].dtype == types_pb2.DT_FLOAT
        assert [d.size for d in signature.inputs["x"].tensor_shape.dim] == [-1, 3]
        assert tf.saved_model.is_valid_signature(signature)
        x = tf.saved_model.get_tensor_from_tensor_info(signature.inputs["x"], graph)
        y = tf.saved_model.get_tensor_from_tensor_info(signature.outputs["y"])
        np.testing.assert_allclose(sess.run(y, {x: [[1, 2, 3], [0, 0, 1]]}), [[18], [5]])
        assert all(not n.device for n in meta.graph_def.node)   # simple_save clears devices


def test_builder_assets_main_op_and_several_meta_graphs(tmp_path):
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("a\nb\n")
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        sess, x, y = _linear_model()
        vocab = tf.constant(str(vocab_file), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, vocab)
        tf.Variable(vocab, name="vocab_seen", trainable=False,
                    collections=[tf.GraphKeys.LOCAL_VARIABLES])
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.SERVING, "custom"],
            signature_def_map={"serving_default": tf.saved_model.predict_signature_def(
                {"x": x}, {"y": y})},
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            main_op=tf.local_variables_initializer())
        builder.add_meta_graph([tf.saved_model.TRAINING])
        assert builder.save() == os.path.join(export_dir, "saved_model.pb").encode()
        sess.close()
    assert (tmp_path / "model" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    vocab_file.unlink()   # the model must use its own copy
    saved = saved_model_pb2.SavedModel.FromString(
        (tmp_path / "model" / "saved_model.pb").read_bytes())
    assert saved.saved_model_schema_version == 1
    assert [list(m.meta_info_def.tags) for m in saved.meta_graphs] == [["serve", "custom"],
                                                                       ["train"]]
    assert not saved.meta_graphs[1].signature_def
    shipped = os.path.join(export_dir, "assets", "vocab.txt")
    for tags in (["custom", "serve"], ["train"]):
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.load(sess, tags, export_dir)
            collection = meta.collection_def["saved_model_assets"].any_list.value
            assert len(collection) == 1
            assert list(meta.collection_def["saved_model_main_op"].node_list.value)
            # The main op ran with the asset tensor fed the shipped file's path.
            assert sess.run("vocab_seen:0").decode() == shipped
            np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1, 1, 1]]}), [[7]])


def test_load_under_an_import_scope_and_from_a_text_proto(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        sess, x, y = _linear_model()
        builder = tf.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"])
        assert builder.save(as_text=True).endswith(b"saved_model.pbtxt")
        sess.close()
    assert tf.saved_model.maybe_saved_model_directory(export_dir)
    assert tf.saved_model.contains_saved_model(export_dir)
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir, import_scope="imported")
        assert graph.get_tensor_by_name("imported/y:0") is not None
        np.testing.assert_allclose(sess.run("imported/y:0", {"imported/x:0": [[1, 0, 0]]}),
                                   [[1]])


def test_builder_errors_like_tensorflow(tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "file").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(occupied))
    with tf.Graph().as_default():
        sess, x, y = _linear_model()
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "a"))
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["serve"])
        with pytest.raises(KeyError, match="reserved for initialization"):
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "__saved_model_init_op": tf.saved_model.predict_signature_def({"x": x},
                                                                              {"y": y})})
        with pytest.raises(AssertionError, match="must have the dtype field set"):
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "s": tf.saved_model.build_signature_def(
                    {"x": meta_graph_pb2.TensorInfo(name="x:0")})})
        with pytest.raises(TypeError, match="to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], main_op=y)
        with pytest.raises(TypeError, match="must be of type constant"):
            builder.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[y])
        builder.add_meta_graph_and_variables(sess, ["serve"])
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
        tf.add_to_collection("legacy_init_op", tf.no_op())
        with pytest.raises(ValueError, match="already contains one or more main ops under "
                                             "the collection legacy_init_op"):
            builder.add_meta_graph(["train"], main_op=tf.no_op())
        sess.close()


def test_loader_errors_like_tensorflow(tmp_path):
    missing = str(tmp_path / "none")
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(OSError, match=r"SavedModel file does not exist at: .*none/"
                                          r"\{saved_model.pbtxt\|saved_model.pb\}"):
            tf.saved_model.loader.load(sess, ["serve"], missing)
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        sess, x, y = _linear_model()
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
        sess.close()
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match=r"MetaGraphDef associated with tags 'train' "
                                               r"could not be found in SavedModel, with "
                                               r"available tags '\[\{'serve'\}\]'"):
            tf.saved_model.loader.load(sess, ["train"], export_dir)
    (tmp_path / "model" / "saved_model.pb").write_bytes(b"\xff\xff\xff")
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(OSError, match="Cannot parse file"):
            tf.saved_model.loader.load(sess, ["serve"], export_dir)


def test_signature_builders_and_validity():
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None], name="examples")
        scores = tf.placeholder(tf.float32, [None, 2], name="scores")
        classes = tf.placeholder(tf.string, [None, 2], name="classes")
        counts = tf.placeholder(tf.int32, [None], name="counts")
        regress = tf.saved_model.regression_signature_def(examples, scores)
        assert regress.method_name == "tensorflow/serving/regress"
        assert set(regress.inputs) == {"inputs"} and set(regress.outputs) == {"outputs"}
        classify = tf.saved_model.classification_signature_def(examples, classes, scores)
        assert set(classify.outputs) == {"classes", "scores"}
        assert all(tf.saved_model.is_valid_signature(s) for s in (regress, classify))
        assert not tf.saved_model.is_valid_signature(None)
        assert not tf.saved_model.is_valid_signature(tf.saved_model.build_signature_def(
            method_name=tf.saved_model.PREDICT_METHOD_NAME))
        with pytest.raises(ValueError, match="Regression output tensors must be of type "
                                             "float. Found tensors with type 3."):
            tf.saved_model.regression_signature_def(examples, counts)
        with pytest.raises(ValueError, match="Classification input tensors must be of type "
                                             "string"):
            tf.saved_model.classification_signature_def(scores, classes, None)
        with pytest.raises(ValueError, match="cannot both be None"):
            tf.saved_model.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty."):
            tf.saved_model.predict_signature_def({}, {"s": scores})
        default = tf.saved_model.build_signature_def(defaults={"k": tf.constant(3)})
        assert tf.make_ndarray(default.defaults["k"]) == 3
        with pytest.raises(ValueError, match="Unable to convert object"):
            tf.saved_model.build_signature_def(defaults={"k": counts})


def test_sparse_tensor_infos_round_trip():
    with tf.Graph().as_default() as graph:
        sparse = tf.sparse_placeholder(tf.float32, [None, 4], name="sp")
        info = tf.saved_model.build_tensor_info(sparse)
        assert info.WhichOneof("encoding") == "coo_sparse"
        assert info.coo_sparse.values_tensor_name == sparse.values.name
        back = tf.saved_model.utils.get_tensor_from_tensor_info(info, graph)
        assert isinstance(back, tf.SparseTensor) and back.indices is sparse.indices
        with pytest.raises(ValueError, match="Invalid TensorInfo.encoding: None"):
            tf.saved_model.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo())


def test_main_op_initializes_everything_and_then_restores():
    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        local = tf.Variable(4.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        saver = tf.train.Saver([v])
        with tf.Session() as sess:
            sess.run(tf.saved_model.main_op.main_op())
            assert sess.run([v, local]) == [3.0, 4.0]
            op = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
            assert op.type == "NoOp"


def test_a_tensorflow_saved_model_loads(tmp_path):
    """The SavedModel TensorFlow 2.21 wrote (tests/fixtures/make_tf_saved_model.py): its tags,
    signature, variables (TensorFlow's checkpoint format), asset and main op."""
    export_dir = tmp_path / "tf_model"
    shutil.copytree(FIXTURE, export_dir)
    saved = loader_module.parse_saved_model(str(export_dir))
    assert [list(m.meta_info_def.tags) for m in saved.meta_graphs] == [["serve"], ["train"]]
    assert asset_tensors(str(export_dir), saved.meta_graphs[0]) == {
        "vocab_path:0": str(export_dir / "assets" / "vocab.txt")}
    for tags in (["serve"], ["train"]):
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, tags, str(export_dir))
            assert tf.saved_model.is_valid_signature(meta.signature_def["serving_default"]) \
                or tags == ["train"]
            assert sess.run("vocab_seen:0").decode() == str(export_dir / "assets" /
                                                           "vocab.txt")
            np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1, 1, 1]]}), [[6]])


def test_examples_must_be_a_tensor():
    with pytest.raises(ValueError, match="Regression `examples` cannot be None."):
        tf.saved_model.regression_signature_def(None, None)
    with pytest.raises(ValueError, match="Classification `examples` must be a string Tensor. "
                                         "Found `examples` of type <class 'str'>."):
        tf.saved_model.classification_signature_def("x", None, None)
