"""Build the knowledge base from recipe files: the cold path of :func:`mlcc.kb.load`.

Each file is parsed with line numbers, validated against its JSON Schema, and checked
against the others (arches, CUDA releases, frameworks, source ids) before the typed
model is built, so that every error can name a file and a line.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

import mlcc
from mlcc.errors import RecipeError
from mlcc.kb import pip_locks, schema_check
from mlcc.kb.layout import OTHER_FILES, ROUND_FOLDER, ROUND_SCRIPTS
from mlcc.kb.model import (
    BUILT_FROM_SOURCE,
    HOST_MIRRORS,
    Arch,
    ArchListEnv,
    Base,
    BaseContents,
    BaseFramework,
    Benchmark,
    BenchmarkBuild,
    BuildOnly,
    BuildStep,
    CudaRelease,
    Dataset,
    Download,
    EnvExtension,
    Family,
    Framework,
    FrameworkBuild,
    FrameworkRule,
    Gpu,
    Install,
    KnowledgeBase,
    Launch,
    LaunchConfig,
    LibBuild,
    MpiLaunch,
    NcclProfile,
    NodeShape,
    NvidiaRepo,
    PackageManager,
    PinnedPackage,
    Provenance,
    PublicHost,
    PythonOption,
    PythonTooling,
    ReferenceRun,
    ReferenceStack,
    Replacement,
    Round,
    RoundCounts,
    RoundScoring,
    RoundSystem,
    RunSeed,
    SdistRequires,
    SourceBuild,
    SourceRef,
    System,
    Toolset,
    UbiAlternative,
    benchmark_id,
    round_key,
)
from mlcc.kb.text_rules import check_text
from mlcc.kb.yamlsrc import LineMap, PathKey, line_of, load_yaml
from mlcc.safeio import UnreadableFile, read_text
from mlcc.versions import is_valid_version, parse_spec, parse_version, satisfies


@dataclass
class _Doc:
    """One parsed recipe file and what is needed to point into it."""

    display: str
    data: Dict[str, Any]
    lines: LineMap
    root: str = ""
    # the sources of the benchmark's round record (recipes/rounds/), which it may cite by id
    shared_sources: Optional[Dict[str, str]] = None

    def line(self, path: PathKey) -> Optional[int]:
        return line_of(self.lines, path)

    def where(self, path: PathKey) -> str:
        return f"{self.display}:{self.line(path)}"

    def error(self, path: PathKey, message: str, hint: Optional[str] = None) -> RecipeError:
        return RecipeError(self.display, self.line(path), message, hint=hint)

    def prov(self, entry: Dict[str, Any], path: PathKey, **inherited: Any) -> Provenance:
        ids = entry.get("source", inherited.get("source_ids"))
        if ids is None:
            raise self.error(path, "missing required key 'source'")
        # A release may define sources of its own: a block appended later cites its evidence
        # without adding lines above older entries (their origins are in published files).
        sources = {
            **(self.shared_sources or {}),
            **self.data["sources"],
            **inherited.get("own_sources", {}),
            **entry.get("sources", {}),
        }
        for index, source_id in enumerate(ids):
            if source_id not in sources:
                raise self.error(
                    (*path, "source", index),
                    f"unknown source id {source_id!r}",
                    hint=f"define it under 'sources:' (defined: {', '.join(sorted(sources))})",
                )
        verified = entry.get("verified", inherited.get("verified"))
        if verified is None:
            raise self.error(path, "missing required key 'verified'")
        return Provenance(
            source=tuple(sources[i] for i in ids),
            verified=bool(verified),
            origin=self.where(path),
            unverified_fields=tuple(entry.get("unverified_fields", ()))
            + tuple(inherited.get("unverified_fields", ())),
            note=entry.get("note", inherited.get("note")),
        )


def _read(root: Path, rel: str, kind: str) -> _Doc:
    display = f"recipes/{rel}"
    data, lines = load_yaml(root / rel, display)
    if not isinstance(data, dict):
        raise RecipeError(display, 1, "must be a mapping with 'kind:' at the top")
    found = data.get("kind")
    if found != kind:
        raise RecipeError(
            display,
            line_of(lines, ("kind",)),
            f"kind is {found!r}, but files here must say kind: {kind}",
        )
    check_text(data, display, lines)
    schema_check.validate(kind, data, display, lines)
    return _Doc(display, data, lines, str(root))


def content_digest(root: str, files: Sequence[Tuple[str, str]]) -> str:
    """sha256 over mlcc's version, the schemas and every recipe file's bytes."""
    hasher = hashlib.sha256(f"mlcc {mlcc.__version__}\n".encode())
    for schema in schema_check.schema_files():
        hasher.update(schema.name.encode() + b"\0" + schema.read_bytes() + b"\0")
    rels = [rel for rel, _ in files] + [f for f in OTHER_FILES if (Path(root) / f).is_file()]
    for rel in sorted(rels):
        hasher.update(rel.encode() + b"\0" + (Path(root) / rel).read_bytes() + b"\0")
    return hasher.hexdigest()


def build(root: str, files: Sequence[Tuple[str, str]]) -> KnowledgeBase:
    docs: Dict[str, List[_Doc]] = {}
    for rel, kind in files:
        docs.setdefault(kind, []).append(_read(Path(root), rel, kind))
    arches, aliases = _arches(docs["arches"][0])
    families = _families(docs["families"][0])
    bases = _bases(docs["bases"], arches, families)
    cuda = _cuda(docs["cuda"][0], arches)
    cudnn = _libs(docs["cudnn"][0], "cudnn", arches, cuda)
    nccl = _libs(docs["nccl"][0], "nccl", arches, cuda)
    frameworks = _frameworks(docs.get("framework", []), arches, cuda)
    gpus = _gpus(docs["gpus"][0], arches)
    rounds = _rounds(docs.get("round", []), gpus)
    benchmarks = _benchmarks(docs.get("benchmark", []), arches, frameworks, gpus, rounds, bases)
    cuda_doc = docs["cuda"][0]
    tooling, downloads = _tools(docs["tools"][0], arches)
    for base in bases:
        for option in base.pythons:
            if option.version not in tooling:
                raise docs["bases"][0].error(
                    ("bases",),
                    f"{base.name} offers Python {option.version}, which recipes/tools.yaml "
                    "has no pip/setuptools/wheel pins for",
                )
    return KnowledgeBase(
        root=str(root),
        digest=content_digest(root, files),
        arches=arches,
        arch_aliases=aliases,
        bases=bases,
        cuda=cuda,
        cudnn=cudnn,
        nccl=nccl,
        frameworks=frameworks,
        benchmarks=benchmarks,
        download_host=cuda_doc.data["download_host"],
        repositories=_repositories(cuda_doc),
        python_tooling=tooling,
        downloads=downloads,
        families=families,
        files=tuple(f"recipes/{rel}" for rel, _ in files),
        source_builds=_source_builds(docs["tools"][0]),
        sdist_requires=_sdist_requires(docs["tools"][0]),
        build_only=_build_only(docs["tools"][0]),
        gpus=gpus,
        hosts=_hosts(docs["hosts"][0]),
        pip_locks=pip_locks.read_lock_files(root),
        nccl_profiles=_nccl_profiles(docs["nccl_profiles"][0]),
        systems=_systems(docs["systems"][0]),
        round_records=rounds,
        arch_list_env=_arch_list_env(docs["gpus"][0]),
    )


def _rounds(docs: Sequence[_Doc], gpus: Dict[str, Gpu]) -> Tuple[Round, ...]:
    """The round records, oldest first; exactly one is the default when there are any."""
    found: List[Round] = []
    for doc in docs:
        data = doc.data
        stem = Path(doc.display).stem
        if data["name"] != stem:
            raise doc.error(("name",), f"name {data['name']!r} must match the file name {stem!r}")
        systems = tuple(
            _round_system(doc, name, system, gpus) for name, system in data.get("systems", {}).items()
        )
        found.append(
            Round(
                name=data["name"],
                title=data["title"],
                year=data["year"],
                default=data["default"],
                scoring=_round_scoring(data["scoring"]),
                systems=systems,
                sources=tuple(data["sources"].items()),
                prov=doc.prov(data, ()),
                steps=tuple(
                    (name, _build_step(doc, step, ("steps", name)))
                    for name, step in data.get("steps", {}).items()
                ),
            )
        )
    defaults = [r.name for r in found if r.default]
    if found and len(defaults) != 1:
        raise RecipeError(
            "recipes/rounds/",
            None,
            f"{len(defaults)} rounds say default: true ({', '.join(defaults) or 'none'})",
            hint="exactly one round is the one a benchmark name means when several rounds hold it",
        )
    return tuple(sorted(found, key=lambda r: round_key(r.name)))


def _round_system(doc: _Doc, name: str, data: Dict[str, Any], gpus: Dict[str, Gpu]) -> RoundSystem:
    """A system of the round, whose GPU must be one recipes/gpus.yaml knows."""
    if data["gpu"] not in gpus:
        raise doc.error(
            ("systems", name, "gpu"),
            f"system {name}: GPU {data['gpu']!r} is not in recipes/gpus.yaml",
            hint=f"use one of {', '.join(sorted(gpus))}",
        )
    return RoundSystem(
        name=name,
        gpu=data["gpu"],
        gpus=data["gpus"],
        sockets=data["sockets"],
        socket_cores=data["socket_cores"],
        hyperthreads=data["hyperthreads"],
        system_json=tuple(data["system_json"]),
        prov=doc.prov(data, ("systems", name)),
    )


def _round_scoring(data: Dict[str, Any]) -> RoundScoring:
    return RoundScoring(
        log_formats=tuple(data["log_formats"]),
        rules=data["rules"],
        scaling_json=data["scaling_json"],
        default=RoundCounts(**data["default"]),
        benchmarks=tuple((name, RoundCounts(**counts)) for name, counts in data["benchmarks"].items()),
        note=data.get("note"),
    )


def _systems(doc: _Doc) -> Dict[str, System]:
    found: Dict[str, System] = {}
    for index, entry in enumerate(doc.data["systems"]):
        path: PathKey = ("systems", index)
        if entry["name"] in found:
            raise doc.error(path, f"system {entry['name']!r} is listed twice")
        if entry["threads"] < entry["cores"]:
            raise doc.error((*path, "threads"), f"system {entry['name']!r}: fewer threads than cores")
        found[entry["name"]] = System(
            name=entry["name"],
            title=entry["title"],
            gpus=entry["gpus"],
            cores=entry["cores"],
            threads=entry["threads"],
            memory_gib=entry["memory_gib"],
            prov=doc.prov(entry, path),
        )
    return found


# What a profile's default_for names: the pod has an RDMA device, or it has none.
NCCL_DEFAULTS = ("rdma", "sockets")


def _nccl_profiles(doc: _Doc) -> Tuple[NcclProfile, ...]:
    """The named NCCL settings, one name each, and exactly one default for each of
    :data:`NCCL_DEFAULTS` (a multi-node run without --nccl-profile takes it)."""
    found: List[NcclProfile] = []
    for index, entry in enumerate(doc.data["profiles"]):
        path: PathKey = ("profiles", index)
        if any(p.name == entry["name"] for p in found):
            raise doc.error((*path, "name"), f"NCCL profile {entry['name']!r} is listed twice")
        found.append(
            NcclProfile(
                name=entry["name"],
                description=entry["description"],
                env=tuple(sorted(entry["env"].items())),
                default_for=entry.get("default_for"),
                prov=doc.prov(entry, path),
            )
        )
    for default in NCCL_DEFAULTS:
        named = [p.name for p in found if p.default_for == default]
        if len(named) != 1:
            raise doc.error(
                ("profiles",),
                f"{len(named)} NCCL profiles are the default_for {default} ({', '.join(named) or 'none'})",
                hint=f"give exactly one profile default_for: {default}",
            )
    return tuple(found)


def _source_builds(doc: _Doc) -> Tuple[SourceBuild, ...]:
    found: List[SourceBuild] = []
    for index, entry in enumerate(doc.data.get("source_builds", ())):
        found.append(
            SourceBuild(
                name=entry["name"],
                packages=tuple(sorted((f, tuple(names)) for f, names in entry["packages"].items())),
                prov=doc.prov(entry, ("source_builds", index)),
                base_contents=entry.get("base_contents"),
            )
        )
    return tuple(found)


def _build_only(doc: _Doc) -> Tuple[BuildOnly, ...]:
    return tuple(
        BuildOnly(
            entry["name"],
            " ".join(entry["why"].split()),
            doc.prov(entry, ("build_only", index)),
            canonicalize_name(entry["name"]),
        )
        for index, entry in enumerate(doc.data.get("build_only", ()))
    )


def _sdist_requires(doc: _Doc) -> Tuple[SdistRequires, ...]:
    found: Dict[Tuple[str, str], SdistRequires] = {}
    for index, entry in enumerate(doc.data.get("sdist_requires", ())):
        path: PathKey = ("sdist_requires", index)
        prov = doc.prov(entry, path)
        try:
            version = str(Version(entry["version"]))
        except InvalidVersion:
            raise doc.error((*path, "version"), f"{entry['version']!r} is not a valid version") from None
        key = (canonicalize_name(entry["name"]), version)
        if key in found:
            raise doc.error(path, f"{entry['name']} {entry['version']} is listed twice")
        for number, text in enumerate(entry["requires"]):
            try:
                Requirement(text)
            except InvalidRequirement as exc:
                raise doc.error(
                    (*path, "requires", number),
                    f"{text!r} is not a valid requirement ({str(exc).splitlines()[0]})",
                    hint="write it as the sdist's setup.py does, e.g. 'numpy>=1.8.2'",
                ) from None
        found[key] = SdistRequires(entry["name"], entry["version"], tuple(entry["requires"]), prov)
    return tuple(found.values())


def _families(doc: _Doc) -> Dict[str, Family]:
    families: Dict[str, Family] = {}
    formats: Dict[str, str] = {}
    seen_managers: Dict[str, str] = {}
    for index, entry in enumerate(doc.data["families"]):
        path: PathKey = ("families", index)
        name = entry["name"]
        if name in families:
            raise doc.error(path, f"family {name!r} is listed twice")
        if entry["package_format"] in formats:
            raise doc.error(
                (*path, "package_format"),
                f"package format {entry['package_format']} is already {formats[entry['package_format']]!r}'s",
            )
        formats[entry["package_format"]] = name
        try:
            re.compile(entry["pinned"])
        except re.error as error:
            raise doc.error((*path, "pinned"), f"not a regular expression: {error}") from None
        families[name] = Family(
            name=name,
            package_format=entry["package_format"],
            package_managers=_package_managers(doc, entry, path, seen_managers),
            nvidia_repo=_command(doc, entry["nvidia_repo"], (*path, "nvidia_repo"), NVIDIA_REPO_PLACEHOLDERS),
            install_commands=tuple(entry["install_commands"]),
            pin_format=entry["pin"],
            pinned=entry["pinned"],
            library_dir=entry["library_dir"],
            recorder_flag=entry["recorder_flag"],
            cuda_packages=entry["cuda_packages"],
            prov=doc.prov(entry, path),
            devel_package=_regex(doc, entry["devel_package"], (*path, "devel_package")),
            runtime_packages=tuple(entry["runtime_packages"]),
        )
    return families


def _regex(doc: _Doc, text: str, path: PathKey) -> str:
    try:
        re.compile(text)
    except re.error as error:
        raise doc.error(path, f"not a regular expression: {error}") from None
    return text


# A named placeholder in a shell line of recipes/families.yaml ({packages}, {baseurl}),
# and the ones each line may use: the renderers fill in exactly these.
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
INSTALL_PLACEHOLDERS = frozenset({"packages"})
CLEAN_PLACEHOLDERS: FrozenSet[str] = frozenset()
NVIDIA_REPO_PLACEHOLDERS = frozenset({"name", "baseurl", "gpgkey"})


def _package_managers(
    doc: _Doc, family: Dict[str, Any], path: PathKey, seen: Dict[str, str]
) -> Tuple[PackageManager, ...]:
    found: List[PackageManager] = []
    for index, entry in enumerate(family["package_managers"]):
        where: PathKey = (*path, "package_managers", index)
        name = entry["name"]
        if name in seen:
            raise doc.error((*where, "name"), f"package manager {name} is already the {seen[name]} family's")
        seen[name] = family["name"]
        install = _command(doc, entry["install"], (*where, "install"), INSTALL_PLACEHOLDERS)
        if install.split(" ", 1)[0] not in family["install_commands"]:
            raise doc.error(
                (*where, "install"),
                f"the install line starts with {install.split(' ', 1)[0]!r}, which is not among the"
                f" family's install_commands ({', '.join(family['install_commands'])})",
                hint="mlcc lint checks the package pins of the commands listed there",
            )
        found.append(
            PackageManager(
                name=name,
                install=install,
                clean=_command(doc, entry["clean"], (*where, "clean"), CLEAN_PLACEHOLDERS),
                prov=doc.prov(entry, where),
            )
        )
    return tuple(found)


def _command(doc: _Doc, pattern: str, path: PathKey, allowed: FrozenSet[str]) -> str:
    """A shell line with {placeholders}: each one known, each one used, no other braces."""
    used = set(PLACEHOLDER.findall(pattern))
    unknown = sorted(used - allowed)
    if unknown:
        raise doc.error(
            path,
            f"unknown placeholder {{{unknown[0]}}}",
            hint=f"allowed here: {', '.join('{' + name + '}' for name in sorted(allowed)) or 'none'}",
        )
    missing = sorted(allowed - used)
    if missing:
        raise doc.error(path, f"the command lacks the placeholder {{{missing[0]}}}")
    rest = PLACEHOLDER.sub("", pattern)
    if "{" in rest or "}" in rest:
        raise doc.error(path, "a brace outside a {placeholder}", hint="placeholders are {lowercase_names}")
    return pattern


def _arch_list_env(doc: _Doc) -> ArchListEnv:
    """recipes/gpus.yaml's arch-list variables (none when the file names none)."""
    entry = doc.data.get("arch_list_env")
    if entry is None:
        return ArchListEnv((), doc.prov({"source": [], "verified": True}, ("arch_list_env",)))
    return ArchListEnv(tuple(entry["variables"].items()), doc.prov(entry, ("arch_list_env",)))


