"""Shared test set-up: GPU-only tests are skipped where no CUDA GPU works; each test reads
BRRR_QUICK afresh (the library reads it once per process)."""
import pytest

from brrr import config


@pytest.fixture(autouse=True)
def settings_read_afresh():
    """Each test reads BRRR_QUICK afresh: one that sets it (``monkeypatch.setenv``, in the test or
    a fixture) before its first measurement gets it, and the next test starts clean."""
    config.reread()
    yield
    config.reread()


def pytest_collection_modifyitems(config, items):
    import brrr
    if brrr.device().backend == "cuda":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none found)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
