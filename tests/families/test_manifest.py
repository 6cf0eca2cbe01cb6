"""The fixtures' manifest lists every family the tier checks, with its architecture."""

from __future__ import annotations

import pytest

from tests.families.catalog import FAMILIES

pytestmark = pytest.mark.slow


def test_manifest_has_every_family(family_manifest: dict) -> None:
    built = {f["name"]: f["architecture"] for f in family_manifest["families"]}
    assert built == {name: arch for name, (arch, _, _) in FAMILIES.items()}