def _gpus(doc: _Doc, arches: Dict[str, Arch]) -> Dict[str, Gpu]:
    found: Dict[str, Gpu] = {}
    for index, entry in enumerate(doc.data["gpus"]):
        path: PathKey = ("gpus", index)
        if entry["name"] in found:
            raise doc.error(path, f"GPU {entry['name']!r} is listed twice")
        if entry.get("host_arch", next(iter(arches))) not in arches:
            raise doc.error(
                (*path, "host_arch"),
                f"unknown arch {entry['host_arch']!r}",
                hint=f"arches are defined in recipes/arches.yaml: {', '.join(arches)}",
            )
        found[entry["name"]] = Gpu(
            name=entry["name"],
            title=entry["title"],
            architecture=entry["architecture"],
            compute_capability=entry["compute_capability"],
            min_cuda=entry["min_cuda"],
            min_driver=entry["min_driver"],
            product_labels=tuple(entry.get("product_labels", ())),
            prov=doc.prov(entry, path),
            gpus_per_node=entry.get("gpus_per_node"),
            host_arch=entry.get("host_arch"),
            max_cuda=entry.get("max_cuda"),
            host_cpu=entry.get("host_cpu"),
            data_center=entry.get("data_center", False),
        )
    return found


def _hosts(doc: _Doc) -> Dict[str, PublicHost]:
    """One host per mirror option mlcc has (HOST_MIRRORS), no more and no fewer: a host
    without an option could not be mirrored, an option without a host has no default."""
    options = {m.host: m.flag for m in HOST_MIRRORS}
    allowed = ", ".join(f"{name} ({flag})" for name, flag in options.items())
    found: Dict[str, PublicHost] = {}
    for index, entry in enumerate(doc.data["hosts"]):
        path: PathKey = ("hosts", index)
        name = entry["name"]
        if name not in options:
            raise doc.error(
                (*path, "name"),
                f"host {name!r} has no mirror option in mlcc, so a build could not fetch it from a mirror",
                hint=f"the hosts mlcc has a mirror option for: {allowed}",
            )
        if name in found:
            raise doc.error(path, f"host {name!r} is listed twice")
        same = [h.name for h in found.values() if h.url == entry["url"]]
        if same:
            raise doc.error((*path, "url"), f"host {name!r} has the url of host {same[0]!r}")
        found[name] = PublicHost(
            name, entry["url"], entry["serves"], doc.prov(entry, path), entry.get("purl_type")
        )
    missing = [m for m in HOST_MIRRORS if m.host not in found]
    if missing:
        raise doc.error(
            ("hosts",),
            "no host for mlcc's "
            + ", ".join(f"{m.flag} (name: {m.host})" for m in missing)
            + ": the option would have no public host to stand for",
            hint=f"add an entry with name, url, serves, source and verified for each; the hosts: {allowed}",
        )
    return {m.host: found[m.host] for m in HOST_MIRRORS}


