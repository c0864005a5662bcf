from tensorweave.protos import cluster_pb2 as _cluster_pb2
from tensorweave.protos import config_pb2 as _config_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ServerDef(_message.Message):
    __slots__ = ("cluster", "job_name", "task_index", "default_session_config", "protocol", "port")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    JOB_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_INDEX_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SESSION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    cluster: _cluster_pb2.ClusterDef
    job_name: str
    task_index: int
    default_session_config: _config_pb2.ConfigProto
    protocol: str
    port: int
    def __init__(self, cluster: _Optional[_Union[_cluster_pb2.ClusterDef, _Mapping]] = ..., job_name: _Optional[str] = ..., task_index: _Optional[int] = ..., default_session_config: _Optional[_Union[_config_pb2.ConfigProto, _Mapping]] = ..., protocol: _Optional[str] = ..., port: _Optional[int] = ...) -> None: ...
