"""tf.data: input pipelines as datasets and iterators (TF1's tf.compat.v1.data)."""
from tensorweave.data import experimental
from tensorweave.data.dataset_ops import Dataset, DatasetSpec, TensorSpec
from tensorweave.data.experimental import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from tensorweave.data.iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from tensorweave.data.options import Options, ThreadingOptions
from tensorweave.data.readers import FixedLengthRecordDataset
from tensorweave.data.sources import TextLineDataset, TFRecordDataset
