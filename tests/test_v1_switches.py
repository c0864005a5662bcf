"""TF1 names programs use at their first lines: config protos (tf.GPUOptions), the v2
switches (resource variables, control flow v2), variable synchronization and aggregation,
tf.container, tf.nest, convert_to_tensor_or_sparse_tensor and the GraphDef version constants.

Values and messages are TensorFlow 2.21's (tf.compat.v1), checked with
shared/programs/run_with_tf.py.
"""
import collections

import pytest

import tensorweave as tf
from tensorweave.ops.variables import ResourceVariable


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


@pytest.fixture
def resource_default():
    """Puts the default back however a test leaves it."""
    yield
    tf.disable_resource_variables()


def test_config_protos_a_tf1_program_builds():
    config = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=True,
                                                      per_process_gpu_memory_fraction=0.5))
    assert config.gpu_options.allow_growth and config.gpu_options.per_process_gpu_memory_fraction \
        == 0.5
    with tf.Session(config=config) as sess:      # no GPU here: the options change nothing
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    assert tf.NameAttrList(name="f").name == "f"
    assert tf.TensorInfo(name="x:0").name == "x:0"
    assert tf.SummaryMetadata().plugin_data.plugin_name == ""
    assert tf.LogMessage(message="m").message == "m"


def test_enable_resource_variables_changes_the_default(resource_default):
    assert not tf.resource_variables_enabled()
    assert not isinstance(tf.Variable(1.0), ResourceVariable)
    tf.enable_resource_variables()
    assert tf.resource_variables_enabled()
    assert isinstance(tf.Variable(1.0), ResourceVariable)
    assert isinstance(tf.get_variable("g", []), ResourceVariable)
    with tf.variable_scope("s", use_resource=False):     # a scope's choice still wins
        assert not isinstance(tf.Variable(1.0), ResourceVariable)
        assert not isinstance(tf.get_variable("h", []), ResourceVariable)
    assert not isinstance(tf.Variable(1.0, use_resource=False), ResourceVariable)
    tf.disable_v2_behavior()                              # as TF's, turns them off again
    assert not tf.resource_variables_enabled()
    assert not isinstance(tf.get_variable("i", []), ResourceVariable)


def test_control_flow_v2_switches():
    assert not tf.control_flow_v2_enabled()
    tf.disable_control_flow_v2()
    assert not tf.control_flow_v2_enabled()
    assert not tf.executing_eagerly_outside_functions()
    with pytest.raises(NotImplementedError, match="TF1 control flow"):
        tf.enable_control_flow_v2()


def test_tensor_equality_stays_tf1s():
    tf.disable_tensor_equality()
    a = tf.constant(1)
    assert (a == a) is True and (a == tf.constant(1)) is False and {a: 1}[a] == 1
    with pytest.raises(NotImplementedError, match="use tf.equal"):
        tf.enable_tensor_equality()


def test_variable_synchronization_and_aggregation():
    v = tf.Variable(1.0)
    assert (v.synchronization, v.aggregation) == (tf.VariableSynchronization.AUTO,
                                                  tf.VariableAggregation.NONE)
    assert [a.value for a in tf.VariableAggregation] == [0, 1, 2, 3]
    on_read = tf.get_variable("g", [], synchronization=tf.VariableSynchronization.ON_READ)
    assert not on_read.trainable and on_read not in tf.trainable_variables()
    explicit = tf.get_variable("h", [], synchronization=tf.VariableSynchronization.ON_READ,
                               trainable=True)
    assert explicit.trainable
    by_number = tf.get_variable("j", [], synchronization=3, aggregation=1)
    assert (by_number.synchronization, by_number.aggregation) == (
        tf.VariableSynchronization.ON_READ, tf.VariableAggregation.SUM)
    with pytest.raises(ValueError, match=r"^Invalid variable aggregation mode: sum for "
                                         r"variable: i$"):
        tf.get_variable("i", [], aggregation="sum")
    with pytest.raises(ValueError, match="Invalid variable synchronization mode: 7 for"):
        tf.Variable(1.0, synchronization=7, name="k")
    w = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.MEAN)
    assert not w.trainable
    proto = w.to_proto()
    assert (proto.synchronization, proto.aggregation) == (3, 2)
    restored = tf.Variable(variable_def=proto)
    assert (restored.synchronization, restored.aggregation) == (
        tf.VariableSynchronization.ON_READ, tf.VariableAggregation.MEAN)


def test_custom_getter_gets_tensorflows_keyword_arguments():
    seen = []

    def getter(getter, name, **kwargs):
        seen.append(sorted(kwargs))
        return getter(name, **kwargs)
    with tf.variable_scope("c", custom_getter=getter):
        tf.get_variable("k", [], aggregation=tf.VariableAggregation.SUM)
    assert seen == [["aggregation", "caching_device", "collections", "constraint", "dtype",
                     "initializer", "partitioner", "regularizer", "reuse", "shape",
                     "synchronization", "trainable", "use_resource", "validate_shape"]]


