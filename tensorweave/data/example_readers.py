"""tf.data over tf.train.Example records: parsing, batched feature datasets, a record writer.

parse_example_dataset and make_batched_features_dataset are the input functions of TF1
estimator-era programs; TFRecordWriter writes a dataset of serialized records to a file.

Both are compositions of Dataset methods, built as TensorFlow builds them: the parse is
`tf.parse_example` mapped over batches of serialized records (so a VarLenFeature comes out as
a SparseTensor per batch), and make_batched_features_dataset is list_files → interleave of
readers → shuffle / repeat → batch → parse → (features, label) → prefetch.
"""
from __future__ import annotations

from tensorweave.data.dataset_ops import Dataset
from tensorweave.framework import dtypes as _dtypes

__all__ = ["parse_example_dataset", "make_batched_features_dataset", "TFRecordWriter"]


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """A transformation (for Dataset.apply) parsing each element, a vector of serialized
    Examples, into a dict of feature tensors with `tf.parse_example(serialized, features)`.

    Raises:
      ValueError: without `features`, as TensorFlow.
    """
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")
    del num_parallel_calls, deterministic   # the map runs inline (data/experimental.py)
    return lambda dataset: dataset.map(lambda serialized: _parsed(serialized, features))


def _parsed(serialized, features) -> dict:
    """parse_example's dict, a SparseTensor's static dense shape the batch's size then None
    (TensorFlow's ParseExampleDataset reports it so)."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    from tensorweave.ops.parsing_ops import parse_example
    parsed = parse_example(serialized, features)
    for value in parsed.values():
        if isinstance(value, SparseTensor):
            value.set_shape(serialized.shape.concatenate([None]))
    return parsed


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of parsed Examples read from the files matching `file_pattern`.

    The files (shuffled unless `shuffle` is False) are read `reader_num_threads` at a time,
    interleaved, by `reader` (TFRecordDataset by default; a reader yielding (key, value) pairs
    keeps the values), shuffled and repeated `num_epochs` times (None: forever, and then every
    batch is full), batched, parsed with `features`; `label_key`'s feature becomes the second
    item of each element.

    Returns:
      A Dataset of feature dicts, or (features, label) with `label_key`.

    Raises:
      ValueError: if `label_key` is not one of the features.
    """
    if reader is None:
        from tensorweave.data.sources import TFRecordDataset
        reader = TFRecordDataset
    reader_args = list(reader_args or ())
    del parser_num_threads, sloppy_ordering   # maps and interleaves run inline, in order
    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                         "`features` keys.")
    dataset = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    dataset = dataset.interleave(lambda filename: reader(filename, *reader_args),
                                 reader_num_threads or 1, 1)
    if dataset.output_types == (_dtypes.string, _dtypes.string):
        dataset = dataset.map(lambda _, value: value)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features))
    if label_key is not None:
        def split_label(parsed):
            parsed = dict(parsed)
            return parsed, parsed.pop(label_key)
        dataset = dataset.map(split_label)
    return dataset.prefetch(prefetch_buffer_size or 1)


class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file (tf.data.experimental's).

    Args:
      filename: the file to (over)write.
      compression_type: None or "" (none), "ZLIB" or "GZIP".
    """

    def __init__(self, filename, compression_type=None):
        from tensorweave.framework.tensor_conversion import convert_to_tensor
        self._filename = convert_to_tensor(filename, _dtypes.string, name="filename")
        self._compression_type = convert_to_tensor(compression_type or "", _dtypes.string,
                                                   name="compression_type")

    def write(self, dataset):
        """The op that, when run, writes every element of `dataset` as one record.

        Raises:
          TypeError: unless `dataset`'s elements are scalar strings, in TensorFlow's words.
        """
        from tensorweave.data import nest
        from tensorweave.data.dataset_ops import TensorSpec, pipeline_tensor
        from tensorweave.ops.data_experimental_ops import dataset_to_tf_record
        spec = dataset._structure
        if not isinstance(spec, TensorSpec) or spec.dtype != _dtypes.string or \
                not spec.shape.is_compatible_with([]):
            shapes = nest.map_structure(lambda s: getattr(s, "shape", s), spec)
            types = nest.map_structure(lambda s: getattr(s, "dtype", s), spec)
            raise TypeError("Invalid `dataset`. Expected a`dataset` that produces scalar "
                            "`tf.string` elements, but got a dataset which produces elements "
                            f"with shapes {shapes} and types {types}.")
        variant, _ = pipeline_tensor(dataset)
        return dataset_to_tf_record(variant, self._filename, self._compression_type)
