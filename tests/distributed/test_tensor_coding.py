"""Hand-encoded RecvTensors messages: valid protobuf, the same arrays back, bad bytes refused."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorweave as tf
from tensorweave.distributed import tensor_coding
from tensorweave.framework.graph_io import tensor_proto_to_ndarray
from tensorweave.protos import worker_pb2

VALUES = [np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(0.25),
          np.array(7, np.int64), np.zeros((0, 4), np.int32), np.array([True, False]),
          np.arange(6, dtype=np.float64).reshape(2, 3).T, np.array([b"a", b"bc"], object),
          np.array([1 + 2j], np.complex64), np.arange(4, dtype=np.float16)]


def test_encoded_messages_are_recv_tensors_responses_and_decode_to_the_arrays():
    items = [(f"key{i}", value, False) for i, value in enumerate(VALUES)]
    items.insert(2, ("dead", None, True))
    data = tensor_coding.encode(items)
    parsed = worker_pb2.RecvTensorsResponse.FromString(data)   # what the generated class reads
    assert [t.rendezvous_key for t in parsed.tensor] == [key for key, _, _ in items]
    assert [t.is_dead for t in parsed.tensor] == [dead for _, _, dead in items]
    for (key, value, dead), decoded, proto in zip(items, tensor_coding.decode(data),
                                                  parsed.tensor):
        assert decoded[0] == key and decoded[2] == dead
        if dead:
            assert decoded[1] is None
            continue
        expected = np.asarray(value)
        for array in (decoded[1], tensor_proto_to_ndarray(proto.tensor)):
            assert array.shape == expected.shape and array.dtype == expected.dtype
            np.testing.assert_array_equal(array, expected)
        assert decoded[1].flags.writeable


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.binary(max_size=80), st.builds(
    lambda good, at, byte: good[:at] + bytes([byte]) + good[at + 1:],
    st.just(tensor_coding.encode([("k", np.arange(3, dtype=np.float32), False)])),
    st.integers(0, 30), st.integers(0, 255))))
def test_bad_bytes_are_invalid_argument(data):
    try:
        tensor_coding.decode(data)
    except tf.errors.InvalidArgumentError:
        pass


def test_content_that_does_not_fit_the_shape_is_refused():
    data = tensor_coding.encode([("k", np.zeros(4, np.float32), False)])
    dim_of_4, dim_of_5 = b"\x12\x02\x08\x04", b"\x12\x02\x08\x05"   # shape {dim {size}}
    assert data.count(dim_of_4) == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="16 bytes of content for shape"):
        tensor_coding.decode(data.replace(dim_of_4, dim_of_5))


def test_pushed_tensors_are_send_tensors_requests_with_their_step():
    items = [("a;0000000000000001;b;t;12345:3", np.arange(4, dtype=np.int32), False),
             ("a;0000000000000001;b;u;12345:3", None, True)]
    data = tensor_coding.encode_pushed(77, items)
    parsed = worker_pb2.SendTensorsRequest.FromString(data)
    assert parsed.step_id == 77
    assert [t.rendezvous_key for t in parsed.tensor] == [key for key, _, _ in items]
    step_id, decoded = tensor_coding.decode_pushed(data)
    assert step_id == 77 and [key for key, _, _ in decoded] == [key for key, _, _ in items]
    np.testing.assert_array_equal(decoded[0][1], items[0][1])
    assert decoded[1][1] is None and decoded[1][2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="no step id"):
        tensor_coding.decode_pushed(tensor_coding.encode(items))
