"""from_generator, padded_batch and map_and_batch behave as TensorFlow 2.21's do.

Every expected value, error class and message below is what TensorFlow 2.21 (tf.compat.v1,
graph mode) printed for the same program.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def run_all(dataset, limit=20):
    """The elements of `dataset`, then the error that ended it (None for the end of input,
    "limit" if it had not ended after `limit` elements)."""
    out = []
    try:
        drain_dataset(dataset, out, limit=limit)
    except tf.errors.OpError as error:
        return out, error
    return out, "limit" if len(out) == limit else None


def _seen(*args):
    """What the generator received: (type name, repr) of each argument."""
    yield repr([(type(a).__name__, repr(a)) for a in args])


# args: what the generator sees of each (TF: py_func's conversion of the args tensors).
@pytest.mark.parametrize("args, seen", [
    (("file.txt",), [("bytes", "b'file.txt'")]),
    ((b"raw",), [("bytes", "b'raw'")]),
    (("é",), [("bytes", "b'\\xc3\\xa9'")]),
    ((1,), [("int32", "np.int32(1)")]),
    ((1.5,), [("float32", "np.float32(1.5)")]),
    ((True,), [("bool", "np.True_")]),
    (([1, 2],), [("ndarray", "array([1, 2], dtype=int32)")]),
    ((["a", "b"],), [("ndarray", "array([b'a', b'b'], dtype=object)")]),
    ((np.array([[1.0]]),), [("ndarray", "array([[1.]])")]),
    (["a", 2], [("bytes", "b'a'"), ("int32", "np.int32(2)")]),
])
def test_generator_arguments_arrive_as_py_func_arguments(args, seen):
    got, error = run_all(D.from_generator(_seen, tf.string, args=args))
    assert error is None and got == [repr(seen).encode()]


def test_a_string_tensor_argument_arrives_as_bytes():
    got, _ = run_all(D.from_generator(_seen, tf.string, args=(tf.constant("s"),)))
    assert got == [repr([("bytes", "b's'")]).encode()]


def _raising(exc):
    def gen():
        yield 1
        raise exc
    return gen


# The generator runs in a py_func: its exception is that py_func's error, whose message
# starts "<Type>: <text>"; the generator is then finished (the next get_next is the end).
@pytest.mark.parametrize("exc, cls, first_line", [
    (KeyError("k"), tf.errors.UnknownError, "KeyError: 'k'"),
    (IndexError("i"), tf.errors.UnknownError, "IndexError: i"),
    (ZeroDivisionError("z"), tf.errors.UnknownError, "ZeroDivisionError: z"),
    (ArithmeticError("ar"), tf.errors.UnknownError, "ArithmeticError: ar"),
    (RuntimeError("rt"), tf.errors.UnknownError, "RuntimeError: rt"),
    (tf.errors.OutOfRangeError(None, None, "oor"), tf.errors.UnknownError,
     "OutOfRangeError: oor"),
    (tf.errors.NotFoundError(None, None, "nf"), tf.errors.UnknownError, "NotFoundError: nf"),
    (StopIteration("si"), tf.errors.UnknownError,
     "RuntimeError: generator raised StopIteration"),
    (ValueError("v"), tf.errors.InvalidArgumentError, "ValueError: v"),
    (TypeError("t"), tf.errors.InvalidArgumentError, "TypeError: t"),
    (NotImplementedError("ni"), tf.errors.UnimplementedError, "NotImplementedError: ni"),
    (MemoryError("mem"), tf.errors.ResourceExhaustedError, "MemoryError: mem"),
])
def test_generator_exceptions_map_as_tensorflow(exc, cls, first_line):
    nxt = tf.data.make_one_shot_iterator(D.from_generator(_raising(exc), tf.int64)).get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 1
        with pytest.raises(cls) as info:
            sess.run(nxt)
        assert type(info.value) is cls
        assert info.value.message.split("\n")[0] == first_line
        assert "Traceback (most recent call last)" in info.value.message
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)


def test_an_out_of_range_error_in_the_generator_does_not_end_the_data_silently():
    got, error = run_all(D.from_generator(
        _raising(tf.errors.OutOfRangeError(None, None, "oor")), tf.int64).batch(2))
    assert got == [] and type(error) is tf.errors.UnknownError


def test_a_generator_function_that_raises_when_called_is_a_py_func_error():
    def gen():
        raise KeyError("at call")
    got, error = run_all(D.from_generator(gen, tf.int64))
    assert got == [] and type(error) is tf.errors.UnknownError
    assert error.message.startswith("KeyError: 'at call'\n")


def test_an_iterator_ending_with_stop_iteration_is_the_end_of_input():
    got, error = run_all(D.from_generator(lambda: iter([1, 2]), tf.int64))
    assert got == [1, 2] and error is None


@pytest.mark.parametrize("generator", [[1, 2], (x for x in [1]), 5])
def test_a_non_callable_generator_is_a_type_error(generator):
    with pytest.raises(TypeError, match="^`generator` must be a Python callable.$"):
        D.from_generator(generator, tf.int64)


def test_the_callable_check_comes_before_the_signature_checks():
    with pytest.raises(TypeError, match="^`generator` must be a Python callable.$"):
        D.from_generator(5)
    with pytest.raises(TypeError, match="^`generator` must be a Python callable.$"):
        D.from_generator(5, output_signature=tf.TensorSpec([], tf.int64))


_SHAPE_MISMATCHES = [
    ((tf.int32, tf.int32), ([],), ValueError,
     "The two structures don't have the same sequence length. Input structure has length 1, "
     "while shallow structure has length 2."),
    ((tf.int32,), ([], []), ValueError,
     "The two structures don't have the same sequence length. Input structure has length 2, "
     "while shallow structure has length 1."),
    ((tf.int32, tf.int32), [2], TypeError,
     "If shallow structure is a sequence, input must also be a sequence. Input has type: "
     "'list'."),
    ((tf.int32, tf.int32), [[], [2]], TypeError,
     "If shallow structure is a sequence, input must also be a sequence. Input has type: "
     "'list'."),
    ((tf.int32, tf.int32), 3, TypeError,
     "If shallow structure is a sequence, input must also be a sequence. Input has type: "
     "'int'."),
    ({"a": tf.int32}, {"b": []}, ValueError,
     "The two structures don't have the same keys. Input structure has keys ['b'], while "
     "shallow structure has keys ['a']."),
    ({"a": tf.int32}, {"a": [], "b": []}, ValueError,
     "The two structures don't have the same sequence length. Input structure has length 2, "
     "while shallow structure has length 1."),
    ({"a": tf.int32}, ([],), TypeError,
     "The two structures don't have the same sequence type. Input structure has type "
     "'tuple', while shallow structure has type 'dict'."),
    ((tf.int32,), {"a": []}, TypeError,
     "The two structures don't have the same sequence type. Input structure has type "
     "'dict', while shallow structure has type 'tuple'."),
    ((tf.int32, (tf.int32, tf.string)), ([], ([],)), ValueError,
     "The two structures don't have the same sequence length. Input structure has length 1, "
     "while shallow structure has length 2."),
]


@pytest.mark.parametrize("types, shapes, cls, message", _SHAPE_MISMATCHES)
def test_shapes_not_nesting_as_the_types_are_rejected(types, shapes, cls, message):
    with pytest.raises(cls) as info:
        D.from_generator(lambda: iter([]), types, shapes)
    assert str(info.value) == message


def test_shapes_may_leave_a_component_unknown_or_use_a_tuple_of_dims():
    ds = D.from_generator(lambda: iter([]), (tf.int32, tf.int32), ([], None))
    assert ds.output_shapes[0].as_list() == [] and ds.output_shapes[1].ndims is None
    assert D.from_generator(lambda: iter([]), tf.int32, (2, 3)).output_shapes.as_list() == [2, 3]


def _kinds(array):
    return [type(x).__name__ for x in np.ravel(array)]


def test_padded_batch_of_string_scalars_is_a_vector_of_bytes():
    got, _ = run_all(D.from_tensor_slices(["a", "bb", "c"]).padded_batch(2, padded_shapes=[]))
    assert [g.tolist() for g in got] == [[b"a", b"bb"], [b"c"]]
    assert [g.dtype for g in got] == [np.dtype(object)] * 2
    assert _kinds(got[0]) == ["bytes", "bytes"] and _kinds(got[1]) == ["bytes"]


@pytest.mark.parametrize("padded_shapes, padding_values", [(None, None), ([], "zz")])
def test_padded_batch_of_string_scalars_with_default_shapes_or_a_padding_value(
        padded_shapes, padding_values):
    got, _ = run_all(D.from_tensor_slices(["a", "bb", "c"]).padded_batch(
        2, padded_shapes=padded_shapes, padding_values=padding_values))
    assert got[0].tolist() == [b"a", b"bb"] and _kinds(got[0]) == ["bytes", "bytes"]


def test_padded_batch_string_components_of_tuples_and_dicts():
    got, _ = run_all(D.range(1, 3).map(
        lambda n: (tf.as_string(n), tf.fill([n], n))).padded_batch(2))
    strings, numbers = got[0]
    assert strings.tolist() == [b"1", b"2"] and _kinds(strings) == ["bytes", "bytes"]
    assert numbers.tolist() == [[1, 0], [2, 2]] and numbers.dtype == np.int64

    got, _ = run_all(D.range(1, 3).map(lambda n: {
        "s": tf.as_string(n), "b": tf.fill([n], True),
        "v": tf.fill([n], tf.as_string(n))}).padded_batch(2))
    element = got[0]
    assert element["s"].tolist() == [b"1", b"2"] and _kinds(element["s"]) == ["bytes"] * 2
    assert element["b"].tolist() == [[True, False], [True, True]]
    assert element["b"].dtype == np.bool_
    assert element["v"].tolist() == [[b"1", b""], [b"2", b"2"]]
    assert _kinds(element["v"]) == ["bytes"] * 4


def test_padded_batch_pads_strings_of_rank_one_and_two_with_empty_bytes():
    got, _ = run_all(D.range(1, 3).map(lambda n: tf.fill([n], "x")).padded_batch(2))
    assert got[0].tolist() == [[b"x", b""], [b"x", b"x"]]
    got, _ = run_all(D.range(1, 3).map(lambda n: tf.fill([n], "x")).padded_batch(
        2, padded_shapes=[4], padding_values="<p>"))
    assert got[0].tolist() == [[b"x", b"<p>", b"<p>", b"<p>"], [b"x", b"x", b"<p>", b"<p>"]]
    got, _ = run_all(D.range(1, 3).map(lambda n: tf.fill([n, 2], "m")).padded_batch(
        2, padded_shapes=[None, 3]))
    assert got[0].tolist() == [[[b"m", b"m", b""], [b"", b"", b""]],
                               [[b"m", b"m", b""], [b"m", b"m", b""]]]
    assert set(_kinds(got[0])) == {"bytes"}


@pytest.mark.parametrize("make, expected", [
    (lambda: D.range(1, 3).map(lambda x: tf.fill([x], True)).padded_batch(2, padded_shapes=[3]),
     [[True, False, False], [True, True, False]]),
    (lambda: D.range(1, 3).map(lambda x: tf.fill([x], False)).padded_batch(2),
     [[False, False], [False, False]]),
    (lambda: D.from_tensor_slices([True, False, True]).padded_batch(2), [True, False]),
])
def test_padded_batch_pads_bools_with_false_by_default(make, expected):
    got, _ = run_all(make())
    assert got[0].tolist() == expected and got[0].dtype == np.bool_


@pytest.mark.parametrize("value", [True, np.bool_(True), "tensor"])
def test_padded_batch_bool_padding_value(value):
    value = tf.constant(True) if isinstance(value, str) else value
    got, _ = run_all(D.range(1, 3).map(lambda x: tf.fill([x], False)).padded_batch(
        2, padded_shapes=[3], padding_values=value))
    assert got[0].tolist() == [[False, True, True], [False, False, True]]


@pytest.mark.parametrize("fill, value, name", [(True, 1, "bool"), ("s", 0, "string")])
def test_padded_batch_padding_value_of_another_type_is_a_type_error(fill, value, name):
    ds = D.range(1, 3).map(lambda x: tf.fill([x], fill))
    with pytest.raises(TypeError) as info:
        ds.padded_batch(2, padded_shapes=[3], padding_values=value)
    assert str(info.value) == (
        "Invalid `padding_values`. `padding_values` values type <dtype: 'int32'> does not "
        f"match type <dtype: '{name}'> of the corresponding input component.")


def test_padded_batch_mixed_structures_and_padding_values():
    got, _ = run_all(D.range(1, 3).map(
        lambda x: (tf.fill([x], True), tf.fill([x], "s"), tf.fill([x], x))).padded_batch(
        2, padded_shapes=([3], [3], [3]),
        padding_values=(True, "p", tf.constant(-1, tf.int64))))
    flags, strings, numbers = got[0]
    assert flags.tolist() == [[True, True, True], [True, True, True]]
    assert strings.tolist() == [[b"s", b"p", b"p"], [b"s", b"s", b"p"]]
    assert numbers.tolist() == [[1, -1, -1], [2, 2, -1]]

    got, _ = run_all(D.range(1, 3).map(lambda x: {
        "b": tf.fill([x], True), "f": tf.cast(tf.fill([x], x), tf.float32)}).padded_batch(
        2, padded_shapes={"b": [None], "f": [4]}, padding_values={"b": False, "f": 0.5}))
    assert got[0]["b"].tolist() == [[True, False], [True, True]]
    assert got[0]["f"].tolist() == [[1.0, 0.5, 0.5, 0.5], [2.0, 2.0, 0.5, 0.5]]
    assert got[0]["f"].dtype == np.float32


_BOTH = ("`{}` allows only one of `num_parallel_batches` and `num_parallel_calls` to be set, "
         "but `num_parallel_batches` was set to {} and `num_parallel_calls` as set to {}.")


@pytest.mark.parametrize("api, batches, calls", [
    (E.map_and_batch, 2, 2), (E.map_and_batch, 0, 0),
    (E.map_and_batch_with_legacy_function, 1, 4),
])
def test_map_and_batch_takes_only_one_parallelism_argument(api, batches, calls):
    with pytest.raises(ValueError) as info:
        api(lambda x: x, 3, num_parallel_batches=batches, num_parallel_calls=calls)
    assert str(info.value) == _BOTH.format(api.__name__, batches, calls)


@pytest.mark.parametrize("kwargs", [{"num_parallel_batches": 2}, {"num_parallel_calls": 2}])
def test_map_and_batch_with_one_parallelism_argument(kwargs):
    got, error = run_all(D.range(7).apply(E.map_and_batch(lambda x: x * 2, 3, **kwargs)))
    assert [g.tolist() for g in got] == [[0, 2, 4], [6, 8, 10], [12]] and error is None


def test_decode_raw_to_bool_of_a_fed_string():
    # TF 2.21 raises InvalidArgumentError ("Cannot parse tensor from proto") only when the
    # input is a constant and constant folding materializes a bool byte other than 0 or 1;
    # with constant folding off, or a fed input, it decodes.
    data = tf.placeholder(tf.string)
    decoded = tf.io.decode_raw(data, tf.bool)
    assert decoded.dtype == tf.bool and decoded.shape.ndims is None
    with tf.Session() as sess:
        got = sess.run(decoded, {data: [b"\x00\x01\xff", b"\x05\x00\x01"]})
        assert got.tolist() == [[False, True, True], [True, False, True]]
        assert sess.run(tf.decode_raw(b"\x00\x01\x01", tf.bool)).tolist() == \
            [False, True, True]
