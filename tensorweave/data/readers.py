"""File datasets of fixed-layout records: CSV files and fixed-length binary records.

`CsvDataset` (tf.data.experimental) yields one tuple of scalars per CSV record;
`make_csv_dataset` builds TensorFlow's whole pipeline on it (column names from the header,
column types inferred from the first rows, batches of OrderedDicts of features, optionally
split off a label); `FixedLengthRecordDataset` yields the records of binary files between a
header and a footer. Their runtime nodes are in kernels/dataset_readers.py.

`FileRecordDataset` is what TextLineDataset, TFRecordDataset (data/sources.py) and
FixedLengthRecordDataset share, TF's readers.py machinery: the file names become a dataset
(a dataset of scalar strings, or strings of any shape flattened), and a one-file dataset per
name is flat-mapped over them, or with `num_parallel_reads` interleaved that many files at a
time, one record from each in turn (TF's deterministic parallel interleave).
"""
from __future__ import annotations

import collections
import csv
import glob
import gzip
import os

import numpy as np

from tensorweave.data import nest
from tensorweave.data.dataset_ops import Dataset, TensorSpec, interleave_cycle
from tensorweave.data.options import AUTOTUNE
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_readers  # noqa: F401 - registers the nodes

__all__ = ["FixedLengthRecordDataset"]

_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)


def _filenames(filenames) -> Tensor:
    return convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")


# --- TF's readers.py: file names -> one dataset per file, flat-mapped or interleaved --------

