"""The measurement image's recipe stays in step with the package it installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parents[2]
DOCKERFILE = ROOT / "container" / "Dockerfile"
CONSTRAINTS = ROOT / "container" / "constraints.txt"
WORKFLOW = ROOT / ".github" / "workflows" / "container.yml"


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{line!r} in constraints.txt is not an exact pin (NAME==VERSION)"
            pins[canonicalize_name(name)] = version
    return pins


IMAGE_EXTRAS = ("collect", "fp8")  # what the Dockerfile installs: "/src[collect,fp8]"


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    names = [*project["dependencies"], *(name for extra in IMAGE_EXTRAS for name in extras[extra])]
    return [Requirement(name) for name in names]


def test_every_dependency_is_pinned_inside_its_range() -> None:
    pins = _pins()
    errors = []
    for req in _requirements():
        version = pins.get(canonicalize_name(req.name))
        if version is None:
            errors.append(f"{req.name}: not pinned in container/constraints.txt")
        elif not req.specifier.contains(version, prereleases=True):
            errors.append(f"{req.name}=={version} is outside pyproject's range {req.specifier}")
    assert not errors, "\n".join(errors)


def test_no_pin_is_left_over() -> None:
    wanted = {canonicalize_name(req.name) for req in _requirements()}
    extra = sorted(set(_pins()) - wanted)
    assert not extra, f"pinned but not a dependency of the package or {IMAGE_EXTRAS}: {extra}"


def test_image_runs_the_collector_as_a_non_root_user() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    runtime = text.split("AS test", 1)[0]
    assert re.search(r"^ARG CUDA_IMAGE=nvidia/cuda:[\w.\-]+-runtime-", runtime, re.M), "base must be a CUDA runtime"
    users = re.findall(r"^USER (\S+)", runtime, re.M)
    assert users and users[-1] not in {"root", "0"}, f"the runtime stage must end as a non-root user, not {users}"
    assert 'ENTRYPOINT ["ecocompute"]' in runtime
    volumes = re.search(r"^VOLUME (\[.*\])", runtime, re.M)
    assert volumes and "/data/submissions" in volumes.group(1) and "huggingface" in volumes.group(1)
    assert "-c /tmp/constraints.txt" in runtime, "the package must install under the pinned constraints"
    assert "grep '^torch==' /tmp/constraints.txt" in runtime, "torch must come from the same pin"
    assert f'"/src[{",".join(IMAGE_EXTRAS)}]"' in runtime, f"the image must install the extras {IMAGE_EXTRAS}"


def test_workflow_builds_the_image_and_runs_help_and_the_cpu_tests_inside() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert any("docker build" in run and "--target runtime" in run for run in steps)
    assert any("docker run" in run and "--help" in run for run in steps)
    assert any("docker build" in run and "--target test" in run for run in steps)
    uses = [step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step]
    assert all(re.search(r"@[0-9a-f]{40}\b", use) for use in uses), f"actions must be pinned by SHA: {uses}"
    assert workflow["permissions"] == {"contents": "read"}
