"""tf.test as TF1 test files use it: TestCase (run here by pytest, as unittest cases), its
sessions and assertions, local clusters, graph comparison and benchmarks."""
import collections
import os

import numpy as np
import pytest

import tensorweave as tf

Pair = collections.namedtuple("Pair", "first second")


class SessionsTest(tf.test.TestCase):
    def test_each_test_starts_in_a_fresh_seeded_graph(self):
        graph = tf.get_default_graph()
        self.assertEqual(graph.get_operations(), [])
        self.assertEqual(graph.seed, 87654321)
        tf.constant(1.0, name="left_over")

    def test_and_the_next_one_too(self):
        self.assertEqual(tf.get_default_graph().get_operations(), [])

    def test_session_is_the_default_session_on_the_default_graph(self):
        x = tf.constant([1.0, 2.0])
        with self.session() as sess:
            self.assertIs(tf.get_default_session(), sess)
            self.assertAllEqual(sess.run(x * 2), [2.0, 4.0])
        self.assertIsNone(tf.get_default_session())

    def test_cached_session_is_one_session_for_the_test(self):
        v = tf.Variable(3.0)
        with self.cached_session() as first:
            first.run(v.initializer)
        with self.cached_session() as second:
            self.assertIs(first, second)
            self.assertEqual(self.evaluate(v), 3.0)   # initialized in the same session
        with self.assertRaisesRegex(ValueError, "another graph"):
            with self.cached_session(graph=tf.Graph()):
                pass

    def test_evaluate_takes_nested_structures_outside_any_session(self):
        a, b = tf.constant(1), tf.constant([2, 3])
        values = self.evaluate({"a": a, "pair": Pair(a + 1, b)})
        self.assertEqual(values["a"], 1)
        self.assertAllEqual(values["pair"].second, [2, 3])

    def test_get_temp_dir_is_the_tests_own(self):
        path = self.get_temp_dir()
        self.assertTrue(os.path.isdir(path))
        self.assertIn("test_get_temp_dir", path)


class AssertionsTest(tf.test.TestCase):
    def test_all_close_through_nested_structures_and_tensors(self):
        self.assertAllClose({"x": [1.0, np.nan], "y": (2, tf.constant(3.0))},
                            {"x": np.array([1.0 + 1e-7, np.nan]), "y": [2.0, 3.0]})
        with self.assertRaisesRegex(AssertionError, r"Not close at \['x'\]") as failure:
            self.assertAllClose({"x": [1.0, 2.0]}, {"x": [1.0, 2.5]})
        self.assertIn("not close where = (array([1]),)", str(failure.exception))
        with self.assertRaisesRegex(AssertionError, r"Shape mismatch: expected \(1,\)"):
            self.assertAllClose([1.0], [1.0, 2.0])
        with self.assertRaisesRegex(AssertionError, "Mismatched lengths"):
            self.assertAllClose([1.0, (2.0, 3.0)], [1.0])
        self.assertNotAllClose([1.0], [1.1])

    def test_tolerance_according_to_type(self):
        a = np.array([1.0], np.float16)
        self.assertAllCloseAccordingToType(a, a + np.float16(5e-4))
        with self.assertRaises(AssertionError):
            self.assertAllCloseAccordingToType(np.float64(1.0), np.float64(1.0 + 5e-4))

    def test_all_equal_reports_shape_and_places(self):
        self.assertAllEqual([[1, 2]], tf.constant([[1, 2]]))
        self.assertAllEqual([np.nan], [np.nan])
        with self.assertRaisesRegex(AssertionError, r"Shape mismatch: expected \(2,\), got"):
            self.assertAllEqual([1, 2], [1, 2, 3])
        with self.assertRaisesRegex(AssertionError, "not equal where"):
            self.assertAllEqual([1, 2], [1, 3])
        self.assertNotAllEqual([1, 2], [1, 3])

    def test_comparisons_ranges_and_sets(self):
        self.assertAllGreater([2, 3], 1)
        self.assertAllLessEqual([2, 3], 3)
        self.assertAllInRange([0.0, 0.5, 1.0], 0.0, 1.0)
        with self.assertRaisesRegex(AssertionError, r"outside \(0.0, 1.0\]"):
            self.assertAllInRange([0.0, 0.5], 0.0, 1.0, open_lower_bound=True)
        self.assertAllInSet([1, 2, 2], {1, 2, 3})
        with self.assertRaises(AssertionError):
            self.assertAllInSet([4], {1, 2})
        self.assertDTypeEqual(np.zeros(2, np.float32), tf.float32)
        self.assertNear(1.0, 1.05, 0.1)
        self.assertArrayNear([1.0, 2.0], [1.01, 2.0], 0.02)
        self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
        self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
        self.assertAllTrue([True, True])
        self.assertAllFalse(np.zeros(3))

    def test_raises_op_error_matches_the_message(self):
        x = tf.placeholder(tf.float32, [2])
        checked = tf.debugging.check_numerics(x, "bad input")
        with self.session() as sess:
            with self.assertRaisesOpError("bad input"):
                sess.run(checked, {x: [1.0, np.inf]})
            with self.assertRaisesWithPredicateMatch(
                    tf.errors.InvalidArgumentError, lambda e: e.op is checked.op):
                sess.run(checked, {x: [np.nan, 1.0]})
        with self.assertRaisesRegex(AssertionError, "OpError not raised"):
            with self.assertRaisesOpError("anything"):
                pass

    def test_proto_equals_text(self):
        node = tf.identity(tf.constant(1.0), name="out").op.node_def
        self.assertProtoEquals("name: 'out' op: 'Identity' input: 'Const' "
                               "attr { key: 'T' value { type: DT_FLOAT } }", node)
        with self.assertRaisesRegex(AssertionError, "Protos differ"):
            self.assertProtoEquals("name: 'other'", node)


