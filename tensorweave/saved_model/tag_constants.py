"""The standard tags of a SavedModel's MetaGraphDefs (tf.saved_model.tag_constants)."""

SERVING = "serve"      # the graph a model server loads
TRAINING = "train"     # a graph to resume training from
EVAL = "eval"          # an evaluation graph
GPU = "gpu"            # the graph is meant for GPUs
TPU = "tpu"            # the graph is meant for TPUs
