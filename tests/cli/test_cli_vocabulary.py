"""One vocabulary for options (contract 4): names, meanings and defaults agree across commands; readable help."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from ecocompute.cli import app, main
from ecocompute.runner import OPTIONAL_MODULES, extra_for, main_for

SHARED = {"--submissions", "--allowed-signers", "--dataset", "--out", "--gpu", "--stack", "--batch-size",
          "--precision", "--json"}  # fmt: skip
SYNONYMS = {  # a name some command used for a thing the shared vocabulary names otherwise
    "--root": "--submissions", "--submissions-dir": "--submissions", "--file": "--allowed-signers",
    "--signers": "--allowed-signers", "--output": "--out", "--output-dir": "--out", "--out-dir": "--out",
    "--repo": "--dataset", "--batch": "--batch-size", "--software-stack": "--stack",
}  # fmt: skip
UNREADABLE = re.compile(r"<(bool|str|int|float|path|list\[[^]]*\]|float range|int range)>|\{file\}")


def _leaves(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if hasattr(command, "commands"):
        return [leaf for name, sub in sorted(command.commands.items()) for leaf in _leaves(sub, (*path, name))]
    return [(path, command)]


LEAVES = _leaves(typer.main.get_command(app))


def _options() -> dict[str, list[tuple[str, Any]]]:
    found: dict[str, list[tuple[str, Any]]] = {}
    for path, command in LEAVES:
        for param in command.params:
            long = [o for o in param.opts if o.startswith("--")]
            if long:
                found.setdefault(long[0], []).append((" ".join(path), param))
    return found


def _is_path(param: Any) -> bool:
    annotation = param.type_descriptor.annotation
    return annotation is Path or annotation == list[Path]


def test_no_command_calls_a_shared_thing_by_another_name() -> None:
    misnamed = [f"{cmd} {name} (say {SYNONYMS[name]})" for name, uses in _options().items() if name in SYNONYMS
                for cmd, _ in uses]  # fmt: skip
    assert misnamed == []


def test_a_shared_option_means_the_same_everywhere() -> None:
    problems = []
    for name, uses in _options().items():
        if name not in SHARED:
            continue
        kinds = {(_is_path(p), getattr(p, "is_flag", False)) for _, p in uses}
        if len(kinds) > 1 and name != "--dataset":  # --dataset: a built folder or a Hub id (contract 4)
            problems.append(f"{name}: a path in some commands, not in others ({[c for c, _ in uses]})")
        if name in ("--submissions", "--allowed-signers"):
            problems += [f"{cmd} {name} is required; the others default it" for cmd, p in uses if p.required]
        if name == "--submissions":
            defaults = {str(p.default[0] if isinstance(p.default, list) else p.default) for _, p in uses}
            if defaults != {"submissions"}:
                problems.append(f"--submissions defaults differ: {defaults}")
    assert problems == []


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=" ".join)
def test_help_has_readable_metavars_and_ends_with_an_example(path: tuple[str, ...],
                                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert [m.group(0) for m in UNREADABLE.finditer(text)] == []
    last = re.split(r"\n\s*\n", text.split("╭")[0].strip())[-1]
    assert " ".join(last.split()).startswith("Example: ecocompute " + " ".join(path))


def test_a_missing_optional_dependency_is_one_line_naming_the_extra(capsys: pytest.CaptureFixture[str]) -> None:
    probe = typer.Typer()

    @probe.command()
    def needs_pyarrow() -> None:
        """Import a module that is not there."""
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    @probe.command()
    def other() -> None:
        """Keep this a group."""

    assert main_for(probe, ["needs-pyarrow"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == 'error: this command needs pyarrow, which is not installed: pip install "ecocompute[publish]"'


def test_install_hints_keep_their_extras(capsys: pytest.CaptureFixture[str]) -> None:
    from ecocompute.console import fail_line

    fail_line("torch is not installed: pip install 'ecocompute[collect]'")
    assert "'ecocompute[collect]'" in capsys.readouterr().err


def test_every_optional_module_belongs_to_its_extra() -> None:
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    dist_of = {"pynvml": "nvidia-ml-py", "zenodo_client": "zenodo-client"}
    for module, extra in OPTIONAL_MODULES.items():
        names = {re.split(r"[<>=\[ ]", dep)[0].lower() for dep in extras[extra]}
        assert dist_of.get(module, module).lower() in names, (module, extra)
    assert extra_for("pyarrow.parquet") == "publish" and extra_for("numpy") is None
