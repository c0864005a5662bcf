"""Peak memory of a phase of a workload: the growth of the process's resident set (Linux).

The same measurement serves every framework, so the ratios compare like with like: what the
operating system had to give the process for sessions, variables, optimizer slots, per-step
temporaries and any allocator caching. Before the phase, memory freed earlier in the process
is handed back to the system (`gc.collect`, glibc's `malloc_trim`) and the kernel's
high-water mark is reset (`/proc/self/clear_refs` 5); after it, the metric is that mark
(VmHWM) minus the resident set at the start. Elsewhere than Linux the metric is unavailable.
"""
import ctypes
import gc


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"no {field} in /proc/self/status")


def start_phase() -> int:
    """Resets the peak and returns the resident set now, in kB (pass it to `peak_growth_mb`)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: freed memory may stay resident
        pass
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return _status_kb("VmRSS")


def peak_growth_mb(start_kb: int) -> float:
    """The high-water mark of the resident set since `start_phase`, above its start, in MB."""
    return (_status_kb("VmHWM") - start_kb) / 1024
