"""A model folder's config.json is read bounded and only as a regular file (issue 34, item 10):
a link to /dev/zero, a FIFO, a folder or a huge file is one clear error, never an endless read or
a hang; a config reached through a link (as in Hugging Face's cache) still reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from localjudge.engines.small_files import SmallFileError, read_small_file
from tests.conftest import ROOT

POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="devices and FIFOs are POSIX")


def model_with_config(tmp_path: Path, make: str) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x")
    config = folder / "config.json"
    if make == "dev-zero":
        config.symlink_to("/dev/zero")
    elif make == "fifo":
        os.mkfifo(config)
    elif make == "folder":
        config.mkdir()
    return folder


CHECK = """
import sys
from localjudge.engines.model_files import ModelPathError, check_model_dir
try:
    check_model_dir(sys.argv[1])
except ModelPathError as error:
    print(error)
"""


def limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # an endless read fails here, not the machine


@POSIX_ONLY
@pytest.mark.parametrize(("make", "kind"), [("dev-zero", "a character device"), ("fifo", "a FIFO"),
                                            ("folder", "a folder")])
def test_a_config_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, make: str, kind: str) -> None:
    """In a child process with bounded memory and time: broken, the check reads /dev/zero until
    memory runs out, or waits on the FIFO forever."""
    folder = model_with_config(tmp_path, make)
    try:
        done = subprocess.run([sys.executable, "-c", CHECK, str(folder)], capture_output=True, text=True, timeout=60,
                              cwd=ROOT, preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("check_model_dir still reading after 60 s")
    assert done.stdout == f"{folder / 'config.json'} is not a regular file ({kind})\n", done.stderr


def test_a_huge_file_is_refused_and_a_linked_one_reads(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(SmallFileError, match=r"big.json is larger than 100 bytes"):
        read_small_file(big, limit=100)
    assert read_small_file(big, limit=101) == b" " * 101
    link = tmp_path / "link.json"
    link.symlink_to(big)
    assert read_small_file(link, limit=101) == b" " * 101
