"""Outputs of numbered statements and scripted verdicts, shared by the statement scorers' tests
(bias, answer relevancy)."""

from __future__ import annotations

from typing import Any


def sentences(n: int) -> str:
    return " ".join(f"Statement number {i}." for i in range(1, n + 1))


def verdicts(labels: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"verdict": label, "reason": "r"} for label in labels]}
