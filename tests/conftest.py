"""Fixtures shared across the test suite."""
import pytest

from tensorweave.runtime.executor import compiled_frames


@pytest.fixture(params=["compiled", "interpreted"])
def executor_kind(request, monkeypatch):
    """Runs a control-flow test on generated frame code and on the frames interpreter."""
    if request.param == "interpreted":
        monkeypatch.setattr(compiled_frames, "compile_partition", lambda *args: None)
    return request.param
