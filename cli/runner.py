"""Running a typer app with the project's error handling: one red line and an exit code, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import typer

from ecocompute import helpwidth, metavars
from ecocompute.console import err, fail_line
from ecocompute.schema.errors import EcocomputeError

EXTRA_MODULES = {
    "collect": ("torch", "transformers", "accelerate", "bitsandbytes", "pynvml", "psutil"),
    "publish": ("datasets", "huggingface_hub", "zenodo_client", "matplotlib", "pyarrow"),
    "analysis": ("pyarrow", "pandas", "matplotlib"),
    "serve": ("fastapi", "uvicorn", "uvloop", "httptools"),
    "literature": ("jsonschema",),
    "mcp": ("mcp", "mcp_types"),
    "llamacpp": ("llama_cpp", "gguf"),
    "fp8": ("torchao",),
}
"""The modules each optional extra of pyproject.toml installs (``dev`` is for contributors: never a hint)."""

OPTIONAL_MODULES = {module: extra for extra, modules in reversed(EXTRA_MODULES.items()) for module in modules}
"""Each module by the first extra that installs it (``pyarrow``: publish)."""

COMMAND_EXTRAS = {
    "collect": "collect", "record-trace": "collect", "publish": "publish", "crossover": "analysis",
    "j-per-token": "analysis", "jpt": "analysis", "serve": "serve", "import": "literature", "mcp": "mcp",
}  # fmt: skip
"""The extra a command needs: a module several extras install is hinted by the command's own extra."""


def main_for(typer_app: typer.Typer, argv: Sequence[str] | None = None, prog_name: str = "ecocompute") -> int:
    """Run ``typer_app`` with the project's error handling and return its exit code.

    Its help shows readable metavars (:mod:`ecocompute.metavars`) and is never cut when piped
    (:mod:`ecocompute.helpwidth`), whichever app it is (``ecocompute``, ``python -m ecocompute.collector``).
    """
    metavars.install()
    helpwidth.install()
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        result = typer_app(args=args, standalone_mode=False, prog_name=prog_name)
    except EcocomputeError as exc:
        fail_line(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        fail_line("aborted")
        return 130
    except typer.TyperException as exc:  # usage errors: typer prints them with the command's usage line
        exc.show()  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 2))
    except ModuleNotFoundError as exc:  # an optional dependency: name the extra that brings it
        extra = extra_for(exc.name or "", command=next((a for a in args if not a.startswith("-")), None))
        if extra is None:
            return _internal_error(exc)
        fail_line(f'this command needs {exc.name}, which is not installed: pip install "ecocompute[{extra}]"')
        return 2
    except KeyboardInterrupt:
        fail_line("interrupted")
        return 130
    except Exception as exc:  # a bug of ours: still one line, and how to report it
        return _internal_error(exc)
    return result if isinstance(result, int) else 0


def extra_for(module: str, command: str | None = None) -> str | None:
    """The extra (``pip install "ecocompute[EXTRA]"``) that installs ``module``, or None for none of ours.

    Of the extras that install it, the one ``command`` (the subcommand's name) needs, else the first.
    """
    top = module.split(".")[0]
    own = COMMAND_EXTRAS.get(command or "")
    if own is not None and top in EXTRA_MODULES[own]:
        return own
    return OPTIONAL_MODULES.get(top)


def _internal_error(exc: Exception) -> int:
    fail_line(f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran")
    err.print("set ECOCOMPUTE_DEBUG=1 to see the traceback", style="dim")
    if os.environ.get("ECOCOMPUTE_DEBUG"):
        raise exc
    return 3
