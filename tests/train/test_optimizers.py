"""Every TF1 optimizer against a NumPy re-implementation of TensorFlow's update rule, over
several steps, with dense gradients and with IndexedSlices (repeated indices summed first);
plus slot names, global_step, graph structure, learning-rate forms and TF's error messages."""
import numpy as np
import pytest

import tensorweave as tf

STEPS = 4
W0 = np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]])
B0 = np.array([0.1, -0.2])


# --- NumPy references: state per variable, updated by one step --------------------------------
class SGD:
    def __init__(self, lr):
        self.lr = lr

    def make(self, w):
        return {}

    def step(self, w, s, g, t):
        return w - self.lr * g


class Momentum:
    def __init__(self, lr, momentum, nesterov=False):
        self.lr, self.m, self.nesterov = lr, momentum, nesterov

    def make(self, w):
        return {"accum": np.zeros_like(w)}

    def step(self, w, s, g, t):
        s["accum"] = s["accum"] * self.m + g
        if self.nesterov:
            return w - (g * self.lr + s["accum"] * self.m * self.lr)
        return w - self.lr * s["accum"]


class Adam:
    def __init__(self, lr=0.001, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def make(self, w):
        return {"m": np.zeros_like(w), "v": np.zeros_like(w)}

    def step(self, w, s, g, t):
        b1p, b2p = self.b1 ** (t + 1), self.b2 ** (t + 1)
        alpha = self.lr * np.sqrt(1 - b2p) / (1 - b1p)
        s["m"] = s["m"] + (g - s["m"]) * (1 - self.b1)
        s["v"] = s["v"] + (g * g - s["v"]) * (1 - self.b2)
        return w - alpha * s["m"] / (np.sqrt(s["v"]) + self.eps)

    def sparse_step(self, w, s, rows, g, t):
        """TF1's sparse Adam: m and v decay densely, the new rows are added, var moves
        everywhere."""
        b1p, b2p = self.b1 ** (t + 1), self.b2 ** (t + 1)
        alpha = self.lr * np.sqrt(1 - b2p) / (1 - b1p)
        s["m"] = s["m"] * self.b1
        s["m"][rows] += g * (1 - self.b1)
        s["v"] = s["v"] * self.b2
        s["v"][rows] += g * g * (1 - self.b2)
        return w - alpha * s["m"] / (np.sqrt(s["v"]) + self.eps)


class Adagrad:
    def __init__(self, lr, init=0.1):
        self.lr, self.init = lr, init

    def make(self, w):
        return {"accum": np.full_like(w, self.init)}

    def step(self, w, s, g, t):
        s["accum"] = s["accum"] + g * g
        return w - self.lr * g / np.sqrt(s["accum"])


class Adadelta:
    def __init__(self, lr=0.001, rho=0.95, eps=1e-8):
        self.lr, self.rho, self.eps = lr, rho, eps

    def make(self, w):
        return {"accum": np.zeros_like(w), "update": np.zeros_like(w)}

    def step(self, w, s, g, t):
        s["accum"] = self.rho * s["accum"] + (1 - self.rho) * g * g
        upd = np.sqrt(s["update"] + self.eps) / np.sqrt(s["accum"] + self.eps) * g
        s["update"] = self.rho * s["update"] + (1 - self.rho) * upd * upd
        return w - self.lr * upd


class RMSProp:
    def __init__(self, lr, decay=0.9, momentum=0.0, eps=1e-10, centered=False):
        self.lr, self.decay, self.m, self.eps, self.centered = lr, decay, momentum, eps, centered

    def make(self, w):
        return {"ms": np.ones_like(w), "mg": np.zeros_like(w), "mom": np.zeros_like(w)}

    def step(self, w, s, g, t):
        s["ms"] = s["ms"] + (g * g - s["ms"]) * (1 - self.decay)
        denom = s["ms"] + self.eps
        if self.centered:
            s["mg"] = s["mg"] + (g - s["mg"]) * (1 - self.decay)
            denom = s["ms"] - s["mg"] ** 2 + self.eps
        s["mom"] = s["mom"] * self.m + self.lr * g / np.sqrt(denom)
        return w - s["mom"]


class Ftrl:
    def __init__(self, lr, power=-0.5, init=0.1, l1=0.0, l2=0.0, shrinkage=0.0, beta=0.0):
        self.lr, self.p, self.init, self.l1 = lr, power, init, l1
        self.l2 = l2 + beta / (2 * lr)
        self.shrinkage = shrinkage

    def make(self, w):
        return {"accum": np.full_like(w, self.init), "linear": np.zeros_like(w)}

    def step(self, w, s, g, t):
        new = s["accum"] + g * g
        gs = g + 2 * self.shrinkage * w
        s["linear"] = s["linear"] + gs - (new ** -self.p - s["accum"] ** -self.p) / self.lr * w
        s["accum"] = new
        lin = s["linear"]
        x = self.l1 * np.sign(lin) - lin
        y = new ** -self.p / self.lr + 2 * self.l2
        return np.where(np.abs(lin) > self.l1, x / y, 0.0)


class ProximalGD:
    def __init__(self, lr, l1=0.0, l2=0.0):
        self.lr, self.l1, self.l2 = lr, l1, l2

    def make(self, w):
        return {}

    def step(self, w, s, g, t):
        prox = w - self.lr * g
        if self.l1 > 0:
            return np.sign(prox) * np.maximum(np.abs(prox) - self.lr * self.l1, 0) / \
                (1 + self.lr * self.l2)
        return prox / (1 + self.lr * self.l2)


# (id, optimizer factory, NumPy reference)
OPTIMIZERS = [
    ("sgd", lambda: tf.train.GradientDescentOptimizer(0.1), SGD(0.1)),
    ("momentum", lambda: tf.train.MomentumOptimizer(0.1, 0.9), Momentum(0.1, 0.9)),
    ("nesterov", lambda: tf.train.MomentumOptimizer(0.05, 0.8, use_nesterov=True),
     Momentum(0.05, 0.8, nesterov=True)),
    ("adam", lambda: tf.train.AdamOptimizer(0.01), Adam(0.01)),
    ("adam_custom", lambda: tf.train.AdamOptimizer(0.2, beta1=0.5, beta2=0.7, epsilon=1e-3),
     Adam(0.2, 0.5, 0.7, 1e-3)),
    ("adagrad", lambda: tf.train.AdagradOptimizer(0.1), Adagrad(0.1)),
    ("adagrad_init", lambda: tf.train.AdagradOptimizer(0.3, initial_accumulator_value=2.0),
     Adagrad(0.3, 2.0)),
    ("adadelta", lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
     Adadelta(1.0, 0.9, 1e-6)),
    ("rmsprop", lambda: tf.train.RMSPropOptimizer(0.01), RMSProp(0.01)),
    ("rmsprop_momentum", lambda: tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5,
                                                           epsilon=1e-6),
     RMSProp(0.01, 0.8, 0.5, 1e-6)),
    ("rmsprop_centered", lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, epsilon=1e-3,
                                                           centered=True),
     RMSProp(0.01, 0.9, 0.5, 1e-3, centered=True)),
    ("ftrl", lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                            l2_regularization_strength=0.02),
     Ftrl(0.1, l1=0.01, l2=0.02)),
    ("ftrl_power_beta", lambda: tf.train.FtrlOptimizer(0.2, learning_rate_power=-0.7,
                                                       initial_accumulator_value=0.5,
                                                       beta=0.1),
     Ftrl(0.2, power=-0.7, init=0.5, beta=0.1)),
    ("ftrl_shrinkage", lambda: tf.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.001, l2_shrinkage_regularization_strength=0.3),
     Ftrl(0.1, l1=0.001, shrinkage=0.3)),
    ("proximal", lambda: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.2),
     ProximalGD(0.1, 0.05, 0.2)),
    ("proximal_l2", lambda: tf.train.ProximalGradientDescentOptimizer(
        0.1, l2_regularization_strength=0.2), ProximalGD(0.1, 0.0, 0.2)),
]
IDS = [o[0] for o in OPTIMIZERS]


