"""Notebooks (cells joined, magics skipped, lines mapped back) and ``# noqa`` comments."""

from __future__ import annotations

import json

from lint_helpers import INT8_7B

from ecocompute.lint import noqa
from ecocompute.lint.config import LintConfig
from ecocompute.lint.engine import lint_text
from ecocompute.lint.evidence import Evidence
from ecocompute.lint.notebook import read_notebook
from ecocompute.schema.errors import UsageError


def _notebook(cells: list[tuple[str, str]], indent: int | None = 1) -> str:
    doc = {"cells": [{"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True),
                      **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                     for kind, src in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    return json.dumps(doc, indent=indent)


def test_cells_join_and_map_back_to_json_lines() -> None:
    raw = _notebook([("markdown", "# title\ntext"), ("code", "!pip install x\nimport torch"), ("code", INT8_7B)])
    nb = read_notebook(raw, "n.ipynb")
    assert nb.text.splitlines()[0] == ""  # the magic is blanked, its line kept
    origin = nb.origin(4)  # the from_pretrained line: cell 3, line 2
    assert origin is not None
    assert (origin.cell, origin.cell_line) == (3, 2)
    assert "from_pretrained" in raw.splitlines()[origin.file_line - 1]
    assert nb.line_name(4) == "cell 3, line 2"


def test_notebook_findings_are_placed_in_the_file_and_the_cell() -> None:
    raw = _notebook([("code", "%%time\nx = 1"), ("code", INT8_7B + "y = 2  # noqa: ECO105\n")])
    report = lint_text(raw, "n.ipynb", LintConfig(), Evidence("H200"))
    assert [(f.rule, f.cell, f.cell_line) for f in report.findings] == [("ECO101", 2, 2)]
    finding = report.findings[0]
    assert "from_pretrained" in raw.splitlines()[finding.line - 1]
    compact = lint_text(_notebook([("code", INT8_7B)], indent=None), "c.ipynb", LintConfig(), Evidence("H200"))
    assert [(f.rule, f.line, f.cell) for f in compact.findings] == [("ECO101", 1, 1)]  # one-line JSON: line 1


def test_bad_notebooks_are_reported_not_raised() -> None:
    for raw in ("{not json", "[]", '{"cells": 3}'):
        report = lint_text(raw, "bad.ipynb", LintConfig(), Evidence("H200"))
        assert report.error and "not a notebook" in report.error
    try:
        read_notebook("{", "x.ipynb")
    except UsageError as exc:
        assert "x.ipynb" in str(exc)
    else:
        raise AssertionError("no error")


def test_noqa_comments() -> None:
    source = "a  # noqa: ECO101\nb  # NOQA:ECO101,ECO104\nc  # noqa\nd  # noqa: E501\ne = '#'\n"
    table = noqa.suppressions(source)
    assert table == {1: {"ECO101"}, 2: {"ECO101", "ECO104"}, 3: noqa.ALL, 4: {"E501"}}
    assert noqa.silenced("ECO101", (1,), table) and noqa.silenced("ECO104", (9, 2), table)
    assert noqa.silenced("ECO105", (3,), table)
    assert not noqa.silenced("ECO101", (4, 5), table)


def test_unparseable_python_is_reported_as_not_linted() -> None:
    report = lint_text("from_pretrained(\n  def", "x.py", LintConfig(), Evidence("H200"))
    assert report.error and report.error.startswith("cannot parse (line")
    assert lint_text("x = 1\n", "y.py", LintConfig(), Evidence("H200")).findings == []


def test_columns_count_characters_not_bytes() -> None:
    source = 'from transformers import AutoModelForCausalLM\nnote = "énergie"; m = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", load_in_8bit=True)\n'  # noqa: E501
    [finding] = lint_text(source, "u.py", LintConfig(), Evidence("H200")).findings
    assert finding.column == source.splitlines()[1].index("AutoModelForCausalLM.from_pretrained") + 1


def test_a_notebook_cell_that_does_not_parse_is_left_out() -> None:
    raw = _notebook([("code", "def broken(:\n    pass"), ("code", "result = await fetch()"), ("code", INT8_7B)])
    report = lint_text(raw, "n.ipynb", LintConfig(), Evidence("H200"))
    assert report.error is None
    assert [(f.rule, f.cell, f.cell_line) for f in report.findings] == [("ECO101", 3, 2)]


def test_deeply_nested_code_is_reported_not_raised() -> None:
    source = INT8_7B + "x = " + " + ".join(["1"] * 3000) + "\n"
    report = lint_text(source, "deep.py", LintConfig(), Evidence("H200"))
    assert report.error == "cannot parse: expressions nested too deeply for Python's parser"