def test_container_names_the_container_of_stateful_ops():
    with tf.container("experiment"):
        inside = tf.Variable(1.0, name="inside")
        queue = tf.FIFOQueue(2, tf.float32)
        mine = tf.Variable(1.0, name="mine", use_resource=True)
    outside = tf.Variable(1.0, name="outside")
    assert inside.op.get_attr("container") == b"experiment"
    assert queue.queue_ref.op.get_attr("container") == b"experiment"
    assert mine.handle.op.get_attr("container") == b"experiment"
    assert outside.op.get_attr("container") == b""
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(inside) == 1.0


def test_nest_is_tensorflows():
    assert sorted(n for n in dir(tf.nest) if not n.startswith("_")) == [
        "assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
    assert tf.nest.flatten({"b": [1, (2, 3)], "a": 4}) == [4, 1, 2, 3]
    point = collections.namedtuple("P", "x y")
    assert tf.nest.pack_sequence_as(point(1, [2, 3]), [7, 8, 9]) == point(7, [8, 9])
    assert tf.nest.map_structure(lambda a, b: a + b, [1, {"k": 2}], [10, {"k": 20}]) == \
        [11, {"k": 22}]
    assert (tf.nest.is_nested([1]), tf.nest.is_nested(1), tf.nest.is_nested("ab")) == \
        (True, False, False)
    assert tf.nest.flatten("abc") == ["abc"] and tf.nest.flatten(None) == [None]
    # Values go by sorted key; the rebuilt dict keeps the template's key order (as TF's).
    assert list(tf.nest.pack_sequence_as({"s": 0, "d": 0}, [1, 2]).items()) == \
        [("s", 2), ("d", 1)]


@pytest.mark.parametrize("a, b, error, message", [
    ([1, [2]], [1, 3], ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=list "
     "str=[1, [2]]\n\nSecond structure: type=list str=[1, 3]\n\nMore specifically: "
     "Substructure \"type=list str=[2]\" is a sequence, while substructure \"type=int str=3\" "
     "is not\nEntire first structure:\n[., [.]]\nEntire second structure:\n[., .]"),
    ({"a": 1}, {"b": 1}, ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=dict "
     "str={'a': 1}\n\nSecond structure: type=dict str={'b': 1}\n\nMore specifically: The two "
     "dictionaries don't have the same set of keys. First structure has keys type=list "
     "str=['a'], while second structure has keys type=list str=['b']\nEntire first "
     "structure:\n{'a': .}\nEntire second structure:\n{'b': .}"),
    ([1, (2,)], [1, [2]], TypeError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=list "
     "str=[1, (2,)]\n\nSecond structure: type=list str=[1, [2]]\n\nMore specifically: The two "
     "namedtuples don't have the same sequence type. First structure type=tuple str=(2,) has "
     "type tuple, while second structure type=list str=[2] has type list\nEntire first "
     "structure:\n[., (.,)]\nEntire second structure:\n[., [.]]"),
    ([1, [2, 3]], [1, [2]], ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=list "
     "str=[1, [2, 3]]\n\nSecond structure: type=list str=[1, [2]]\n\nMore specifically: The "
     "two structures don't have the same number of elements. First structure: type=list "
     "str=[2, 3]. Second structure: type=list str=[2]\nEntire first structure:\n[., [., .]]\n"
     "Entire second structure:\n[., [.]]"),
])
def test_nest_mismatches_in_tensorflows_words(a, b, error, message):
    with pytest.raises(error) as info:
        tf.nest.assert_same_structure(a, b)
    assert str(info.value) == message


def test_nest_pack_of_the_wrong_length():
    with pytest.raises(ValueError) as info:
        tf.nest.pack_sequence_as({"a": [1, 2]}, [1, 2, 3])
    assert str(info.value) == ("Could not pack sequence. Structure had 2 atoms, but "
                               "flat_sequence had 3 items.  Structure: {'a': [1, 2]}, "
                               "flat_sequence: [1, 2, 3].")


def test_convert_to_tensor_or_sparse_tensor():
    sparse = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.convert_to_tensor_or_sparse_tensor(sparse) is sparse
    value = tf.SparseTensorValue([[1]], [2.0], [3])
    converted = tf.convert_to_tensor_or_sparse_tensor(value)
    assert isinstance(converted, tf.SparseTensor)
    dense = tf.convert_to_tensor_or_sparse_tensor([1, 2], dtype=tf.int64)
    assert isinstance(dense, tf.Tensor) and dense.dtype == tf.int64
    with pytest.raises(RuntimeError, match="Sparse dtype mismatch. Requested: int32"):
        tf.convert_to_tensor_or_sparse_tensor(sparse, dtype=tf.int32)


def test_graph_def_version_constants_match_what_graphs_record():
    assert tf.get_default_graph().as_graph_def().versions.producer == tf.GRAPH_DEF_VERSION
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0 and tf.GRAPH_DEF_VERSION_MIN_PRODUCER == 0
