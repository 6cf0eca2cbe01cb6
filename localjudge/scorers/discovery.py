"""Scorers from outside the package: a module the user names, or an installed entry point.

Both run the user's own code, by the user's choice: nothing is imported that the user did not
name. A scorer module (``localjudge score --scorer-module my_scorers.py``, a sweep's
``scorer_modules:``) is a dotted module name importable in this Python, or a path to a ``.py``
file; importing it runs its `register_scorer` calls. An entry point in the group
``localjudge.scorers`` (``conciseness = "my_pkg.scorers:conciseness_scorer"`` in a package's
``pyproject.toml``) names a scorer factory; installing the package is naming it, and it is loaded
only when its name is asked for (`entry_point_factory`), so a Ray actor or a pytest run finds it
as the CLI does.

The registry is passed in (`localjudge.scorers.SCORERS`), never imported: this module is below it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "localjudge.scorers"


def _entry_points() -> list[EntryPoint]:
    return list(entry_points(group=ENTRY_POINT_GROUP))


def entry_point_names() -> list[str]:
    """The names of the installed scorer entry points (nothing is loaded)."""
    return sorted({point.name for point in _entry_points()})


def entry_point_factory(name: str) -> Callable[..., Any] | None:
    """The factory of the installed entry point `name`, loaded; None when none is installed. An
    entry point that cannot be loaded, or names something not callable, or two installed entry
    points naming different factories under `name`, is a one-line `ValueError` (naming both)."""
    found = list({point.value: point for point in _entry_points() if point.name == name}.values())
    if not found:
        return None
    if len(found) > 1:  # two packages claim one name: which one runs must not depend on install order
        claims = " and ".join(f"{point.value!r}{_from(point)}" for point in found)
        raise ValueError(f"scorer {name!r}: installed entry points ({ENTRY_POINT_GROUP}) disagree on it: {claims}; "
                         "uninstall one of them")
    point = found[0]
    try:
        factory = point.load()
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure (sys.exit too) is one line
        raise ValueError(f"scorer {name!r}: its entry point {point.value!r} ({ENTRY_POINT_GROUP}) cannot be "
                         f"loaded: {type(error).__name__}: {error}") from error
    if not callable(factory):
        raise ValueError(f"scorer {name!r}: its entry point {point.value!r} ({ENTRY_POINT_GROUP}) is not a "
                         f"scorer factory (a function of (judge, scale=...)), got {type(factory).__name__}")
    return factory


def _from(point: EntryPoint) -> str:
    """`` of package NAME`` for an entry point whose distribution is known, else nothing."""
    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return f" of package {name}" if name else ""


def is_path(spec: str) -> bool:
    """Whether a scorer module is given as a file (``my_scorers.py``, ``./lib/s.py``), not a module name."""
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def import_scorer_module(spec: str, registry: Mapping[str, Any]) -> list[str]:
    """Import the scorer module `spec` (a dotted module name or a ``.py`` path) and return the
    scorer names it added to `registry`. Importing one already imported adds nothing and is no
    error (its scorers were registered then); a fresh one that registers nothing, or one that
    cannot be imported (missing, a syntax error, an exception at import), is a one-line `ValueError`."""
    before = set(registry)
    if is_path(spec):
        fresh = _import_path(spec)
    else:
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", spec):
            raise ValueError(f"scorer module {spec!r}: give a module name (my_pkg.scorers) or a .py file path")
        fresh = spec not in sys.modules
        try:
            importlib.import_module(spec)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure (sys.exit too) is one line
            line = f"{type(error).__name__}: {error}".splitlines()[0]
            raise ValueError(f"scorer module {spec!r} cannot be imported: {line} (a module name must be "
                             "importable here: installed, or on PYTHONPATH; or give the file's path)") from error
    added = [name for name in registry if name not in before]
    if fresh and not added:
        raise ValueError(f"scorer module {spec!r} was imported but registered no scorer: call "
                         "localjudge.scorers.register_scorer(NAME, factory) in it")
    return added


def _import_path(spec: str) -> bool:
    """Import the file `spec` under a name of its own (its stem and a hash of its full path, so it
    shadows no installed module); False when that file is already imported."""
    path = Path(spec).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"scorer module {spec!r}: no such file")
    name = "localjudge_scorers_" + re.sub(r"\W", "_", path.stem) + "_" + \
        hashlib.sha256(str(path).encode()).hexdigest()[:8]
    if name in sys.modules or any(_file_of(module) == path for module in list(sys.modules.values())):
        return False
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"scorer module {spec!r}: not a Python file Python can import")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # as `import` does: the module's own functions find it (pickling, dataclasses)
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure (sys.exit too) is one line
        del sys.modules[name]
        line = f"{type(error).__name__}: {error}".splitlines()[0]
        raise ValueError(f"scorer module {spec!r} cannot be imported: {line}") from error
    return True


def _file_of(module: Any) -> Path | None:
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    try:
        return Path(file).resolve()
    except (OSError, ValueError):
        return None


def is_builtin(factory: Callable[..., Any]) -> bool:
    """Whether `factory` is one of localjudge's own (its module is in the package), not the user's."""
    module = getattr(factory, "__module__", None) or ""
    return module == "localjudge" or module.startswith("localjudge.")


def factory_origin(factory: Callable[..., Any]) -> str:
    """`factory` as a one-line error names it: its name and where it comes from, a scorer file by
    its path (``conciseness_scorer in my_scorers.py``), a module by its name."""
    name = getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or repr(factory)
    module_name = getattr(factory, "__module__", None)
    if not module_name:
        return name
    file = _file_of(sys.modules.get(module_name))
    if module_name.startswith("localjudge_scorers_") and file is not None:  # a file `_import_path` imported
        try:
            where = str(file.relative_to(Path.cwd()))
        except ValueError:
            where = str(file)
        return f"{name} in {where}"
    return f"{name} in module {module_name}"
