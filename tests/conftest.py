"""Shared test set-up: GPU-only tests are skipped where no CUDA GPU works."""
import pytest


def pytest_collection_modifyitems(config, items):
    import brrr
    if brrr.device().backend == "cuda":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none found)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
