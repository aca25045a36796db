"""The fast paths' parser: a command's plain option forms, read from its options types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.flags import Flag, flags_of, from_flags

# (the argument name the click command receives a type as, the options type)
if TYPE_CHECKING:
    OptionTypes = Tuple[Tuple[str, type], ...]


class Parsed(NamedTuple):
    positional: str  # the benchmark
    values: Dict[str, Any]  # argument name -> the options type's value


def spellings(types: OptionTypes) -> Dict[str, Tuple[str, str, Flag]]:
    """``{"--cuda": ("pins", "cuda", flag)}`` for every spelling of every option."""
    found: Dict[str, Tuple[str, str, Flag]] = {}
    for argument, cls in types:
        for field, (spec, _default) in flags_of(cls).items():
            for name in (spec.name, spec.short):
                if name:
                    found[name] = (argument, field, spec)
    return found


def _plain(spec: Flag) -> bool:
    """An option whose value click hands over unconverted (no types, conversions, pairs);
    a choice is taken as it is when it is one of the choices (see :func:`_accepted`)."""
    return not (spec.value_type or spec.convert or spec.secondary)


def _accepted(spec: Flag, value: str) -> bool:
    """click.Choice takes exactly one of the choices (case-sensitive); anything else goes
    to click, which names the choices in its error."""
    return spec.choices is None or value in spec.choices


def parse(args: Sequence[str], types: OptionTypes) -> Optional[Parsed]:
    """One positional argument and the plain forms of ``types``' options; else None."""
    options = spellings(types)
    values: Dict[str, Dict[str, Any]] = {argument: {} for argument, _ in types}
    positional: Optional[str] = None
    tokens: List[str] = list(args)
    while tokens:
        token = tokens.pop(0)
        if not token.startswith("-"):
            if positional is not None or not token:
                return None
            positional = token
            continue
        # "--name=value"; a short option takes what follows it as its value ("-o=x" is
        # "=x" to click), so only its separate form ("-o x") is read here
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in options or not _plain(options[name][2]):
            return None
        argument, field, spec = options[name]
        given = values[argument]
        if spec.is_flag:
            if equals or field in given:
                return None
            given[field] = True
            continue
        if not equals:
            if not tokens or tokens[0].startswith("-"):
                return None
            value = tokens.pop(0)
        if not _accepted(spec, value):
            return None
        if spec.multiple:
            given.setdefault(field, []).append(value)
        elif field in given:
            return None  # click refuses a repeated single-valued option
        else:
            given[field] = value
    if positional is None:
        return None
    return Parsed(positional, {argument: from_flags(cls, values[argument]) for argument, cls in types})