def _repositories(doc: _Doc) -> Dict[str, NvidiaRepo]:
    repositories: Dict[str, NvidiaRepo] = {}
    for index, entry in enumerate(doc.data["repositories"]):
        path: PathKey = ("repositories", index)
        if entry["name"] in repositories:
            raise doc.error(path, f"repository {entry['name']!r} is listed twice")
        repositories[entry["name"]] = NvidiaRepo(
            name=entry["name"],
            path=entry["path"],
            keys=tuple(sorted(entry["keys"].items())),
            prov=doc.prov(entry, path),
            key_sha256_unavailable=entry.get("key_sha256_unavailable"),
        )
    return repositories


def _tools(doc: _Doc, arches: Dict[str, Arch]) -> Tuple[Dict[str, PythonTooling], Dict[str, Download]]:
    tooling: Dict[str, PythonTooling] = {}
    for index, entry in enumerate(doc.data["python_tooling"]):
        path: PathKey = ("python_tooling", index)
        if entry["python"] in tooling:
            raise doc.error(path, f"Python {entry['python']} is listed twice")
        tooling[entry["python"]] = PythonTooling(
            python=entry["python"],
            pip=entry["pip"],
            setuptools=entry["setuptools"],
            wheel=entry["wheel"],
            prov=doc.prov(entry, path),
        )
    downloads: Dict[str, Download] = {}
    for index, entry in enumerate(doc.data["downloads"]):
        path = ("downloads", index)
        _check_arches(doc, (*path, "urls"), list(entry["urls"]), arches)
        downloads[entry["name"]] = Download(
            name=entry["name"],
            version=entry["version"],
            urls=tuple(sorted(entry["urls"].items())),
            prov=doc.prov(entry, path),
            checksum_suffix=entry.get("checksum_suffix"),
            sha256=tuple(sorted(entry.get("sha256", {}).items())),
            sha256_unavailable=entry.get("sha256_unavailable"),
        )
    return tooling, downloads


def _check_arches(doc: _Doc, path: PathKey, values: Sequence[str], arches: Dict[str, Arch]) -> None:
    for index, arch in enumerate(values):
        if arch not in arches:
            raise doc.error(
                (*path, index),
                f"unknown arch {arch!r}",
                hint=f"arches are defined in recipes/arches.yaml: {', '.join(arches)}",
            )


def _arches(doc: _Doc) -> Tuple[Dict[str, Arch], Dict[str, str]]:
    arches: Dict[str, Arch] = {}
    aliases: Dict[str, str] = {}
    for index, entry in enumerate(doc.data["arches"]):
        path: PathKey = ("arches", index)
        name = entry["name"]
        for alias in (name, *entry.get("aliases", ())):
            if alias in aliases:
                raise doc.error(path, f"arch name {alias!r} is used twice")
            aliases[alias] = name
        arches[name] = Arch(
            name=name,
            aliases=tuple(entry.get("aliases", ())),
            oci=entry["oci"],
            nvidia_repos=tuple(sorted(entry["nvidia_repo"].items())),
            debian=entry["debian"],
            kubernetes=entry["kubernetes"],
            gnu_triplet=entry["gnu_triplet"],
            prov=doc.prov(entry, path),
        )
    return arches, aliases


def _bases(docs: Sequence[_Doc], arches: Dict[str, Arch], families: Dict[str, Family]) -> Tuple[Base, ...]:
    """The bases of every bases file (recipes/bases.yaml, recipes/bases-ngc.yaml), by preference."""
    bases: List[Base] = []
    seen: Dict[str, str] = {}
    preferences: Dict[int, str] = {}
    for doc in docs:
        for index, entry in enumerate(doc.data["bases"]):
            bases.append(_base(doc, index, entry, arches, families, seen, preferences))
    return tuple(sorted(bases, key=lambda b: b.preference))


def _base(
    doc: _Doc,
    index: int,
    entry: Dict[str, Any],
    arches: Dict[str, Arch],
    families: Dict[str, Family],
    seen: Dict[str, str],
    preferences: Dict[int, str],
) -> Base:
    """One base entry, checked against the others read so far (``seen``, ``preferences``)."""
    path: PathKey = ("bases", index)
    name = entry["name"]
    if name in seen:
        raise doc.error(path, f"base {name!r} is defined twice (first at {seen[name]})")
    seen[name] = doc.where(path)
    if entry["preference"] in preferences:
        raise doc.error(
            (*path, "preference"),
            f"preference {entry['preference']} is already used by {preferences[entry['preference']]!r}",
            hint="preferences must differ so the choice between bases is deterministic",
        )
    preferences[entry["preference"]] = name
    _check_arches(doc, (*path, "arches"), entry["arches"], arches)
    family = families.get(entry["family"])
    if family is None:
        raise doc.error(
            (*path, "family"),
            f"unknown family {entry['family']!r}",
            hint=f"recipes/families.yaml defines {', '.join(sorted(families))}",
        )
    managers = [manager.name for manager in family.package_managers]
    if entry["package_manager"] not in managers:
        raise doc.error(
            (*path, "package_manager"),
            f"{entry['package_manager']} is not a package manager of the {family.name} family "
            f"({', '.join(managers)})",
        )
    pythons = tuple(_python(p) for p in entry["python"]["versions"])
    versions = [p.version for p in pythons]
    if len(set(versions)) != len(versions):
        raise doc.error((*path, "python", "versions"), "lists a Python version twice")
    if entry["python"]["default"] not in versions:
        raise doc.error(
            (*path, "python", "default"),
            f"default Python {entry['python']['default']} is not among versions {versions}",
        )
    if "contents" in entry and entry["contents"]["python"] != entry["python"]["default"]:
        raise doc.error(
            (*path, "contents", "python"),
            f"the image's Python {entry['contents']['python']} is not the base's default "
            f"Python {entry['python']['default']}",
            hint="an image base's python: lists the interpreter the image carries",
        )
    gcc = entry["gcc"]
    return Base(
        name=name,
        title=entry["title"],
        image=entry["image"],
        tag=entry["tag"],
        family=entry["family"],
        repo_distro=entry["repo_distro"],
        package_manager=entry["package_manager"],
        arches=tuple(entry["arches"]),
        preference=entry["preference"],
        python_default=entry["python"]["default"],
        pythons=pythons,
        gcc_system=gcc["system"],
        gcc_packages=tuple(gcc["packages"]),
        toolsets=tuple(_toolset(t) for t in gcc["toolsets"]),
        build_packages=tuple(entry["build_packages"]),
        prov=doc.prov(entry, path),
        packaging=family,
        requires_subscription=entry.get("requires_subscription", False),
        end_of_life=entry.get("end_of_life"),
        glibc=entry.get("glibc"),
        isa_baseline=tuple(sorted(entry.get("isa_baseline", {}).items())),
        contents=_contents(entry.get("contents")),
    )