def test_graph_defs_compare_regardless_of_node_order():
    def build(order):
        with tf.Graph().as_default() as g:
            made = {}
            for name in order:
                made[name] = tf.constant(1.0, name=name)
            tf.add(made["a"], made["b"], name="sum")
        return g.as_graph_def()
    tf.test.assert_equal_graph_def(build("ab"), build("ba"))
    changed = build("ab")
    changed.node[0].device = "/device:CPU:0"
    with pytest.raises(AssertionError, match="Node 'a' differs"):
        tf.test.assert_equal_graph_def(changed, build("ab"))
    with pytest.raises(TypeError):
        tf.test.assert_equal_graph_def("graph", build("ab"))


def test_create_local_cluster_serves_every_task():
    workers, ps = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(5.0)
            with tf.device("/job:worker/task:1"):
                doubled = v * 2
            with tf.Session(workers[0].target) as sess:
                sess.run(v.initializer)
                assert sess.run(doubled) == 10.0
    finally:
        for server in workers + ps:
            server.stop()


def test_benchmark_times_an_op_and_reports_it():
    class AddBenchmark(tf.test.Benchmark):
        pass
    bench = AddBenchmark()
    with tf.Graph().as_default(), tf.Session() as sess:
        values = bench.run_op_benchmark(sess, tf.constant(1.0) + 2.0, min_iters=5,
                                        name="add", mbs=4)
    assert values["iters"] == 5 and values["name"] == "add" and values["wall_time"] > 0
    assert values["throughput"] == pytest.approx(4 / values["wall_time"])
    assert bench.entries[-1]["name"] == "add"


class AbslAssertionsAndThreadsTest(tf.test.TestCase):
    def test_absltest_assertions(self):
        self.assertLen([1, 2], 2)
        self.assertEmpty([])
        self.assertNotEmpty([0])
        self.assertBetween(3, 1, 5)
        self.assertContainsSubset({1, 2}, [1, 2, 3])
        self.assertNoCommonElements([1], [2])
        self.assertSameElements([1, 1, 2], [2, 1])
        self.assertContainsInOrder(["a", "c"], "abc")
        self.assertEndsWith("graph.pb", ".pb")
        self.assertSequenceStartsWith([1, 2], [1, 2, 3])
        self.assertNDArrayNear(np.array([1.0, 2.0]), np.array([1.05, 2.0]), 0.1)
        self.assertSameStructure({"a": [1, 2]}, {"a": [3, 4]})
        for failing in (lambda: self.assertLen([1], 2), lambda: self.assertEmpty([1]),
                        lambda: self.assertBetween(9, 1, 5),
                        lambda: self.assertContainsInOrder(["c", "a"], "abc"),
                        lambda: self.assertSameStructure([1], [[1]])):
            with self.assertRaises(AssertionError):
                failing()
        with self.assertRaisesWithLiteralMatch(ValueError, "exactly this"):
            raise ValueError("exactly this")

    def test_incompatible_shapes(self):
        a, b = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
        with self.session() as sess:
            with self.assertRaisesIncompatibleShapesError():
                sess.run(a + b, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})

    def test_checked_threads_report_their_errors(self):
        results = []
        ok = self.checkedThread(lambda: results.append(1))
        ok.start()
        ok.join()
        bad = self.checkedThread(lambda: 1 / 0)
        bad.start()
        with self.assertRaisesRegex(AssertionError, "Error in checkedThread"):
            bad.join()
        self.assertEqual(results, [1])
