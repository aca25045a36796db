"""The import graph: no cycles, and imports at module top.

Read from the source with ``ast`` (nothing is imported): every ``import`` of an mlcc
module, at any depth of a module, except those under ``if TYPE_CHECKING:`` which never
run. The place modules are imported late on purpose is the CLI's lazy command table
(mlcc/cli/__init__.py), which names modules as strings, not import statements; and one
import named below, the knowledge base's cold path.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[2] / "mlcc"
# module -> what it imports inside a function, and why. A cache miss of the knowledge
# base builds it from YAML and JSON Schemas; importing that path (jsonschema alone ~170 ms)
# on every start would cost more than a warm `mlcc resolve` takes in all.
# jsonschema and referencing are imported by schema_check on its first validation:
# mlcc.matrix (and so every `mlcc gen`) imports schema_check, and jsonschema is 40-60 ms.
LATE_IMPORTS = {
    # the console script imports the CLI inside its try, so a Ctrl-C while importing exits 130
    "mlcc._entry:mlcc.cli",
    # and everything else it needs, so that only the interpreter's own start is outside it
    "mlcc._entry:mlcc.stdio",
    "mlcc._entry:io",
    "mlcc.kb.loader:mlcc.kb.build",
    # and shares the equal values of what it built before caching it: a cold path only
    "mlcc.kb.loader:mlcc.kb.share",
    # PyYAML (~15 ms) reads back the build objects of the other variants already on disk,
    # for the benchmark's List, when `mlcc gen` writes one variant next to them; a fresh
    # output folder and `gen --all` never need a YAML reader.
    "mlcc.app.generate:yaml",
    "mlcc.kb.schema_check:jsonschema",
    "mlcc.kb.schema_check:jsonschema.exceptions",
    "mlcc.kb.schema_check:referencing",
    # likewise the stack manifest's reader: the writer (every mlcc gen) imports the module
    "mlcc.stackfile.document:jsonschema",
    "mlcc.stackfile.document:jsonschema.exceptions",
    # PyYAML is imported on the first YAML read (a knowledge-base cache miss, the matrix of
    # `gen --all`, lint): the warm `gen` and `resolve` read none.
    "mlcc.kb.yamlsrc:yaml",
    # difflib suggests a name only after a typo; `mlcc resolve` would import it on every run
    "mlcc.resolve.request:difflib",
    # the published set (recipes/matrix.yaml, its schema check) is read by `gen --all` only
    "mlcc.cli.gen:mlcc.app.published_set",
    # and the menus of `gen -i`, which offer the matrix's CPU value, by -i only
    "mlcc.cli.gen:mlcc.app.select",
    # the run-seed script runs in the benchmark's pods, not in mlcc: only a PyTorchJob of
    # several nodes needs torch's TCPStore (a second or two to import), one pod's draw does not
    "mlcc.render.openshift.seed_script:torch.distributed",
    # the seed script's text is read only for a benchmark with a run seed
    "mlcc.render.openshift.seed:importlib",
    # rich draws tables only: `mlcc resolve --json` and `mlcc gen` print none (perf/README.md)
    "mlcc.ui.table:rich.box",
    "mlcc.ui.table:rich.console",
    "mlcc.ui.table:rich.table",
    "mlcc.ui.table:rich.text",
    # libyaml is optional in PyYAML: its version is asked once, where its absence is handled
    "mlcc.render.openshift.yamlout:yaml._yaml",
    # what only some paths of resolve and gen use (perf/README.md; and
    # test_resolve_and_gen_import_only_what_they_use.py): the knowledge-base cache's writer
    # (tempfile: a warm start only reads), pathlib for a path flag (resolve takes none), the
    # terminal's width for a table (resolve --json draws none), and packaging.requirements
    # and packaging.utils (packaging.tags, logging, subprocess) for the PEP 503 names of pip
    # installs: the knowledge base's build records them for every locked install, and a
    # render asks only of an install the lock files do not have
    "mlcc.kb.loader:tempfile",
    "mlcc.validate:pathlib",
    "mlcc.ui.table:shutil",
    "mlcc.kb.pip_locks:packaging.requirements",
    "mlcc.kb.pip_locks:packaging.utils",
    # and packaging.requirements (which brings packaging.utils) for the pip steps of a stack
    # on an image base (NGC's) only, whose exact pins are installed in two steps
    "mlcc.render.plan.benchmark:packaging.requirements",
    # the URL checks of mlcc.secrets, which only a --git-uri given needs
    "mlcc.render.openshift.options:mlcc.secrets",
    # optional (the lint extra): without it, lint names each Kubernetes kind it did not validate
    "mlcc.lint.kube:kubernetes_validate",
    # the registry of kubernetes-validate's schema files, built once per kind with them
    "mlcc.lint.kube:referencing",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: Set[str]) -> None:
        self.module, self.is_package, self.known = module, is_package, known
        self.found: Set[str] = set()
        self.nested: List[str] = []  # imports inside functions
        self.depth = 0

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node):
            return
        self.generic_visit(node)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _add(self, name: str, line: int) -> None:
        while name and name not in self.known:
            name = name.rpartition(".")[0]
        if name and name != self.module:
            self.found.add(name)
        if self.depth:
            self.nested.append(f"{self.module}:{name}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "mlcc":
                self._add(alias.name, node.lineno)
            elif self.depth:
                self.nested.append(f"{self.module}:{alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            anchor = self.module.split(".")
            anchor = anchor if self.is_package else anchor[:-1]
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        if base.split(".")[0] != "mlcc":
            if self.depth:
                self.nested.append(f"{self.module}:{base}")
            return
        for alias in node.names:  # `from mlcc.render import digest` imports a module
            candidate = f"{base}.{alias.name}"
            self._add(candidate if candidate in self.known else base, node.lineno)


def _graph() -> Dict[str, _Imports]:
    paths = sorted(PACKAGE.rglob("*.py"))
    known = {_module_name(p) for p in paths}
    found = {}
    for path in paths:
        visitor = _Imports(_module_name(path), path.name == "__init__.py", known)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        # importing a.b.c runs a/__init__ and a/b/__init__ first
        found[visitor.module] = visitor
    return found


def _edges() -> Dict[str, Set[str]]:
    return {name: visitor.found for name, visitor in _graph().items()}


def _cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _package_edges(edges: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """mlcc.a.x -> mlcc.b.y as mlcc.a -> mlcc.b (sub-packages of mlcc only)."""

    def package(name: str) -> str:
        return ".".join(name.split(".")[:2])

    found: Dict[str, Set[str]] = {}
    for source, targets in edges.items():
        for target in targets:
            if package(source) != package(target):
                found.setdefault(package(source), set()).add(package(target))
    return found


def test_the_graph_sees_imports() -> None:
    edges = _edges()
    assert "mlcc.resolve.request" in edges["mlcc.resolve.pins"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_import_cycles() -> None:
    assert _cycles(_edges()) == []


def test_no_package_import_cycles() -> None:
    assert _cycles(_package_edges(_edges())) == []


def test_imports_sit_at_module_top() -> None:
    nested = {where for visitor in _graph().values() for where in visitor.nested}
    assert nested == LATE_IMPORTS, "import at module top (the CLI's command table is the lazy place)"


def test_one_name_one_meaning() -> None:
    """No two modules define a public class or constant of the same name (two `Cell`s, two
    `STAGES` ... meant different things); a shared meaning is imported, not redefined."""
    defined: Dict[str, List[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names: List[str] = []
            if isinstance(node, ast.ClassDef):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [
                    t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper() and len(t.id) > 1
                ]
            for name in names:
                if not name.startswith("_"):
                    defined.setdefault(name, []).append(_module_name(path))
    twice = {name: modules for name, modules in defined.items() if len(modules) > 1}
    assert twice == {}


def _reachable(edges: Dict[str, Set[str]], start: str) -> Set[str]:
    seen: Set[str] = set()
    todo = [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _is_kbtools(module: str) -> bool:
    return module == "mlcc.kbtools" or module.startswith("mlcc.kbtools.")


def test_the_product_api_reaches_no_maintainer_tool() -> None:
    """mlcc/app is what a user (and the CLI) asks mlcc to do; the knowledge base's maintainer
    tools (mlcc.kbtools: kb check, kb lock, the wheel and index records) sit beside it, so
    no module of mlcc/app imports them, directly or through another module."""
    edges = _edges()
    assert any(map(_is_kbtools, _reachable(edges, "mlcc.cli.kb")))  # the graph sees kbtools
    product = [m for m in edges if m == "mlcc.app" or m.startswith("mlcc.app.")]
    reaching = {m: sorted(filter(_is_kbtools, _reachable(edges, m))) for m in product}
    assert {m: found for m, found in reaching.items() if found} == {}


def _public_names(module: Path) -> Set[str]:
    """A module's ``__all__``, read from its source."""
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {ast.literal_eval(element) for element in node.value.elts}  # type: ignore[attr-defined]
    return set()


def test_engines_import_only_the_renderers_public_result() -> None:
    """mlcc/engines/ takes from the renderer what it returns (``from mlcc.render import
    ...``, names in its ``__all__``), never a module inside it: the renderer's insides can
    change without an engine noticing."""
    public = _public_names(PACKAGE / "render" / "__init__.py")
    assert {"Rendered", "StageGraph", "chain_graph"} <= public
    found: List[str] = []
    for path in sorted((PACKAGE / "engines").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mlcc.render"):
                found += [
                    f"{path.name}: from {node.module} import {alias.name}"
                    for alias in node.names
                    if node.module != "mlcc.render" or alias.name not in public
                ]
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.name}: import {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("mlcc.render")
                ]
    assert found == []


def test_the_generic_engine_interface_knows_nothing_of_openshift() -> None:
    text = (PACKAGE / "engines" / "base.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"ClusterOptions", "render_openshift", "object_name"} & imported
    assert not any("openshift" in (module or "") or "kubernetes" in (module or "") for module in modules)