def _contents(data: Optional[Dict[str, Any]]) -> Optional[BaseContents]:
    """What an image base already holds (NGC), or None for a plain OS base."""
    if data is None:
        return None
    return BaseContents(
        release=data["release"],
        os=data["os"],
        python=data["python"],
        cuda=data["cuda"],
        cuda_min_driver=data["cuda_min_driver"],
        cudnn=data["cudnn"],
        nccl=data["nccl"],
        frameworks=tuple(BaseFramework(f["name"], f["version"]) for f in data["frameworks"]),
        cublas=data.get("cublas"),
        dali=data.get("dali"),
        tensorrt=data.get("tensorrt"),
        openmpi=data.get("openmpi"),
        driver_ran=tuple(sorted(data.get("driver_ran", {}).items())),
        forward_compat=tuple(sorted(data.get("forward_compat", ()))),
    )


def _python(entry: Dict[str, Any]) -> PythonOption:
    return PythonOption(
        version=entry["version"],
        packages=tuple(entry["packages"]),
        executable=entry["executable"],
        setup_packages=tuple(entry.get("setup_packages", ())),
        prefix=entry.get("prefix"),
        verified=entry.get("verified", True),
        note=entry.get("note"),
    )


def _toolset(entry: Dict[str, Any]) -> Toolset:
    return Toolset(
        name=entry["name"],
        gcc=entry["gcc"],
        packages=tuple(entry["packages"]),
        root=entry["root"],
        setup_packages=tuple(entry.get("setup_packages", ())),
        suffix=entry.get("suffix"),
        verified=entry.get("verified", True),
        note=entry.get("note"),
    )


def _spec(doc: _Doc, path: PathKey, text: Optional[str]) -> Optional[str]:
    """Check a PEP 440 specifier from a recipe; return it unchanged."""
    if text is None:
        return None
    try:
        parse_spec(text)
    except ValueError:  # packaging's InvalidSpecifier, or a number past the int-string limit
        raise doc.error(path, f"{text!r} is not a valid version specifier") from None
    return text


def _pinned(items: Sequence[Sequence[str]]) -> Tuple[PinnedPackage, ...]:
    return tuple(PinnedPackage(name, version) for name, version in items)


def _cuda(doc: _Doc, arches: Dict[str, Arch]) -> Tuple[CudaRelease, ...]:
    releases: List[CudaRelease] = []
    seen: Dict[str, str] = {}
    for index, entry in enumerate(doc.data["releases"]):
        path: PathKey = ("releases", index)
        version = entry["version"]
        if version in seen:
            raise doc.error(path, f"CUDA {version} is listed twice (first at {seen[version]})")
        seen[version] = doc.where(path)
        _check_arches(doc, (*path, "host_gcc"), list(entry["host_gcc"]), arches)
        for arch, spec in entry["host_gcc"].items():
            _spec(doc, (*path, "host_gcc", arch), spec)
        for distro, values in entry["repos"].items():
            _check_arches(doc, (*path, "repos", distro), values, arches)
        releases.append(
            CudaRelease(
                version=version,
                label=entry["label"],
                min_driver=entry["min_driver"],
                host_gcc=tuple(entry["host_gcc"].items()),
                repos=tuple((d, tuple(a)) for d, a in entry["repos"].items()),
                packages=_pinned(entry["packages"]),
                apt_packages=_pinned(entry.get("apt_packages", ())),
                packages_not_on=tuple(
                    (a, tuple(names)) for a, names in entry.get("packages_not_on", {}).items()
                ),
                prov=doc.prov(entry, path),
                runtime_packages=_runtime_names(doc, entry, path, "runtime_packages", "packages"),
                apt_runtime_packages=_runtime_names(doc, entry, path, "apt_runtime_packages", "apt_packages"),
            )
        )
    return tuple(sorted(releases, key=lambda r: parse_version(r.version), reverse=True))


def _runtime_names(doc: _Doc, entry: Dict[str, Any], path: PathKey, key: str, of: str) -> Tuple[str, ...]:
    """A runtime list names packages of the release's own list (their versions come from it)."""
    names = tuple(entry.get(key, ()))
    known = {package[0] for package in entry.get(of, ())}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise doc.error(
            (*path, key),
            f"CUDA {entry['version']}: {', '.join(unknown)} not in its {of}",
            hint=f"a runtime package is one of the release's {of}, named without its version",
        )
    return names


def _libs(
    doc: _Doc, library: str, arches: Dict[str, Arch], cuda: Sequence[CudaRelease]
) -> Tuple[LibBuild, ...]:
    builds: List[LibBuild] = []
    seen: Dict[Tuple[Any, ...], str] = {}
    for index, entry in enumerate(doc.data["builds"]):
        path: PathKey = ("builds", index)
        _check_arches(doc, (*path, "arches"), entry["arches"], arches)
        build = LibBuild(
            library=library,
            version=entry["version"],
            cuda=entry["cuda"],
            repo_distro=entry["repo_distro"],
            arches=tuple(entry["arches"]),
            method=entry["method"],
            packages=_pinned(entry.get("packages", ())),
            repo=entry.get("repo"),
            url=entry.get("url"),
            sha256=entry.get("sha256"),
            sha256_unavailable=entry.get("sha256_unavailable"),
            evidence=entry.get("evidence"),
            prov=doc.prov(entry, path),
        )
        if not any(build.fits_cuda(r.version) for r in cuda):
            raise doc.error(
                (*path, "cuda"),
                f"cuda {build.cuda!r} matches no release in recipes/cuda.yaml",
            )
        for arch in build.arches:
            key = (build.version, build.cuda, build.repo_distro, arch, build.method)
            if key in seen:
                raise doc.error(
                    path,
                    f"{library} {build.version} for CUDA {build.cuda} on "
                    f"{build.repo_distro}/{arch} is listed twice (first at {seen[key]})",
                )
            seen[key] = doc.where(path)
        builds.append(build)
    return tuple(builds)


def _frameworks(
    docs: Sequence[_Doc], arches: Dict[str, Arch], cuda: Sequence[CudaRelease]
) -> Dict[str, Framework]:
    minors = {r.minor for r in cuda}
    frameworks: Dict[str, Framework] = {}
    for doc in docs:
        name = doc.data["name"]
        if name in frameworks:
            raise doc.error(("name",), f"framework {name!r} is defined twice")
        builds: List[FrameworkBuild] = []
        seen: Dict[Tuple[str, str], str] = {}
        for r_index, release in enumerate(doc.data["releases"]):
            r_path: PathKey = ("releases", r_index)
            for b_index, build in enumerate(release["builds"]):
                b_path: PathKey = (*r_path, "builds", b_index)
                key = (release["version"], build["variant"])
                if key in seen:
                    raise doc.error(
                        b_path,
                        f"{name} {key[0]} build {key[1]!r} is listed twice (first at {seen[key]})",
                    )
                seen[key] = doc.where(b_path)
                builds.append(_framework_build(doc, name, release, r_path, build, b_path, arches, minors))
        frameworks[name] = Framework(
            name=name,
            title=doc.data["title"],
            import_name=doc.data["import_name"],
            builds=tuple(builds),
            origin=doc.where(()),
        )
    return frameworks


