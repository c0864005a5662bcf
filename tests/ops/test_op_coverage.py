"""Meta-tests: every registered op has a shape function, a CPU kernel and an OpCase row."""
import glob
import importlib.util
import os

import pytest

import tensorweave  # noqa: F401 - registers every op and kernel
from tensorweave.framework.op_def import OP_REGISTRY
from tensorweave.kernels.registry import registered_op_types
from tensorweave.testing.op_case import OpCase, op_types_of

HERE = os.path.dirname(os.path.abspath(__file__))
# Run by the executor itself, or test-only.
EXECUTOR_OPS = {"_Arg", "_Retval", "Const"}
# Stateful ops whose behaviour (not a pure function of inputs) is tested in a dedicated file.
_QUEUE_OPS = ["FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2",
              "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
              "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"]
_ACCUMULATOR_OPS = [prefix + name for prefix in ("", "Resource") for name in (
    "ConditionalAccumulator", "AccumulatorApplyGradient", "AccumulatorTakeGradient",
    "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep")] + [
    "SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
    "SparseAccumulatorTakeGradient"]
_READER_OPS = ["WholeFileReaderV2", "TFRecordReaderV2", "IdentityReaderV2", "ReaderReadV2",
               "ReaderReadUpToV2", "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",
               "ReaderResetV2", "ReaderSerializeStateV2", "ReaderRestoreStateV2", "ReadFile"]
TESTED_ELSEWHERE = {
    "DatasetPipeline": "data/test_iterator_ops.py",
    "InitializeTableFromDataset": "data/test_lookup_from_dataset.py",
    "IteratorV2": "data/test_iterator_ops.py",
    "OneShotIterator": "data/test_iterator_ops.py",
    "MakeIterator": "data/test_iterator_ops.py",
    "IteratorGetNext": "data/test_iterator_ops.py",
    "IteratorToStringHandle": "data/test_iterator_ops.py",
    "IteratorFromStringHandleV2": "data/test_iterator_ops.py",
    "ReduceDataset": "data/test_reduce.py",
    "DatasetCardinality": "data/test_experimental.py",
    "DatasetToSingleElement": "data/test_experimental.py",
    "DatasetToTFRecord": "data/test_tf_record_writer.py",
    **dict.fromkeys(["IteratorGetNextAsOptional", "OptionalFromValue", "OptionalNone",
                     "OptionalHasValue", "OptionalGetValue"], "data/test_optional.py"),
    "SerializeIterator": "data/test_iterator_checkpoint.py",
    "DeserializeIterator": "data/test_iterator_checkpoint.py",
    "Placeholder": "ops/test_constant_op.py",
    "VariableV2": "ops/test_variables.py",
    "Assign": "ops/test_variables.py",
    "AssignAdd": "ops/test_variables.py",
    "AssignSub": "ops/test_variables.py",
    "IsVariableInitialized": "ops/test_variables.py",
    **dict.fromkeys(["VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
                     "AssignSubVariableOp", "VarIsInitializedOp", "ResourceCountUpTo",
                     "ResourceGatherNd"],
                    "ops/test_resource_variables.py"),
    "SaveV2": "train/test_checkpoint_ops.py",
    "RestoreV2": "train/test_checkpoint_ops.py",
    "MergeV2Checkpoints": "train/test_checkpoint_ops.py",
    **{op: "ops/test_control_flow_primitives.py" for op in (
        "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
        "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger")},
    **{op: "ops/test_stack_ops.py" for op in (
        "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2")},
    "TensorArrayGradV3": "ops/test_tensor_array.py",
    "TensorArrayCloseV3": "ops/test_tensor_array.py",
    "CountUpTo": "train/test_input.py",
    **dict.fromkeys(["StridedSliceAssign", "ResourceStridedSliceAssign"],
                    "ops/test_slice_assign.py"),
    **dict.fromkeys(["GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"],
                    "runtime/test_session_handles.py"),
    **dict.fromkeys(["ParseExample", "ParseSingleExample", "ParseSingleSequenceExample"],
                    "ops/test_legacy_ops.py"),
    **dict.fromkeys(["Variable", "PlaceholderV2"], "ops/test_legacy_array_ops.py"),
    # Stateful queue, accumulator and reader ops: tested through their resources.
    **dict.fromkeys(_QUEUE_OPS, "ops/test_queues.py"),
    **dict.fromkeys(_ACCUMULATOR_OPS, "ops/test_accumulators.py"),
    **dict.fromkeys(_READER_OPS, "ops/test_readers.py"),
}


def _public_ops():
    return sorted(name for name in OP_REGISTRY if not name.startswith("_Test"))


def _all_cases():
    cases = []
    image_tests = os.path.join(os.path.dirname(HERE), "image")   # tf.image's ops live there
    paths = glob.glob(os.path.join(HERE, "test_*.py")) + \
        glob.glob(os.path.join(image_tests, "test_*.py"))
    for path in sorted(paths):
        if path == os.path.abspath(__file__):
            continue
        spec = importlib.util.spec_from_file_location(f"_coverage_{os.path.basename(path)}",
                                                      path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if isinstance(value, (list, tuple)) and value and \
                    all(isinstance(c, OpCase) for c in value):
                cases.extend(value)
    return cases


def test_every_op_with_outputs_has_a_shape_function():
    missing = [n for n in _public_ops() if OP_REGISTRY[n].outputs and
               OP_REGISTRY[n].shape_fn is None]
    assert not missing, f"ops without a shape function: {missing}"


def test_every_op_has_a_cpu_kernel():
    have = registered_op_types("CPU") | EXECUTOR_OPS
    missing = [n for n in _public_ops() if n not in have]
    assert not missing, f"ops without a CPU kernel: {missing}"


@pytest.mark.parametrize("unused", [None])
def test_every_op_has_a_test_row(unused):
    covered = set()
    for case in _all_cases():
        covered |= op_types_of(case)
    exempt = EXECUTOR_OPS | set(TESTED_ELSEWHERE)
    missing = [n for n in _public_ops() if n not in covered and n not in exempt
               and not n.startswith("_")]
    assert not missing, f"ops without an OpCase row in tests/ops: {missing}"


def test_ops_tested_elsewhere_are_tested_there():
    root = os.path.dirname(HERE)
    for op_type, path in TESTED_ELSEWHERE.items():
        assert op_type in OP_REGISTRY, f"{op_type} is listed but not registered"
        with open(os.path.join(root, path)) as f:
            assert op_type in f.read(), f"{path} does not mention {op_type}"
