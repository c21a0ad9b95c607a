"""Test-wide settings: the book runs offline, quietly and on a fixed number of CPU threads.

Applies to everything `pytest` runs, the notebooks under nbval included (their kernels inherit this
environment), whether it runs the whole book or one notebook.
"""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
# Idle OpenMP threads sleep instead of spinning (set before torch starts its thread pool): on a busy
# machine, spinning threads made a small model's training step 100x slower. Results are unchanged.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# No test, notebook kernel or site build may reach the internet (the loopback stays open).
sys.path.insert(0, str(Path(__file__).parent / "tests" / "network_guard"))
import book_network_guard  # noqa: E402

book_network_guard.activate()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Re-arm the guard before each test, in case a test or a plugin put the real socket back."""
    book_network_guard.install()


# Long tests, skipped by `pytest -m "not slow"` (the unit layer, under a minute): every notebook under
# nbval, marked here (an nbval item has no function to decorate), and the tests marked
# `@pytest.mark.slow` in their files (site build and browser checks, determinism). `pytest` alone
# still runs everything, as the README says.


def pytest_collection_modifyitems(config, items) -> None:
    """Mark the notebooks (nbval items) as ``slow``."""
    for item in items:
        if Path(str(item.path)).suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