def _framework_build(
    doc: _Doc,
    name: str,
    release: Dict[str, Any],
    r_path: PathKey,
    build: Dict[str, Any],
    b_path: PathKey,
    arches: Dict[str, Arch],
    minors: set[str],
) -> FrameworkBuild:
    _check_arches(doc, (*b_path, "arches"), build["arches"], arches)
    for index, line in enumerate(build["cuda"]):
        if line not in minors:
            raise doc.error(
                (*b_path, "cuda", index),
                f"CUDA {line} has no release in recipes/cuda.yaml",
                hint=f"known CUDA lines: {', '.join(sorted(minors, key=parse_version))}",
            )
    install = build["install"]
    git = install.get("git", {})
    prov = doc.prov(
        build,
        b_path,
        source_ids=release["source"],
        own_sources=release.get("sources", {}),
        verified=release["verified"] and build.get("verified", True),
        unverified_fields=release.get("unverified_fields", ()),
        note=release.get("note"),
    )
    return FrameworkBuild(
        framework=name,
        version=release["version"],
        variant=build["variant"],
        cuda=tuple(build["cuda"]),
        python=tuple(build.get("python", release["python"])),
        arches=tuple(build["arches"]),
        install=Install(
            method=install["method"],
            packages=tuple(install.get("packages", ())),
            index_url=install.get("index_url"),
            extra_index_url=install.get("extra_index_url"),
            find_links=install.get("find_links"),
            channels=tuple(install.get("channels", ())),
            git_url=git.get("url"),
            git_ref=git.get("ref"),
            git_ref_unresolved=git.get("ref_unresolved"),
            build_env=tuple(sorted(install.get("build_env", {}).items())),
            origins=tuple(
                doc.where((*b_path, "install", "packages", i))
                for i in range(len(install.get("packages", ())))
            ),
            wheels=_wheels(doc, (*b_path, "install", "wheels"), install.get("wheels", {}), build, release),
            wheels_origin=doc.where((*b_path, "install", "wheels")) if "wheels" in install else None,
            wheels_sha256_unavailable=install.get("wheels_sha256_unavailable"),
            builds_unavailable=install.get("builds_unavailable"),
        ),
        prov=prov,
        cudnn=_spec(doc, (*b_path, "cudnn"), build.get("cudnn")),
        gcc=_spec(doc, (*b_path, "gcc"), build.get("gcc")),
        companions=tuple(sorted(release.get("companions", {}).items())),
        bundles=tuple(sorted(build.get("bundles", {}).items())),
        bundles_origin=doc.where((*b_path, "bundles")) if "bundles" in build else None,
        bundles_origins=tuple(
            sorted(
                (library, doc.where((*b_path, "bundles", library))) for library in build.get("bundles", {})
            )
        ),
        fact_origins=(
            ("arches", doc.where((*b_path, "arches"))),
            ("cuda", doc.where((*b_path, "cuda"))),
            *((("cudnn", doc.where((*b_path, "cudnn"))),) if "cudnn" in build else ()),
            ("python", doc.where((*b_path, "python") if "python" in build else (*r_path, "python"))),
        ),
    )


def _wheels(
    doc: _Doc, path: PathKey, wheels: Dict[str, List[str]], build: Dict[str, Any], release: Dict[str, Any]
) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """Exact wheel URLs per Python: every Python the build claims needs its wheels, and each
    wheel's own tags must name that CPython (known offline, so a load error, not a finding)."""
    if not wheels:
        return ()
    for python in build.get("python", release["python"]):
        if python not in wheels:
            raise doc.error(path, f"no wheel URL for Python {python}, which the build claims")
    for python, urls in wheels.items():
        interpreter = "cp" + python.replace(".", "")
        for index, url in enumerate(urls):
            filename = url.split("#", 1)[0].rsplit("/", 1)[-1]
            try:
                tags = parse_wheel_filename(filename)[3]
            except InvalidWheelFilename as exc:
                where = (*path, python, index)
                raise doc.error(where, f"{filename} is not a wheel file name ({exc})") from None
            if not any(isinstance(t, Tag) and t.interpreter in (interpreter, "py3") for t in tags):
                found = ", ".join(sorted(str(t) for t in tags))
                raise doc.error(
                    (*path, python, index),
                    f"{filename} does not install on Python {python} (its tags: {found})",
                    hint=f"name the {interpreter} wheel of that release",
                )
    return tuple(sorted((python, tuple(urls)) for python, urls in wheels.items()))


def _benchmarks(
    docs: Sequence[_Doc],
    arches: Dict[str, Arch],
    frameworks: Dict[str, Framework],
    generations: Dict[str, Gpu],
    rounds: Sequence[Round],
    bases: Sequence[Base] = (),
) -> Dict[str, Benchmark]:
    benchmarks: Dict[str, Benchmark] = {}
    made: List[Tuple[_Doc, str]] = []
    default_round = next((r.name for r in rounds if r.default), None)
    for doc in docs:
        data = doc.data
        name = data["name"]
        stem = Path(doc.display).stem
        if name != stem:
            raise doc.error(("name",), f"name {name!r} must match the file name {stem!r}")
        record = _benchmark_round(doc, rounds, default_round)
        round_ = record.name if record is not None else None
        key = benchmark_id(name, round_, default_round)
        if key in benchmarks:
            raise doc.error(
                ("name",),
                f"benchmark {name!r} is defined twice in round {round_ or default_round}",
                hint=f"the other is {benchmarks[key].prov.origin}",
            )
        constraints = data["constraints"]
        c_path: PathKey = ("constraints",)
        _check_arches(doc, (*c_path, "arches"), constraints["arches"], arches)
        missing = constraints.get("arches_missing", {})
        _check_arches_missing(doc, (*c_path, "arches_missing"), missing, constraints["arches"], arches)
        rule = _framework_rule(doc, constraints.get("framework"), frameworks)
        python = constraints.get("python")
        needs_python = python != "none"
        if not needs_python and rule is not None:
            raise doc.error((*c_path, "python"), "a benchmark with a framework needs Python")
        gpus = constraints["gpus"]
        if gpus["min"] > gpus["reference"]:
            raise doc.error(
                (*c_path, "gpus", "min"),
                f"gpus: min {gpus['min']} exceeds reference {gpus['reference']}",
                hint="min: the fewest GPUs it runs on; reference: the count it was measured with",
            )
        origins = {
            key: doc.where((*c_path, key))
            for key in (
                "accelerators",
                "arches",
                "arches_missing",
                "requires",
                "links",
                "python",
                "cuda",
                "gcc",
                "framework",
                "gpus",
                "bases",
            )
            if key in constraints
        }
        named_bases = _benchmark_bases(doc, constraints.get("bases", ()), rule, bases)
        _check_replaces(doc, named_bases, bases)
        if "unavailable" in data:
            if "build" in data:
                raise doc.error(
                    ("unavailable",),
                    "a benchmark that is unavailable has no build",
                    hint="drop build:, or drop unavailable: once a stack can be built",
                )
            origins["unavailable"] = doc.where(("unavailable",))
        benchmarks[key] = Benchmark(
            name=key,
            recipe_name=name,
            round=round_,
            title=data["title"],
            suite=data["suite"],
            accelerators=tuple(constraints["accelerators"]),
            arches=tuple(constraints["arches"]),
            requires=tuple(constraints["requires"]),
            links=tuple(constraints.get("links", ())),
            arches_missing=tuple(sorted((arch, " ".join(why.split())) for arch, why in missing.items())),
            framework=rule,
            python=_spec(doc, (*c_path, "python"), python) if needs_python else None,
            needs_python=needs_python,
            cuda=_spec(doc, (*c_path, "cuda"), constraints.get("cuda")),
            gcc=_spec(doc, (*c_path, "gcc"), constraints.get("gcc")),
            gpus_min=constraints["gpus"]["min"],
            gpus_reference=constraints["gpus"]["reference"],
            prov=doc.prov(data, ()),
            origins=tuple(sorted(origins.items())),
            build=_benchmark_build(doc, data["build"], generations, record) if "build" in data else None,
            reference_stack=_reference_stack(doc, data.get("reference_stack")),
            unavailable=" ".join(data["unavailable"].split()) if "unavailable" in data else None,
            bases=named_bases,
            ubi_alternative=_ubi_alternative(doc, constraints.get("ubi_alternative"), named_bases, bases),
        )
        _check_sources_cover(doc, benchmarks[key], frameworks)
        made.append((doc, key))
    for doc, key in made:  # a nearest recipe may be defined by a later file
        _check_nearest(doc, benchmarks[key], benchmarks, bases)
    return dict(sorted(benchmarks.items()))


def _check_replaces(doc: _Doc, named_bases: Sequence[str], bases: Sequence[Base]) -> None:
    """A step that replaces a component replaces the one an image base holds: every base the
    recipe names is one (NGC's), and no two steps replace the same component."""
    contents = {base.name: base.contents for base in bases}
    plain = [name for name in named_bases if contents.get(name) is None]
    seen: Dict[str, int] = {}
    for index, step in enumerate(doc.data.get("build", {}).get("steps", ())):
        path: PathKey = ("build", "steps", index, "replaces")
        for component in step.get("replaces", {}):
            if plain or not named_bases:
                named = f"the plain base {', '.join(plain)}" if plain else "no image base"
                raise doc.error(
                    (*path, component),
                    f"replaces {component}, but constraints.bases names {named}: a stack on a plain"
                    f" base installs its own {component}",
                    hint="replaces is for a step that installs over an image base (NGC) that holds it",
                )
            if component in seen:
                raise doc.error(
                    (*path, component),
                    f"{component} is replaced twice",
                    hint=f"build step {seen[component] + 1} replaces it already",
                )
            seen[component] = index


_UBI_PATH: PathKey = ("constraints", "ubi_alternative")


def _ubi_alternative(
    doc: _Doc, entry: Optional[Dict[str, Any]], named_bases: Sequence[str], bases: Sequence[Base]
) -> Optional[UbiAlternative]:
    """The recipe's ``constraints.ubi_alternative``: only a benchmark that builds on image
    bases alone (NGC's) lacks a stack on the plain ones, so only such a recipe says why."""
    if entry is None:
        return None
    contents = {base.name: base.contents for base in bases}
    if not named_bases or any(contents.get(name) is None for name in named_bases):
        raise doc.error(
            _UBI_PATH,
            "ubi_alternative says why no stack on a plain base (UBI) can be built; this recipe "
            "builds on one (constraints.bases names no NGC image, or a plain base too)",
            hint="drop ubi_alternative: the resolver searches the plain bases for this benchmark",
        )
    return UbiAlternative(
        unavailable=" ".join(entry["unavailable"].split()),
        nearest=entry.get("nearest"),
        prov=doc.prov(entry, _UBI_PATH),
    )


