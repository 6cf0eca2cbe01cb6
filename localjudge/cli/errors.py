"""The CLI's one error type: a user error, reported as one line (`localjudge.cli.main`)."""

from __future__ import annotations


class CliError(Exception):
    """A user error: reported as one line, exit code 2."""
