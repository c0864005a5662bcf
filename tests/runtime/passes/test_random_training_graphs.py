"""Property: on random training graphs, the optimized step trains as the unoptimized one does.

test_random_graphs covers forward graphs; the passes that rewrite training steps (the remapper's
MatMul/Conv2D + bias + activation, bias-gradient, pool-gradient and elementwise fusions, the
fused SGD updates by a MatMul or by averaged tower gradients, the memory pass's in-place
writes) only meet in graphs with gradients and updates. Each example builds a random model (an
optional conv block, dense layers with random activations and bias styles, an optional
elementwise tail and an optional tf.cond taking either branch), a random loss and optimizer,
optionally two towers whose gradients are averaged and a fetched gradient, then runs three
steps with every optimization off (L0) and on, from the same seeded initial values. Losses, the
fetched gradient and every variable afterwards must agree within float32 reassociation (the
fused updates round once where the unfused pair rounds twice). Widths of 64 and more reach the
size thresholds of the elementwise-fusion and memory passes. Epsilons of Adam and RMSProp are
1e-3 so a gradient that sums to about zero, whose sign the summation order may flip, cannot
move a variable by a whole step.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorweave as tf
from tensorweave.protos import config_pb2

OFF = config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
    optimizer_options=config_pb2.OptimizerOptions(opt_level=config_pb2.OptimizerOptions.L0),
    rewrite_options={"disable_meta_optimizer": True}))
ACTIVATIONS = {"relu": tf.nn.relu, "relu6": tf.nn.relu6, "elu": tf.nn.elu, "tanh": tf.tanh,
               "sigmoid": tf.sigmoid, "none": lambda h: h}
OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.05),
    "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(1e-2, epsilon=1e-3),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(1e-2, epsilon=1e-3),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.05),
}
IMAGE, CHANNELS, CLASSES = 8, 2, 5

layers = st.lists(st.tuples(st.sampled_from([5, 64, 96]), st.sampled_from(sorted(ACTIVATIONS)),
                            st.sampled_from(["add", "bias_add"])), min_size=1, max_size=3)
rarely = st.sampled_from([False, False, True])   # each keeps a fusion from its gradients
recipes = st.fixed_dictionaries({
    "batch": st.sampled_from([4, 64]), "conv": st.booleans(), "layers": layers,
    "tail": st.sampled_from(["none", "scale_shift", "square_mean"]),
    "loss": st.sampled_from(["xent", "mse"]), "l2": rarely,
    # SGD twice as likely: two fusions are its own.
    "optimizer": st.sampled_from(["sgd", *sorted(OPTIMIZERS)]), "towers": st.sampled_from([1, 2]),
    "fetch_gradient": rarely, "clip": rarely, "cond": st.sampled_from([None, None, True, False]),
})


def _model(recipe, x, make_variable):
    """Logits of the recipe's network on images `x`; its weights come from `make_variable`."""
    h = x
    if recipe["conv"]:
        kernel = make_variable("conv_w", [3, 3, CHANNELS, 4])
        h = tf.nn.conv2d(h, kernel, [1, 1, 1, 1], "SAME") + make_variable("conv_b", [4])
        h = tf.nn.max_pool(tf.nn.relu(h), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.reshape(h, [recipe["batch"] // recipe["towers"], -1])
    for i, (width, activation, bias) in enumerate(recipe["layers"] + [(CLASSES, "none",
                                                                       "add")]):
        w = make_variable(f"w{i}", [int(h.shape[1]), width])
        b = make_variable(f"b{i}", [width])
        h = tf.matmul(h, w)
        h = h + b if bias == "add" else tf.nn.bias_add(h, b)
        h = ACTIVATIONS[activation](h)
        if recipe["cond"] is not None and i == 0:
            h = tf.cond(tf.placeholder_with_default(recipe["cond"], [], name="branch"),
                        lambda h=h: tf.nn.relu(h) * 2.0, lambda h=h: tf.tanh(h))
        if recipe["tail"] == "scale_shift" and i == 0:
            h = h * 0.5 + 0.25
        elif recipe["tail"] == "square_mean" and i == 0:
            h = tf.square(tf.tanh(h)) * 0.5 - h * 0.1
    return h


def _loss(recipe, logits, labels, weights):
    if recipe["loss"] == "xent":
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                          logits=logits))
    else:
        loss = tf.reduce_mean(tf.square(logits - labels))
    if recipe["l2"]:
        loss += 1e-3 * tf.add_n([tf.nn.l2_loss(w) for w in weights])
    return loss


def _build(recipe):
    """(loss, train op, fetched gradient or None, variables, feed)."""
    tf.set_random_seed(11)
    x = tf.placeholder(tf.float32, [recipe["batch"], IMAGE, IMAGE, CHANNELS], name="x")
    y = tf.placeholder(tf.float32, [recipe["batch"], CLASSES], name="y")
    weights = {}

    def make_variable(name, shape):
        if name not in weights:
            weights[name] = tf.Variable(tf.truncated_normal(shape, stddev=0.15, seed=len(weights)),
                                        name=name)
        return weights[name]

    towers = recipe["towers"]
    losses, tower_grads = [], []
    optimizer = OPTIMIZERS[recipe["optimizer"]]()
    for xs, ys in zip(tf.split(x, towers), tf.split(y, towers)):
        loss = _loss(recipe, _model(recipe, xs, make_variable), ys,
                     [w for n, w in weights.items() if n.startswith("w")])
        losses.append(loss)
        tower_grads.append(optimizer.compute_gradients(loss, list(weights.values())))
    grads = [tf.add_n([g for g, _ in pairs]) / float(towers) if towers > 1 else pairs[0][0]
             for pairs in zip(*tower_grads)]
    if recipe["clip"]:
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
    train = optimizer.apply_gradients(zip(grads, weights.values()))
    rng = np.random.RandomState(0)
    images = rng.uniform(-1, 1, (recipe["batch"], IMAGE, IMAGE, CHANNELS)).astype(np.float32)
    labels = np.eye(CLASSES, dtype=np.float32)[rng.randint(0, CLASSES, recipe["batch"])]
    fetched = grads[0] if recipe["fetch_gradient"] else None
    return tf.add_n(losses) / float(towers), train, fetched, list(weights.values()), \
        {x: images, y: labels}


def _train(graph, loss, train, fetched, variables, feed, config):
    """(per step: the loss and any fetched gradient), the variables' initial values, their
    values after three steps."""
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(tf.global_variables_initializer())
        initial = sess.run(variables)
        steps = []
        for _ in range(3):
            fetches = [loss, train] + ([fetched] if fetched is not None else [])
            out = sess.run(fetches, feed)
            steps.append([out[0]] + out[2:])
        return steps, initial, sess.run(variables)


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(recipe=recipes)
def test_random_training_graphs_train_alike(recipe):
    graph = tf.Graph()
    with graph.as_default():
        loss, train, fetched, variables, feed = _build(recipe)
    plain_steps, start, plain_vars = _train(graph, loss, train, fetched, variables, feed, OFF)
    steps, optimized_start, final = _train(graph, loss, train, fetched, variables, feed, None)
    for plain, optimized in zip(plain_steps, steps):
        for a, b in zip(plain, optimized):
            np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5)
    assert all(np.all(np.isfinite(value)) for value in plain_steps[-1] + plain_vars)
    for variable, initial, other_initial, a, b in zip(variables, start, optimized_start,
                                                      plain_vars, final):
        np.testing.assert_array_equal(other_initial, initial)
        # What the three updates moved each variable by, so that an error of a part in a
        # thousand in an update is seen even where the variable is a hundred steps large.
        np.testing.assert_allclose(b - initial, a - initial, rtol=2e-4, atol=2e-6,
                                   err_msg=variable.op.name)
