"""pyproject.toml as setuptools reads it: no deprecation banner on install (each `pip install`
printed three 12-line ones for the old license table), the license an SPDX expression, a
build requirement old enough setuptools cannot be picked for it, and every data file shipped."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import tomllib

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


def unshipped(package: Path, patterns: list[str]) -> list[str]:
    """The package's data files (not Python) that no package-data pattern ships in the wheel."""
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    return sorted(str(path.relative_to(package)) for path in package.rglob("*")
                  if path.is_file() and path.suffix not in (".py", ".pyc") and path not in shipped)


def test_every_data_file_of_the_package_ships(tmp_path: Path) -> None:
    """A data file moved with its module (tone's lexicons, the bench subsets) is still in the wheel."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["localjudge"]
    assert unshipped(ROOT / "localjudge", patterns) == []
    (tmp_path / "lexicons").mkdir()  # the check itself can fail: a file no pattern names
    (tmp_path / "lexicons" / "words.txt").write_text("good 3\n", encoding="utf-8")
    assert unshipped(tmp_path, ["scorers/lexicons/*"]) == ["lexicons/words.txt"]