def _fspath(value):
    """Path-like file names as strings, in nested lists too (TF's `_normalise_fspath`)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_fspath(v) for v in value)
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def filenames_dataset(filenames) -> Dataset:
    """The file names as a dataset of scalar strings (TF's
    `_create_or_validate_filenames_dataset`): a dataset is checked, anything else converted
    to a string tensor and flattened.

    Raises:
      TypeError: for names that are not strings, or a dataset of non-scalars (TF's messages).
    """
    if isinstance(filenames, Dataset):
        types = nest.map_structure(lambda s: s.dtype, filenames._structure)
        if types != _dtypes.string:
            raise TypeError("The `filenames` argument must contain `tf.string` elements. Got a "
                            f"dataset of `{types!r}` elements.")
        shape = filenames._structure.shape
        if not shape.is_compatible_with(_ts.TensorShape([])):
            raise TypeError("The `filenames` argument must contain `tf.string` elements of "
                            "shape [] (i.e. scalars). Got a dataset of element shape "
                            f"{shape!r}.")
        return filenames
    from tensorweave.ops.array_ops import reshape
    names = convert_to_tensor(_fspath(filenames), dtype_hint=_dtypes.string)
    if names.dtype != _dtypes.string:
        raise TypeError("The `filenames` argument must contain `tf.string` elements. Got "
                        f"`{names.dtype!r}` elements.")
    return Dataset.from_tensor_slices(reshape(names, [-1], name="flat_filenames"))


def schedulable_cpus() -> int:
    """The CPUs this process may run on: TF's port::MaxParallelism, which sizes tf.data's
    default interleave cycles."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _cycle_length(num_parallel_reads) -> int:
    """How many files are read in turn for `num_parallel_reads` (TF's cycle_length)."""
    if not isinstance(num_parallel_reads, (int, np.integer)):
        # TF converts it to an int64 tensor, refusing floats and tensors (True is 1).
        raise TypeError(f"Expected int64, but got {num_parallel_reads!r} of type "
                        f"'{type(num_parallel_reads).__name__}'.")
    if num_parallel_reads == AUTOTUNE:
        # TF interleaves with cycle_length and num_parallel_calls both AUTOTUNE (a third of
        # the CPUs: each file in the cycle gets a reading thread and 2 prefetching ones).
        return interleave_cycle(AUTOTUNE, AUTOTUNE)
    return int(num_parallel_reads)


class Refused(Dataset):
    """`dataset`'s elements, but a pipeline TensorFlow refuses with `message` when its
    iterator is made (InvalidArgumentError)."""

    def __init__(self, dataset: Dataset, message: str):
        self._structure, self._message = dataset._structure, message

    def _dataset_spec(self, builder):
        return {"kind": "refused", "message": self._message}


def read_files(read_one_file, filenames, num_parallel_reads=None) -> Dataset:
    """The datasets `read_one_file(filename)` makes, one after another or, with
    `num_parallel_reads`, that many interleaved a record at a time: files a, b give
    a1 b1 a2 b2 a3, in this deterministic order (TF's `_create_dataset_reader`)."""
    files = filenames_dataset(filenames)
    if num_parallel_reads is None:
        return files.flat_map(read_one_file)
    cycle = _cycle_length(num_parallel_reads)
    dataset = files.interleave(read_one_file, max(cycle, 1), 1)
    # TF checks the cycle length when the iterator is made: 0 or below, other than AUTOTUNE,
    # fails then, whatever the files.
    return dataset if cycle > 0 else Refused(dataset, "`cycle_length` must be > 0")


class _OneFile(Dataset):
    """The records of one file, read by the runtime node `kind` with the string tensor
    `compression` (checked by the node, at run time, as TensorFlow does) and `options`."""

    def __init__(self, kind: str, filename, compression: Tensor, options: dict):
        self._kind, self._options = kind, options
        self._args = [convert_to_tensor(filename, _dtypes.string, name="filename"), compression]
        self._structure = TensorSpec([], _dtypes.string)

    def _dataset_spec(self, builder):
        return {"kind": self._kind, "args": builder.args(self._args), **self._options}


class FileRecordDataset(Dataset):
    """The string records of files, one file or `num_parallel_reads` interleaved files at a
    time: what TF1's TextLineDataset, TFRecordDataset and FixedLengthRecordDataset share.
    A subclass names its runtime node in `_kind`."""

    _kind = ""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        del buffer_size, name
        self._read(filenames, compression_type, num_parallel_reads)

    def _read(self, filenames, compression_type, num_parallel_reads, **options) -> None:
        compression = convert_to_tensor("" if compression_type is None else compression_type,
                                        _dtypes.string, name="compression_type")
        self._impl = read_files(lambda name: _OneFile(self._kind, name, compression, options),
                                filenames, num_parallel_reads)
        self._structure = self._impl._structure

    def _dataset_spec(self, builder):
        return self._impl._dataset_spec(builder)


def _record_default(value) -> Tensor:
    """A dtype (the field is required) or a default value, as TensorFlow converts them."""
    if not isinstance(value, Tensor) and isinstance(value, _dtypes.DType):
        value = convert_to_tensor([], dtype=value)
    tensor = convert_to_tensor(value, name="record_defaults")
    if tensor.dtype.base_dtype not in _CSV_TYPES:
        raise TypeError(f"Failed to convert elements of <dtype: '{tensor.dtype.name}'> to "
                        "Tensor: CSV fields are float32, float64, int32, int64 or string.")
    return tensor


class CsvDataset(Dataset):
    """The records of CSV files, one tuple of scalars per record (TF's CsvDataset).

    Args:
      filenames: a string tensor of file names.
      record_defaults: one item per output column: a dtype (the field is required) or a
        default value for an empty field (a scalar or one-element tensor).
      compression_type: "", "GZIP" or "ZLIB".
      buffer_size: accepted (whole files are read).
      header: whether each file's first line is a header to skip.
      field_delim: the one-character field separator.
      use_quote_delim: whether double quotes delimit fields (which may then hold the
        separator and doubled quotes).
      na_value: a field value that also means "missing".
      select_cols: strictly increasing indices of the columns to read.

    Raises:
      TypeError: for a default of a type CSV fields cannot have.
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None):
        del buffer_size
        self._filenames = _filenames(filenames)
        self._defaults = [_record_default(d) for d in record_defaults]
        # An unsupported compression_type fails when the iterator is made, as in TF.
        self._options = {"compression": compression_type or "",
                         "header": bool(header), "field_delim": str(field_delim),
                         "use_quote_delim": bool(use_quote_delim), "na_value": str(na_value),
                         "select_cols": None if select_cols is None else
                         [int(c) for c in select_cols]}
        self._structure = tuple(TensorSpec([], d.dtype.base_dtype) for d in self._defaults)

    def _dataset_spec(self, builder):
        return {"kind": "csv", "args": builder.args([self._filenames, *self._defaults]),
                **self._options}


class FixedLengthRecordDataset(FileRecordDataset):
    """The `record_bytes`-long records of binary files, after `header_bytes` and before
    `footer_bytes` (TF1's tf.data.FixedLengthRecordDataset); `num_parallel_reads` files are
    interleaved a record at a time.

    An unsupported compression_type fails each file when it is read (InvalidArgumentError).

    Raises:
      TypeError: for file names that are not strings.
    """

    _kind = "fixed_length"

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None,
                 name=None):
        del buffer_size, name
        self._read(filenames, compression_type, num_parallel_reads,
                   record_bytes=int(record_bytes), header_bytes=int(header_bytes or 0),
                   footer_bytes=int(footer_bytes or 0))


# --- make_csv_dataset: TensorFlow's pipeline and its column inference ------------------------

def _file_names(file_pattern) -> list:
    patterns = file_pattern if isinstance(file_pattern, list) else [file_pattern]
    if not patterns:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = sorted(name for p in patterns for name in glob.glob(p))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names


def _reader(opener, name, field_delim, use_quote_delim):
    """The rows of one file; the file is closed when they are read or the reader dropped."""
    with opener(name) as f:
        yield from csv.reader(f, delimiter=field_delim,
                              quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)


def _infer_column_names(names, opener, field_delim, use_quote_delim) -> list:
    """The header row of the first file; every file must have the same."""
    column_names = None
    for name in names:
        try:
            header = next(_reader(opener, name, field_delim, use_quote_delim))
        except StopIteration:
            raise ValueError(f"Failed when reading the header line of {name}. Is it an empty "
                             "file?") from None
        if column_names is None:
            column_names = header
        elif header != column_names:
            raise ValueError("All input CSV files should have the same column names in the "
                             f"header row. File {name} has different column names.")
    return column_names


def _fits(value: str, dtype) -> bool:
    """TensorFlow's `_is_valid_*`: the NumPy type parses `value` (floats: finitely)."""
    try:
        if dtype == _dtypes.int32:
            return np.int32(value) == np.int64(value)
        if dtype == _dtypes.int64:
            np.int64(value)
            return True
        return bool(dtype.as_numpy_dtype(value) < np.inf)
    except (ValueError, OverflowError):
        return False


_INFERENCE_ORDER = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]


def _infer_type(value: str, na_value: str, previous):
    """The least permissive type for `value` that keeps the column's previous one valid."""
    if value in ("", na_value):
        return previous
    order = _INFERENCE_ORDER + [_dtypes.string]
    for i, dtype in enumerate(order):
        if (dtype == _dtypes.string or _fits(value, dtype)) and \
                (previous is None or previous in order[:i + 1]):
            return dtype
    return _dtypes.string


def _infer_column_defaults(names, opener, n_cols, field_delim, use_quote_delim, na_value,
                           header, num_rows, select_columns) -> list:
    """Defaults of the types the first `num_rows` records of the files show."""
    columns = select_columns if select_columns is not None else range(n_cols)
    types = [None] * len(columns)
    seen = 0
    for name in names:
        rows = _reader(opener, name, field_delim, use_quote_delim)
        if header:
            next(rows, None)
        for row_num, row in enumerate(rows, 2 if header else 1):
            if num_rows is not None and seen >= num_rows:
                break
            if len(row) != n_cols:
                raise ValueError(f"Problem inferring types: CSV row {row_num} has {len(row)} "
                                 f"number of fields. Expected: {n_cols}.")
            types = [_infer_type(row[c], na_value, t) for c, t in zip(columns, types)]
            seen += 1
    return [convert_to_tensor([0 if t != _dtypes.string else ""], dtype=t)
            for t in (t or _dtypes.string for t in types)]


def _sorted_col_indices(select_columns, column_names) -> list:
    index = {n: i for i, n in enumerate(column_names)}
    results = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(column_names):
                raise ValueError(f"Column index {v} specified in `select_columns` should be > "
                                 f"0  and <= {len(column_names)}, which is the number of "
                                 "columns.")
            results.append(v)
        elif v not in index:
            raise ValueError(f"Column {v} specified in `select_columns` must be of one of "
                             f"the columns: {index.keys()}.")
        else:
            results.append(index[v])
    if len(set(results)) != len(select_columns):
        ordered = sorted(results)
        duplicates = {a for a, b in zip(ordered[:-1], ordered[1:]) if a == b}
        raise ValueError("The `select_columns` argument contains duplicate columns: "
                         f"{duplicates}.")
    return sorted(set(results))


def _opener(compression_type, encoding):
    if compression_type in (None, ""):
        return lambda name: open(name, encoding=encoding, newline="")
    if compression_type == "GZIP":
        return lambda name: gzip.open(name, "rt", encoding=encoding, newline="")
    if compression_type == "ZLIB":
        raise ValueError(f"`compression_type` {compression_type} is not supported for "
                         "probing columns.")
    raise ValueError(f"Received unknown `compression_type` {compression_type}. Expected: "
                     "GZIP, ZLIB or  (empty string).")


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False,
                     encoding="utf-8"):
    """Batches of CSV records as OrderedDicts of column name -> values (TF's
    tf.data.experimental.make_csv_dataset).

    The files (sorted) are interleaved `num_parallel_reads` at a time, optionally shuffled
    and repeated `num_epochs` times (None: forever, and then batches are all full), batched
    and turned into features dicts; a `label_name` column becomes the second item.

    Returns:
      A `Dataset` of `features` or `(features, label)`.

    Raises:
      ValueError: for bad patterns, column names, selections or label names, as TensorFlow.
    """
    del sloppy
    num_parallel_reads = num_parallel_reads or 1
    names = _file_names(file_pattern)
    dataset = Dataset.from_tensor_slices(names)
    if shuffle:
        dataset = dataset.shuffle(len(names), shuffle_seed)
    if column_names is None or column_defaults is None:
        opener = _opener(compression_type, encoding)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is "
                             "provided.")
        column_names = _infer_column_names(names, opener, field_delim, use_quote_delim)
    if len(column_names) != len(set(column_names)):
        ordered = sorted(column_names)
        duplicates = {a for a, b in zip(ordered[:-1], ordered[1:]) if a == b}
        raise ValueError("Either `column_names` argument or CSV header row contains "
                         f"duplicate column names: {duplicates}.")
    if select_columns is not None:
        select_columns = _sorted_col_indices(select_columns, column_names)
    if column_defaults is None:
        column_defaults = _infer_column_defaults(
            names, opener, len(column_names), field_delim, use_quote_delim, na_value, header,
            num_rows_for_inference, select_columns)
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError("If specified, `column_defaults` and `select_columns` must have the "
                         f"same length: `column_defaults` has length {len(column_defaults)}, "
                         f"`select_columns` has length {len(select_columns)}.")
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError("`label_name` provided must be one of the columns: "
                         f"{column_names}. Received: {label_name}.")

    def filename_to_dataset(filename):
        records = CsvDataset(filename, column_defaults, compression_type, header=header,
                             field_delim=field_delim, use_quote_delim=use_quote_delim,
                             na_value=na_value, select_cols=select_columns)
        return records.ignore_errors() if ignore_errors else records

    def map_fn(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            return features, features.pop(label_name)
        return features

    dataset = dataset.interleave(filename_to_dataset, num_parallel_reads, 1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    return dataset.map(map_fn).prefetch(prefetch_buffer_size or 1)
