"""tf.lookup: hash tables (static, vocabulary, mutable) and their initializers, as in TF1."""
from tensorweave.lookup import experimental
from tensorweave.lookup.initializers import (
    KeyValueTensorInitializer,
    TextFileIndex,
    TextFileInitializer,
)
from tensorweave.lookup.tables import StaticHashTable, StaticVocabularyTable

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable",
           "TextFileIndex", "TextFileInitializer", "experimental"]
