"""DeviceSpec parsing and printing, as a table checked against TF 2.21's DeviceSpec."""
import pytest

import tensorweave as tf

# (device string, TF 2.21's DeviceSpec.from_string(s).to_string()).
VALID = [
    ("/device:Cpu:0", "/device:Cpu:0"),            # the full form keeps the type as written
    ("/device:cpu:0", "/device:CPU:0"),            # ... except legacy lowercase cpu and gpu
    ("/device:gpu:1", "/device:GPU:1"),
    ("/device:tpu:0", "/device:tpu:0"),
    ("/device:XLA_CPU:0", "/device:XLA_CPU:0"),
    ("/device:TESTDEV:0", "/device:TESTDEV:0"),
    ("/cpu:0", "/device:CPU:0"),                   # the short form uppercases known types
    ("/Cpu:1", "/device:CPU:1"),
    ("/CPU:1", "/device:CPU:1"),
    ("/gpu:*", "/device:GPU:*"),
    ("/tpu:0", "/device:TPU:0"),
    ("/custom:0", "/device:CUSTOM:0"),
    ("/epu:0", "/device:EPU:0"),
    ("cpu:0", "/device:CPU:0"),
    ("/cpu", "/device:CPU:*"),
    ("/device:CPU:*", "/device:CPU:*"),
    ("/device:CPU:01", "/device:CPU:1"),
    ("/job:w/replica:0/task:1/device:CPU:0", "/job:w/replica:0/task:1/device:CPU:0"),
    ("/job:w/task:1/cpu:0", "/job:w/task:1/device:CPU:0"),
    ("job:w/cpu:0", "/job:w/device:CPU:0"),
    ("/job:ps/task:0/device:cpu:0", "/job:ps/task:0/device:CPU:0"),
    ("//cpu:0", "/device:CPU:0"),
    ("/job:w//task:1", "/job:w/task:1"),
    ("/job:w/job:v", "/job:v"),
    ("/job:", "/job:"),
    ("", ""),
    ("/", ""),
]

INVALID = ["/foo:1", "/device:", "/cpu:0/gpu:1", "/Job:A", "/TASK:1", "/xla_gpu:0", "/xla_cpu:0",
           "/device:CPU", "/task:x", "/replica:", "/cpu:x", "/job:a:b", "/device:CPU:0:1",
           "/device:GPU:0/cpu:1", "/cpu:0/device:CPU:1", "/testdev:0", " /cpu:0"]


@pytest.mark.parametrize("spec, expected", VALID)
def test_valid_device_strings_print_like_tensorflow(spec, expected):
    assert tf.DeviceSpec.from_string(spec).to_string() == expected


@pytest.mark.parametrize("spec", INVALID)
def test_device_strings_tensorflow_rejects_raise_value_error(spec):
    with pytest.raises(ValueError):
        tf.DeviceSpec.from_string(spec)
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            with tf.device(spec):
                pass


def test_constructor_uppercases_only_legacy_cpu_and_gpu():
    assert [tf.DeviceSpec(device_type=t).to_string() for t in ("cpu", "Cpu", "tpu")] == \
        ["/device:CPU:*", "/device:Cpu:*", "/device:tpu:*"]


def test_device_scope_strings_are_canonical_and_function_results_are_kept():
    """TF: a string scope prints canonically; a device function's string is used as is."""
    with tf.Graph().as_default():
        with tf.device("/device:Cpu:0"):
            a = tf.constant(1.0)
        with tf.device(lambda op: "/cpu:0"):
            b = tf.constant(1.0)
        with tf.device("/job:x"):
            with tf.device(lambda op: "/cpu:0"):
                c = tf.constant(1.0)
        with tf.device(lambda op: tf.DeviceSpec.from_string("/cpu:1")):
            d = tf.constant(1.0)
    assert [t.device for t in (a, b, c, d)] == \
        ["/device:Cpu:0", "/cpu:0", "/job:x/device:CPU:0", "/device:CPU:1"]
