"""tf.nn.rnn_cell and tf.nn.static_rnn: each cell's step against NumPy with the same weights,
variable names and shapes against TensorFlow's, gradients against central differences,
sequence_length semantics, wrappers, a small training run and checkpoint names."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import nest

rc = tf.nn.rnn_cell


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# --- NumPy references: one step, weights read back by their TF names -------------------------
def _np_basic_rnn(x, h, w):
    out = np.tanh(np.concatenate([x, h], 1) @ w["kernel"] + w["bias"])
    return out, out


def _np_lstm(x, state, w, forget_bias=1.0, peepholes=False, cell_clip=None, proj=False,
             proj_clip=None, activation=np.tanh):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w["kernel"] + w["bias"], 4, 1)
    if peepholes:
        f = f + w["w_f_diag"] * c
        i = i + w["w_i_diag"] * c
    new_c = _sigmoid(f + forget_bias) * c + _sigmoid(i) * activation(j)
    if cell_clip is not None:
        new_c = np.clip(new_c, -cell_clip, cell_clip)
    if peepholes:
        o = o + w["w_o_diag"] * new_c
    m = _sigmoid(o) * activation(new_c)
    if proj:
        m = m @ w["projection/kernel"]
        if proj_clip is not None:
            m = np.clip(m, -proj_clip, proj_clip)
    return m, rc.LSTMStateTuple(new_c, m)


def _np_gru(x, h, w):
    gates = _sigmoid(np.concatenate([x, h], 1) @ w["gates/kernel"] + w["gates/bias"])
    r, u = np.split(gates, 2, 1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ w["candidate/kernel"] + w["candidate/bias"])
    new_h = u * h + (1 - u) * c
    return new_h, new_h


# (id, cell factory, NumPy step, [(variable suffix, TF's shape)] for 3 input features)
CELLS = [
    ("basic_rnn", lambda: rc.BasicRNNCell(4), _np_basic_rnn,
     [("basic_rnn_cell/kernel", [7, 4]), ("basic_rnn_cell/bias", [4])]),
    ("basic_lstm", lambda: rc.BasicLSTMCell(4, forget_bias=0.5),
     lambda x, s, w: _np_lstm(x, s, w, forget_bias=0.5),
     [("basic_lstm_cell/kernel", [7, 16]), ("basic_lstm_cell/bias", [16])]),
    ("basic_lstm_relu", lambda: rc.BasicLSTMCell(4, activation=tf.nn.relu),
     lambda x, s, w: _np_lstm(x, s, w, activation=lambda z: np.maximum(z, 0)),
     [("basic_lstm_cell/kernel", [7, 16]), ("basic_lstm_cell/bias", [16])]),
    ("lstm", lambda: rc.LSTMCell(4), _np_lstm,
     [("lstm_cell/kernel", [7, 16]), ("lstm_cell/bias", [16])]),
    ("lstm_peepholes", lambda: rc.LSTMCell(4, use_peepholes=True, forget_bias=0.0),
     lambda x, s, w: _np_lstm(x, s, w, 0.0, True),
     [("lstm_cell/kernel", [7, 16]), ("lstm_cell/bias", [16]), ("lstm_cell/w_f_diag", [4]),
      ("lstm_cell/w_i_diag", [4]), ("lstm_cell/w_o_diag", [4])]),
    ("lstm_full", lambda: rc.LSTMCell(4, use_peepholes=True, cell_clip=0.3, num_proj=2,
                                      proj_clip=0.2, forget_bias=0.0),
     lambda x, s, w: _np_lstm(x, s, w, 0.0, True, 0.3, True, 0.2),
     [("lstm_cell/kernel", [5, 16]), ("lstm_cell/bias", [16]), ("lstm_cell/w_f_diag", [4]),
      ("lstm_cell/w_i_diag", [4]), ("lstm_cell/w_o_diag", [4]),
      ("lstm_cell/projection/kernel", [4, 2])]),
    ("gru", lambda: rc.GRUCell(4), _np_gru,
     [("gru_cell/gates/kernel", [7, 8]), ("gru_cell/gates/bias", [8]),
      ("gru_cell/candidate/kernel", [7, 4]), ("gru_cell/candidate/bias", [4])]),
]


def _randomize(sess, rng, cell):
    """Loads random values into the cell's variables; returns {name in the cell: value}."""
    values = {}
    for v in cell.variables:
        value = rng.uniform(-1, 1, v.shape.as_list()).astype(np.float32)
        v.load(value, sess)
        values[v.op.name[len(cell.scope_name) + 1:]] = value.astype(np.float64)
    return values


