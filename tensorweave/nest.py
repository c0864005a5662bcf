"""tf.nest: nested structures flattened, rebuilt, compared and mapped (re-exports only)."""
from tensorweave.framework.nest import (
    assert_same_structure,
    flatten,
    is_nested,
    map_structure,
    pack_sequence_as,
)

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as"]
