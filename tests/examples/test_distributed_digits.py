"""The parameter-server example: a ps and two worker processes train one classifier."""
import importlib.util
import os

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                       "distributed_digits.py")


def test_ps_and_two_workers_train_the_shared_model():
    spec = importlib.util.spec_from_file_location("distributed_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # The workers race and the example seeds no weights, so the accuracy varies from run to
    # run: 0.859-0.912 in 18 runs, too close to a 0.85 bar; a model that does not learn the
    # digits scores about 0.1.
    assert module.train_on_local_cluster(steps=400) > 0.75
