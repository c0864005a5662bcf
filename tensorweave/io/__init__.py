"""tf.io: file formats and I/O utilities (re-exports only)."""
from tensorweave.ops.decode_ops import (
    decode_csv,
    decode_json_example,
    decode_raw,
    parse_tensor,
    serialize_tensor,
)
from tensorweave.ops.file_io_ops import (
    decode_base64,
    decode_compressed,
    encode_base64,
    matching_files,
    write_file,
)
from tensorweave.ops.image_codec_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from tensorweave.ops.parsing_ops import (
    FixedLenFeature,
    SparseFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from tensorweave.ops.sequence_parsing_ops import (
    parse_sequence_example,
    parse_single_sequence_example,
)
from tensorweave.ops.reader_ops import read_file
from tensorweave.ops.sparse_serialize_ops import (
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from tensorweave.framework.graph_io import write_graph
from tensorweave.platform import gfile
from tensorweave.train.input import match_filenames_once
from tensorweave.io.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
# TF's tf.io has these queue classes, but not FIFOQueue.
from tensorweave.queue import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