def _check_nearest(
    doc: _Doc, bench: Benchmark, benchmarks: Dict[str, Benchmark], bases: Sequence[Base]
) -> None:
    """The recipe ``ubi_alternative.nearest`` names exists and builds on plain bases."""
    alternative = bench.ubi_alternative
    if alternative is None or alternative.nearest is None:
        return
    path: PathKey = (*_UBI_PATH, "nearest")
    nearest = benchmarks.get(alternative.nearest)
    if nearest is None:
        plain = sorted(name for name, other in benchmarks.items() if not other.bases)
        raise doc.error(
            path,
            f"unknown benchmark {alternative.nearest!r}",
            hint=f"name a recipe that builds on the plain bases ({', '.join(plain)}), or drop nearest:",
        )
    image = {base.name for base in bases if base.contents is not None}
    if any(name in image for name in nearest.bases):
        raise doc.error(
            path,
            f"{nearest.name} builds on {', '.join(nearest.bases)}, NGC images: not a stack on a plain base",
            hint="name a recipe that builds on the plain bases (UBI), or drop nearest:",
        )


def _benchmark_bases(
    doc: _Doc, names: Sequence[str], rule: Optional[FrameworkRule], bases: Sequence[Base]
) -> Tuple[str, ...]:
    """The benchmark's ``constraints.bases``, each a known base; a base that carries
    frameworks must carry the one the recipe's ``framework:`` names, if it names one."""
    known = {base.name: base for base in bases}
    for index, name in enumerate(names):
        path: PathKey = ("constraints", "bases", index)
        base = known.get(name)
        if base is None:
            raise doc.error(
                path,
                f"unknown base {name!r}",
                hint=f"recipes/bases*.yaml define {', '.join(sorted(known))}",
            )
        if base.contents is not None and rule is not None and base.contents.carries(rule.name) is None:
            carried = ", ".join(f.name for f in base.contents.frameworks)
            raise doc.error(
                path,
                f"base {name} carries {carried}, not the framework {rule.name} the recipe names",
                hint="name a base that carries it, or drop framework: (the base brings its own)",
            )
    return tuple(names)


def _benchmark_round(doc: _Doc, rounds: Sequence[Round], default_round: Optional[str]) -> Optional[Round]:
    """The record of the recipe's ``round:``, which must agree with its folder:
    recipes/benchmarks/<round>/ holds that round alone; the top level holds the default round
    and non-MLPerf tools. The round's shared sources become citable in the recipe."""
    round_: Optional[str] = doc.data.get("round")
    folder = Path(doc.display).parent.name
    in_round_folder = bool(ROUND_FOLDER.match(folder))
    if in_round_folder and round_ != folder:
        raise doc.error(
            ("round",) if round_ else ("name",),
            f"a recipe in benchmarks/{folder}/ must say round: {folder} (it says {round_!r})",
        )
    if round_ is None:
        return None
    record = next((r for r in rounds if r.name == round_), None)
    if record is None:
        raise doc.error(
            ("round",),
            f"round {round_!r} has no record in recipes/rounds/",
            hint=f"rounds: {', '.join(r.name for r in rounds) or '(none)'}; a new round needs "
            f"recipes/rounds/{round_}.yaml",
        )
    if not in_round_folder and round_ != default_round:
        raise doc.error(
            ("round",),
            f"round {round_!r} recipes live in recipes/benchmarks/{round_}/",
            hint=f"the top level holds round {default_round} and tools outside MLPerf",
        )
    shared = dict(record.sources)
    for source_id in doc.data["sources"]:
        if source_id in shared:
            raise doc.error(
                ("sources", source_id),
                f"source id {source_id!r} is defined by round {round_}'s record",
                hint=f"cite the round's (recipes/rounds/{round_}.yaml) or give this one another id",
            )
    doc.shared_sources = shared
    return record


def _check_arches_missing(
    doc: _Doc, path: PathKey, missing: Dict[str, str], supported: Sequence[str], arches: Dict[str, Arch]
) -> None:
    """Each arch given a cause for its absence is one mlcc knows and the benchmark does not list."""
    for arch in missing:
        if arch not in arches:
            raise doc.error(
                (*path, arch),
                f"unknown arch {arch!r}",
                hint=f"arches are defined in recipes/arches.yaml: {', '.join(arches)}",
            )
        if arch in supported:
            raise doc.error(
                (*path, arch),
                f"{arch} is in arches and in arches_missing",
                hint="name an arch in arches_missing only when the benchmark does not run there",
            )


def _reference_stack(doc: _Doc, data: Optional[Dict[str, Any]]) -> Optional[ReferenceStack]:
    if data is None:
        return None
    return ReferenceStack(
        run=data["run"],
        cuda=data["cuda"],
        cudnn=data.get("cudnn"),
        nccl=data.get("nccl"),
        prov=doc.prov(data, ("reference_stack",)),
    )


def _benchmark_build(
    doc: _Doc, data: Dict[str, Any], gpus: Dict[str, Gpu], record: Optional[Round]
) -> BenchmarkBuild:
    path: PathKey = ("build",)
    source = data.get("source")
    return BenchmarkBuild(
        workdir=data["workdir"],
        packages=tuple(sorted((family, tuple(names)) for family, names in data["packages"].items())),
        steps=_named_copies(
            tuple(
                _build_step(doc, step, ("build", "steps", i), record) for i, step in enumerate(data["steps"])
            ),
            _script_copy_names(data["steps"]),
        ),
        env=tuple((name, value) for name, value in data["env"].items() if isinstance(value, str)),
        entrypoint=tuple(data["entrypoint"]),
        writable=tuple(data["writable"]),
        datasets=tuple(Dataset(**d) for d in data["datasets"]),
        quality_target=data["quality_target"],
        # the build's own citations sit in source_ids (source: is the benchmark's repository)
        prov=doc.prov({**data, "source": data["source_ids"]}, path),
        source=_sources(doc, source)[0] if source else None,
        sources=_sources(doc, source) if source else (),
        cmd=tuple(data.get("cmd", ())),
        shm=data.get("shm"),
        run_as_root=data.get("run_as_root", False),
        reference=_reference(doc, ("build", "reference"), data["reference"], gpus)
        if "reference" in data
        else None,
        gpu_references=tuple(
            _reference(doc, ("build", "gpu_references", i), r, gpus)
            for i, r in enumerate(data.get("gpu_references", ()))
        ),
        run_args=tuple(sorted((acc, tuple(args)) for acc, args in data.get("run_args", {}).items())),
        scripts=_scripts(doc, data["steps"]),
        mpi=_mpi(data.get("mpi")),
        launch=_launch(doc, data.get("launch"), gpus, record),
        flavour=data.get("flavour", "runtime"),
        flavour_reason=_flavour_reason(doc, data),
        runtime_packages=tuple(
            sorted(
                (family, tuple(names))
                for family, names in data.get("runtime", {}).get("packages", {}).items()
            )
        ),
        runtime_copy=_runtime_copy(doc, data.get("runtime", {}).get("copy", ())),
        arch_list_env=_build_arch_list_env(data),
        env_extensions=_env_extensions(data["env"]),
        run_seed=_run_seed(doc, data.get("run_seed")),
    )


def _env_extensions(env: Dict[str, Any]) -> Tuple[EnvExtension, ...]:
    """The variables a build's ``env`` extends ({prepend: [...], append: [...]}, each
    folder schema-checked: absolute, no ``$`` or ``:``), in the recipe's order."""
    return tuple(
        EnvExtension(name, tuple(value.get("prepend", ())), tuple(value.get("append", ())))
        for name, value in env.items()
        if isinstance(value, dict)
    )


def _run_seed(doc: _Doc, data: Optional[Dict[str, Any]]) -> Optional[RunSeed]:
    if data is None:
        return None
    return RunSeed(env=data["env"], prov=doc.prov(data, ("build", "run_seed")))


def _build_arch_list_env(data: Dict[str, Any]) -> Tuple[Tuple[str, str], ...]:
    """A benchmark build's own arch-list variables. One its env also sets holds the list a
    build without --gpu compiles for; one it does not is set with --gpu only (the build's
    own default list otherwise, as nccl-tests' Makefile has)."""
    return tuple(data.get("arch_list_env", {}).items())


# A runtime image copies these from the build stage; the kernel's own trees are not files a
# build made, and copying them would carry the build's environment (/proc/self/environ)
KERNEL_TREES = ("/proc", "/sys", "/dev")


