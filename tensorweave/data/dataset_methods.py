"""The methods TF 2.x gave tf.data.Dataset for tf.data.experimental's transformations.

A mixin of `Dataset` (data/dataset_ops.py): each method builds the transformation of
data/transformations.py (imported when called: that module builds on dataset_ops).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes


class DatasetMethods:
    """enumerate, scan, take_while, unique, ignore_errors, sparse_batch, group_by_window,
    bucket_by_sequence_length, rejection_resample, rebatch, snapshot, cardinality,
    get_single_element, options, and the static sample_from_datasets, choose_from_datasets,
    counter and random."""

    def enumerate(self, start=0, name=None):
        """(int64 index from `start`, element) pairs."""
        from tensorweave.data.transformations import enumerate_dataset
        return enumerate_dataset(self, start)

    def scan(self, initial_state, scan_func, name=None):
        """Outputs of `scan_func(state, element) -> (new_state, output)` from
        `initial_state`."""
        from tensorweave.data.transformations import Scan
        return Scan(self, initial_state, scan_func)

    def take_while(self, predicate, name=None):
        """The elements before the first one for which `predicate` is False."""
        from tensorweave.data.transformations import TakeWhile
        return TakeWhile(self, predicate)

    def unique(self, name=None):
        """The first occurrence of each element (one int32, int64 or string component)."""
        from tensorweave.data.transformations import Unique
        return Unique(self)

    def ignore_errors(self, log_warning=False, name=None):
        """The elements whose computation does not fail (see kernels/dataset_experimental.py
        for the one departure)."""
        from tensorweave.data.transformations import IgnoreErrors
        return IgnoreErrors(self)

    def sparse_batch(self, batch_size, row_shape, name=None):
        """Batches of elements of different shapes as SparseTensors of dense shape
        [batch, *row_shape] (tf.data.experimental.dense_to_sparse_batch)."""
        from tensorweave.data.sparse_batching import DenseToSparseBatch
        return DenseToSparseBatch(self, batch_size, row_shape)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        """Windows of elements of equal int64 key, each reduced to a dataset."""
        from tensorweave.data.transformations import GroupByWindow
        return GroupByWindow(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None):
        """Padded batches of elements of similar length (see tf.data.experimental)."""
        from tensorweave.data.transformations import bucket_by_sequence_length
        return bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                         bucket_batch_sizes, padded_shapes, padding_values,
                                         pad_to_bucket_boundary, no_padding, drop_remainder)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None,
                           name=None):
        """(class_func(element), element) pairs resampled so that the classes follow
        `target_dist` (see data/resampling.py)."""
        from tensorweave.data.resampling import rejection_resample
        return rejection_resample(self, class_func, target_dist, initial_dist, seed)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """The rows of this dataset's batches in batches of `batch_size` (a vector: the sizes
        in turn); for a scalar, `unbatch().batch(batch_size, drop_remainder)`."""
        from tensorweave.data.rebatching import Rebatch
        return Rebatch(self, batch_size, drop_remainder)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None):
        """The same elements, written under `path` by the first full pass and read back by
        later ones, in any session or process (see data/snapshot.py)."""
        from tensorweave.data.snapshot import Snapshot
        return Snapshot(self, path, compression, reader_func, shard_func)

    def cardinality(self):
        """The number of elements as an int64 scalar tensor (-1 infinite, -2 unknown)."""
        from tensorweave.data.transformations import cardinality
        return cardinality(self)

    def get_single_element(self, name=None):
        """The only element, as tensors; running them fails unless there is exactly one."""
        from tensorweave.data.transformations import get_single_element
        return get_single_element(self, name)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Elements drawn at random from `datasets` with probabilities `weights`."""
        from tensorweave.data.transformations import sample_from_datasets
        return sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset,
                                    rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """Elements of `datasets[i]` for each int64 `i` of `choice_dataset`."""
        from tensorweave.data.transformations import choose_from_datasets
        return choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def counter(start=0, step=1, dtype=_dtypes.int64, name=None):
        """start, start + step, ... without end."""
        from tensorweave.data.transformations import counter
        return counter(start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """Pseudorandom int64 scalars in [0, 2**32) without end: TensorFlow's for the seed."""
        from tensorweave.data.random_dataset import RandomDataset
        return RandomDataset(seed, rerandomize_each_iteration)

    def with_options(self, options, name=None):
        """This dataset with `options` (tf.data.Options) merged over its own."""
        from tensorweave.data.transformations import WithOptions
        return WithOptions(self, self.options().merge(options))

    def options(self):
        """The tf.data.Options of this dataset: those of the nearest with_options upstream."""
        from tensorweave.data.options import Options
        from tensorweave.data.transformations import WithOptions
        dataset = self
        while dataset is not None:
            if isinstance(dataset, WithOptions):
                return dataset._options
            dataset = getattr(dataset, "_input", None)
        return Options()
