"""pyproject.toml as setuptools reads it: no deprecation banner on install (each `pip install`
printed three 12-line ones for the old license table), the license an SPDX expression, and a
build requirement old enough setuptools cannot be picked for it."""

from __future__ import annotations

import re
import warnings

import pytest

from tests.conftest import ROOT


def test_setuptools_reads_the_project_without_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    monkeypatch.chdir(ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SetuptoolsDeprecationWarning: `project.license` as a TOML table ...
        dist = apply_configuration(Distribution(), str(ROOT / "pyproject.toml"))
    assert dist.metadata.license_expression == "Apache-2.0"


def test_the_build_asks_for_a_setuptools_that_reads_an_spdx_license() -> None:
    """Setuptools 77 is the first to take `license = "..."` as an SPDX expression (PEP 639)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (floor,) = re.findall(r'requires = \["setuptools>=(\d+)', text)
    assert int(floor) >= 77
