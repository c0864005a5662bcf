"""tf.data.experimental.CsvDataset and make_csv_dataset against TensorFlow 2.21's outputs.

Every expectation below is what TensorFlow gives on the same files and programs (values,
dtypes, element structure, the error and the records yielded before it).
"""
import collections
import gzip

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain
from tensorweave.testing.datasets import file_writer

E = tf.data.experimental
TABLE = 'a,b,c,d\n1,2.5,x,7\n3,,"y,z",8\n,4.5,"q""r",9\n'
PEOPLE = "name,age,score\nann,31,1.5\nbob,2,2\ncy,7,3.25\n"
NUMBERS = "a,b\n1,2\n3,4\n5,6.5\n7,8\n"


pytestmark = pytest.mark.usefixtures("graph")


@pytest.fixture
def files(tmp_path):
    return file_writer(tmp_path)


def test_defaults_quotes_and_header(files):
    ds = E.CsvDataset(files("t.csv", TABLE), [[0], [0.0], [""], [0]], header=True)
    assert ds.output_types == (tf.int32, tf.float32, tf.string, tf.int32)
    assert ds.output_shapes == (tf.TensorShape([]),) * 4
    got = drain(ds)
    assert got == [(1, 2.5, b"x", 7), (3, 0.0, b"y,z", 8), (0, 4.5, b'q"r', 9)]
    assert [type(v) for v in got[0]] == [np.int32, np.float32, bytes, np.int32]


def test_dtype_defaults_are_required(files):
    ds = E.CsvDataset(files("t.csv", TABLE), [tf.int32, tf.constant(-1.0), tf.string,
                                              tf.int64], header=True)
    assert ds.output_types == (tf.int32, tf.float32, tf.string, tf.int64)
    before = []
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 0 is required but missing in record!"):
        drain(ds, before)
    assert before == [(1, 2.5, b"x", 7), (3, -1.0, b"y,z", 8)]


def test_select_cols(files):
    ds = E.CsvDataset(files("t.csv", TABLE), [[0], [""]], header=True, select_cols=[0, 2])
    assert drain(ds) == [(1, b"x"), (3, b"y,z"), (0, b'q"r')]


def test_several_files_gzip_delimiter_and_na_value(files):
    plain = files("n.csv", "1,2\n3,4\n")
    ds = E.CsvDataset([plain, plain], [tf.int64, tf.float64])
    assert drain(ds) == [(1, 2.0), (3, 4.0)] * 2
    packed = files("n.csv.gz", gzip.compress(b"1,2\n3,4\n"))
    assert drain(E.CsvDataset(packed, [tf.int64, tf.float64], compression_type="GZIP")) == \
        [(1, 2.0), (3, 4.0)]
    piped = files("p.csv", '1|"2"|3\r\n4||6\r\n')
    assert drain(E.CsvDataset(piped, [tf.int32, [7], tf.int32], field_delim="|")) == \
        [(1, 2, 3), (4, 7, 6)]
    assert drain(E.CsvDataset(piped, [tf.int32, [7], tf.int32], field_delim="|",
                              na_value="2")) == [(1, 7, 3), (4, 7, 6)]


def test_run_time_errors(files):
    cases = [
        (files("bad.csv", "x,y\n1,2,3\n"), [tf.int32, tf.int32], {"header": True},
         "Expect 2 fields but have more in record"),
        (files("few.csv", "1,2\n3,4\n"), [tf.int32] * 3, {}, "Expect 3 fields but have 2 in"),
        (files("nan.csv", "1,abc\n"), [tf.int32] * 2, {},
         "Field 1 in record is not a valid int32: abc"),
        (files("m.csv", NUMBERS), [tf.int32] * 2, {"header": True},
         "Field 1 in record is not a valid int32: 6.5"),
        (files("p2.csv", '1|"2"|3\n4||6\n'), [tf.int32, tf.string, tf.int32],
         {"field_delim": "|", "use_quote_delim": False},
         "Field 1 is required but missing in record!"),
    ]
    for path, defaults, kwargs, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            drain(E.CsvDataset(path, defaults, **kwargs))
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        drain(E.CsvDataset(files("p.csv", "") + ".missing", [tf.int32]))


