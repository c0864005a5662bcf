"""Client-side tools (TensorFlow's tensorflow.python.client): the step timeline."""
