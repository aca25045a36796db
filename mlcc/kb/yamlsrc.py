"""YAML reading that remembers where every value came from.

PyYAML's loaders drop line numbers and silently keep the last of two duplicate keys.
Recipe errors must name ``file:line``, and a duplicate key in a knowledge base is a bug
waiting to happen, so recipes are composed into nodes and converted here.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Tuple, Union

from mlcc.errors import RecipeError
from mlcc.safeio import UnreadableFile, read_text

if TYPE_CHECKING:
    import yaml

PathKey = Tuple[Union[str, int], ...]
# Untrusted YAML (recipes taken from elsewhere, --matrix-file, lint input): an alias bomb
# of a few KB expands to billions of nodes and a self-referencing alias never ends, and
# deep nesting exhausts the stack; the knowledge base itself needs none of that.
MAX_DEPTH = 64
MAX_NODES = 100_000  # 16 times the largest recipe (cuda.yaml)
LineMap = Dict[PathKey, int]


class _PyYAML(NamedTuple):
    yaml: Any
    loader: Any  # libyaml's CSafeLoader is several times faster; pure Python where it is missing
    scalars: Any  # typed as Any: older types-PyYAML releases leave construct_object untyped


@functools.cache
def _pyyaml() -> _PyYAML:
    """PyYAML, imported on the first YAML read: `mlcc gen` and `mlcc resolve` read the
    knowledge base from its cache and write YAML themselves, so they need no YAML reader
    (importing this module for ``line_of`` does not import one)."""
    import yaml

    return _PyYAML(yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.constructor.SafeConstructor())


def load_yaml(path: Path, display: str) -> Tuple[Any, LineMap]:
    """Load ``path``; return the data and a map from each value's path to its line.

    ``display`` is how the file is named in messages (relative to the recipes root).
    """

    try:
        text = read_text(path)
    except UnreadableFile as exc:
        raise RecipeError(display, None, str(exc)) from None
    return parse_yaml(text, display)


def _check_shape(text: str, display: str) -> None:
    """Walk the event stream (no recursion) and refuse deep nesting before composing."""
    depth = 0
    yaml, loader, _ = _pyyaml()
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else None
                raise RecipeError(display, line, f"nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


class _Budget:
    """How many more nodes one document may expand to (aliases count each time used)."""

    def __init__(self) -> None:
        self.left = MAX_NODES


def parse_yaml(text: str, display: str) -> Tuple[Any, LineMap]:
    yaml, loader, _ = _pyyaml()
    try:
        _check_shape(text, display)
        node = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "syntax error"
        raise RecipeError(display, line, f"malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise RecipeError(display, None, f"malformed YAML: {exc}") from None
    lines: LineMap = {}
    if node is None:
        return None, lines
    return _convert(node, (), lines, display, _Budget(), ()), lines


def parse_yaml_all(text: str, display: str) -> List[Tuple[Any, LineMap]]:
    """Every document of a multi-document YAML text, each with its line map."""
    yaml, loader, _ = _pyyaml()
    try:
        _check_shape(text, display)
        nodes = list(yaml.compose_all(text, Loader=loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        raise RecipeError(display, mark.line + 1 if mark else None, f"malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise RecipeError(display, None, f"malformed YAML: {exc}") from None
    documents: List[Tuple[Any, LineMap]] = []
    for node in nodes:
        lines: LineMap = {}
        converted = None if node is None else _convert(node, (), lines, display, _Budget(), ())
        documents.append((converted, lines))
    return documents


def _convert(
    node: yaml.Node, path: PathKey, lines: LineMap, display: str, budget: _Budget, active: Tuple[int, ...]
) -> Any:
    lines[path] = node.start_mark.line + 1
    budget.left -= 1
    if budget.left < 0:
        raise RecipeError(display, lines[path], f"expands to more than {MAX_NODES} values (an alias bomb?)")
    if id(node) in active:
        raise RecipeError(display, lines[path], "an alias refers to itself (recursive YAML)")
    if len(active) >= MAX_DEPTH:
        raise RecipeError(display, lines[path], f"nested deeper than {MAX_DEPTH} levels")
    inner = (*active, id(node))
    yaml, _, scalars = _pyyaml()
    if isinstance(node, yaml.MappingNode):
        return _convert_mapping(node, path, lines, display, budget, inner)
    if isinstance(node, yaml.SequenceNode):
        return [
            _convert(item, (*path, i), lines, display, budget, inner) for i, item in enumerate(node.value)
        ]
    try:
        return scalars.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise RecipeError(display, lines[path], f"bad value: {exc.problem}") from None


def _convert_mapping(
    node: yaml.MappingNode,
    path: PathKey,
    lines: LineMap,
    display: str,
    budget: _Budget,
    active: Tuple[int, ...],
) -> Dict[str, Any]:
    result: Dict[str, Any] = {}
    scalar_node = _pyyaml().yaml.ScalarNode
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise RecipeError(display, line, "YAML merge keys (<<) are not allowed in recipes")
        if not isinstance(key_node, scalar_node):
            raise RecipeError(display, line, "mapping keys must be plain strings")
        key = key_node.value
        if key in result:
            first = lines.get((*path, key))
            raise RecipeError(display, line, f"duplicate key {key!r} (first defined on line {first})")
        result[key] = _convert(value_node, (*path, key), lines, display, budget, active)
    return result


def line_of(lines: LineMap, path: PathKey) -> int | None:
    """The line of ``path``, or of its nearest ancestor that has one."""
    probe = tuple(path)
    while probe:
        if probe in lines:
            return lines[probe]
        probe = probe[:-1]
    return lines.get(())