def test_select_cols_errors_and_bad_types(files):
    path = files("n.csv", "1,2\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="strictly increasing"):
        drain(E.CsvDataset(path, [tf.int32, tf.int32], select_cols=[1, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="should match output size"):
        drain(E.CsvDataset(path, [tf.int32, tf.int32], select_cols=[1]))
    with pytest.raises(TypeError, match="Failed to convert elements of <dtype: 'bool'>"):
        E.CsvDataset(path, [tf.bool, tf.int32])
    with pytest.raises(TypeError, match="exclude_cols"):
        E.CsvDataset(path, [tf.int32], exclude_cols=[1])
    # TF 2.21 refuses it when the iterator is made, not when the dataset is built.
    dataset = E.CsvDataset(path, [tf.int32], compression_type="LZ4")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Unsupported compression_type: LZ4\."):
        drain(dataset)


def test_make_csv_dataset_infers_names_and_types(files):
    ds = E.make_csv_dataset(files("people.csv", PEOPLE), 2, num_epochs=1, shuffle=False)
    assert ds.output_types == collections.OrderedDict(
        [("name", tf.string), ("age", tf.int32), ("score", tf.float32)])
    assert ds.output_shapes["age"].as_list() == [None]
    got = drain(ds)
    assert [list(g) for g in got] == [["name", "age", "score"]] * 2
    assert [g["name"].tolist() for g in got] == [[b"ann", b"bob"], [b"cy"]]
    assert got[0]["name"].dtype == object
    assert [g["age"].tolist() for g in got] == [[31, 2], [7]]
    assert [g["score"].tolist() for g in got] == [[1.5, 2.0], [3.25]]


def test_make_csv_dataset_label_and_select(files):
    ds = E.make_csv_dataset(files("people.csv", PEOPLE), 2, label_name="score",
                            select_columns=["age", "score"], num_epochs=1, shuffle=False)
    assert ds.output_types == (collections.OrderedDict([("age", tf.int32)]), tf.float32)
    got = drain(ds)
    assert [(f["age"].tolist(), label.tolist()) for f, label in got] == \
        [([31, 2], [1.5, 2.0]), ([7], [3.25])]


def test_make_csv_dataset_defaults_names_and_epochs(files):
    numbers = files("m.csv", NUMBERS)
    got = drain(E.make_csv_dataset(numbers, 3, column_defaults=[0, 0.0], num_epochs=1,
                                   shuffle=False))
    assert [(g["a"].tolist(), g["b"].tolist()) for g in got] == \
        [([1, 3, 5], [2.0, 4.0, 6.5]), ([7], [8.0])]
    inferred = drain(E.make_csv_dataset(numbers, 5, num_epochs=1, shuffle=False))
    assert inferred[0]["a"].dtype == np.int32 and inferred[0]["b"].dtype == np.float32
    named = E.make_csv_dataset(files("n.csv", "1,2\n3,4\n"), 5, column_names=["p", "q"],
                               header=False, num_epochs=2, shuffle=False)
    assert [(g["p"].tolist(), g["q"].tolist()) for g in drain(named)] == \
        [([1, 3, 1, 3], [2, 4, 2, 4])]
    endless = E.make_csv_dataset(numbers, 3, shuffle=False)    # num_epochs=None: full batches
    assert endless.output_shapes["a"].as_list() == [3]


def test_make_csv_dataset_shuffle_is_seeded(files):
    numbers = files("m.csv", NUMBERS)

    def rows(seed):
        with tf.Graph().as_default():
            ds = E.make_csv_dataset(numbers, 4, num_epochs=1, shuffle_seed=seed)
            return drain(ds)[0]["a"].tolist()
    assert sorted(rows(1)) == [1, 3, 5, 7] and rows(1) == rows(1)


def test_make_csv_dataset_errors(files):
    numbers = files("m.csv", NUMBERS)
    with pytest.raises(ValueError, match=r"`label_name` provided must be one of the columns: "
                                         r"\['a', 'b'\]. Received: zz."):
        E.make_csv_dataset(numbers, 5, label_name="zz", num_epochs=1, shuffle=False)
    with pytest.raises(ValueError, match="Column zz specified in `select_columns` must be"):
        E.make_csv_dataset(numbers, 5, select_columns=["zz"], num_epochs=1, shuffle=False)
    files("p.csv", "x,y\n1,2\n")
    with pytest.raises(ValueError, match="should have the same column names in the header"):
        E.make_csv_dataset(numbers.replace("m.csv", "[mp].csv"), 5, num_epochs=1)
    with pytest.raises(ValueError, match="No files match"):
        E.make_csv_dataset(numbers + ".none", 5)
    with pytest.raises(ValueError, match="Expected `column_names` or `header` arguments"):
        E.make_csv_dataset(numbers, 5, header=False)


def test_batches_span_files_and_equal_stacked_records(files):
    first = files("one.csv", "1,a\n2,b\n3,\n")
    second = files("two.csv", "4,d\n5,e\n6,f\n")
    ds = E.CsvDataset([first, second], [[0], ["z"]])
    records = drain(ds)
    for drop in (False, True):
        batches = drain(ds.batch(4, drop_remainder=drop))
        assert [b[0].tolist() for b in batches] == [[1, 2, 3, 4], [5, 6]][:2 - drop]
        assert [b[1].tolist() for b in batches] == [[b"a", b"b", b"z", b"d"],
                                                    [b"e", b"f"]][:2 - drop]
        assert batches[0][1].dtype == object and batches[0][0].dtype == np.int32
    assert [r[1] for r in records] == [b"a", b"b", b"z", b"d", b"e", b"f"]
    bad = files("bad.csv", "7,g\nx,h\n")
    before = []
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32: x"):
        drain(E.CsvDataset([first, bad], [[0], [""]]).batch(2), before)
    assert [b[0].tolist() for b in before] == [[1, 2], [3, 7]]
