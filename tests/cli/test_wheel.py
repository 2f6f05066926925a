"""The wheel: built from this tree, it holds every package with its reference data, and runs from outside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DATA = [  # reference data the commands read at run time
    "ecocompute/py.typed",
    "ecocompute/schema/submission-1.0.schema.json",
    "ecocompute/validate/data/gpus.csv",
    "ecocompute/collector/model/archs/TinyLlama-1.1B.json",
    "ecocompute/collector/model/data/perplexity.txt",
    "ecocompute/publish/templates/card.md",
]
PROBE = """
import contextlib, io, json, sys
import typer
from ecocompute.cli import app, main
def walk(c, path=()):
    return [path] + [p for n, s in sorted(getattr(c, "commands", {}).items()) for p in walk(s, (*path, n))]
codes, cut, bare = {}, [], []
for path in walk(typer.main.get_command(app)):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        codes[" ".join(path)] = main([*path, "--help"])
    cut += [" ".join(path)] if "\u2026" in buffer.getvalue() else []
    bare += [] if "Example:" in buffer.getvalue() else [" ".join(path)]
codes["schema export"] = main(["schema", "export"])
import ecocompute
print(json.dumps({"codes": codes, "cut": cut, "bare": bare, "package": ecocompute.__file__}))
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it (as a release is): never from a stale build/ of the tree."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "is absent from the `packages` configuration" not in proc.stdout + proc.stderr  # data is package-data
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (built,) = dist.glob("ecocompute-*.whl")
    return built


def test_twine_check_passes(dist: Path) -> None:
    pytest.importorskip("twine")
    files = sorted(str(f) for f in dist.glob("ecocompute-*"))
    assert len(files) == 2  # the sdist and the wheel
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_packages_their_data_and_pypi_metadata(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in ("cli", "schema", "collector", "validate", "publish", "analysis"):
        for source in (ROOT / package).rglob("*.py"):
            inside = (
                "ecocompute/"
                + ("" if package == "cli" else f"{package}/")
                + source.relative_to(ROOT / package).as_posix()
            )
            assert inside in names, inside
    assert [d for d in DATA if d not in names] == []
    assert not [n for n in names if n.startswith(("tests/", "runs/", "submissions/", "benchmarks/"))]
    (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = Parser().parsestr(zipfile.ZipFile(wheel).read(meta_name).decode())
    assert meta["License-Expression"] == "MIT"
    assert any(c.startswith("Programming Language :: Python :: 3.1") for c in meta.get_all("Classifier"))
    assert {u.split(",")[0] for u in meta.get_all("Project-URL")} >= {"Homepage", "Repository", "Issues"}
    assert set(meta.get_all("Provides-Extra")) >= {"collect", "publish", "dev"}
    assert meta["Description-Content-Type"] == "text/markdown"


def test_every_command_runs_from_the_unpacked_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")} | {"PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["package"].startswith(str(site))
    export = result["codes"].pop("schema export")
    assert {cmd: code for cmd, code in result["codes"].items() if code != 0} == {}
    assert result["cut"] == [] and result["bare"] == []  # piped help whole (no COLUMNS), an example in each
    assert export == 2 and "is inside the installed package" in proc.stderr and "pass --out DIR" in proc.stderr
    assert not (site / "ecocompute" / "schema" / "submission-1.0.schema.json.tmp").exists()


def test_every_file_of_the_package_folders_is_in_the_wheel(wheel: Path) -> None:
    import tomllib

    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for package, folder in folders.items():
        for source in sorted((ROOT / folder).rglob("*")):
            relative = source.relative_to(ROOT / folder)
            if not source.is_file() or source.suffix == ".pyc" or any(p.startswith((".", "__pycache__"))
                                                                        for p in relative.parts):  # fmt: skip
                continue
            inside = f"{package.replace('.', '/')}/{relative.as_posix()}"
            missing += [] if inside in names else [inside]
    assert missing == [], "add these to [tool.setuptools.package-data] in pyproject.toml"
