"""tf.data.experimental.SqlDataset with the sqlite driver (data/sql_dataset.py,
kernels/dataset_sql.py).

Expected values, conversions and errors are TensorFlow 2.21's on the same database.
"""
import sqlite3

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "db.sqlite")
    with sqlite3.connect(path) as c:
        c.execute("create table t (name text, age integer, score real, big integer)")
        c.executemany("insert into t values (?, ?, ?, ?)",
                      [("ann", 30, 1.5, 2 ** 40), ("bob", -4, 2.25, 7),
                       (None, None, None, None)])
    return path


def sql(db, query, types):
    return E.SqlDataset("sqlite", db, query, types)


def test_rows_as_elements(db):
    ds = sql(db, "select name, age, score from t where name is not null",
             (tf.string, tf.int32, tf.float64))
    assert ds.element_spec == (tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.int32),
                               tf.TensorSpec([], tf.float64))
    got = drain(ds)
    assert got == [(b"ann", 30, 1.5), (b"bob", -4, 2.25)] and got[0][1].dtype == np.int32
    with tf.Session() as sess:
        assert sess.run(ds.cardinality()) == -2


def test_single_type_gives_scalar_elements(db):
    assert drain(sql(db, "select age from t where age is not null", tf.int64)) == [30, -4]


@pytest.mark.parametrize("query, types, expected", [
    ("select big from t where age is not null", (tf.int32,), [(0,), (7,)]),
    ("select name from t where age is not null", (tf.int32,), [(0,), (0,)]),
    ("select age from t where age is not null", (tf.string,), [(b"30",), (b"-4",)]),
    ("select score from t where age is not null", (tf.int64,), [(1,), (2,)]),
    ("select age from t where age is not null", (tf.float64,), [(30.0,), (-4.0,)]),
    ("select name, age from t", (tf.string, tf.int32),
     [(b"ann", 30), (b"bob", -4), (b"", 0)]),
    ("select 1.0, 1e20, 0.1", (tf.string,) * 3, [(b"1.0", b"1.0e+20", b"0.1")]),
    ("select ' 12abc', '3.7e1x', 3000000000, -129, 1e30, x'41', 70000",
     (tf.int64, tf.float64, tf.int32, tf.int8, tf.int64, tf.string, tf.uint16),
     [(12, 37.0, -1294967296, 127, 2 ** 63 - 1, b"A", 4464)]),
])
def test_conversions(db, query, types, expected):
    got = drain(sql(db, query, types))
    assert got == expected
    for value, dtype in zip(got[0], types):
        assert isinstance(value, bytes) if dtype == tf.string else \
            value.dtype == dtype.as_numpy_dtype


@pytest.mark.parametrize("driver, query, types, error, message", [
    ("mysql", "select 1", (tf.int64,), tf.errors.InvalidArgumentError,
     "The database type, mysql, is not supported by SqlDataset. The set of supported "
     "databases is: {'sqlite'}."),
    ("sqlite", "select 1", (tf.float32,), tf.errors.InvalidArgumentError,
     "Each element of `output_types_` must be one of: DT_STRING, DT_INT8, DT_INT16, "
     "DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, DT_DOUBLE "),
    ("sqlite", "select name, age from t", (tf.string,), tf.errors.InvalidArgumentError,
     "The number of columns in query (2) must match the number of elements in "
     "output_types (1)."),
    ("sqlite", "selec name from t", (tf.string,), tf.errors.UnknownError,
     'Prepare() failed: [1] near "selec": syntax error: selec name from t'),
    ("sqlite", "select x from nope", (tf.string,), tf.errors.UnknownError,
     "Prepare() failed: [1] no such table: nope: select x from nope"),
])
def test_errors(db, driver, query, types, error, message):
    with pytest.raises(error) as info:
        drain(E.SqlDataset(driver, db, query, types))
    assert info.value.message.split("\n")[0] == message