def _runtime_copy(doc: _Doc, paths: Sequence[str]) -> Tuple[str, ...]:
    """The ``runtime.copy`` paths: absolute, normalised (no ``..``, ``.``, ``//`` or trailing
    ``/``), not the root, and outside /proc, /sys and /dev."""
    for index, path in enumerate(paths):
        where = ("build", "runtime", "copy", index)
        if path == "/" or posixpath.normpath(path) != path:
            raise doc.error(
                where,
                f"runtime.copy path {path!r} is not a normalised path below the root",
                hint="name each file or folder the build made, as /usr/local/lib/libx.so",
            )
        if any(path == tree or path.startswith(tree + "/") for tree in KERNEL_TREES):
            raise doc.error(
                where,
                f"runtime.copy path {path!r} is in {', '.join(KERNEL_TREES)}: the kernel's, not the build's",
            )
    return tuple(paths)


def _flavour_reason(doc: _Doc, data: Dict[str, Any]) -> Optional[str]:
    """A benchmark whose images are devel by default says why (it compiles at run time)."""
    reason = data.get("flavour_reason")
    if data.get("flavour") == "devel" and not reason:
        raise doc.error(
            ("build", "flavour"),
            "flavour: devel needs flavour_reason",
            hint="say what the benchmark compiles at run time, e.g. a JIT-built extension",
        )
    return None if reason is None else " ".join(reason.split())


def _launch(
    doc: _Doc, data: Optional[Dict[str, Any]], gpus: Dict[str, Gpu], record: Optional[Round]
) -> Optional[Launch]:
    if data is None:
        return None
    path: PathKey = ("build", "launch")
    shapes = tuple(
        _node_shape(doc, (*path, "node_shapes", name), name, shape, gpus)
        for name, shape in data["node_shapes"].items()
    )
    for shape in shapes:
        _check_round_system(doc, (*path, "node_shapes", shape.name), shape, record)
    configs = tuple(
        _launch_config(doc, (*path, "configs", i), c, shapes) for i, c in enumerate(data["configs"])
    )
    return Launch(
        style=data["style"],
        system=data["system"],
        node_shapes=shapes,
        multi_node=data["multi_node"],
        configs=configs,
        source=data["source"],
        scale=tuple(data.get("scale", ())),
    )


def _reference(doc: _Doc, path: PathKey, data: Dict[str, Any], gpus: Dict[str, Gpu]) -> ReferenceRun:
    """A published result; the GPU it names must be one mlcc knows."""
    if data.get("gpu") is not None and data["gpu"] not in gpus:
        raise doc.error(
            (*path, "gpu"),
            f"reference on GPU {data['gpu']!r}: not in recipes/gpus.yaml",
            hint=f"use one of {', '.join(sorted(gpus))}",
        )
    return ReferenceRun(**data)


def _node_shape(doc: _Doc, path: PathKey, name: str, data: Dict[str, Any], gpus: Dict[str, Gpu]) -> NodeShape:
    """A machine NVIDIA ran on, with the compute capability of the GPU it names."""
    gpu = data.get("gpu")
    if gpu is not None and gpu not in gpus:
        raise doc.error(
            (*path, "gpu"),
            f"node shape {name}: GPU {gpu!r} is not in recipes/gpus.yaml",
            hint=f"use one of {', '.join(sorted(gpus))}",
        )
    return NodeShape(
        name=name,
        gpus=data["gpus"],
        sockets=data["sockets"],
        socket_cores=data["socket_cores"],
        hyperthreads=data["hyperthreads"],
        gpu=gpu,
        gpu_capability=gpus[gpu].compute_capability if gpu is not None else None,
    )


def _check_round_system(doc: _Doc, path: PathKey, shape: NodeShape, record: Optional[Round]) -> None:
    """A node shape named as one of its round's systems has that system's counts and GPU."""
    system = record.system(shape.name) if record is not None else None
    if system is None or record is None:
        return
    for field in ("gpus", "sockets", "socket_cores", "hyperthreads", "gpu"):
        own = getattr(shape, field)
        if own is not None and own != getattr(system, field):
            raise doc.error(
                (*path, field),
                f"node shape {shape.name}: {field} {own!r}, but round {record.name}'s system "
                f"{shape.name} has {getattr(system, field)!r}",
                hint=f"the round's systems are in recipes/rounds/{record.name}.yaml",
            )


def _launch_config(
    doc: _Doc, path: PathKey, data: Dict[str, Any], shapes: Tuple[NodeShape, ...]
) -> LaunchConfig:
    """One of NVIDIA's files, checked against the machine it names."""
    by_name = {shape.name: shape for shape in shapes}
    shape = by_name.get(data["node_shape"])
    if shape is None:
        raise doc.error(
            (*path, "node_shape"),
            f"{data['file']}: node shape {data['node_shape']!r} is not one of launch.node_shapes",
            hint=f"use one of {', '.join(sorted(by_name))}, or add it to node_shapes",
        )
    if data["gpus_per_node"] > shape.gpus:
        raise doc.error(
            (*path, "gpus_per_node"),
            f"{data['file']}: {data['gpus_per_node']} GPUs per node,"
            f" but a {shape.name} node has {shape.gpus}",
            hint="gpus_per_node is the file's DGXNGPU; node_shape the machine it ran on",
        )
    return LaunchConfig(
        file=data["file"],
        node_shape=shape.name,
        nodes=data["nodes"],
        gpus_per_node=data["gpus_per_node"],
        settings=tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()),
        exports=tuple(data.get("exports", {}).items()),
        source=data["source"],
        image_lacks=data.get("image_lacks"),
    )


def _check_sources_cover(doc: _Doc, bench: Benchmark, frameworks: Dict[str, Framework]) -> None:
    """Every framework version the benchmark accepts needs a source commit that serves it."""
    if bench.build is None or not bench.build.sources or bench.framework is None:
        return
    for build in frameworks[bench.framework.name].builds:
        if (
            satisfies(build.version, bench.framework.versions)
            and bench.build.source_for(build.version) is None
        ):
            raise doc.error(
                ("build", "source"),
                f"no source serves {bench.framework.name} {build.version}, which {bench.name} accepts",
                hint="add a source whose 'framework' range includes it, or narrow constraints.framework",
            )


def _sources(doc: _Doc, data: Any) -> Tuple[SourceRef, ...]:
    """A benchmark's source, or its sources per framework-version range."""
    entries = data if isinstance(data, list) else [data]
    for index, entry in enumerate(entries):
        path: PathKey = ("build", "source", index) if isinstance(data, list) else ("build", "source")
        if "framework" in entry:
            _spec(doc, (*path, "framework"), entry["framework"])
        elif isinstance(data, list) and index < len(entries) - 1:
            raise doc.error(
                ("build", "source", index),
                "only the last of several sources may omit 'framework'",
                hint="say which framework versions each commit serves, e.g. framework: '>=1.14,<2.2'",
            )
    return tuple(
        SourceRef(
            e["repository"],
            e["commit"],
            e.get("path"),
            e.get("framework"),
            tuple((a["path"], a["dest"]) for a in e.get("also", ())),
        )
        for e in entries
    )


def _mpi(data: Optional[Dict[str, Any]]) -> Optional[MpiLaunch]:
    if data is None:
        return None
    return MpiLaunch(
        prefix=tuple(sorted(data["prefix"].items())),
        packages=tuple(sorted((family, tuple(names)) for family, names in data["packages"].items())),
        ranks=data["ranks"],
        args=tuple(data.get("args", ())),
        rank_env=data.get("rank_env"),
        pytorchjob=bool(data.get("pytorchjob", False)),
    )


def _scripts(doc: _Doc, steps: Sequence[Dict[str, Any]]) -> Tuple[Tuple[str, str], ...]:
    """The helper scripts script steps name: the benchmark's own from
    recipes/benchmarks/[<round>/]<name>.d/, else the one its folder's benchmarks share from
    recipes/benchmarks/[<round>/]scripts/, filled in with the step's ``with:`` values.

    Regular files only: a link, FIFO or device there would bring a file from outside the
    recipes into the generated folder and, by its COPY, into the image.
    """
    here = Path(doc.root) / Path(doc.display).parent.relative_to("recipes")
    own = here / f"{doc.data['name']}.d"
    shared = here / ROUND_SCRIPTS
    found = []
    names = _script_copy_names(steps)
    for index, step in enumerate(steps):
        if "script" not in step:
            continue
        where = ("build", "steps", index, "script")
        path = _script_path(doc, where, own, shared, step["script"])
        try:
            text = read_text(path, follow_links=False)
        except UnreadableFile as error:
            raise doc.error(where, f"{_shown(doc, path)}: {error}") from None
        if "with" in step:
            text = _fill_script(doc, ("build", "steps", index, "with"), path, text, step["with"])
        found.append((names[index], text))
    return tuple(found)


def _script_copy_names(steps: Sequence[Dict[str, Any]]) -> Dict[int, str]:
    """The file each script step's copy is written to, by step index: a script's first use
    keeps its name, its n-th ``git-pip-n.sh``. Two steps filling one shared script with other
    values are two files: under one name the last copy would overwrite the others, and every
    step would run it."""
    names: Dict[int, str] = {}
    uses: Dict[str, int] = {}
    for index, step in enumerate(steps):
        if "script" not in step:
            continue
        name = step["script"]
        uses[name] = uses.get(name, 0) + 1
        stem, dot, suffix = name.rpartition(".")
        names[index] = (
            name if uses[name] == 1 else (f"{stem}-{uses[name]}.{suffix}" if dot else f"{name}-{uses[name]}")
        )
    return names