def _grads(seed, shape, steps=STEPS):
    rng = np.random.RandomState(seed)
    return [rng.randn(*shape) for _ in range(steps)]


@pytest.mark.parametrize("name,make_opt,ref", OPTIMIZERS, ids=IDS)
def test_dense_steps_match_numpy(name, make_opt, ref):
    """A float32 matrix and a float64 vector (hyperparameters cast) over several steps."""
    gws, gbs = _grads(0, W0.shape), _grads(1, B0.shape)
    # TensorFlow's proximal optimizer does not cast its hyperparameters: float32 only.
    b_dtype = np.float32 if name.startswith("proximal") else np.float64
    with tf.Graph().as_default():
        w = tf.Variable(W0.astype(np.float32), name="w")
        b = tf.Variable(B0.astype(b_dtype), name="b")
        gw = tf.placeholder(tf.float32, W0.shape)
        gb = tf.placeholder(b_dtype, B0.shape)
        train = make_opt().apply_gradients([(gw, w), (gb, b)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for gwv, gbv in zip(gws, gbs):
                sess.run(train, {gw: gwv.astype(np.float32), gb: gbv.astype(b_dtype)})
            got_w, got_b = sess.run([w, b])
    want_w, want_b = W0.copy(), B0.copy()
    sw, sb = ref.make(W0), ref.make(B0)
    for t, (gwv, gbv) in enumerate(zip(gws, gbs)):
        want_w = ref.step(want_w, sw, gwv.astype(np.float32).astype(np.float64), t)
        want_b = ref.step(want_b, sb, gbv.astype(b_dtype).astype(np.float64), t)
    np.testing.assert_allclose(got_w, want_w, rtol=2e-5, atol=2e-6)
    # float64 variables get the float32 hyperparameter constants cast up, as in TensorFlow.
    np.testing.assert_allclose(got_b, want_b, rtol=2e-5 if b_dtype == np.float32 else 1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("name,make_opt,ref", OPTIMIZERS, ids=IDS)
def test_sparse_steps_match_numpy(name, make_opt, ref):
    """IndexedSlices gradients with a repeated index: rows of one index are summed first."""
    indices = np.array([2, 0, 2], np.int32)
    dtype = np.float32 if name.startswith("proximal") else np.float64
    values = [v.astype(dtype) for v in _grads(2, (3, 2))]
    with tf.Graph().as_default():
        w = tf.Variable(W0.astype(dtype), name="w")
        v = tf.placeholder(dtype, (3, 2))
        grad = tf.IndexedSlices(v, tf.constant(indices), tf.constant([3, 2]))
        train = make_opt().apply_gradients([(grad, w)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for val in values:
                sess.run(train, {v: val})
            got = sess.run(w)
    want, state = W0.astype(dtype).astype(np.float64), ref.make(W0)
    rows = np.array([0, 2])
    for t, val in enumerate(values):
        val = val.astype(np.float64)
        summed = np.stack([val[1], val[0] + val[2]])
        if hasattr(ref, "sparse_step"):
            want = ref.sparse_step(want, state, rows, summed, t)
            continue
        sub = {k: s[rows] for k, s in state.items()}
        want_rows = ref.step(want[rows], sub, summed, t)
        want = want.copy()
        want[rows] = want_rows
        for k in state:
            state[k][rows] = sub[k]
    # float32 hyperparameters (and, for the proximal optimizer, a float32 variable)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float64 else 2e-5, atol=1e-7)


# --- slots, names, graph structure ------------------------------------------------------------
SLOTS = [
    (lambda: tf.train.GradientDescentOptimizer(0.1), {}),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9), {"momentum": "Momentum"}),
    (lambda: tf.train.AdamOptimizer(), {"m": "Adam", "v": "Adam_1"}),
    (lambda: tf.train.AdagradOptimizer(0.1), {"accumulator": "Adagrad"}),
    (lambda: tf.train.AdadeltaOptimizer(), {"accum": "Adadelta", "accum_update": "Adadelta_1"}),
    (lambda: tf.train.RMSPropOptimizer(0.1), {"rms": "RMSProp", "momentum": "RMSProp_1"}),
    (lambda: tf.train.RMSPropOptimizer(0.1, centered=True),
     {"rms": "RMSProp", "mg": "RMSProp_1", "momentum": "RMSProp_2"}),
    (lambda: tf.train.FtrlOptimizer(0.1), {"accum": "Ftrl", "linear": "Ftrl_1"}),
    (lambda: tf.train.FtrlOptimizer(0.1, accum_name="A", linear_name="L"),
     {"accum": "A", "linear": "L"}),
    (lambda: tf.train.ProximalGradientDescentOptimizer(0.1), {}),
]


@pytest.mark.parametrize("make_opt,slots", SLOTS)
def test_slot_names_like_tensorflow(make_opt, slots):
    with tf.Graph().as_default():
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [3, 2])
        opt = make_opt()
        train = opt.apply_gradients([(tf.ones([3, 2]), w)])
        assert opt.get_slot_names() == sorted(slots)
        for slot, suffix in slots.items():
            var = opt.get_slot(w, slot)
            assert var.name == f"layer/w/{suffix}:0"
            assert var.op.get_attr("_class") == [b"loc:@layer/w"]
            assert var.shape.as_list() == [3, 2] and var.dtype.base_dtype == tf.float32
            assert var in tf.global_variables() and var not in tf.trainable_variables()
        assert opt.get_slot(w, "nonexistent") is None
        names = sorted(v.op.name for v in opt.variables())
        extra = ["beta1_power", "beta2_power"] if isinstance(opt, tf.train.AdamOptimizer) \
            else []
        assert names == sorted(extra + [f"layer/w/{s}" for s in slots.values()])
        assert train.type == "NoOp" and train.name == opt.get_name()
        assert tf.get_collection(tf.GraphKeys.TRAIN_OP) == [train]


def test_adam_graph_structure():
    """One ApplyAdam per variable reading beta powers; the powers update after every update."""
    with tf.Graph().as_default() as g:
        w = tf.Variable(np.ones((2, 3), np.float32), name="w")
        v = tf.Variable(np.ones(3, np.float32), name="a_first")
        gs = tf.train.get_or_create_global_step()
        opt = tf.train.AdamOptimizer(0.1)
        train = opt.apply_gradients([(tf.ones([2, 3]), w), (tf.ones([3]), v)], global_step=gs)
        by_type = {}
        for op in g.get_operations():
            by_type.setdefault(op.type, []).append(op.name)
        assert by_type["ApplyAdam"] == ["Adam/update_w/ApplyAdam",
                                        "Adam/update_a_first/ApplyAdam"]
        apply_w = g.get_operation_by_name("Adam/update_w/ApplyAdam")
        assert [t.name for t in apply_w.inputs[:5]] == [
            "w:0", "w/Adam:0", "w/Adam_1:0", "beta1_power/read:0", "beta2_power/read:0"]
        assert apply_w.get_attr("_class") == [b"loc:@w"]
        beta1 = [v for v in opt.variables() if v.op.name == "beta1_power"][0]
        assert beta1.op.get_attr("_class") == [b"loc:@a_first"]  # first variable by name
        mul = g.get_operation_by_name("Adam/mul")
        assert sorted(c.name for c in mul.control_inputs) == sorted(by_type["ApplyAdam"])
        update = g.get_operation_by_name("Adam/update")
        assert {c.name for c in update.control_inputs} == set(
            by_type["ApplyAdam"] + ["Adam/Assign", "Adam/Assign_1"])
        assert train.name == "Adam" and train.type == "AssignAdd"
        assert [c.name for c in g.get_operation_by_name("Adam/value").control_inputs] == \
            ["Adam/update"]


def test_adam_beta_powers_advance_each_step():
    with tf.Graph().as_default():
        w = tf.Variable(np.ones(2, np.float32), name="w")
        opt = tf.train.AdamOptimizer(0.1, beta1=0.5, beta2=0.25)
        train = opt.apply_gradients([(tf.ones([2]), w)])
        b1, b2 = opt._get_beta_accumulators()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([b1, b2]) == [0.5, 0.25]
            sess.run(train)
            sess.run(train)
            np.testing.assert_allclose(sess.run([b1, b2]), [0.125, 0.25 ** 3])


def test_second_optimizer_gets_new_slots_and_scopes():
    with tf.Graph().as_default():
        w = tf.Variable(np.ones(2, np.float32), name="w")
        with tf.variable_scope("vs"):
            with tf.name_scope("train"):
                opt1 = tf.train.AdamOptimizer()
                t1 = opt1.apply_gradients([(tf.ones([2]), w)])
                opt2 = tf.train.AdamOptimizer()
                t2 = opt2.apply_gradients([(tf.ones([2]), w)], name="foo")
        assert opt1.get_slot(w, "m").name == "vs/w/Adam:0"
        assert opt1.get_slot(w, "v").name == "vs/w/Adam_1:0"
        assert opt2.get_slot(w, "m").name == "vs/w/Adam_2:0"
        assert opt2.get_slot(w, "v").name == "vs/w/Adam_3:0"
        assert sorted(v.name for v in opt2.variables())[:2] == [
            "vs/train/beta1_power_1:0", "vs/train/beta2_power_1:0"]
        assert t1.name == "vs/train/Adam" and t2.name == "vs/train/foo"


def test_slots_ignore_enclosing_control_dependencies():
    with tf.Graph().as_default():
        w = tf.Variable(np.ones(2, np.float32), name="w")
        marker = tf.no_op(name="marker")
        with tf.control_dependencies([marker]):
            opt = tf.train.MomentumOptimizer(0.1, 0.9)
            train = opt.apply_gradients([(tf.ones([2]), w)])
        slot = opt.get_slot(w, "momentum")
        assert slot.initializer.control_inputs == []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), [0.9, 0.9])


