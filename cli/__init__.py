"""ecocompute: measured LLM-inference GPU energy, and the pipeline that makes it trustworthy."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ecocompute")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"
