"""One vocabulary for options (contract 4): names, meanings and defaults agree across commands; readable help."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from ecocompute.cli import app, main
from ecocompute.runner import OPTIONAL_MODULES, extra_for, main_for

SHARED = {"--submissions", "--allowed-signers", "--dataset", "--out", "--gpu", "--engine", "--stack", "--batch-size",
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


def test_every_shared_thing_is_reachable_by_its_shared_name(capsys: pytest.CaptureFixture[str]) -> None:
    """A command may keep an older or plural name (collect's --precisions) as long as the shared one works too."""
    plural = {"--precisions": "--precision"}
    missing = [f"{' '.join(path)} {p.opts[0]} (add {plural[p.opts[0]]})" for path, command in LEAVES
               for p in command.params if p.opts[0] in plural and plural[p.opts[0]] not in p.opts]  # fmt: skip
    assert missing == []
    assert main(["collect", "--precision", "nf4", "--arch", "TinyLlama-1.1B", "--signer", "alice"]) == 2
    assert "E-BASELINE" in capsys.readouterr().err  # parsed as --precisions, then refused for its missing baseline


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


DEFAULTS_DIFFER = {  # an option whose default is not the same in every command, and why that is right
    "--allowed-signers": "validate and publish build default it to <submissions>/allowed_signers, verify and "
    "validate-signers to submissions/allowed_signers (the same file); show verifies only when given one",
    "--batch-size": "collect's is the batch it measures; estimate's the question's (batch 1, one user); the "
    "others' select rows (none: all)",
    "--engine": "collect's is the engine it measures with (transformers); crossover's and j-per-token's select "
    "rows (none: all)",
    "--stack": "collect's is the stack it measures; estimate's the question's (eager: plain generate()); the "
    "others' select rows (none: all)",
    "--dataset": "required where a build is read; push defaults to the build's usual folder, mcp to the shipped data",
    "--hf-repo": "push names its target explicitly (nothing is uploaded by default); build and site write the "
    "project's id into the card and the page",
    "--out": "what each command writes differs: a submissions tree, a file, a folder",
    "--seed": "collect's seeds the weights and prompt; crossover's the bootstrap",
}  # fmt: skip


def test_defaults_agree_or_say_why_not() -> None:
    differing = set()
    for name, uses in _options().items():
        defaults = {str(p.default[0] if isinstance(p.default, list) and p.default else p.default) for _, p in uses}
        if len(defaults) > 1:
            differing.add(name)
    assert differing - set(DEFAULTS_DIFFER) == set(), "defaults differ; make them agree, or say why in DEFAULTS_DIFFER"
    assert set(DEFAULTS_DIFFER) - differing == set(), "these defaults agree now: drop them from DEFAULTS_DIFFER"


def _every_command(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's path, groups and hidden commands included: (), ("publish",), ("publish", "build"), ..."""
    found = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _every_command(sub, (*path, name))
    return found


def help_problems(typer_app: typer.Typer, path: tuple[str, ...], prog: str = "ecocompute") -> list[str]:
    """What is wrong with the help of ``prog PATH``: no exit 0, unreadable metavars, no closing ``Example:``."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main_for(typer_app, [*path, "--help"], prog_name=prog)
    text, where = buffer.getvalue(), " ".join((prog, *path))
    problems = [f"{where}: --help exits {code}"] if code != 0 else []
    problems += [f"{where}: metavar {m.group(0)}" for m in UNREADABLE.finditer(text)]
    last = re.split(r"\n\s*\n", text.split("╭")[0].strip())[-1]  # the description's last paragraph
    if not " ".join(last.split()).startswith(f"Example: {where}"):
        problems.append(f"{where}: the help does not end with 'Example: {where} ...'")
    return problems


EVERY = _every_command(typer.main.get_command(app))


def test_the_walk_reaches_subcommands_and_hidden_commands() -> None:
    assert {(), ("publish",), ("publish", "build"), ("schema", "export"), ("record-trace",)} <= set(EVERY)


@pytest.mark.parametrize("path", EVERY, ids=lambda p: " ".join(p) or "ecocompute")
def test_help_has_readable_metavars_and_ends_with_an_example(path: tuple[str, ...]) -> None:
    assert help_problems(app, path) == []


def test_the_help_check_fails_a_subcommand_without_an_example() -> None:
    probe = typer.Typer(name="probe", help="A probe.\n\nExample: probe pub good --n 1")
    pub = typer.Typer(help="Publishing.\n\nExample: probe pub good --n 1")
    probe.add_typer(pub, name="pub")

    @pub.command("good")
    def good(n: int = typer.Option(1, "--n", help="A number.")) -> None:
        """Do it.

        Example: probe pub good --n 1
        """

    @pub.command("bare")
    def bare(flag: bool = typer.Option(False, "--flag", help="Example: probe pub bare --flag")) -> None:
        """Do it without an example of its own (an option's help naming one does not count)."""

    @pub.command("wrong")
    def wrong() -> None:
        """Do it, with another command's example.

        Example: probe pub good --n 1
        """

    paths = _every_command(typer.main.get_command(probe))
    assert ("pub", "bare") in paths
    problems = [problem for path in paths for problem in help_problems(probe, path, prog="probe")]
    assert problems == [
        "probe pub bare: the help does not end with 'Example: probe pub bare ...'",
        "probe pub wrong: the help does not end with 'Example: probe pub wrong ...'",
    ]


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


DIST_OF = {"pynvml": "nvidia-ml-py", "zenodo_client": "zenodo-client", "llama_cpp": "llama-cpp-python",
           "mcp_types": "mcp"}  # fmt: skip
"""Modules whose distribution has another name (mcp_types comes with mcp)."""


def test_every_extra_s_modules_are_known_and_belong_to_it() -> None:
    import tomllib

    from ecocompute.runner import EXTRA_MODULES

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(EXTRA_MODULES) == set(extras) - {"dev"}
    for extra, modules in EXTRA_MODULES.items():
        names = {re.split(r"[<>=\[ ;]", dep)[0].lower().replace("_", "-") for dep in extras[extra]}
        shipped = {DIST_OF.get(m, m).lower().replace("_", "-") for m in modules}
        assert shipped <= names, (extra, shipped - names)
        assert names <= shipped, (extra, f"no module listed for {names - shipped}")
    assert extra_for("pyarrow.parquet") == "publish" and extra_for("numpy") is None
    assert OPTIONAL_MODULES["mcp"] == "mcp" and OPTIONAL_MODULES["torch"] == "collect"


@pytest.mark.parametrize(
    ("module", "command", "extra"),
    [("pyarrow", "crossover", "analysis"), ("pyarrow", "publish", "publish"), ("pyarrow", None, "publish"),
     ("matplotlib.pyplot", "j-per-token", "analysis"), ("mcp.server", "mcp", "mcp"), ("torch", "crossover", "collect"),
     ("jsonschema", "import", "literature"), ("uvicorn", "serve", "serve")],
)  # fmt: skip
def test_a_module_several_extras_install_is_hinted_by_the_command_s_extra(
    module: str, command: str | None, extra: str
) -> None:
    assert extra_for(module, command) == extra


def test_the_hint_names_the_command_s_extra(capsys: pytest.CaptureFixture[str]) -> None:
    probe = typer.Typer()

    @probe.command("crossover")
    def crossover() -> None:
        """Import a module the analysis extra brings."""
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    @probe.command()
    def mcp() -> None:
        """Import the MCP SDK."""
        raise ModuleNotFoundError("No module named 'mcp'", name="mcp")

    assert main_for(probe, ["crossover"]) == 2
    assert capsys.readouterr().err.strip().endswith('pip install "ecocompute[analysis]"')
    assert main_for(probe, ["mcp"]) == 2
    assert capsys.readouterr().err.strip().endswith('pip install "ecocompute[mcp]"')
