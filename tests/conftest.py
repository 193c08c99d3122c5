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


@pytest.fixture(autouse=True, scope="session")
def one_device_measurement_for_every_grading_batch(tmp_path_factory):
    """Every `brrr grade` batch of the session copies one measurement of the device (the first
    batch makes it) instead of measuring again: tests of grading are not about measuring."""
    import os
    from brrr.grade.batch import DEVICE_DIR_ENV
    os.environ[DEVICE_DIR_ENV] = str(tmp_path_factory.mktemp("grading-device"))
    yield
    os.environ.pop(DEVICE_DIR_ENV, None)


def pytest_collection_modifyitems(config, items):
    import brrr
    if brrr.device().backend == "cuda":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none found)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
