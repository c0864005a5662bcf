"""DeviceSpec: parse, merge and print device names like `/job:w/replica:0/task:1/device:CPU:0`.

The front end needs it for `tf.device` scopes and the runtime for placement, so it lives in
`framework/` (DESIGN.md lists it under runtime/devices.py; see ARCHITECTURE.md).
"""
from __future__ import annotations

from functools import lru_cache


class DeviceSpec:
    """A (possibly partial) device specification; unset fields are None (TF1's DeviceSpec)."""

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = _normalize_type(device_type)
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        """Parses full, short (`/cpu:0`, `CPU:1`, `/gpu:*`) and partial device strings.

        Raises:
          ValueError: for an unknown field (`/foo:1`, `/Job:a`, `/device:CPU`), two device
            types (`/cpu:0/gpu:1`) or an index that is not an integer.
        """
        return cls(*_parse(spec or ""))

    def parse_from_string(self, spec: str) -> DeviceSpec:
        self.job, self.replica, self.task, self.device_type, self.device_index = _parse(spec)
        return self

    def merge_from(self, other: DeviceSpec) -> None:
        """Overrides this spec's fields with the fields `other` sets (TF1, mutating)."""
        for field in self.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(self, field, value)

    def make_merged_spec(self, other: DeviceSpec) -> DeviceSpec:
        """A new spec: this one with the fields `other` sets overriding it."""
        merged = self.copy()
        merged.merge_from(other)
        return merged

    def replace(self, **kwargs) -> DeviceSpec:
        merged = self.copy()
        for k, v in kwargs.items():
            setattr(merged, k, _normalize_type(v) if k == "device_type" else v)
        return merged

    def copy(self) -> DeviceSpec:
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def to_string(self) -> str:
        return _to_string(self.job, self.replica, self.task, self.device_type, self.device_index)

    def is_compatible_with(self, other: DeviceSpec) -> bool:
        """True if no field is set differently in the two specs."""
        for field in self.__slots__:
            a, b = getattr(self, field), getattr(other, field)
            if a is not None and b is not None and a != b:
                return False
        return True

    def matches(self, full: DeviceSpec) -> bool:
        """True if the concrete device `full` satisfies every field this spec sets."""
        return self.is_compatible_with(full)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"


# Device types the short form (`/cpu:0`, `/GPU:1`) accepts in any case: TF's
# DeviceSpec._VALID_DEVICE_TYPES. Any other type needs the full `/device:TYPE:N` form.
_SHORT_FORM_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})


def _normalize_type(device_type):
    """Like TF, only the legacy lowercase 'cpu' and 'gpu' are uppercased ('Cpu' stays)."""
    if device_type is None:
        return None
    device_type = str(device_type)
    return device_type.upper() if device_type in ("cpu", "gpu") else device_type


@lru_cache(maxsize=4096)
def _parse(spec: str):
    """TF's DeviceSpec._string_to_components: keys are case-sensitive, one device per spec."""
    job = replica = task = device_type = device_index = None
    for part in spec.split("/"):
        fields = part.split(":")
        key, n = fields[0], len(fields)
        if n == 2 and key == "job":
            job = fields[1]
        elif n == 2 and key == "replica":
            replica = int(fields[1])
        elif n == 2 and key == "task":
            task = int(fields[1])
        elif (n in (1, 2) and key.upper() in _SHORT_FORM_TYPES) or (n == 3 and key == "device"):
            if device_type is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the "
                                 f"device spec: {spec}.")
            device_type = key.upper() if n < 3 else fields[1]
            if n > 1 and fields[-1] != "*":
                device_index = int(fields[-1])
        elif key:
            raise ValueError(f"Unknown attribute '{key}' is encountered while parsing the "
                             f"device spec: '{spec}'.")
    return job, replica, task, _normalize_type(device_type), device_index


def _to_string(job, replica, task, device_type, device_index) -> str:
    out = []
    if job is not None:
        out.append(f"/job:{job}")
    if replica is not None:
        out.append(f"/replica:{replica}")
    if task is not None:
        out.append(f"/task:{task}")
    if device_type is not None:
        index = "*" if device_index is None else device_index
        out.append(f"/device:{device_type}:{index}")
    return "".join(out)


@lru_cache(maxsize=4096)
def canonical(spec: str) -> str:
    """The canonical string of a device string (`/cpu:0` → `/device:CPU:0`); '' stays ''."""
    return DeviceSpec.from_string(spec).to_string() if spec else ""


@lru_cache(maxsize=4096)
def merge_strings(outer: str, inner: str) -> str:
    """`inner` merged over `outer`: the device of an op made under both scopes."""
    if not outer:
        return canonical(inner)
    merged = DeviceSpec.from_string(outer)
    merged.merge_from(DeviceSpec.from_string(inner))
    return merged.to_string()
