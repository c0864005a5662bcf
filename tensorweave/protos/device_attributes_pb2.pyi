from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DeviceLocality(_message.Message):
    __slots__ = ("bus_id", "numa_node")
    BUS_ID_FIELD_NUMBER: _ClassVar[int]
    NUMA_NODE_FIELD_NUMBER: _ClassVar[int]
    bus_id: int
    numa_node: int
    def __init__(self, bus_id: _Optional[int] = ..., numa_node: _Optional[int] = ...) -> None: ...

class DeviceAttributes(_message.Message):
    __slots__ = ("name", "device_type", "memory_limit", "locality", "incarnation", "physical_device_desc")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    LOCALITY_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    PHYSICAL_DEVICE_DESC_FIELD_NUMBER: _ClassVar[int]
    name: str
    device_type: str
    memory_limit: int
    locality: DeviceLocality
    incarnation: int
    physical_device_desc: str
    def __init__(self, name: _Optional[str] = ..., device_type: _Optional[str] = ..., memory_limit: _Optional[int] = ..., locality: _Optional[_Union[DeviceLocality, _Mapping]] = ..., incarnation: _Optional[int] = ..., physical_device_desc: _Optional[str] = ...) -> None: ...
