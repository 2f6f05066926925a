"""The t quantile the validator computes without scipy, held to scipy's own to 1e-12."""

from __future__ import annotations

import importlib
import itertools
import math
import subprocess
import sys

import pytest
from scipy.special import stdtrit

derive = importlib.import_module("ecocompute.schema.derive")  # ecocompute.schema.derive is also a function's name

DOFS = [*range(1, 130), 199, 200, 201, 500, 998, 999, 1000, 1001, 1500, 10**4, 10**6, 10**9]


@pytest.mark.parametrize("dof", DOFS)
def test_t_quantile_matches_scipy(dof: int) -> None:
    expected = float(stdtrit(dof, 0.975))
    assert derive.t_quantile_975(dof) == pytest.approx(expected, rel=1e-12, abs=0)


def test_each_method_matches_scipy_where_the_other_takes_over() -> None:
    edge = derive.ASYMPTOTIC_FROM_DOF
    for dof in (edge - 1, edge):
        expected = float(stdtrit(dof, 0.975))
        tail_root = derive.t_quantile_975.__wrapped__(dof) if dof < edge else None
        assert derive._t_quantile_expansion(dof) == pytest.approx(expected, rel=1e-12, abs=0)
        if tail_root is not None:
            assert tail_root == pytest.approx(expected, rel=1e-12, abs=0)


def test_tail_is_the_t_distribution() -> None:
    from scipy.special import stdtr

    for dof in (1, 2, 3, 7, 30, 31):
        for t in (0.1, 1.0, 2.5, 12.0):
            assert derive._t_two_sided_tail(t, dof) == pytest.approx(2 * stdtr(dof, -t), rel=1e-12, abs=1e-15)


def test_normal_quantile_matches_the_standard_library() -> None:
    from statistics import NormalDist

    assert derive._normal_quantile_975() == pytest.approx(NormalDist().inv_cdf(0.975), rel=1e-15)


def test_quantile_decreases_towards_the_normal() -> None:
    values = [derive.t_quantile_975(d) for d in [*range(1, 80), *range(80, 1100, 41), 1100, 10**5]]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert values[-1] > derive._normal_quantile_975()


@pytest.mark.parametrize("dof", [0, -1])
def test_no_degrees_of_freedom_is_an_error(dof: int) -> None:
    with pytest.raises(ValueError, match="degree of freedom"):
        derive.t_quantile_975(dof)


def test_validator_path_imports_no_scipy() -> None:
    code = (
        "import importlib, sys; import ecocompute.validate.cli; import ecocompute.validate.core as c; "
        "importlib.import_module('ecocompute.schema.derive').t_quantile_975(9); c._warm(); "
        "print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert math.isfinite(derive.t_quantile_975(9))
