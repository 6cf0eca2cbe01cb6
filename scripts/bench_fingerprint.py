"""What the content-hashed model fingerprint costs: first hash of a multi-GB weight file, then
the cached lookups (in-process, and from the on-disk cache in a fresh process).

    python scripts/bench_fingerprint.py               # a 4 GiB file of random bytes in a temp folder
    python scripts/bench_fingerprint.py --path W.safetensors   # a real weight file

Prints seconds and GB/s. The first hash reads the file: a file just written (or read) comes from
the page cache, so the figure is sha256's speed; a cold file adds the disk's read time. The
on-disk lookup is timed inside a child process (its start-up left out), which has only the
on-disk cache, as any new process does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import Stopwatch

from localjudge import model_files

# The child: one timed lookup, printed in seconds.
CHILD = """import sys, time
from pathlib import Path
from localjudge import model_files
start = time.perf_counter()
model_files.file_sha256(Path(sys.argv[1]))
print(time.perf_counter() - start)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, help="a weight file to hash (default: write a random one)")
    parser.add_argument("--gib", type=float, default=4.0, help="size of the random file (default 4)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LOCALJUDGE_CACHE"] = str(Path(tmp) / "cache")  # this process's and the child's
        path = args.path
        if path is None:
            path = Path(tmp) / "model.safetensors"
            with path.open("wb") as handle:
                for _ in range(int(args.gib * 64)):
                    handle.write(os.urandom(1 << 24))
        size = path.stat().st_size / 1e9
        with Stopwatch() as first:
            model_files.file_sha256(path)
        with Stopwatch() as in_memory:
            model_files.file_sha256(path)
        child = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
        on_disk = float(child.stdout.strip().splitlines()[-1])
    print(f"file: {size:.2f} GB")
    print(f"first hash:          {first.seconds:7.2f} s  ({size / first.seconds:.2f} GB/s)")
    print(f"cached (in process): {in_memory.seconds * 1e3:7.3f} ms")
    print(f"cached (on disk):    {on_disk * 1e3:7.3f} ms")


if __name__ == "__main__":
    main()
