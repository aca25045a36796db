"""Validate recipe documents against their JSON Schemas, with messages users can act on.

jsonschema is the heaviest import mlcc has and only a cold knowledge-base
cache or a matrix file needs it, so it is imported on the first validation, not with
this module (``mlcc gen`` imports this module through mlcc.matrix on every start).
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from mlcc.errors import RecipeError
from mlcc.kb.layout import SCHEMA_DIR
from mlcc.kb.yamlsrc import LineMap, line_of

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

_MAX_REPORTED = 8


def schema_files() -> List[Path]:
    return sorted(Path(SCHEMA_DIR).glob("*.schema.json"))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterable[ValidationError]:
    """``pattern`` as ECMA-262 reads it: ``$`` is the end of the string.

    Python's ``$`` also matches before a final newline, so "gcc\\n" would pass
    ``^[a-z]+$`` and carry a line break into a Dockerfile. The schemas mean ECMA-262.
    """
    if not isinstance(instance, str):
        return
    anchored = pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern
    if re.search(anchored, instance) is None:
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validators() -> Dict[str, Draft202012Validator]:
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    extended = validators.extend(Draft202012Validator, {"pattern": _pattern})
    schemas = {p.name.split(".")[0]: json.loads(p.read_text("utf-8")) for p in schema_files()}
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return {kind: extended(schema, registry=registry) for kind, schema in schemas.items() if kind != "common"}


def known_kinds() -> List[str]:
    return sorted(_validators())


def validate(kind: str, doc: Any, display: str, lines: LineMap) -> None:
    """Raise :class:`RecipeError` listing every schema violation in ``doc``."""
    validator = _validators()[kind]

    def where(error: ValidationError) -> int:
        path = tuple(error.absolute_path)
        if error.validator in _UNKNOWN_KEY:
            # point at the offending key, not at the start of the mapping
            match = _UNEXPECTED.search(error.message)
            key = match.group(1).split(",")[0].strip(" '") if match else None
            if key:
                path = (*path, key)
        return line_of(lines, path) or 0

    # A typo in a key gives "unknown key" and "missing required key": lead with the first.
    errors = sorted(
        (e for e in _leaf_errors(validator.iter_errors(doc)) if not _only_unevaluated(e)),
        key=lambda e: (e.validator not in _UNKNOWN_KEY, where(e), e.message),
    )
    if not errors:
        return
    messages = [f"{display}:{where(e)}: {_describe(e)}" for e in errors]
    first = errors[0]
    more = len(messages) - 1
    extra = messages[1:_MAX_REPORTED]
    if more >= _MAX_REPORTED:
        extra.append(f"... and {more - len(extra)} more")
    raise RecipeError(
        display,
        where(first),
        f"does not match the {kind} schema: {_describe(first)}",
        details=extra,
        hint=f"the schema is mlcc/kb/schemas/{kind}.schema.json",
    )


def _leaf_errors(errors: Iterable[ValidationError]) -> Iterable[ValidationError]:
    """Descend into allOf/anyOf/if-then wrappers so messages name the real problem."""
    for error in errors:
        if error.context and error.validator in ("allOf", "anyOf", "oneOf", "then", "else"):
            yield from _leaf_errors(error.context)
        else:
            yield error


_UNEXPECTED = re.compile(r"\((.+) (?:was|were) unexpected\)")
_UNKNOWN_KEY = ("additionalProperties", "unevaluatedProperties")


def _unexpected_keys(error: ValidationError) -> List[str]:
    match = _UNEXPECTED.search(error.message)
    return [k.strip(" '") for k in match.group(1).split(",")] if match else []


def _only_unevaluated(error: ValidationError) -> bool:
    """An "unknown key" error whose keys the schema does allow: under
    unevaluatedProperties a failing provenance block (a missing ``source``) leaves its own
    keys (``verified``) unevaluated. The failure itself is reported; this echo is not."""
    if error.validator not in _UNKNOWN_KEY:
        return False
    keys = _unexpected_keys(error)
    return bool(keys) and set(keys) <= set(_allowed_keys(error.schema))


def _describe(error: ValidationError) -> str:
    where = _field_name(error)
    validator = error.validator
    if validator in ("additionalProperties", "unevaluatedProperties"):
        return _unknown_keys(error, where)
    if validator == "required":
        return f"{where}: missing required key {error.message.split(' is a required')[0]}"
    if validator == "type":
        return _wrong_type(error, where)
    if validator == "pattern":
        return f"{where}: {error.instance!r} is not allowed here (it must match {error.validator_value})"
    if validator in ("enum", "const"):
        allowed = error.validator_value if validator == "enum" else [error.validator_value]
        return f"{where}: {error.instance!r} is not one of {', '.join(map(repr, allowed))}"
    if validator in ("minItems", "minProperties", "minLength"):
        return f"{where}: must not be empty"
    if validator == "uniqueItems":
        return f"{where}: lists the same item twice"
    return f"{where}: {error.message}"


def _field_name(error: ValidationError) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in error.absolute_path]
    text = ".".join(parts).replace(".[", "[")
    return text or "(top level)"


def _unknown_keys(error: ValidationError, where: str) -> str:
    match = _UNEXPECTED.search(error.message)
    keys = match.group(1) if match else "?"
    allowed = sorted(_allowed_keys(error.schema))
    message = f"{where}: unknown key {keys}"
    if allowed:
        message += f" (allowed: {', '.join(allowed)})"
        first = keys.split(",")[0].strip(" '")
        close = difflib.get_close_matches(first, allowed, n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
    return message


def _allowed_keys(schema: Any) -> Iterable[str]:
    if not isinstance(schema, dict):
        return []
    keys = set(schema.get("properties", {}))
    for sub in schema.get("allOf", []):
        ref = sub.get("$ref", "") if isinstance(sub, dict) else ""
        if ref.endswith("/provenance"):
            keys |= {"source", "verified", "unverified_fields", "note"}
        if ref.endswith("/header"):
            keys |= {"kind", "schema_version", "sources"}
    return keys


def _wrong_type(error: ValidationError, where: str) -> str:
    expected = error.validator_value
    got = error.instance
    message = f"{where}: expected {expected}, got {got!r}"
    if expected == "string" and isinstance(got, (int, float)) and not isinstance(got, bool):
        message += f" (quote it: '{got}', or YAML reads it as a number)"
    return message


def suggest(value: str, choices: Iterable[str]) -> Optional[str]:
    close = difflib.get_close_matches(value, list(choices), n=1)
    return close[0] if close else None
