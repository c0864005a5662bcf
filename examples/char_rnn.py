"""A character-level LSTM language model trained on the Zen of Python (ships with Python).

Embedding → tf.nn.dynamic_rnn(LSTMCell) → softmax over the characters, trained with Adam on
windows of the text, then sampled greedily from a prompt. Plain TF1 code:
`python examples/char_rnn.py [--steps N]`.
"""
import argparse
import codecs
import contextlib
import io

import numpy as np

import tensorweave as tf

SEQ, BATCH, EMBED, UNITS = 40, 32, 16, 128


def zen_text() -> str:
    """The Zen of Python, from the `this` module (importing it prints the text: silenced)."""
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


def build(vocab_size):
    tokens = tf.placeholder(tf.int32, [None, None], name="tokens")
    targets = tf.placeholder(tf.int32, [None, None], name="targets")
    embedding = tf.get_variable("embedding", [vocab_size, EMBED])
    cell = tf.nn.rnn_cell.LSTMCell(UNITS)
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, tokens),
                                   dtype=tf.float32)
    logits = tf.layers.dense(outputs, vocab_size, name="softmax")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    return tokens, targets, logits, loss, train


def train(steps: int, seed: int = 0) -> tuple[float, float, str]:
    """Trains for `steps` steps; returns (first loss, last loss, a sample)."""
    text = zen_text()
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], np.int32)
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        tokens, targets, logits, loss, train_op = build(len(chars))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(steps):
                starts = rng.randint(0, len(ids) - SEQ - 1, BATCH)
                batch = np.stack([ids[s:s + SEQ + 1] for s in starts])
                value, _ = sess.run([loss, train_op], {tokens: batch[:, :-1],
                                                       targets: batch[:, 1:]})
                losses.append(value)
            sample = list(ids[:SEQ])
            for _ in range(60):
                out = sess.run(logits, {tokens: [sample[-SEQ:]]})
                sample.append(int(np.argmax(out[0, -1])))
    first, last = float(np.mean(losses[:5])), float(np.mean(losses[-5:]))
    return first, last, "".join(chars[i] for i in sample[SEQ:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    first, last, sample = train(args.steps)
    print(f"cross-entropy per character {first:.3f} -> {last:.3f}")
    print(f"sample after the first {SEQ} characters: {sample!r}")


if __name__ == "__main__":
    main()