def _state_like(rng, state_size, batch):
    return nest.map_structure(lambda n: rng.uniform(-1, 1, (batch, n)).astype(np.float32),
                              state_size)


@pytest.mark.parametrize("name,make,reference,expected_vars", CELLS, ids=[c[0] for c in CELLS])
def test_cell_step_matches_numpy(name, make, reference, expected_vars):
    rng = np.random.RandomState(1)
    with tf.Graph().as_default() as g:
        cell = make()
        x = tf.placeholder(tf.float32, [None, 3])
        state = nest.map_structure(lambda n: tf.placeholder(tf.float32, [None, n]),
                                   cell.state_size)
        with tf.variable_scope("cell"):
            output, new_state = cell(x, state)
        assert type(new_state) is type(state)
        assert output.shape.as_list() == [None, cell.output_size]
        got = [(v.op.name, v.shape.as_list()) for v in g.get_collection("variables")]
        assert sorted(got) == sorted(("cell/" + n, s) for n, s in expected_vars)
        assert [v.op.name for v in cell.trainable_variables] == [n for n, _ in got]
        with tf.Session() as sess:
            weights = _randomize(sess, rng, cell)
            xv = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
            sv = _state_like(rng, cell.state_size, 5)
            feed = {x: xv}
            feed.update(zip(nest.flatten(state), nest.flatten(sv)))
            out, st = sess.run([output, new_state], feed)
    sv64 = nest.map_structure(lambda s: s.astype(np.float64), sv)
    ref_out, ref_state = reference(xv.astype(np.float64), sv64, weights)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-6)
    for got_part, want_part in zip(nest.flatten(st), nest.flatten(ref_state)):
        np.testing.assert_allclose(got_part, want_part, rtol=1e-5, atol=1e-6)


# --- the fused step: one LSTMBlockCell op where it computes the same thing -------------------
FUSED = [
    ("basic_lstm", lambda act: rc.BasicLSTMCell(4, forget_bias=0.5, activation=act), True),
    ("basic_lstm_concat_state",
     lambda act: rc.BasicLSTMCell(4, state_is_tuple=False, activation=act), True),
    ("lstm", lambda act: rc.LSTMCell(4, activation=act), True),
    ("lstm_peepholes", lambda act: rc.LSTMCell(4, use_peepholes=True, activation=act), True),
    ("lstm_clip", lambda act: rc.LSTMCell(4, cell_clip=0.5, activation=act), False),
    ("lstm_proj", lambda act: rc.LSTMCell(4, num_proj=3, activation=act), False),
]


@pytest.mark.parametrize("make,fused", [f[1:] for f in FUSED], ids=[f[0] for f in FUSED])
def test_lstm_cells_use_the_fused_op_with_the_unfused_results(make, fused):
    """Fusable configurations build one LSTMBlockCell per step whose state, output and
    variables are the op-by-op formula's (forced by an activation that is not `tanh` itself
    but computes it) bit for bit; gradients agree to float32 rounding."""
    rng = np.random.RandomState(2)
    xv = rng.uniform(-1, 1, (3, 5, 3)).astype(np.float32)
    results = []
    for act in (None, lambda z: tf.tanh(z)):
        with tf.Graph().as_default() as g:
            tf.set_random_seed(3)
            x = tf.constant(xv)
            cell = make(act)
            outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
            grads = tf.gradients(tf.reduce_sum(outputs * outputs), cell.trainable_variables)
            types = {op.type for op in g.get_operations()}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                results.append(([v.op.name for v in cell.variables], types,
                                sess.run([outputs, nest.flatten(state), grads])))
    (names, types, (out, state, grads)), (names_u, types_u, (out_u, state_u, grads_u)) = results
    assert ("LSTMBlockCell" in types) == fused and "LSTMBlockCell" not in types_u
    assert names == names_u
    np.testing.assert_array_equal(out, out_u)
    for a, b in zip(state, state_u):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(grads, grads_u):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# --- names: what TensorFlow 2.21 (compat.v1, tf_keras) creates for the same programs ----------
def _inputs(steps=2, dtype=tf.float32):
    return [tf.placeholder(dtype, [None, 3]) for _ in range(steps)]


