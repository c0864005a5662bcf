"""tf.train.ProximalAdagradOptimizer and tf.train.AdagradDAOptimizer: several steps of dense and
sparse (IndexedSlices, with a repeated index) updates against values recorded from TensorFlow
2.21 running the same program (`_trajectory` under /work/shared/programs/run_with_tf.py), in
float64 and float32; slot names, graph names, the global step and construction errors as
TensorFlow's. (The ops themselves: tests/ops/test_training_proximal_ops.py.)"""
import numpy as np
import pytest

import tensorweave as tf


def _gradient(step, shape):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * (step + 1.3)) * 2).reshape(shape)


SPARSE_ROWS = [[2, 0], [1, 1, 0], [0]]   # one step's rows repeat: the optimizer sums them


def _trajectory(make_opt, dtype, sparse, shape, steps=3):
    """Three steps of `make_opt(as_tensor, global_step)` on variable `w`; the final values of
    w and of its slots (flattened), in tf.global_variables() order."""
    with tf.Graph().as_default():
        init = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape) + 0.1
        w = tf.Variable(init.astype(dtype), name="w")
        global_step = tf.train.get_or_create_global_step()
        opt = make_opt(lambda v: tf.constant(v, tf.as_dtype(dtype)), global_step)
        if sparse:
            values = tf.placeholder(dtype)
            rows = tf.placeholder(tf.int32)
            grad = tf.IndexedSlices(values, rows, tf.constant(shape))
        else:
            grad = tf.placeholder(dtype, shape)
        train = opt.apply_gradients([(grad, w)], global_step=global_step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                if sparse:
                    picked = SPARSE_ROWS[step]
                    g = _gradient(step, (len(picked),) + tuple(shape[1:])).astype(dtype)
                    sess.run(train, {values: g, rows: picked})
                else:
                    sess.run(train, {grad: _gradient(step, shape).astype(dtype)})
            return [np.asarray(sess.run(v)).ravel() for v in tf.global_variables()
                    if v.name != "global_step:0"]


# Hyperparameters of float64 runs must be float64 tensors for ProximalAdagrad (TensorFlow does
# not cast them); AdagradDA casts them itself.
OPTIMIZERS = {
    "pa": lambda c, gs: tf.train.ProximalAdagradOptimizer(
        c(0.3), l1_regularization_strength=c(0.05), l2_regularization_strength=c(0.1)),
    "pa_no_l1": lambda c, gs: tf.train.ProximalAdagradOptimizer(
        c(0.3), initial_accumulator_value=0.5, l1_regularization_strength=c(0.0),
        l2_regularization_strength=c(0.1)),
    "da": lambda c, gs: tf.train.AdagradDAOptimizer(
        0.3, gs, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
    "da_no_l1": lambda c, gs: tf.train.AdagradDAOptimizer(
        0.3, gs, initial_gradient_squared_accumulator_value=0.5, l2_regularization_strength=0.1),
}

# (optimizer, sparse, variable shape, dtype) -> [w, slots...] after three steps, from TF 2.21.
EXPECTED = {
    ('pa', False, (3, 2), 'float64'): [
        [-0.5667001473297499, -0.8859364869597651, -0.16250787388834315, 0.48522881969905307,
         0.6979727021013638, 1.2096576845302518],
        [0.1, 6.137617376690945, 5.500885984926672, 4.167815779347728, 4.822892357355977,
         5.377325972212521],
    ],
    ('pa', False, (3, 2), 'float32'): [
        [-0.5667002201080322, -0.8859363198280334, -0.16250786185264587, 0.48522886633872986,
         0.6979724764823914, 1.2096576690673828],
        [0.10000000149011612, 6.137617111206055, 5.5008864402771, 4.167815685272217,
         4.822892665863037, 5.377326011657715],
    ],
    ('pa', True, (3, 2), 'float64'): [
        [-1.1688505386321402, 0.06772450299748924, 0.1860455002082315, 0.0, 0.5960222040705735,
         0.7842310665535966],
        [1.361686312629709, 5.157290015624438, 4.049687242808327, 7.113439675848445, 0.1,
         3.8137775067378947],
    ],
    ('pa', True, (3, 2), 'float32'): [
        [-1.1688501834869385, 0.06772452592849731, 0.18604552745819092, 0.0, 0.5960222482681274,
         0.7842310070991516],
        [1.3616863489151, 5.157289981842041, 4.049687385559082, 7.113439559936523,
         0.10000000149011612, 3.813777446746826],
    ],
    ('pa', True, (4,), 'float64'): [
        [-0.9255371340807428, -0.5069935107079735, 0.3524617142771126, 1.1],
        [7.7634647495462215, 2.3243050538701095, 0.1, 0.1],
    ],
    ('pa', True, (4,), 'float32'): [
        [-0.925537109375, -0.5069935321807861, 0.35246172547340393, 1.100000023841858],
        [7.76346492767334, 2.3243048191070557, 0.10000000149011612, 0.10000000149011612],
    ],
    ('pa_no_l1', False, (3, 2), 'float64'): [
        [-0.7945226749868324, -0.8882153638425343, -0.15923472979597533, 0.4921165623143008,
         0.7165440910827824, 1.3253652003141176],
        [0.5, 6.537617376690945, 5.9008859849266715, 4.567815779347727, 5.222892357355977,
         5.777325972212521],
    ],
    ('pa_no_l1', False, (3, 2), 'float32'): [
        [-0.794522762298584, -0.8882154226303101, -0.15923471748828888, 0.49211663007736206,
         0.7165440917015076, 1.3253653049468994],
        [0.5, 6.5376176834106445, 5.900886535644531, 4.567815780639648, 5.222892761230469,
         5.777325630187988],
    ],
    ('pa_no_l1', True, (3, 2), 'float64'): [
        [-1.1678820530543743, 0.03583226817194712, 0.18008166295647624, 0.010044022032005042,
         0.6715102336106643, 0.8065729095693825],
        [1.7616863126297089, 5.557290015624438, 4.449687242808327, 7.513439675848446, 0.5,
         4.213777506737895],
    ],
    ('pa_no_l1', True, (3, 2), 'float32'): [
        [-1.167881965637207, 0.035832300782203674, 0.18008165061473846, 0.010044021531939507,
         0.6715102791786194, 0.8065729141235352],
        [1.7616863250732422, 5.557290077209473, 4.449687480926514, 7.513439655303955, 0.5,
         4.213777542114258],
    ],
    ('pa_no_l1', True, (4,), 'float64'): [
        [-0.9361836179449264, -0.49540464387818667, 0.41569681128279207, 1.1],
        [8.163464749546222, 2.7243050538701095, 0.5, 0.5],
    ],
    ('pa_no_l1', True, (4,), 'float32'): [
        [-0.9361836910247803, -0.4954046308994293, 0.41569679975509644, 1.100000023841858],
        [8.16346549987793, 2.7243049144744873, 0.5, 0.5],
    ],
    ('da', False, (3, 2), 'float64'): [
        [-0.0, -0.34505851445725255, 0.022579057004011718, 0.13845377057151914, 0.0,
         0.32308046926190986],
        [0.0, 3.10303540690133, -0.3332965365972448, -1.1337245771421889, -0.136982453825365,
         -2.744235057939472],
        [0.1, 6.137617376690945, 5.500885984926672, 4.167815779347728, 4.822892357355977,
         5.377325972212521],
    ],
    ('da', False, (3, 2), 'float32'): [
        [-0.0, -0.34505850076675415, 0.022579064592719078, 0.13845375180244446, 0.0,
         0.323080450296402],
        [0.0, 3.1030352115631104, -0.33329659700393677, -1.1337244510650635, -0.13698256015777588,
         -2.744235038757324],
        [0.10000000149011612, 6.137617111206055, 5.5008864402771, 4.167815685272217,
         4.822892665863037, 5.377326011657715],
    ],
    ('da', True, (3, 2), 'float64'): [
        [-0.31667644131144745, 0.418294094996285, 0.27321904014683784, -0.28032932696847185, -0.0,
         -0.28399712899771173],
        [1.4767825718434235, -3.4419280560313017, -1.9873820072669288, 2.648289953129839, 0.0,
         1.927116370834386],
        [1.361686312629709, 5.157290015624438, 4.049687242808327, 7.113439675848445, 0.1,
         3.8137775067378947],
    ],
    ('da', True, (3, 2), 'float32'): [
        [-0.31667643785476685, 0.41829413175582886, 0.2732190489768982, -0.2803293466567993, -0.0,
         -0.28399714827537537],
        [1.4767825603485107, -3.4419281482696533, -1.9873820543289185, 2.648289918899536, 0.0,
         1.9271163940429688],
        [1.3616863489151, 5.157289981842041, 4.049687385559082, 7.113439559936523,
         0.10000000149011612, 3.813777446746826],
    ],
    ('da', True, (4,), 'float64'): [
        [0.0, -0.26343038695712423, 0.0, 1.1],
        [-0.0602656364325429, 1.4914104243534405, 0.0, 0.0],
        [7.7634647495462215, 2.3243050538701095, 0.1, 0.1],
    ],
    ('da', True, (4,), 'float32'): [
        [0.0, -0.2634303867816925, 0.0, 1.100000023841858],
        [-0.06026566028594971, 1.4914103746414185, 0.0, 0.0],
        [7.76346492767334, 2.3243048191070557, 0.10000000149011612, 0.10000000149011612],
    ],
    ('da_no_l1', False, (3, 2), 'float64'): [
        [-0.0, -0.35170158540769786, 0.039691171595625706, 0.15270767274295208,
         0.01730038997014829, 0.33015250290256065],
        [0.0, 3.10303540690133, -0.3332965365972448, -1.1337245771421889, -0.136982453825365,
         -2.744235057939472],
        [0.5, 6.537617376690945, 5.9008859849266715, 4.567815779347727, 5.222892357355977,
         5.777325972212521],
    ],
    ('da_no_l1', False, (3, 2), 'float32'): [
        [-0.0, -0.351701557636261, 0.03969117999076843, 0.15270765125751495, 0.017300402745604515,
         0.3301525115966797],
        [0.0, 3.1030352115631104, -0.33329659700393677, -1.1337244510650635, -0.13698256015777588,
         -2.744235038757324],
        [0.5, 6.5376176834106445, 5.900886535644531, 4.567815780639648, 5.222892761230469,
         5.777325630187988],
    ],
    ('da_no_l1', True, (3, 2), 'float64'): [
        [-0.3125939303240392, 0.4219099696747549, 0.2748257032487435, -0.2836374362704931, -0.0,
         -0.27758265543180266],
        [1.4767825718434235, -3.4419280560313017, -1.9873820072669288, 2.648289953129839, 0.0,
         1.927116370834386],
        [1.7616863126297089, 5.557290015624438, 4.449687242808327, 7.513439675848446, 0.5,
         4.213777506737895],
    ],
    ('da_no_l1', True, (3, 2), 'float32'): [
        [-0.312593936920166, 0.42191004753112793, 0.27482572197914124, -0.2836374342441559, -0.0,
         -0.27758267521858215],
        [1.4767825603485107, -3.4419281482696533, -1.9873820543289185, 2.648289918899536, 0.0,
         1.9271163940429688],
        [1.7616863250732422, 5.557290077209473, 4.449687480926514, 7.513439655303955, 0.5,
         4.213777542114258],
    ],
    ('da_no_l1', True, (4,), 'float64'): [
        [0.006134577922747883, -0.2615673065931595, -0.0, 1.1],
        [-0.0602656364325429, 1.4914104243534405, 0.0, 0.0],
        [8.163464749546222, 2.7243050538701095, 0.5, 0.5],
    ],
    ('da_no_l1', True, (4,), 'float32'): [
        [0.006134580355137587, -0.26156729459762573, -0.0, 1.100000023841858],
        [-0.06026566028594971, 1.4914103746414185, 0.0, 0.0],
        [8.163464546203613, 2.7243049144744873, 0.5, 0.5],
    ],
}


@pytest.mark.parametrize("key", list(EXPECTED), ids=lambda k: "-".join(map(str, k)))
def test_steps_match_tensorflow(key):
    name, sparse, shape, dtype = key
    got = _trajectory(OPTIMIZERS[name], np.dtype(dtype).type, sparse, shape)
    want = EXPECTED[key]
    assert len(got) == len(want)
    tol = dict(rtol=1e-13, atol=1e-15) if dtype == "float64" else dict(rtol=1e-6, atol=1e-7)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **tol)


def test_slots_and_graph_names_as_tensorflow():
    with tf.Graph().as_default() as graph:
        v = tf.Variable(np.ones((2, 3), np.float32), name="v")
        global_step = tf.train.get_or_create_global_step()
        pa = tf.train.ProximalAdagradOptimizer(0.1)
        pa.minimize(tf.reduce_sum(v * v))
        da = tf.train.AdagradDAOptimizer(0.1, global_step)
        da.minimize(tf.reduce_sum(v * v), global_step=global_step)
        assert pa.get_slot_names() == ["accumulator"]
        assert pa.get_slot(v, "accumulator").name == "v/ProximalAdagrad:0"
        assert da.get_slot_names() == ["gradient_accumulator", "gradient_squared_accumulator"]
        assert [s.name for s in da.variables()] == ["v/AdagradDA:0", "v/AdagradDA_1:0"]
        update = graph.get_operation_by_name("ProximalAdagrad/update_v/ApplyProximalAdagrad")
        assert [t.op.name for t in update.inputs[1:5]] == [
            "v/ProximalAdagrad", "ProximalAdagrad/learning_rate",
            "ProximalAdagrad/l1_regularization_strength",
            "ProximalAdagrad/l2_regularization_strength"]
        update = graph.get_operation_by_name("AdagradDA/update_v/ApplyAdagradDA")
        assert [t.op.name for t in update.inputs[1:3]] + [t.op.name for t in update.inputs[4:]] \
            == ["v/AdagradDA", "v/AdagradDA_1", "AdagradDA/learning_rate",
                "AdagradDA/update_v/Cast/x", "AdagradDA/update_v/Cast_1/x",
                "AdagradDA/update_v/Identity"]
        step = graph.get_operation_by_name("AdagradDA/update_v/Identity").inputs[0].op
        assert step.name == "AdagradDA/add" and step.inputs[0].op.name == "AdagradDA/Identity"


def test_adagrad_da_uses_the_step_plus_one_and_does_not_advance_it():
    """Without `global_step` in apply_gradients the step stays 0: every update uses T = 1, so
    two steps of gradient 1 give var = -lr * 2 / sqrt(0.1 + 2) (no regularization)."""
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(2), name="v")
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.AdagradDAOptimizer(0.5, global_step).apply_gradients(
            [(tf.ones([2], tf.float64), v)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            sess.run(train)
            assert sess.run(global_step) == 0
            np.testing.assert_allclose(sess.run(v), -0.5 * 2 / np.sqrt(2.1), rtol=1e-15)


@pytest.mark.parametrize("make,message", [
    (lambda: tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0),
     "initial_accumulator_value must be positive: 0.0"),
    (lambda: tf.train.AdagradDAOptimizer(0.1, None,
                                         initial_gradient_squared_accumulator_value=-1.0),
     "initial_gradient_squared_accumulator_value must be positive: -1.0"),
])
def test_non_positive_initial_values_are_value_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_proximal_adagrad_does_not_cast_hyperparameters():
    """As TensorFlow: Python-float hyperparameters with a float64 variable are a TypeError."""
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3), name="v")
        with pytest.raises(TypeError, match="Input 'lr' of 'ApplyProximalAdagrad' Op has type "
                                            "float32 that does not match type float64"):
            tf.train.ProximalAdagradOptimizer(0.1).apply_gradients(
                [(tf.ones([3], tf.float64), v)])
