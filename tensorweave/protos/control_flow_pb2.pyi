from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ValuesDef(_message.Message):
    __slots__ = ("values", "external_values")
    class ExternalValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    external_values: _containers.ScalarMap[str, str]
    def __init__(self, values: _Optional[_Iterable[str]] = ..., external_values: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ControlFlowContextDef(_message.Message):
    __slots__ = ("cond_ctxt", "while_ctxt")
    COND_CTXT_FIELD_NUMBER: _ClassVar[int]
    WHILE_CTXT_FIELD_NUMBER: _ClassVar[int]
    cond_ctxt: CondContextDef
    while_ctxt: WhileContextDef
    def __init__(self, cond_ctxt: _Optional[_Union[CondContextDef, _Mapping]] = ..., while_ctxt: _Optional[_Union[WhileContextDef, _Mapping]] = ...) -> None: ...

class CondContextDef(_message.Message):
    __slots__ = ("context_name", "pred_name", "pivot_name", "branch", "values_def", "nested_contexts")
    CONTEXT_NAME_FIELD_NUMBER: _ClassVar[int]
    PRED_NAME_FIELD_NUMBER: _ClassVar[int]
    PIVOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    VALUES_DEF_FIELD_NUMBER: _ClassVar[int]
    NESTED_CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    context_name: str
    pred_name: str
    pivot_name: str
    branch: int
    values_def: ValuesDef
    nested_contexts: _containers.RepeatedCompositeFieldContainer[ControlFlowContextDef]
    def __init__(self, context_name: _Optional[str] = ..., pred_name: _Optional[str] = ..., pivot_name: _Optional[str] = ..., branch: _Optional[int] = ..., values_def: _Optional[_Union[ValuesDef, _Mapping]] = ..., nested_contexts: _Optional[_Iterable[_Union[ControlFlowContextDef, _Mapping]]] = ...) -> None: ...

class WhileContextDef(_message.Message):
    __slots__ = ("context_name", "parallel_iterations", "back_prop", "swap_memory", "pivot_name", "pivot_for_pred_name", "pivot_for_body_name", "loop_exit_names", "loop_enter_names", "values_def", "maximum_iterations_name", "nested_contexts")
    CONTEXT_NAME_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    BACK_PROP_FIELD_NUMBER: _ClassVar[int]
    SWAP_MEMORY_FIELD_NUMBER: _ClassVar[int]
    PIVOT_NAME_FIELD_NUMBER: _ClassVar[int]
    PIVOT_FOR_PRED_NAME_FIELD_NUMBER: _ClassVar[int]
    PIVOT_FOR_BODY_NAME_FIELD_NUMBER: _ClassVar[int]
    LOOP_EXIT_NAMES_FIELD_NUMBER: _ClassVar[int]
    LOOP_ENTER_NAMES_FIELD_NUMBER: _ClassVar[int]
    VALUES_DEF_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_ITERATIONS_NAME_FIELD_NUMBER: _ClassVar[int]
    NESTED_CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    context_name: str
    parallel_iterations: int
    back_prop: bool
    swap_memory: bool
    pivot_name: str
    pivot_for_pred_name: str
    pivot_for_body_name: str
    loop_exit_names: _containers.RepeatedScalarFieldContainer[str]
    loop_enter_names: _containers.RepeatedScalarFieldContainer[str]
    values_def: ValuesDef
    maximum_iterations_name: str
    nested_contexts: _containers.RepeatedCompositeFieldContainer[ControlFlowContextDef]
    def __init__(self, context_name: _Optional[str] = ..., parallel_iterations: _Optional[int] = ..., back_prop: _Optional[bool] = ..., swap_memory: _Optional[bool] = ..., pivot_name: _Optional[str] = ..., pivot_for_pred_name: _Optional[str] = ..., pivot_for_body_name: _Optional[str] = ..., loop_exit_names: _Optional[_Iterable[str]] = ..., loop_enter_names: _Optional[_Iterable[str]] = ..., values_def: _Optional[_Union[ValuesDef, _Mapping]] = ..., maximum_iterations_name: _Optional[str] = ..., nested_contexts: _Optional[_Iterable[_Union[ControlFlowContextDef, _Mapping]]] = ...) -> None: ...
