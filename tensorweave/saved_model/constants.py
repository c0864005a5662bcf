"""A SavedModel directory's file names and collection keys (tf.saved_model.constants).

    export_dir/saved_model.pb          the SavedModel proto (or saved_model.pbtxt)
    export_dir/variables/variables.*   one checkpoint shared by every MetaGraphDef
    export_dir/assets/                 files the graphs read, such as vocabularies
"""

SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"

# Collections of the exported MetaGraphDefs.
ASSETS_KEY = "saved_model_assets"          # AssetFileDefs packed in Any protos
MAIN_OP_KEY = "saved_model_main_op"        # the op the loader runs after restoring
LEGACY_INIT_OP_KEY = "legacy_init_op"      # the same, as older programs stored it
TRAIN_OP_KEY = "saved_model_train_op"

# SignatureDef keys the builder reserves for its own ops.
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
