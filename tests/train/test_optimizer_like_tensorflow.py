"""tf.train.Optimizer's subclass hooks as TensorFlow 2.21 names them: a custom optimizer that
calls `_create_non_slot_variable(initial_value=..., name=..., colocate_with=...)` by keyword
builds and runs as in TF (values are TF 2.21's)."""
import numpy as np

import tensorweave as tf


class _CountingOptimizer(tf.train.Optimizer):
    """Momentum-like updates plus a step counter kept in a non-slot variable."""

    def __init__(self, lr, use_locking=False, name="MyOpt"):
        super().__init__(use_locking, name)
        self._lr = lr

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "acc", self._name)
        first = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(initial_value=1.0, name="counter", colocate_with=first)

    def _prepare(self):
        self._lr_t = tf.convert_to_tensor(self._lr, name="learning_rate")

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "acc")
        return tf.assign_sub(var, self._lr_t * tf.assign(acc, acc * 0.5 + grad))

    def _apply_sparse(self, grad, var):
        acc_t = tf.scatter_add(self.get_slot(var, "acc"), grad.indices, grad.values)
        return tf.scatter_sub(var, grad.indices, self._lr_t * tf.gather(acc_t, grad.indices))

    def _finish(self, update_ops, name_scope):
        counter = self._get_non_slot_variable("counter", graph=tf.get_default_graph())
        with tf.control_dependencies(update_ops):
            step = tf.assign_add(counter, 1.0)
        return tf.group(*(update_ops + [step]), name=name_scope)


def test_non_slot_variable_by_keyword():
    with tf.Graph().as_default() as graph:
        x = tf.Variable([1.0, 2.0], name="x")
        E = tf.Variable(np.ones([3, 2], np.float32), name="E")
        loss = tf.reduce_sum(x * x) + tf.reduce_sum(tf.gather(E, [0, 2, 0]) ** 2)
        opt = _CountingOptimizer(0.1)
        train = opt.minimize(loss)
        assert (train.name, train.type) == ("MyOpt", "NoOp")
        assert [v.name for v in tf.global_variables()] == [
            "x:0", "E:0", "x/MyOpt:0", "E/MyOpt:0", "counter:0"]
        assert sorted(v.name for v in opt.variables()) == ["E/MyOpt:0", "counter:0",
                                                           "x/MyOpt:0"]
        counter = opt._get_non_slot_variable("counter", graph=graph)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            e_value, count = sess.run([E, counter])
    # TF 2.21: E = [[-0.664, -0.664], [1, 1], [-0.008, -0.008]] (bits bf29fbe8, bc031260).
    assert [format(v, "08x") for v in e_value.ravel().view(np.uint32)] == [
        "bf29fbe8", "bf29fbe8", "3f800000", "3f800000", "bc031260", "bc031260"]
    assert count == 4.0
