"""Fixtures of the tf.data tests."""
import pytest

import tensorweave as tf


@pytest.fixture
def graph():
    """A fresh default graph for the test (modules opt in with `pytestmark`)."""
    with tf.Graph().as_default() as g:
        yield g