_M = "rnn/multi_rnn_cell/cell_"
_GRU = ["gru_cell/candidate/bias", "gru_cell/candidate/kernel", "gru_cell/gates/bias",
        "gru_cell/gates/kernel"]
NAME_CASES = [
    ("basic_lstm", lambda: tf.nn.static_rnn(rc.BasicLSTMCell(4), _inputs(), dtype=tf.float32),
     [("rnn/basic_lstm_cell/bias", [16]), ("rnn/basic_lstm_cell/kernel", [7, 16])]),
    ("scope", lambda: tf.nn.static_rnn(rc.LSTMCell(4), _inputs(), dtype=tf.float32,
                                       scope="enc"),
     [("enc/lstm_cell/bias", [16]), ("enc/lstm_cell/kernel", [7, 16])]),
    ("multi", lambda: tf.nn.static_rnn(rc.MultiRNNCell([rc.GRUCell(4), rc.BasicLSTMCell(2)]),
                                       _inputs(), dtype=tf.float32),
     [(_M + "0/" + n, s) for n, s in zip(_GRU, [[4], [7, 4], [8], [7, 8]])]
     + [(_M + "1/basic_lstm_cell/bias", [8]), (_M + "1/basic_lstm_cell/kernel", [6, 8])]),
    ("wrappers", lambda: tf.nn.static_rnn(rc.MultiRNNCell([
        rc.DropoutWrapper(rc.GRUCell(3), output_keep_prob=0.5), rc.ResidualWrapper(rc.GRUCell(3)),
        rc.DeviceWrapper(rc.LSTMCell(3), "/cpu:0")]), _inputs(), dtype=tf.float32),
     [(_M + f"{i}/" + n, s) for i in (0, 1) for n, s in zip(_GRU, [[3], [6, 3], [6], [6, 6]])]
     + [(_M + "2/lstm_cell/bias", [12]), (_M + "2/lstm_cell/kernel", [6, 12])]),
    ("bidirectional", lambda: tf.nn.static_bidirectional_rnn(
        rc.LSTMCell(4), rc.LSTMCell(4), _inputs(), dtype=tf.float32, sequence_length=[1, 2]),
     [(f"bidirectional_rnn/{d}/lstm_cell/{n}", s) for d in ("bw", "fw")
      for n, s in (("bias", [16]), ("kernel", [7, 16]))]),
]


def _built(build):
    g = tf.Graph()
    with g.as_default():
        build()
    return g


@pytest.mark.parametrize("build,expected", [c[1:] for c in NAME_CASES],
                         ids=[c[0] for c in NAME_CASES])
def test_variable_names_and_shapes_match_tensorflow(build, expected):
    g = _built(build)
    with g.as_default():
        got = sorted((v.op.name, v.shape.as_list()) for v in tf.global_variables())
    assert got == expected


def test_checkpoint_holds_tensorflows_names(tmp_path):
    """A checkpoint of a stacked static RNN lists exactly the names TF would save."""
    build, expected = NAME_CASES[2][1:]
    with _built(build).as_default():
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(tmp_path, "model"))
    assert sorted(tf.train.list_variables(path)) == expected


def test_cells_share_variables_across_calls_and_name_uniquely():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        first, second = rc.LSTMCell(4), rc.LSTMCell(4)
        state = first.zero_state(2, tf.float32)
        first(x, state)
        first(x, state)
        second(x, state)
        rc.GRUCell(4, name="mygru")(x, tf.zeros([2, 4]))
        rc.GRUCell(4)(x, tf.zeros([2, 4]), scope="sc")
        names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["lstm_cell/bias", "lstm_cell/kernel", "lstm_cell_1/bias",
                     "lstm_cell_1/kernel", "mygru/candidate/bias", "mygru/candidate/kernel",
                     "mygru/gates/bias", "mygru/gates/kernel", "sc/candidate/bias",
                     "sc/candidate/kernel", "sc/gates/bias", "sc/gates/kernel"]