def _named_copies(steps: Tuple[BuildStep, ...], names: Dict[int, str]) -> Tuple[BuildStep, ...]:
    """The script steps of ``steps`` renamed to their copies (:func:`_script_copy_names`)."""
    return tuple(step._replace(script=names[i]) if i in names else step for i, step in enumerate(steps))


def _shown(doc: _Doc, path: Path) -> str:
    """``path`` as the recipes-relative name a message shows (never a machine path)."""
    return f"recipes/{path.relative_to(doc.root).as_posix()}"


def _script_path(doc: _Doc, where: Tuple[Any, ...], own: Path, shared: Path, name: str) -> Path:
    """Where script ``name`` is: the benchmark's own folder first, then the scripts its folder's
    benchmarks share. A folder that is a symbolic link is refused, and a link named as the
    script is found (not followed) so that reading it says what it is."""
    folders = [own, shared]
    for folder in folders:
        if folder.is_symlink():
            raise doc.error(
                where, f"{_shown(doc, folder)}/ is a symbolic link (mlcc reads only real folders here)"
            )
    for folder in folders:
        path = folder / name
        if path.is_symlink() or path.exists():
            return path
    places = " or ".join(f"{_shown(doc, folder)}/" for folder in folders)
    raise doc.error(where, f"script {name!r} is not in {places}")


# The project's line length (ruff): a list value goes on one line when it fits.
_SCRIPT_LINE = 110


def _fill_script(doc: _Doc, path: PathKey, script: Path, text: str, values: Dict[str, Any]) -> str:
    """A shared script with its ``${name}`` placeholders filled from a list of strings: after a
    Python assignment (``wanted = ${modules}``) a tuple of them, on one line when it fits
    (else one item a line, as ruff formats it); anywhere else one line each, every line after
    the first starting with what precedes the placeholder on its line (``# `` in a comment)."""
    template = string.Template(text)
    # Template.get_identifiers is Python 3.11's; mlcc runs on 3.9: its pattern gives the same
    wanted = {m.group("braced") or m.group("named") for m in template.pattern.finditer(text)} - {None}
    if set(values) != wanted:
        raise doc.error(
            path,
            f"{script.name} takes {', '.join(sorted(wanted)) or 'no values'}"
            f" (given: {', '.join(sorted(values))})",
            hint=f"the shared script is recipes/{script.relative_to(Path(doc.root)).as_posix()}",
        )
    filled = {}
    for name, items in values.items():
        line = next(line for line in text.splitlines() if "${" + name + "}" in line)
        prefix = line[: line.index("${" + name + "}")]
        if not prefix.endswith("= "):
            filled[name] = ("\n" + prefix).join(items)
            continue
        one_line = "(" + ", ".join(f'"{item}"' for item in items) + ")"
        if len(prefix) + len(one_line) <= _SCRIPT_LINE:
            filled[name] = one_line
        else:
            filled[name] = "(\n" + "".join(f'    "{item}",\n' for item in items) + ")"
    return template.substitute(filled)


def _stands_for(doc: _Doc, data: Dict[str, Any], path: PathKey) -> Optional[Tuple[str, str]]:
    """A pip step's stand-in claim, on a step of one exact pin (whose version it qualifies)."""
    claim = data.get("stands_for")
    if claim is None:
        return None
    if len(data["pip"]) != 1 or "==" not in data["pip"][0]:
        raise doc.error((*path, "stands_for"), "stands_for qualifies a step of one name==version pin")
    return (claim["version"], claim["nearest"])


def _build_step(doc: _Doc, data: Dict[str, Any], path: PathKey, record: Optional[Round] = None) -> BuildStep:
    if "round_step" in data:
        return _round_step(doc, data, path, record)
    step = BuildStep(
        "script",
        arches=tuple(data.get("arches", ())),
        families=tuple(data.get("families", ())),
        env=tuple(data.get("env", {}).items()),
        note=data.get("note"),
    )
    if "pip" in data:
        return step._replace(
            kind="pip",
            packages=tuple(data["pip"]),
            origins=tuple(doc.where((*path, "pip", i)) for i in range(len(data["pip"]))),
            pip_index=data.get("index"),
            no_deps=data.get("no_deps", False),
            stands_for=_stands_for(doc, data, path),
        )
    if "git" in data:
        git = data["git"]
        return step._replace(
            kind="git",
            git_url=git["url"],
            git_ref=git["ref"],
            dest=git["dest"],
            setup_options=tuple(data.get("setup", ())),
        )
    if "install" in data:
        return step._replace(
            kind="install",
            install=data["install"],
            install_dir=data.get("dir"),
            no_deps=data.get("no_deps", False),
        )
    if "make" in data:
        return step._replace(kind="make", make_args=tuple(data["make"]))
    return step._replace(
        script=data["script"],
        runtime=data.get("runtime", False),
        replaces=_replaces(doc, data.get("replaces", {}), (*path, "replaces")),
        replaces_origin=doc.where((*path, "replaces")) if "replaces" in data else None,
    )


# The components of a stack an image base holds that a build step may build over it.
_REPLACEABLE = ("cudnn", "nccl")


def _replaces(doc: _Doc, entry: Dict[str, Any], path: PathKey) -> Tuple[Replacement, ...]:
    """A script step's ``replaces``: which of the base's components it installs, at which
    version and how: ``{nccl: "2.28.3"}`` builds it from source, ``{cudnn: {version:
    "9.13.1.26", method: package}}`` says the method (the schema has checked the shape)."""
    found: List[Replacement] = []
    for component, value in entry.items():
        where = (*path, component)
        if component not in _REPLACEABLE:
            raise doc.error(
                where,
                f"replaces names {component!r}, not a component a build step can replace",
                hint=f"components: {', '.join(_REPLACEABLE)}",
            )
        if isinstance(value, dict):
            version, method, where = value["version"], value["method"], (*where, "version")
        else:
            version, method = value, BUILT_FROM_SOURCE
        if not is_valid_version(version) or str(Version(version)) != version:
            raise doc.error(
                where,
                f"replaces {component} with {version!r}, which is not a version in its plain form",
                hint="the version the step installs, e.g. 2.28.3 for NCCL's tag v2.28.3-1",
            )
        found.append(Replacement(component, version, method))
    return tuple(sorted(found))


def _round_step(doc: _Doc, data: Dict[str, Any], path: PathKey, record: Optional[Round]) -> BuildStep:
    """A step of the benchmark's round record, with what the benchmark adds: setup options
    (to a git step), a note, arches, families, env."""
    shared = dict(record.steps) if record is not None else {}
    name = data["round_step"]
    if name not in shared:
        where = f"round {record.name}'s record" if record is not None else "a benchmark outside MLPerf rounds"
        raise doc.error(
            (*path, "round_step"),
            f"round_step {name!r} is not a step of {where}",
            hint=f"steps: {', '.join(shared) or '(none)'}",
        )
    step = shared[name]
    if "setup" in data and step.kind != "git":
        raise doc.error(
            (*path, "setup"), f"round_step {name!r} is a {step.kind} step; setup is for git steps"
        )
    return step._replace(
        setup_options=tuple(data.get("setup", step.setup_options)),
        note=data.get("note", step.note),
        arches=tuple(data.get("arches", step.arches)),
        families=tuple(data.get("families", step.families)),
        env=tuple(data.get("env", dict(step.env)).items()),
    )


def _framework_rule(
    doc: _Doc, entry: Optional[Dict[str, Any]], frameworks: Dict[str, Framework]
) -> Optional[FrameworkRule]:
    if entry is None:
        return None
    path: PathKey = ("constraints", "framework")
    name = entry["name"]
    if name not in frameworks:
        raise doc.error(
            (*path, "name"),
            f"unknown framework {name!r}",
            hint=f"frameworks: {', '.join(sorted(frameworks))}",
        )
    _spec(doc, (*path, "versions"), entry["versions"])
    known = {b.version for b in frameworks[name].builds}
    for index, version in enumerate(entry.get("prefer", ())):
        if version not in known or not is_valid_version(version):
            raise doc.error((*path, "prefer", index), f"{name} {version} is not in the framework's recipe")
    return FrameworkRule(
        name=name,
        versions=entry["versions"],
        prefer=tuple(entry.get("prefer", ())),
        origin=doc.where(path),
    )


def iter_sources(kb: KnowledgeBase) -> Iterator[Provenance]:
    """Every provenance record in the knowledge base (for audits and tests)."""
    for arch in kb.arches.values():
        yield arch.prov
    for base in kb.bases:
        yield base.prov
    for release in kb.cuda:
        yield release.prov
    for lib in (*kb.cudnn, *kb.nccl):
        yield lib.prov
    for framework in kb.frameworks.values():
        for build in framework.builds:
            yield build.prov
    for benchmark in kb.benchmarks.values():
        yield benchmark.prov
        if benchmark.reference_stack is not None:
            yield benchmark.reference_stack.prov
    for record in kb.round_records:
        yield record.prov
        for system in record.systems:
            yield system.prov
    for rule in kb.source_builds:
        yield rule.prov
    for fact in kb.sdist_requires:
        yield fact.prov
    for build_only in kb.build_only:
        yield build_only.prov