def test_global_step_increments_after_the_updates():
    with tf.Graph().as_default() as g:
        w = tf.Variable(1.0, name="w")
        gs = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(tf.constant(1.0), w)],
                                                                      global_step=gs)
        assert train.type == "AssignAdd" and train.name == "GradientDescent"
        assert train.get_attr("_class") == [b"loc:@global_step"]
        assert [c.name for c in g.get_operation_by_name("GradientDescent/value").control_inputs
                ] == ["GradientDescent/update"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert tf.train.global_step(sess, gs) == 3
            assert sess.run(w) == pytest.approx(-0.5)


def test_float64_variable_gets_cast_hyperparameters():
    with tf.Graph().as_default() as g:
        b = tf.Variable(np.zeros(2), name="b")
        tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients([(tf.ones([2], tf.float64), b)])
        apply_op = g.get_operation_by_name("Momentum/update_b/ApplyMomentum")
        assert [t.op.type for t in apply_op.inputs[2:]] == ["Cast", "Const", "Cast"]
        assert apply_op.get_attr("T") == tf.float64


# --- learning rates and hyperparameters as tensors ---------------------------------------------
def _one_step(make_opt, feed=None, steps=1):
    with tf.Graph().as_default():
        w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
        opt, extra = make_opt()
        train = opt.apply_gradients([(tf.constant([1.0, -1.0]), w)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train, {extra: feed} if extra is not None else None)
            return sess.run(w)


def test_learning_rate_as_placeholder_tensor_callable_and_variable():
    lr = {}

    def placeholder():
        lr["ph"] = tf.placeholder(tf.float32, [])
        return tf.train.GradientDescentOptimizer(lr["ph"]), lr["ph"]

    np.testing.assert_allclose(_one_step(placeholder, 0.25), [0.75, 2.25])
    np.testing.assert_allclose(
        _one_step(lambda: (tf.train.GradientDescentOptimizer(tf.constant(0.5)), None)),
        [0.5, 2.5])
    np.testing.assert_allclose(
        _one_step(lambda: (tf.train.MomentumOptimizer(lambda: 0.5, lambda: 0.0), None)),
        [0.5, 2.5])
    np.testing.assert_allclose(
        _one_step(lambda: (tf.train.AdamOptimizer(tf.Variable(0.1, trainable=False)), None)),
        [0.9, 2.1], rtol=1e-5)


def test_decayed_learning_rate_drives_the_optimizer():
    with tf.Graph().as_default():
        w = tf.Variable(0.0, name="w")
        gs = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(1.0, gs, 1, 0.5)
        train = tf.train.GradientDescentOptimizer(lr).apply_gradients(
            [(tf.constant(1.0), w)], global_step=gs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert sess.run(w) == pytest.approx(-(1 + 0.5 + 0.25))


# --- minimize / compute_gradients ---------------------------------------------------------------
def test_minimize_on_a_quadratic_converges_and_respects_var_list():
    with tf.Graph().as_default():
        x = tf.Variable([3.0, -2.0], name="x")
        y = tf.Variable(5.0, name="y")
        loss = tf.reduce_sum(tf.square(x - 1.0)) + tf.square(y)
        opt = tf.train.GradientDescentOptimizer(0.25)
        train_x = opt.minimize(loss, var_list=[x])
        gv = opt.compute_gradients(loss)
        assert [v for _, v in gv] == [x, y]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(40):
                sess.run(train_x)
            np.testing.assert_allclose(sess.run(x), [1.0, 1.0], atol=1e-6)
            assert sess.run(y) == 5.0


@pytest.mark.parametrize("gate", [tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP,
                                  tf.train.Optimizer.GATE_GRAPH])
def test_gate_gradients_modes_give_the_same_step(gate):
    with tf.Graph().as_default():
        x = tf.Variable([1.0, 2.0], name="x")
        loss = tf.reduce_sum(tf.square(x))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, gate_gradients=gate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(x), [0.8, 1.6], rtol=1e-6)


def test_grad_loss_scales_the_gradient():
    with tf.Graph().as_default():
        x = tf.Variable(1.0, name="x")
        loss = 3.0 * x
        (g, v), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(
            loss, grad_loss=tf.constant(2.0))
        with tf.Session() as sess:
            sess.run(x.initializer)
            assert sess.run(g) == 6.0


def test_constraint_runs_after_the_update():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, -1.0], name="w", constraint=lambda t: tf.maximum(t, 0.0))
        train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(
            [(tf.constant([0.5, 0.5]), w)])
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), [0.5, 0.0])


