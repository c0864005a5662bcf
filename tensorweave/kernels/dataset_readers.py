"""Runtime nodes of the file datasets (data/readers.py): CSV, text, TFRecord, fixed-length.

Each file is read and decoded whole, then parsed a column at a time with NumPy: a CSV file's
fields are split by Python's csv module (TensorFlow's quoting rules: RFC 4180 quotes, doubled
quotes inside them), each selected column becomes one array converted in one `astype`; a
fixed-length file's body is cut into records by slicing. As in TensorFlow, the records before
a bad one are yielded before its error is raised.

A per-file node reads one file name (args[0]) with the compression type of args[1], a run-time
string as in TensorFlow, where the Python classes flat_map or interleave these nodes over the
file names. Its compression type is checked when the node is made (TF's MakeDataset), so an
unsupported one fails each file's dataset in turn: the text and fixed-length readers with
InvalidArgumentError, while the TFRecord reader logs an error and reads the file uncompressed.
"""
from __future__ import annotations

import csv
import io

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import dataset_files, dataset_runtime
from tensorweave.kernels.dataset_runtime import Node
from tensorweave.platform import tf_logging

_NUMPY = {"int32": np.int32, "int64": np.int64, "float32": np.float32,
          "float64": np.float64}
_COMPRESSIONS = ("", "GZIP", "ZLIB")   # TF's names, case-sensitive: "gzip" is unsupported


class _Csv(Node):
    """Its args: the filenames, then one default per output column (an empty default: the
    field is required)."""

    def __init__(self, spec, args, functions):
        self.files = np.ravel(args[spec["args"][0]])
        self.defaults = [np.asarray(args[i]) for i in spec["args"][1:]]
        self.spec = spec
        if spec["compression"] not in _COMPRESSIONS:
            # TF's CSVDatasetV2 checks it when the iterator is made, files or not.
            raise invalid_argument(f"Unsupported compression_type: {spec['compression']}.")
        select = spec["select_cols"]
        if select is not None:
            if any(b <= a for a, b in zip(select, select[1:])) or (select and select[0] < 0):
                raise invalid_argument("select_cols should be strictly increasing indices")
            if len(select) != len(self.defaults):
                raise invalid_argument("select_cols should match output size")
        self.select = select if select is not None else list(range(len(self.defaults)))

    def _files(self):
        """Per file: its columns (the records before a bad one) and the bad one's error."""
        for name in self.files:
            yield self._parse(dataset_files.file_bytes(name, self.spec["compression"]))

    def __iter__(self):
        for columns, error in self._files():
            # A string field as a 0-d object array, as the other string sources yield.
            yield from zip(*([np.array(v, dtype=object) for v in c] if c.dtype.kind == "O"
                             else c for c in columns))
            if error is not None:
                raise error

    def batches(self, n, drop):
        """Slices of the columns, concatenated across files: the records of `__iter__`
        stacked n at a time."""
        pending = None
        for columns, error in self._files():
            if pending is not None:
                columns = [np.concatenate([p, c]) for p, c in zip(pending, columns)]
            size = len(columns[0]) if columns else 0
            full = size - size % n
            for i in range(0, full, n):
                yield tuple(c[i:i + n] for c in columns)
            pending = [c[full:] for c in columns]
            if error is not None:
                raise error
        if pending and len(pending[0]) and not drop:
            yield tuple(pending)

    def _rows(self, data: bytes):
        """The records of a file as lists of fields (bytes decoded as latin-1, one char per
        byte), the header skipped, empty lines ignored."""
        spec = self.spec
        reader = csv.reader(io.StringIO(data.decode("latin-1"), newline=""),
                            delimiter=spec["field_delim"], strict=False,
                            quoting=csv.QUOTE_MINIMAL if spec["use_quote_delim"]
                            else csv.QUOTE_NONE)
        rows = [row for row in reader if row]
        return rows[1:] if spec["header"] else rows

    def _parse(self, data: bytes):
        """The columns of the good records before the first bad one, and its error (or None)."""
        rows = self._rows(data)
        n_fields = len(self.defaults) if self.spec["select_cols"] is None else \
            self.select[-1] + 1 if self.select else 0
        stop, error = len(rows), None
        for r, row in enumerate(rows):
            if len(row) != n_fields and (self.spec["select_cols"] is None or
                                         len(row) < n_fields):
                have = "more" if len(row) > n_fields else len(row)
                stop, error = r, invalid_argument(f"Expect {n_fields} fields but have {have} in "
                                                  "record")
                break
        while True:   # converted again over fewer records each time a column has a bad one
            columns, bad = [], stop
            for k, (col, default) in enumerate(zip(self.select, self.defaults)):
                fields = np.array([row[col] for row in rows[:stop]], dtype=object)
                values, first_bad, message = self._column(k, fields, default)
                if first_bad < bad:
                    bad, error = first_bad, invalid_argument(message)
                columns.append(values)
            if bad == stop:
                return columns, error
            stop = bad

    def _column(self, k: int, fields, default):
        """One column converted: (values, index of its first bad field or len, message)."""
        missing = (fields == "") | (fields == self.spec["na_value"])
        n = fields.size
        if default.size == 0 and missing.any():
            bad = int(np.argmax(missing))
            return None, bad, f"Field {k} is required but missing in record!"
        dtype = default.dtype
        if dtype.kind == "O":
            values = np.array([f.encode("latin-1") for f in fields.tolist()] or [],
                              dtype=object)
            values[missing] = default.ravel()[0] if default.size else b""
            return values, n, ""
        filled = np.where(missing, "0", fields)
        try:
            values = filled.astype(str).astype(dtype)
        except (ValueError, OverflowError):
            bad = next(i for i, f in enumerate(filled.tolist()) if not _parses(f, dtype))
            return None, bad, f"Field {k} in record is not a valid {dtype.name}: {filled[bad]}"
        if default.size:
            values[missing] = default.ravel()[0]
        return values, n, ""


