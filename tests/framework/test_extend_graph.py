"""extend_graph: the master's ExtendSession adds nodes to a graph, all of them or none."""
import pytest

import tensorweave as tf
from tensorweave.framework.importer import extend_graph
from tensorweave.protos import graph_pb2


def test_extend_graph_adds_nodes_that_use_existing_ops_all_or_nothing():
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant(2.0, name="a")
    with tf.Graph().as_default() as other:
        x = tf.constant(1.0, name="a")
        tf.multiply(x, 3.0, name="tripled")
    new = graph_pb2.GraphDef(node=[n for n in other.as_graph_def().node if n.name != "a"])
    broken = graph_pb2.GraphDef()
    broken.CopyFrom(new)
    broken.node.add(name="bad", op="Const")   # no value: refused, and nothing is added
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid GraphDef"):
        extend_graph(graph, broken)
    assert [op.name for op in graph.get_operations()] == ["a"] and a.consumers() == []
    extend_graph(graph, new)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'tripled' already exists"):
        extend_graph(graph, new)
    with tf.Session(graph=graph) as sess:
        assert sess.run("tripled:0") == 6.0
