"""Build engines, found through the ``mlcc.engines`` entry-point group.

mlcc declares its own four in pyproject.toml (buildah, podman, docker, openshift); a plugin
package adds one by declaring an entry point in the same group that names an
:class:`~mlcc.engines.base.Engine` subclass, as repo2docker's ``repo2docker.engines`` does.
An engine's module is imported only when that engine is asked for, so ``mlcc build`` with
buildah never imports the Docker or Kubernetes clients.

    engine = create("podman", EngineSettings())
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Dict, List, Optional, Type

from mlcc.engines.base import Engine, EngineSettings
from mlcc.errors import UsageError

GROUP = "mlcc.engines"
# Tried in this order when --backend is not given: local engines only, daemonless first.
AUTO_ORDER = ("buildah", "podman", "docker")


def _entry_points() -> Dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def names() -> List[str]:
    """Every engine installed: mlcc's own first, then plugins, alphabetically.

    Returns:
        The entry-point names of the ``mlcc.engines`` group.
    """
    found = _entry_points()
    own = [n for n in (*AUTO_ORDER, "openshift") if n in found]
    return own + sorted(n for n in found if n not in own)


def engine_class(name: str) -> Type[Engine]:
    """The engine class an entry point of the ``mlcc.engines`` group names.

    Args:
        name: The entry point's name, as ``--backend`` gives it.

    Returns:
        The :class:`~mlcc.engines.base.Engine` subclass (its module is imported now).

    Raises:
        UsageError: No engine has that name, or the entry point is not an Engine subclass.
    """
    found = _entry_points()
    if name not in found:
        raise UsageError(f"--backend {name}: unknown", hint=f"choose one of {', '.join(names())}")
    loaded = found[name].load()
    if not (isinstance(loaded, type) and issubclass(loaded, Engine)):
        raise UsageError(
            f"--backend {name}: the entry point {found[name].value} is not an mlcc Engine",
            hint="the plugin that declares it is broken; uninstall it or pick another --backend",
        )
    return loaded


def create(name: Optional[str], settings: Optional[EngineSettings] = None) -> Engine:
    """The engine asked for, checked; or the first local engine that works here.

    Args:
        name: The engine's name (``--backend``), or None to try buildah, podman and docker
            in turn.
        settings: What the engine may need to connect (default: none).

    Returns:
        The engine, its ``check`` passed.

    Raises:
        UsageError: The engine is unknown or cannot run here; without ``name``, none of
            the local engines works (the error lists why each did not).
        BuildError: The engine's check could not reach its cluster.
    """
    settings = settings or EngineSettings()
    if name is not None:
        engine = engine_class(name)(settings)
        engine.check()
        return engine
    reasons = []
    for candidate in AUTO_ORDER:
        if candidate not in _entry_points():
            continue
        engine = engine_class(candidate)(settings)
        try:
            engine.check()
        except UsageError as error:
            reasons.append(str(error).splitlines()[0])
            continue
        return engine
    raise UsageError(
        "no container engine works here",
        details=reasons,
        hint="install buildah or podman, or set DOCKER_HOST",
    )


__all__ = ["GROUP", "Engine", "EngineSettings", "create", "engine_class", "names"]