def test_gru_gate_bias_starts_at_one_and_lstm_bias_at_zero():
    with tf.Graph().as_default():
        gru, lstm = rc.GRUCell(2), rc.LSTMCell(2)
        gru(tf.zeros([1, 2]), tf.zeros([1, 2]))
        lstm(tf.zeros([1, 2]), lstm.zero_state(1, tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            gate_bias, cand_bias, lstm_bias = sess.run([gru.variables[1], gru.variables[3],
                                                        lstm.variables[1]])
    assert np.all(gate_bias == 1.0) and np.all(cand_bias == 0.0) and np.all(lstm_bias == 0.0)


# --- zero_state, non-tuple states ---------------------------------------------------------
def test_zero_state_shapes_and_dtypes():
    with tf.Graph().as_default():
        batch = tf.placeholder(tf.int32, [])
        multi = rc.MultiRNNCell([rc.GRUCell(2), rc.LSTMCell(3, num_proj=1)])
        fixed = multi.zero_state(5, tf.float64)
        fed = multi.zero_state(batch, tf.float32)
        assert fixed[0].shape.as_list() == [5, 2] and fixed[0].dtype == tf.float64
        assert isinstance(fixed[1], rc.LSTMStateTuple)
        assert [t.shape.as_list() for t in fed[1]] == [[None, 3], [None, 1]]
        assert fixed[0].op.name.startswith("MultiRNNCellZeroState/")
        assert fed[1].dtype == tf.float32
        with tf.Session() as sess:
            values = sess.run(fed, {batch: 4})
    assert values[0].shape == (4, 2) and values[1].c.shape == (4, 3)
    assert not any(np.any(v) for v in nest.flatten(values))


@pytest.mark.parametrize("make", [
    lambda tuple_: rc.BasicLSTMCell(3, state_is_tuple=tuple_),
    lambda tuple_: rc.LSTMCell(3, num_proj=2, use_peepholes=True, state_is_tuple=tuple_),
    lambda tuple_: rc.MultiRNNCell([rc.GRUCell(2), rc.BasicLSTMCell(3, state_is_tuple=tuple_)],
                                   state_is_tuple=tuple_),
], ids=["basic_lstm", "lstm_proj", "multi"])
def test_concatenated_state_equals_tuple_state(make):
    rng = np.random.RandomState(3)
    xs = [rng.uniform(-1, 1, (2, 3)).astype(np.float32) for _ in range(3)]
    results = []
    for tuple_ in (True, False):
        with tf.Graph().as_default():
            cell = make(tuple_)
            outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs],
                                              dtype=tf.float32)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for v in cell.variables:
                    v.load(np.random.RandomState(v.shape.num_elements()).uniform(
                        -1, 1, v.shape.as_list()), sess)
                out, st = sess.run([outputs, state])
        results.append((out, np.concatenate(nest.flatten(st), 1)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


# --- static_rnn / static_bidirectional_rnn against NumPy -------------------------------------
def _np_unroll(step, xs, state, lengths=None):
    """Runs `step` over the list `xs`, with TF's sequence_length rule when lengths are given."""
    outputs = []
    for t, x in enumerate(xs):
        out, new_state = step(x, state)
        if lengths is not None:
            done = (t >= lengths)[:, None]
            out = np.where(done, 0.0, out)
            new_state = nest.map_structure(lambda old, new, d=done: np.where(d, old, new),
                                           state, new_state)
        outputs.append(out)
        state = new_state
    return outputs, state


def test_static_rnn_with_sequence_length_matches_numpy():
    rng = np.random.RandomState(4)
    xs = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(5)]
    lens = np.array([5, 0, 2, 3], np.int64)
    with tf.Graph().as_default():
        inputs = _inputs(5)
        lengths = tf.placeholder(tf.int64, [None])
        cell = rc.LSTMCell(3, use_peepholes=True)
        outputs, state = tf.nn.static_rnn(cell, inputs, dtype=tf.float32,
                                          sequence_length=lengths)
        assert [o.shape.as_list() for o in outputs] == [[None, 3]] * 5
        assert state.c.shape.as_list() == [None, 3]
        with tf.variable_scope("rnn", reuse=True):
            full, full_state = tf.nn.static_rnn(cell, inputs, dtype=tf.float32)
        with tf.Session() as sess:
            weights = _randomize(sess, rng, cell)
            feed = dict(zip(inputs, xs))
            out, st = sess.run([outputs, state], {**feed, lengths: lens})
            full_out, full_st = sess.run([full, full_state], feed)
    step = lambda x, s: _np_lstm(x, s, weights, peepholes=True)  # noqa: E731
    zeros = rc.LSTMStateTuple(np.zeros((4, 3)), np.zeros((4, 3)))
    ref_out, ref_state = _np_unroll(step, [x.astype(np.float64) for x in xs], zeros, lens)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st.c, ref_state[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st.h, ref_state[1], rtol=1e-5, atol=1e-6)
    assert all(np.all(out[t][b] == 0) for b in range(4) for t in range(lens[b], 5))
    assert np.all(st.h[1] == 0) and np.all(st.c[1] == 0)  # a zero length keeps the zero state
    full_ref, full_ref_state = _np_unroll(step, [x.astype(np.float64) for x in xs], zeros)
    np.testing.assert_allclose(full_out, full_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(full_st.c, full_ref_state[0], rtol=1e-5, atol=1e-6)


def test_static_rnn_initial_state_and_dtype_inference():
    rng = np.random.RandomState(5)
    xs = [rng.uniform(-1, 1, (2, 3)) for _ in range(3)]
    h0 = rng.uniform(-1, 1, (2, 4))
    with tf.Graph().as_default():
        cell = rc.GRUCell(4)
        outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs],
                                          initial_state=tf.constant(h0),
                                          sequence_length=tf.constant([3, 1]))
        assert state.dtype == tf.float64 and outputs[0].dtype == tf.float64
        with tf.Session() as sess:
            weights = _randomize(sess, rng, cell)
            out, st = sess.run([outputs, state])
    ref_out, ref_st = _np_unroll(lambda x, h: _np_gru(x, h, weights), xs, h0, np.array([3, 1]))
    np.testing.assert_allclose(out, ref_out, rtol=1e-10)
    np.testing.assert_allclose(st, ref_st, rtol=1e-10)


