"""tf.feature_column (TF1): columns, input_layer, linear_model and make_parse_example_spec,
against the values, names and variables TensorFlow 2.21 gives for the same programs."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column

# TensorFlow 2.21's input_layer for `_basic_columns` (rows: the three examples).
TF_BASIC = [
    [23, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 12, 14, 16, 0, 1, 0, 1, 0, 0, 0, 0,
     1, 10, 20],
    [51, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 2, 1, 0, 0, 0, 0, 0, 1, 0, 0,
     30, 40],
    [35, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 14, 16, 0, 0, 2, 0, 1, 0, 0, 0,
     0, 50, 60]]
# And for `_vocabulary_columns`.
TF_VOCABULARY = [
    [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 6.305926322937012, 7.518604755401611, 0, 0.5, 0, 2, 0,
     1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 6, 7, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]


def _basic_features():
    return {"age": tf.constant([[23.0], [51.0], [35.0]]),
            "xy": tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
            "color": tf.constant([["red"], ["blue"], [""]]),
            "ids": tf.constant([[1, 3], [0, -1], [2, 2]], tf.int64),
            "word": tf.constant([["a"], ["b"], ["zzz"]])}


def _basic_columns():
    age = fc.numeric_column("age")
    xy = fc.numeric_column("xy", shape=(2,), normalizer_fn=lambda t: t * 10)
    age_b = fc.bucketized_column(age, [18, 30, 50])
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"],
                                                       num_oov_buckets=1)
    ids = fc.categorical_column_with_identity("ids", 4)
    word = fc.categorical_column_with_hash_bucket("word", 5)
    cross = fc.crossed_column([age_b, "word"], 7)
    dense = [age, xy, age_b, fc.indicator_column(color), fc.indicator_column(ids),
             fc.indicator_column(word), fc.indicator_column(cross),
             fc.embedding_column(color, 2, initializer=tf.ones_initializer()),
             fc.embedding_column(ids, 3, combiner="sum", initializer=tf.constant_initializer(
                 np.arange(12).reshape(4, 3)))]
    return dense, [age, age_b, color, ids, cross]


def _run(fetches):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches)


def test_input_layer_matches_tensorflow():
    with tf.Graph().as_default():
        dense, linear = _basic_columns()
        assert [c.name for c in dense] == [
            "age", "xy", "age_bucketized", "color_indicator", "ids_indicator", "word_indicator",
            "age_bucketized_X_word_indicator", "color_embedding", "ids_embedding"]
        net = fc.input_layer(_basic_features(), dense)
        logits = fc.linear_model(_basic_features(), linear, units=2)
        assert net.name == "input_layer/concat:0" and net.shape.as_list() == [3, 32]
        assert logits.shape.as_list() == [3, 2]
        assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("input_layer/color_embedding/embedding_weights", [4, 2]),
            ("input_layer/ids_embedding/embedding_weights", [4, 3]),
            ("linear_model/age/weights", [1, 2]),
            ("linear_model/age_bucketized/weights", [4, 2]),
            ("linear_model/age_bucketized_X_word/weights", [7, 2]),
            ("linear_model/color/weights", [4, 2]), ("linear_model/ids/weights", [4, 2]),
            ("linear_model/bias_weights", [2])]
        got, zeros = _run([net, logits])
        np.testing.assert_array_equal(got, TF_BASIC)
        np.testing.assert_array_equal(zeros, np.zeros([3, 2]))


def _vocabulary_columns(vocabulary_file):
    def fruit(key):
        return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]],
                               ["banana", "kiwi", "apple", "plum"], [3, 2])
    features = {"fruit": fruit("fruit"), "fruit2": fruit("fruit2"), "fruit3": fruit("fruit3"),
                "n": tf.constant([[5], [12], [-1]], tf.int64),
                "n2": tf.constant([[5], [12], [-1]], tf.int64),
                "w": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], [0.5, 2.0, 1.0, 3.0],
                                     [3, 2]),
                "k": tf.constant([[7], [3], [9]], tf.int64)}
    fruit_file = fc.categorical_column_with_vocabulary_file("fruit", vocabulary_file,
                                                            num_oov_buckets=2)
    fruit_list = fc.categorical_column_with_vocabulary_list("fruit2", ["apple", "banana"],
                                                            default_value=0)
    n_hash = fc.categorical_column_with_hash_bucket("n", 10, dtype=tf.int64)
    n_vocab = fc.categorical_column_with_vocabulary_list("n2", [12, 5, 7], num_oov_buckets=3)
    k_id = fc.categorical_column_with_identity("k", 5, default_value=4)
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_vocabulary_file(
        "fruit3", vocabulary_file, num_oov_buckets=1), "w")
    columns = [fc.indicator_column(c) for c in (fruit_file, fruit_list, n_hash, n_vocab, k_id,
                                                 weighted)]
    columns.append(fc.embedding_column(weighted, 2, combiner="sqrtn",
                                       initializer=tf.constant_initializer(
                                           np.arange(8).reshape(4, 2))))
    columns.append(fc.indicator_column(fc.crossed_column(["k", fruit_list], 11, hash_key=1234)))
    return features, columns


def test_vocabularies_oov_buckets_hashing_weights_and_crosses_match_tensorflow(tmp_path):
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("apple\nbanana\ncherry\n")
    with tf.Graph().as_default():
        features, columns = _vocabulary_columns(str(vocabulary))
        np.testing.assert_allclose(_run(fc.input_layer(features, columns)), TF_VOCABULARY,
                                   rtol=1e-6)


def test_parse_example_spec_feeds_parse_example():
    with tf.Graph().as_default():
        dense, _ = _basic_columns()
        spec = fc.make_parse_example_spec(dense)
        assert spec == {"age": tf.FixedLenFeature((1,), tf.float32),
                        "xy": tf.FixedLenFeature((2,), tf.float32),
                        "color": tf.VarLenFeature(tf.string), "ids": tf.VarLenFeature(tf.int64),
                        "word": tf.VarLenFeature(tf.string)}
        example = tf.train.Example(features=tf.train.Features(feature={
            "age": tf.train.Feature(float_list=tf.train.FloatList(value=[23.0])),
            "xy": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
            "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"red"])),
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 3])),
            "word": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"a"]))}))
        parsed = tf.parse_example([example.SerializeToString()], spec)
        np.testing.assert_array_equal(_run(fc.input_layer(parsed, dense)), TF_BASIC[:1])
        with pytest.raises(ValueError, match="different parse_spec for key age"):
            fc.make_parse_example_spec([fc.numeric_column("age"),
                                        fc.numeric_column("age", shape=2)])


def test_linear_model_trains_and_reports_its_variables():
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        features = {"x": tf.constant([[0.0], [1.0], [2.0], [3.0]]),
                    "c": tf.constant([["a"], ["b"], ["a"], ["b"]])}
        found = {}
        columns = [fc.numeric_column("x"),
                   fc.categorical_column_with_vocabulary_list("c", ["a", "b"])]
        prediction = fc.linear_model(features, columns, cols_to_vars=found,
                                     weight_collections=["linear"])
        assert sorted(k if isinstance(k, str) else k.name for k in found) == ["bias", "c", "x"]
        assert len(tf.get_collection("linear")) == 3
        target = tf.constant([[1.0], [4.0], [5.0], [8.0]])   # 2x + 1 + (b: 2)
        loss = tf.reduce_mean(tf.square(prediction - target))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            first = sess.run(loss)
            for _ in range(400):
                sess.run(train)
            assert sess.run(loss) < 1e-3 < first


def test_input_layer_reports_tensors_and_variables_and_loads_checkpoints(tmp_path):
    with tf.Graph().as_default():
        table = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="pretrained")
        with tf.Session() as sess:
            sess.run(table.initializer)
            prefix = tf.train.Saver([table]).save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        ids = fc.categorical_column_with_identity("i", 3)
        embedded = fc.embedding_column(ids, 2, ckpt_to_load_from=prefix,
                                       tensor_name_in_ckpt="pretrained", trainable=False)
        outputs, variables = {}, {}
        net = fc.input_layer({"i": tf.constant([[2], [0]], tf.int64)}, [embedded],
                             cols_to_vars=variables, cols_to_output_tensors=outputs)
        assert outputs[embedded].shape.as_list() == [2, 2]
        assert [v.op.name for v in variables[embedded]] == \
            ["input_layer/i_embedding/embedding_weights"]
        assert not tf.trainable_variables()
        got, column_output = _run([net, outputs[embedded]])
        np.testing.assert_array_equal(got, [[4, 5], [0, 1]])
        np.testing.assert_array_equal(column_output, got)


def test_identity_ids_out_of_range_fail_the_step():
    with tf.Graph().as_default():
        column = fc.indicator_column(fc.categorical_column_with_identity("i", 3))
        net = fc.input_layer({"i": tf.constant([[1], [3]], tf.int64)}, [column])
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            _run(net)


def test_constructor_and_layer_errors_like_tensorflow():
    age = fc.numeric_column("age")
    with pytest.raises(ValueError, match="shape dimensions must be greater than 0"):
        fc.numeric_column("a", shape=(0,))
    with pytest.raises(ValueError, match="must be a column generated with numeric_column"):
        fc.bucketized_column(fc.categorical_column_with_identity("i", 2), [1])
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(age, [3, 1])
    with pytest.raises(ValueError, match="num_buckets 0 < 1, column_name i"):
        fc.categorical_column_with_identity("i", 0)
    with pytest.raises(ValueError, match="Duplicate keys in vocabulary_list"):
        fc.categorical_column_with_vocabulary_list("v", ["a", "a"])
    with pytest.raises(ValueError, match="Can't specify both num_oov_buckets and "
                                         "default_value in v."):
        fc.categorical_column_with_vocabulary_list("v", ["a"], default_value=0,
                                                   num_oov_buckets=1)
    with pytest.raises(ValueError, match="hash_bucket_size must be at least 1"):
        fc.categorical_column_with_hash_bucket("h", 0)
    with pytest.raises(ValueError, match="keys must be a list with length > 1"):
        fc.crossed_column(["a"], 4)
    with pytest.raises(ValueError, match="hash_bucket is not supported for crossing"):
        fc.crossed_column(["a", fc.categorical_column_with_hash_bucket("h", 3)], 4)
    with pytest.raises(ValueError, match="Invalid dimension 0."):
        fc.embedding_column(fc.categorical_column_with_identity("i", 2), 0)
    with tf.Graph().as_default():
        features = {"age": tf.constant([[1.0]])}
        with pytest.raises(ValueError, match="Items of feature_columns must be a _DenseColumn"):
            fc.input_layer(features, [fc.categorical_column_with_identity("age", 2)])
        with pytest.raises(ValueError, match="Duplicate feature column name found"):
            fc.input_layer(features, [age, fc.numeric_column("age")])
        with pytest.raises(ValueError, match="The following column is not in the features: "
                                             "xy"):
            fc.input_layer(features, [fc.numeric_column("xy")])


def test_shared_embedding_columns_share_one_table_as_tensorflow_names_it():
    with tf.Graph().as_default():
        a = fc.categorical_column_with_identity("a", 3)
        b = fc.categorical_column_with_identity("b", 3)
        shared_b, shared_a = fc.shared_embedding_columns(
            [b, a], 2, initializer=tf.constant_initializer([[0, 1], [2, 3], [4, 5]]))
        assert (shared_b.name, shared_a.name) == ("b_shared_embedding", "a_shared_embedding")
        features = {"a": tf.constant([[0], [2]], tf.int64), "b": tf.constant([[1], [1]], tf.int64)}
        both = fc.input_layer(features, [shared_b, shared_a])
        alone = fc.input_layer(features, [shared_a])
        assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("input_layer/a_b_shared_embedding/embedding_weights", [3, 2])]
        got_both, got_alone = _run([both, alone])
        np.testing.assert_array_equal(got_both, [[0, 1, 2, 3], [4, 5, 2, 3]])
        np.testing.assert_array_equal(got_alone, [[0, 1], [4, 5]])
        with pytest.raises(ValueError, match="must have the same number of buckets"):
            fc.shared_embedding_columns([a, fc.categorical_column_with_identity("c", 4)], 2)