def _parses(field: str, dtype) -> bool:
    try:
        np.array([field]).astype(dtype)
        return True
    except (ValueError, OverflowError):
        return False


class _FileRecords(Node):
    """The records of one file: args are its name and compression type, both scalars."""

    def __init__(self, spec, args, functions):
        self.name = np.asarray(args[spec["args"][0]]).item()
        compression = np.asarray(args[spec["args"][1]]).item()
        self.compression = compression.decode() if isinstance(compression, bytes) \
            else str(compression)
        self.spec = spec
        if self.compression not in _COMPRESSIONS:
            self.unsupported_compression()

    def unsupported_compression(self) -> None:
        raise invalid_argument("Unsupported compression_type.")

    def records(self):
        raise NotImplementedError

    def __iter__(self):
        for record in self.records():
            yield (np.array(record, dtype=object),)


class _TextLine(_FileRecords):
    def records(self):
        return dataset_files.text_lines(self.name, self.compression)


class _TFRecord(_FileRecords):
    def unsupported_compression(self) -> None:
        # TF's RecordReaderOptions: an unknown type is logged and the file read uncompressed.
        tf_logging.error("Unsupported compression_type:%s. No compression will be used.",
                         self.compression)
        self.compression = ""

    def records(self):
        return dataset_files.tf_records(self.name, self.compression)


class _FixedLength(_FileRecords):
    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        if spec["record_bytes"] <= 0:
            raise invalid_argument("`record_bytes` must be > 0")

    def records(self):
        spec, name = self.spec, self.name
        size, header, footer = spec["record_bytes"], spec["header_bytes"], spec["footer_bytes"]
        data = dataset_files.file_bytes(name, self.compression)
        body = data[header:max(header, len(data) - footer)]
        n, extra = divmod(len(body), size)
        message = (f"Excluding the header ({header} bytes) and footer ({footer} bytes), "
                   f'input file "{dataset_files.path(name)}" has body length '
                   f"{len(body)} bytes, which is not an exact multiple of the record "
                   f"length ({size} bytes).")
        if extra and not self.compression:
            raise invalid_argument(message)
        for i in range(0, n * size, size):
            yield body[i:i + size]
        if extra:
            raise errors.DataLossError(None, None, message)


class _Refused(Node):
    """A dataset TensorFlow refuses when its iterator is made (a reader's `num_parallel_reads`
    that is neither positive nor AUTOTUNE): the error is raised then, not when it is built."""

    def __init__(self, spec, args, functions):
        raise invalid_argument(spec["message"])


dataset_runtime.register_nodes({"csv": _Csv, "text_line": _TextLine, "tfrecord": _TFRecord,
                                "fixed_length": _FixedLength, "refused": _Refused})