def test_static_bidirectional_rnn_matches_numpy():
    rng = np.random.RandomState(6)
    xs = [rng.uniform(-1, 1, (3, 3)).astype(np.float32) for _ in range(4)]
    lens = np.array([4, 2, 1])
    with tf.Graph().as_default():
        inputs = _inputs(4)
        fw, bw = rc.GRUCell(2), rc.BasicRNNCell(3)
        outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
            fw, bw, inputs, dtype=tf.float32, sequence_length=lens)
        assert [o.shape.as_list()[1] for o in outputs] == [5] * 4
        with tf.Session() as sess:
            w_fw, w_bw = _randomize(sess, rng, fw), _randomize(sess, rng, bw)
            out, s_fw, s_bw = sess.run([outputs, state_fw, state_bw], dict(zip(inputs, xs)))
    x64 = np.stack(xs).astype(np.float64)
    ref_fw, ref_s_fw = _np_unroll(lambda x, h: _np_gru(x, h, w_fw), list(x64),
                                  np.zeros((3, 2)), lens)
    # The backward pass reads each sequence from its last valid step back to its first.
    flipped = x64.copy()
    for b, n in enumerate(lens):
        flipped[:n, b] = x64[:n, b][::-1]
    ref_bw, ref_s_bw = _np_unroll(lambda x, h: _np_basic_rnn(x, h, w_bw), list(flipped),
                                  np.zeros((3, 3)), lens)
    ref_bw = np.stack(ref_bw)
    for b, n in enumerate(lens):
        ref_bw[:n, b] = ref_bw[:n, b][::-1].copy()
    np.testing.assert_allclose(out, np.concatenate([np.stack(ref_fw), ref_bw], 2),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s_fw, ref_s_fw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s_bw, ref_s_bw, rtol=1e-5, atol=1e-6)


# --- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: rc.GRUCell(2),
    lambda: rc.LSTMCell(2, use_peepholes=True, num_proj=2, cell_clip=5.0),
    lambda: rc.LSTMCell(2, use_peepholes=True, forget_bias=0.5),
    lambda: rc.MultiRNNCell([rc.BasicLSTMCell(2), rc.ResidualWrapper(rc.BasicRNNCell(2))]),
], ids=["gru", "lstm_full", "lstm_peepholes_fused", "multi_residual"])
def test_gradients_match_central_differences(make):
    rng = np.random.RandomState(7)
    with tf.Graph().as_default():
        tf.set_random_seed(7)   # fixed initial weights: the finite-difference error is stable
        inputs = [tf.placeholder(tf.float64, [2, 2]) for _ in range(3)]
        cell = make()
        outputs, state = tf.nn.static_rnn(cell, inputs, dtype=tf.float64,
                                          sequence_length=[3, 2])
        loss = tf.reduce_sum(tf.stack(outputs) * np.arange(1.0, 13.0).reshape(3, 2, 2)) + \
            tf.add_n([tf.reduce_sum(s * s) for s in nest.flatten(state)])
        xs = [rng.uniform(-1, 1, (2, 2)) for _ in inputs]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            errors = []
            for target in [inputs[0]] + cell.variables:
                shape = target.shape.as_list()
                feed = {x: v for x, v in zip(inputs, xs) if x is not target}
                init = xs[0] if target is inputs[0] else rng.uniform(-0.5, 0.5, shape)
                with sess.as_default():
                    errors.append(tf.test.compute_gradient_error(
                        target, shape, loss, [], x_init_value=init, extra_feed_dict=feed))
    assert max(errors) < 1e-4, errors  # central differences with delta 1e-3


