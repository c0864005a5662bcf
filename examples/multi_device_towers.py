"""Data-parallel training of the digits CNN on 4 virtual CPU devices, checked against 1 device.

The classic TF1 tower recipe: variables live on the parameter device /cpu:0; each batch is
split in 4, tower k computes its loss and gradients on /cpu:k, the gradients are averaged on
/cpu:0 and applied once. Averaged tower gradients are the full batch's gradients, so the loss
curve matches single-device training of the same model from the same initial values — this
script trains both, prints both curves and asserts they agree. (The model is examples/
digits_cnn.py's without batch norm and dropout, whose per-tower statistics and randomness
would make the two runs differ by design.)
"""
import argparse
import time

import numpy as np
from digits_cnn import load_data

import tensorweave as tf

TOWERS = 4


def model(images):
    """Logits; variables are shared between towers through the `model` variable scope."""
    init = tf.glorot_uniform_initializer
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        net = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu,
                               kernel_initializer=init(seed=1), name="conv1")
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu,
                               kernel_initializer=init(seed=2), name="conv2")
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.flatten(net)
        net = tf.layers.dense(net, 128, activation=tf.nn.relu,
                              kernel_initializer=init(seed=3), name="dense1")
        return tf.layers.dense(net, 10, kernel_initializer=init(seed=4), name="logits")


def loss_of(images, labels):
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=model(images))


def on_tower(k):
    """A device function: variables on the parameter device, everything else on tower k."""
    return lambda op: "/cpu:0" if op.type in ("VariableV2", "Variable") else f"/cpu:{k}"


def build(towers: int):
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    opt = tf.train.AdamOptimizer(2e-3)
    if towers == 1:
        loss = loss_of(images, labels)
        return images, labels, loss, opt.minimize(loss)
    tower_grads, tower_losses = [], []
    for k, (x, y) in enumerate(zip(tf.split(images, towers), tf.split(labels, towers))):
        with tf.device(on_tower(k)), tf.name_scope(f"tower_{k}"):
            loss = loss_of(x, y)
            tower_losses.append(loss)
            tower_grads.append(opt.compute_gradients(loss))
    with tf.device("/cpu:0"):
        averaged = [(tf.add_n([g for g, _ in per_var]) / towers, per_var[0][1])
                    for per_var in zip(*tower_grads)]
        mean_loss = tf.add_n(tower_losses) / towers
        train = opt.apply_gradients(averaged)
    return images, labels, mean_loss, train


def train(towers: int, steps: int, batch: int) -> list[float]:
    """The loss before each of `steps` training steps with `towers` towers."""
    x_train, y_train, _, _ = load_data()
    graph = tf.Graph()
    with graph.as_default():
        images, labels, loss, train_op = build(towers)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"CPU": towers})
    losses = []
    order = np.random.RandomState(1).permutation(len(x_train))
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for step in range(steps):
            idx = order[(step * batch) % (len(order) - batch):][:batch]
            _, value = sess.run([train_op, loss], {images: x_train[idx], labels: y_train[idx]})
            losses.append(float(value))
    return losses


def main(steps: int, batch: int) -> None:
    start = time.time()
    single = train(1, steps, batch)
    t_single = time.time() - start
    towers = train(TOWERS, steps, batch)
    t_towers = time.time() - start - t_single
    print(f"{'step':>4}  {'1 device':>10}  {f'{TOWERS} towers':>10}")
    for step in range(0, steps, max(steps // 10, 1)):
        print(f"{step:4d}  {single[step]:10.5f}  {towers[step]:10.5f}")
    np.testing.assert_allclose(towers, single, rtol=2e-3, atol=1e-4)
    print(f"loss curves agree over {steps} steps: {single[0]:.4f} -> {single[-1]:.4f} "
          f"(1 device {t_single:.1f}s, {TOWERS} towers {t_towers:.1f}s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    main(args.steps, args.batch)
