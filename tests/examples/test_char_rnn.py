"""The char-RNN example: an LSTM language model over sequences of unknown length learns."""
import importlib.util
import os

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "char_rnn.py")


def test_char_rnn_loss_falls():
    spec = importlib.util.spec_from_file_location("char_rnn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first, last, sample = module.train(steps=40)
    assert last < 0.8 * first, (first, last)
    assert len(sample) == 60