# --- wrappers ----------------------------------------------------------------------------------
class _Identity(rc.RNNCell):
    """output = inputs, state = state + inputs: makes wrapper effects easy to read off."""

    state_size = property(lambda self: rc.LSTMStateTuple(4, 4))
    output_size = property(lambda self: 4)

    def call(self, inputs, state):
        return inputs, rc.LSTMStateTuple(state.c + inputs, state.h + inputs)


def test_dropout_wrapper_drops_output_and_state_h_but_not_c():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        cell = rc.DropoutWrapper(_Identity(), output_keep_prob=0.5, state_keep_prob=0.25,
                                 seed=3)
        x = tf.ones([200, 4])
        out, state = cell(x, cell.zero_state(200, tf.float32))
        with tf.Session() as sess:
            out, state = sess.run([out, state])
    assert set(np.unique(out)) == {0.0, 2.0} and 0.4 < np.mean(out == 0) < 0.6
    assert set(np.unique(state.h)) == {0.0, 4.0} and 0.65 < np.mean(state.h == 0) < 0.85
    assert np.all(state.c == 1.0)


def test_dropout_wrapper_variational_mask_is_shared_over_time_and_batch():
    with tf.Graph().as_default():
        cell = rc.DropoutWrapper(rc.BasicRNNCell(50, activation=lambda z: z + 10.0),
                                 input_keep_prob=0.5, output_keep_prob=0.5,
                                 variational_recurrent=True, input_size=3, dtype=tf.float32,
                                 seed=2)
        outputs, _ = tf.nn.static_rnn(cell, [tf.ones([4, 3])] * 3, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = np.stack(sess.run(outputs))
    dropped = out == 0
    assert dropped.any() and not dropped.all()
    assert np.all(dropped == dropped[:1, :1])  # one [1, 50] mask for every step and row


def test_dropout_wrapper_fed_keep_prob():
    with tf.Graph().as_default():
        keep = tf.placeholder_with_default(1.0, [])
        cell = rc.DropoutWrapper(_Identity(), input_keep_prob=keep)
        x = tf.ones([100, 4])
        out, _ = cell(x, cell.zero_state(100, tf.float32))
        with tf.Session() as sess:
            kept = sess.run(out)
            halved = sess.run(out, {keep: 0.5})
    assert np.all(kept == 1.0)
    assert set(np.unique(halved)) == {0.0, 2.0}


def test_dropout_wrapper_keep_prob_one_adds_no_ops():
    with tf.Graph().as_default() as g:
        cell = rc.DropoutWrapper(rc.GRUCell(2))
        cell(tf.zeros([1, 2]), cell.zero_state(1, tf.float32))
        assert not [op for op in g.get_operations() if "dropout" in op.name]


def test_residual_and_device_wrappers():
    with tf.Graph().as_default():
        inner = rc.BasicRNNCell(3)
        cell = rc.DeviceWrapper(rc.ResidualWrapper(inner), "/cpu:0")
        x = tf.constant(np.arange(6.0).reshape(2, 3))
        out, state = cell(x, cell.zero_state(2, tf.float64))
        assert out.op.device == "/device:CPU:0"
        assert cell.variables == inner.variables and len(cell.trainable_variables) == 2
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, state = sess.run([out, state])
    np.testing.assert_allclose(out, state + np.arange(6.0).reshape(2, 3))
    with tf.Graph().as_default():
        bad = rc.ResidualWrapper(rc.BasicRNNCell(2))
        with pytest.raises(ValueError, match=r"Shapes \(2, 3\) and \(2, 2\) are incompatible"):
            bad(tf.zeros([2, 3]), bad.zero_state(2, tf.float32))


# --- training ----------------------------------------------------------------------------------
def test_static_rnn_lstm_learns_a_delayed_echo():
    steps, delay, units = 6, 2, 8
    rng = np.random.RandomState(11)

    def batch(n):
        x = rng.uniform(-1, 1, (steps, n, 1)).astype(np.float32)
        y = np.zeros_like(x)
        y[delay:] = x[:-delay]
        return x, y
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        inputs = [tf.placeholder(tf.float32, [None, 1]) for _ in range(steps)]
        targets = tf.placeholder(tf.float32, [steps, None, 1])
        outputs, _ = tf.nn.static_rnn(rc.LSTMCell(units), inputs, dtype=tf.float32)
        pred = tf.layers.dense(tf.stack(outputs), 1)
        loss = tf.reduce_mean(tf.square(pred - targets))
        train = tf.train.AdamOptimizer(0.03).minimize(loss)
        x_eval, y_eval = batch(128)
        eval_feed = {targets: y_eval, **dict(zip(inputs, x_eval))}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = sess.run(loss, eval_feed)
            for _ in range(150):
                x, y = batch(32)
                sess.run(train, {targets: y, **dict(zip(inputs, x))})
            end = sess.run(loss, eval_feed)
    assert start > 0.15 and end < 0.02, (start, end)  # Var(target) is about 0.22


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.nn.static_rnn(rc.LSTMCell(4), _inputs()), ValueError,
     "If no initial_state is provided, argument `dtype` must be specified"),
    (lambda: tf.nn.static_rnn(rc.LSTMCell(4), [], dtype=tf.float32), ValueError,
     "Argument `inputs` must not be empty"),
    (lambda: tf.nn.static_rnn(rc.LSTMCell(4), _inputs()[0], dtype=tf.float32), TypeError,
     "Argument `inputs` must be a sequence"),
    (lambda: tf.nn.static_rnn("cell", _inputs(), dtype=tf.float32), TypeError,
     "'output_size' property is missing, 'state_size' property is missing"),
    (lambda: tf.nn.static_rnn(rc.GRUCell(2), [tf.placeholder(tf.float32, [2, None])],
                              dtype=tf.float32), ValueError,
     r"Input size \(dimension 0 of input .*\) must be accessible via shape inference"),
    (lambda: tf.nn.static_rnn(rc.GRUCell(2), _inputs(), dtype=tf.float32,
                              sequence_length=[[1]]), ValueError,
     "sequence_length must be a vector of length batch_size"),
    (lambda: rc.MultiRNNCell([]), ValueError, "Must specify at least one cell"),
    (lambda: rc.MultiRNNCell([rc.LSTMCell(2)], state_is_tuple=False), ValueError,
     "Some cells return tuples of states, but the flag state_is_tuple is not set"),
    (lambda: rc.MultiRNNCell([rc.GRUCell(2)])(tf.zeros([2, 2]), tf.zeros([2, 2])), ValueError,
     "Expected state to be a tuple of length 1"),
    (lambda: rc.DropoutWrapper(rc.LSTMCell(2), 1.5), ValueError,
     "Parameter input_keep_prob must be between 0 and 1. Received 1.5"),
    (lambda: rc.DropoutWrapper(rc.LSTMCell(2), 0.5, variational_recurrent=True), ValueError,
     "When variational_recurrent=True, dtype must be provided"),
    (lambda: rc.DropoutWrapper(rc.LSTMCell(2), 0.5, variational_recurrent=True,
                               dtype=tf.float32), ValueError, "input_size must be provided"),
    (lambda: rc.LSTMCell(2)(tf.placeholder(tf.float32, [2, None]),
                            rc.LSTMCell(2).zero_state(2, tf.float32)), ValueError,
     r"Expected inputs.shape\[-1\] to be known"),
    (lambda: rc.LSTMCell(2, num_unit_shards=2), NotImplementedError, "num_unit_shards"),
    (lambda: rc.BasicRNNCell(2, activation="swish"), ValueError, "Unknown activation"),
    (lambda: rc.LSTMStateTuple(tf.zeros([1]), tf.zeros([1], tf.float64)).dtype, TypeError,
     "Inconsistent dtypes for internal state"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()
