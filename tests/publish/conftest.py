"""Fixtures of the publisher's tests: signed submission trees and one shared build of the example set."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from factories import once_per_run
from publish_examples import Spec, example_document, write_signed
from publish_helpers import EXAMPLES, SMALL, TreeMaker

from ecocompute.publish.build import BuildOptions, BuildResult, build
from ecocompute.publish.inputs import Source


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that builds with the default cache folder writes under the test's folder, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def make_tree(tmp_path: Path, keys: Any) -> TreeMaker:
    """Write signed submissions (given as documents or specs) into a fresh submissions folder; return it."""

    def make(
        specs: Sequence[Spec] = SMALL, *, example: bool = False, name: str = "submissions", first_seed: int = 100,
        documents: Sequence[dict[str, Any]] = (),
    ) -> Path:  # fmt: skip
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        shutil.copy(keys.allowed_signers, root / "allowed_signers")
        docs = list(documents)
        for seed, spec in enumerate(specs, start=first_seed):
            document = example_document(spec, seed, n_windows=6)
            document["payload"]["example"] = example
            if not example:  # a measurement names a GPU the validator's table knows
                document["payload"]["hardware"]["gpu_name"] = "NVIDIA H200"
            document["payload"]["notes"] = "synthetic test data" if not example else document["payload"]["notes"]
            docs.append(document)
        write_signed(root, keys.ed25519, docs, login=keys.login)
        return root

    return make


@pytest.fixture(scope="session")
def example_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """One build of the committed example set (examples included), shared by read-only tests."""
    make = lambda folder: build([Source.at(EXAMPLES)], folder / "dataset", BuildOptions(include_examples=True))  # noqa: E731
    return once_per_run(tmp_path_factory, "example-build", make)  # one build shared by the xdist workers
