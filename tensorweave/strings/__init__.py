"""tf.strings: string ops (re-exports only)."""
from tensorweave.ops.decode_ops import string_to_number as to_number
from tensorweave.ops.logging_ops import string_format as format  # noqa: A001 - TF's name
from tensorweave.ops.string_ops import as_string, reduce_join, substr
from tensorweave.ops.string_ops import string_join as join
from tensorweave.ops.string_ops import string_length as length
from tensorweave.ops.string_ops import string_lower as lower
from tensorweave.ops.string_ops import string_strip as strip
from tensorweave.ops.string_ops import unsorted_segment_join
from tensorweave.ops.string_ops import string_upper as upper
from tensorweave.ops.string_regex_ops import regex_full_match, regex_replace
from tensorweave.ops.string_hash_ops import string_to_hash_bucket as to_hash_bucket
from tensorweave.ops.string_hash_ops import string_to_hash_bucket_fast as to_hash_bucket_fast
from tensorweave.ops.string_hash_ops import string_to_hash_bucket_strong as to_hash_bucket_strong
from tensorweave.ops.string_ngrams_ops import ngrams
from tensorweave.ops.string_unicode_ops import unicode_transcode
from tensorweave.ops.string_split_ops import strings_split as split
