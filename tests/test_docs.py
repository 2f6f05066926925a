"""The hand-written docs: within their word counts, and no figure outside a generated finding span.

A finding is cited as ``<!-- finding:NAME -->text<!-- /finding -->``; ``ecocompute publish check-docs`` compares
each span's text with the build's ``findings.json``. Everything else in a hand-written doc is prose: a number with a
unit there is a hand-copied figure, which the data may no longer give, unless it is a parameter of the method
listed in ``NOT_FINDINGS`` with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORD_LIMITS = {"README.md": 600, "docs/method.md": 2000}
HAND_WRITTEN = sorted(
    {"README.md", "CONTRIBUTING.md", *(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/*.md"))}
)
# Docs of other owners that still carry figures; each is expected to fail until its figures move into finding spans
# (then this entry goes: the xfail is strict).
PENDING: dict[str, str] = {}
# Numbers with a unit that are parameters of the method or the tools, not measurements.
NOT_FINDINGS = {
    "2%": "the validator's default CV gate, and its counter-vs-integral warning level",
    "5%": "the validator's counter-vs-integral error bound",
    "95%": "the confidence level of every interval",
    "10 s": "the shortest window the validator accepts",
    "5 MB": "the validator's size cap for one submission file",
    "40 W": "the idle floor the validator assumes for a GPU it does not know",
    "20 W": "the window power floor for a GPU the validator does not know (half the idle floor)",
    "0.5 s": "how long the AMD monitor compares its energy counter with the integrated power when it opens a GPU",
    "5 s": "the longest gap the validator allows between windows of one session",
    "1 s": "the longest random delay the collector puts before a window",
    "99%": "the confidence of the collector's early check that the gate cannot be met",
    "85%": "the share of free GPU memory the collector fills before it measures precisions one after another",
}
SPAN = re.compile(r"<!-- finding:([a-z0-9_]+) -->(.*?)<!-- /finding -->", re.S)
FIGURE = re.compile(r"(?<![\w.\-])[-+]?\d+(?:\.\d+)?\s?(?:%|J|Wh|kWh|W|B|M|GB|MB|tokens/s|s)(?![\w/])")


def words(text: str) -> int:
    """Words of a markdown page, HTML comments (the finding markers) left out."""
    return len(re.sub(r"<!--.*?-->", " ", text, flags=re.S).split())


def figures_outside_spans(text: str) -> list[str]:
    """Figure-looking numbers outside the finding spans, allow-listed parameters left out."""
    prose = SPAN.sub(" ", text)
    assert "<!-- finding:" not in prose and "<!-- /finding" not in prose, "a finding span is not closed"
    return [m.group(0) for m in FIGURE.finditer(prose) if m.group(0) not in NOT_FINDINGS]


@pytest.mark.parametrize(("doc", "limit"), sorted(WORD_LIMITS.items()))
def test_doc_is_within_its_word_count(doc: str, limit: int) -> None:
    count = words((ROOT / doc).read_text(encoding="utf-8"))
    assert count <= limit, f"{doc}: {count} words, the limit is {limit}"


@pytest.mark.parametrize(
    "doc",
    [pytest.param(d, marks=pytest.mark.xfail(reason=PENDING[d], strict=True)) if d in PENDING else d
     for d in HAND_WRITTEN],
)  # fmt: skip
def test_hand_written_doc_cites_figures_only_in_finding_spans(doc: str) -> None:
    found = figures_outside_spans((ROOT / doc).read_text(encoding="utf-8"))
    assert not found, f"{doc}: figures outside a finding span: {found}"


def test_the_readme_cites_its_findings_in_spans() -> None:
    names = [m.group(1) for m in SPAN.finditer((ROOT / "README.md").read_text(encoding="utf-8"))]
    assert 3 <= len(names) <= 5 and len(set(names)) == len(names), names


def test_the_check_finds_a_figure_outside_a_span_and_none_inside() -> None:
    text = "NF4 saves <!-- finding:x -->-14.2% at 32B<!-- /finding --> on a 2% gate, and 13% more on another host."
    assert figures_outside_spans(text) == ["13%"]
    assert figures_outside_spans("Qwen2.5-32B at batch 8, INT8 and FP16, 10 s windows.") == []
    assert words("one <!-- finding:x -->two three<!-- /finding --> four") == 4
    with pytest.raises(AssertionError, match="not closed"):
        figures_outside_spans("<!-- finding:x -->1.5 J")
