"""Devices: a named place with an array module (`xp`) and a resource manager for state.

Device types are plug-ins: a factory registered per type makes the devices of a session, so a
new type (a CuPy GPU, a restricted test device) needs no change to the runtime.
"""
from __future__ import annotations

import random
import threading
from collections.abc import Callable

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.runtime import host_allocator

LOCAL_JOB = "localhost"


class ResourceMgr:
    """State that outlives a step (variables, queues, ...), by (container, name)."""

    DEFAULT_CONTAINER = "localhost"

    def __init__(self):
        self._resources: dict[tuple[str, str], object] = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container: str, name: str, create: Callable[[], object]):
        key = (container or self.DEFAULT_CONTAINER, name)
        with self._lock:
            resource = self._resources.get(key)
            if resource is None:
                resource = self._resources[key] = create()
            return resource

    def lookup(self, container: str, name: str):
        key = (container or self.DEFAULT_CONTAINER, name)
        try:
            return self._resources[key]
        except KeyError:
            raise errors.NotFoundError(None, None, f"Resource {key[0]}/{name} does not "
                                       "exist.") from None

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            self._resources.pop((container or self.DEFAULT_CONTAINER, name), None)

    def clear(self) -> None:
        self._drop(lambda key: True)

    def clear_containers(self, containers: list[str]) -> None:
        """Frees the resources of `containers` (of the default container when empty), as
        TF's Session.reset does."""
        names = set(containers) or {self.DEFAULT_CONTAINER}
        self._drop(lambda key: key[0] in names)

    def _drop(self, chosen) -> None:
        with self._lock:
            keys = [key for key in self._resources if chosen(key)]
            resources = [self._resources.pop(key) for key in keys]
        for resource in resources:
            close = getattr(resource, "close_resource", None)
            if close is not None:
                close()


# TensorFlow reports this memory limit for its CPU devices.
CPU_MEMORY_LIMIT_BYTES = 268435456


class Device:
    """One device: full name, type, index, array module and resource manager.

    `incarnation` is a random nonzero 64-bit id of this device instance: rendezvous keys carry
    it so a restarted device never receives a tensor meant for its predecessor.
    """

    def __init__(self, name: str, device_type: str, xp, attributes: dict | None = None,
                 memory_limit_bytes: int = CPU_MEMORY_LIMIT_BYTES):
        self.name = name
        self.spec = DeviceSpec.from_string(name)
        self.device_type = device_type
        self.xp = xp
        self.resource_mgr = ResourceMgr()
        self.attributes = attributes or {}
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = random.getrandbits(63) | 1

    @property
    def index(self) -> int:
        return self.spec.device_index

    def __repr__(self) -> str:
        return f"Device({self.name!r})"


_FACTORIES: dict[str, Callable[[str, int], Device]] = {}


def register_device_factory(device_type: str, factory: Callable[[str, int], Device]) -> None:
    """`factory(name, index)` makes one device of `device_type`."""
    _FACTORIES[device_type] = factory


def device_types() -> list[str]:
    return list(_FACTORIES)


def _make_cpu(name: str, index: int) -> Device:
    host_allocator.retain_freed_memory()
    return Device(name, "CPU", np)


register_device_factory("CPU", _make_cpu)


def full_device_name(job: str, replica: int, task: int, device_type: str, index: int) -> str:
    return f"/job:{job}/replica:{replica}/task:{task}/device:{device_type}:{index}"


class DeviceAttributes:
    """What `Session.list_devices()` returns per device (TF's `_DeviceAttributes`)."""

    __slots__ = ("name", "device_type", "memory_limit_bytes", "incarnation")

    def __init__(self, name: str, device_type: str, memory_limit_bytes: int, incarnation: int):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = incarnation

    def __repr__(self) -> str:
        return (f"_DeviceAttributes({self.name}, {self.device_type}, "
                f"{self.memory_limit_bytes}, {self.incarnation})")


def describe_devices(devices: list[Device]) -> list[DeviceAttributes]:
    return [DeviceAttributes(d.name, d.device_type, d.memory_limit_bytes, d.incarnation)
            for d in devices]


class DeviceMgr:
    """The devices of one session (or one worker), looked up by name."""

    def __init__(self, devices: list[Device]):
        self.devices = devices
        self._by_name = {d.name: d for d in devices}

    @classmethod
    def local(cls, device_count: dict | None = None, job: str = LOCAL_JOB, task: int = 0):
        """The devices `device_count` asks for (one CPU by default).

        Like TF, keys are device types exactly as spelled: {'cpu': 3} counts no registered
        type and is ignored.

        Raises:
          NotFoundError: if the count leaves no CPU (TF's DeviceFactory::AddDevices).
        """
        counts = {"CPU": 1}
        counts.update({k: int(v) for k, v in (device_count or {}).items()})
        if counts["CPU"] <= 0:
            raise errors.NotFoundError(None, None, "No CPU devices are available in this "
                                       "process")
        devices = []
        for device_type, factory in _FACTORIES.items():
            for index in range(counts.get(device_type, 0)):
                devices.append(factory(full_device_name(job, 0, task, device_type, index), index))
        return cls(devices)

    def lookup(self, name: str) -> Device:
        return self._by_name[name]

    def clear_resources(self) -> None:
        for d in self.devices:
            d.resource_mgr.clear()
