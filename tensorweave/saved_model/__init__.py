"""tf.saved_model (TF1): SavedModel directories for serving, written and loaded.

SavedModelBuilder and simple_save write them, loader.load reads them, in TensorFlow's formats
both ways: TensorFlow loads ours and we load TensorFlow's.

TF2's object-based `tf.saved_model.save` / `load_v2` (trackable objects, tf.function
signatures) are not provided: tensorweave's models are graphs and sessions.
"""
from tensorweave.saved_model import (builder, constants, loader, main_op, signature_constants,
                                     signature_def_utils, tag_constants, utils)
from tensorweave.saved_model.builder import Builder, simple_save
from tensorweave.saved_model.constants import (
    ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT, SAVED_MODEL_SCHEMA_VERSION,
    VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from tensorweave.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory
from tensorweave.saved_model.main_op import main_op_with_restore
from tensorweave.saved_model.signature_constants import (
    CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS, PREDICT_METHOD_NAME, PREDICT_OUTPUTS,
    REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS)
from tensorweave.saved_model.signature_def_utils import (
    build_signature_def, classification_signature_def, is_valid_signature,
    predict_signature_def, regression_signature_def)
from tensorweave.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING
from tensorweave.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info
