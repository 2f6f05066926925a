"""Running a typer app with the project's error handling: one red line and an exit code, never a traceback."""

from __future__ import annotations

import os
from collections.abc import Sequence

import typer

from ecocompute.console import err, fail_line
from ecocompute.schema.errors import EcocomputeError

OPTIONAL_MODULES = {
    **dict.fromkeys(("torch", "transformers", "accelerate", "bitsandbytes", "pynvml", "psutil"), "collect"),
    **dict.fromkeys(("pyarrow", "datasets", "huggingface_hub", "zenodo_client", "matplotlib"), "publish"),
}
"""Modules of the optional extras in pyproject.toml, by the extra that installs them."""


def main_for(typer_app: typer.Typer, argv: Sequence[str] | None = None, prog_name: str = "ecocompute") -> int:
    """Run ``typer_app`` with the project's error handling and return its exit code."""
    try:
        result = typer_app(args=list(argv) if argv is not None else None, standalone_mode=False, prog_name=prog_name)
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
        extra = extra_for(exc.name or "")
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


def extra_for(module: str) -> str | None:
    """The extra (``pip install "ecocompute[EXTRA]"``) that installs ``module``, or None for none of ours."""
    return OPTIONAL_MODULES.get(module.split(".")[0])


def _internal_error(exc: Exception) -> int:
    fail_line(f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran")
    err.print("set ECOCOMPUTE_DEBUG=1 to see the traceback", style="dim")
    if os.environ.get("ECOCOMPUTE_DEBUG"):
        raise exc
    return 3