# --- errors -------------------------------------------------------------------------------------
def test_no_gradients_messages_match_tensorflow():
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        tf.Variable(2.0, name="b")
        opt = tf.train.GradientDescentOptimizer(0.1)
        loss = tf.constant(1.0, name="c") * 2.0
        with pytest.raises(ValueError) as info:
            opt.minimize(loss)
        assert str(info.value) == (
            "No gradients provided for any variable, check your graph for ops that do not "
            "support gradients, between variables [\"<tf.Variable 'w:0' shape=() "
            "dtype=float32_ref>\", \"<tf.Variable 'b:0' shape=() dtype=float32_ref>\"] and "
            f"loss {loss}.")
        with pytest.raises(ValueError) as info:
            opt.apply_gradients([(None, w)])
        assert str(info.value) == ("No gradients provided for any variable: "
                                   "[\"<tf.Variable 'w:0' shape=() dtype=float32_ref>\"].")
        with pytest.raises(ValueError, match="^No variables provided.$"):
            opt.apply_gradients([])


def test_other_errors():
    with tf.Graph().as_default():
        opt = tf.train.GradientDescentOptimizer(0.1)
        with pytest.raises(ValueError, match="No variables to optimize."):
            opt.compute_gradients(tf.constant(1.0))
        w = tf.Variable(1.0, name="w")
        with pytest.raises(ValueError, match="gate_gradients must be one of"):
            opt.compute_gradients(w * 2.0, gate_gradients=7)
        with pytest.raises(ValueError, match=r"Invalid type tf.int32 for c:0, expected: "
                                             r"\[tf.float16, tf.bfloat16, tf.float32, "
                                             r"tf.float64\]."):
            opt.compute_gradients(tf.constant(1, name="c"))
        with pytest.raises(TypeError, match="Gradient must be convertible"):
            opt.apply_gradients([(object(), w)])
        with pytest.raises(NotImplementedError):
            opt.apply_gradients([(tf.constant(1.0), tf.constant(2.0))])
        with pytest.raises(ValueError, match="Must specify the optimizer name"):
            tf.train.GradientDescentOptimizer(0.1, name="")
        with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
            tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
        with pytest.raises(ValueError, match="learning_rate_power 0.500000 needs to be"):
            tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
        b = tf.Variable(np.zeros(2), name="b")
        with pytest.raises(TypeError, match="alpha"):  # TF does not cast these either
            tf.train.ProximalGradientDescentOptimizer(0.1).apply_gradients(
                [(tf.ones([2], tf.float64), b)])


@pytest.mark.parametrize("own_scope, expected", [
    # The variable names TensorFlow 2.21 gives the same program.
    (False, ["beta1_power", "beta2_power", "outer/vs/beta1_power", "outer/vs/beta2_power"]),
    (True, ["Adam/beta1_power", "Adam/beta2_power", "Adam_1/beta1_power",
            "Adam_1/beta2_power"]),
])
def test_adam_non_slot_variables_in_their_own_scope(own_scope, expected):
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            w = tf.Variable(1.0, name="w")
            opt = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=own_scope)
            with tf.variable_scope("vs"):
                step = opt.minimize(w * w, name="step")
        other = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=own_scope)
        step2 = other.apply_gradients([(tf.constant(1.0), w)], skip_gradients_aggregation=True)
        names = sorted(v.op.name for v in tf.global_variables())
        assert [n for n in names if "power" in n] == expected
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([step, step2])
            assert sess.run(w) == pytest.approx(0.8)
