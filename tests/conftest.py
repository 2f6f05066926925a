"""Shared fixtures: SSH keys made for the test session, and signed synthetic submissions."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from browser import browser, page, screenshots  # noqa: F401 - one browser per test process, for every folder
from factories import Keys, allowed_signers_line, make_key, make_submission, once_per_run
from hypothesis import settings

from ecocompute.publish.build import build
from ecocompute.publish.inputs import Source
from ecocompute.schema.io import write_submission

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 set (the main process has neither), and a rich console
# made there keeps that width whatever a test sets later; drop them, so `make test -n auto` sees what a plain run sees.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)

# One torch thread per process: the suite runs a process per core (xdist), a tiny model gains nothing from a pool,
# and on a shared CPU the pool's spinning threads make each tiny generate call ten times slower. Inductor compiles
# in the test's process instead of starting a pool of workers that each import torch. Set before any test module
# imports torch (this file imports none of it); subprocesses inherit them. Nothing in the suite measures speed.
for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCHINDUCTOR_COMPILE_THREADS"):
    os.environ.setdefault(name, "1")

# The validator's identity cache keeps its secret under $XDG_STATE_HOME (validate/idcache.py): a folder of this test
# process's own, so no test writes into the real home; subprocesses inherit it.
_STATE_HOME = tempfile.mkdtemp(prefix="ecocompute-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE_HOME
os.environ.pop("ECOCOMPUTE_IDENTITY_KEY", None)
atexit.register(shutil.rmtree, _STATE_HOME, ignore_errors=True)

# No timing limits in tests: performance is measured by benchmarks/, not by timed tests.
settings.register_profile("ecocompute", deadline=None)
settings.load_profile("ecocompute")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Before each test body (its fixtures set up): collect what earlier tests left, then freeze what survives.

    Everything imported so far (torch, transformers, polars: millions of objects) goes out of the garbage
    collector's reach, so the engine's ``gc.collect()`` before each window walks only what this test made, not
    every module ever imported (over a second a call otherwise). Frozen objects stay alive and usable; only a cycle
    among them is never collected. This collect sees only what the last test left, so it is cheap.
    """
    gc.collect()
    gc.freeze()


REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "example" / "submission.json"
EXAMPLE_SIGNERS = DATA / "example" / "allowed_signers"


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """Keys made for this test session, never committed."""
    directory = tmp_path_factory.mktemp("keys")
    ed = make_key(directory, "id_ed25519", "ed25519")
    rsa = make_key(directory, "id_rsa", "rsa")
    signers = directory / "allowed_signers"
    signers.write_text(allowed_signers_line("example-user", ed) + allowed_signers_line("example-user", rsa))
    return Keys("example-user", ed, rsa, signers)


@pytest.fixture
def signed_file(tmp_path: Path, keys: Keys) -> Path:
    """A signed synthetic submission written under a submissions/ tree in tmp_path."""
    sub = keys.sign(make_submission(1))
    p = sub.payload
    path = tmp_path / "submissions" / p.contributor.github / "nvidia-h200" / f"{p.submission_id}.json"
    write_submission(sub, path)
    return path


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``publish build`` of the repository's submissions/, once per run (site, card, MCP and docs tests read it).

    Under pytest-xdist the workers share one build (:func:`factories.once_per_run`); tests only read it.
    """
    return once_per_run(tmp_path_factory, "built-submissions", lambda folder: build_folder(folder / "dataset"))


def build_folder(out: Path) -> Path:
    build([Source.at(REPO / "submissions")], out)
    return out
