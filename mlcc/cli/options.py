"""Click options derived from the options types (see :mod:`mlcc.flags`).

``@options(Pins, "pins")`` adds one click option per field of ``Pins`` and hands the
command a single ``pins: Pins`` argument built from them: commands take typed values, never
a bag of keyword arguments popped in an order that matters. An option whose help names
facts of the recipes (``Flag.describe``) writes it from the knowledge base when --help shows
it: nothing is loaded for it otherwise.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

import click

from mlcc.app.kb import knowledge_base
from mlcc.cli.values import COUNT, PATH, PATH_METAVARS
from mlcc.errors import MlccError
from mlcc.flags import Flag, flags_of, from_flags
from mlcc.kb.model import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])
Completer = Callable[[click.Context, click.Parameter, str], List[str]]

# Shell completion for flags whose values the knowledge base knows.
COMPLETERS: Dict[str, Completer] = {}


def kb_of(ctx: click.Context) -> KnowledgeBase:
    """The knowledge base of ``--recipes`` (or the shipped one), loaded once per run."""
    root = ctx.find_root()
    kb = root.meta.get("mlcc.kb")
    if kb is None:
        kb = knowledge_base(root.params.get("recipes"))
        root.meta["mlcc.kb"] = kb
    return kb


class KnowledgeHelpOption(click.Option):
    """An option whose help is written from the knowledge base when --help shows it."""

    def __init__(self, *args: Any, describe: Callable[[KnowledgeBase], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.describe = describe

    def get_help_record(self, ctx: click.Context) -> Optional[Tuple[str, str]]:
        record = super().get_help_record(ctx)
        if record is None or not self.help:
            return record
        try:
            text = self.describe(kb_of(ctx))
        except MlccError:  # recipes that do not load: the help without their facts
            return record
        return record[0], record[1].replace(self.help, text, 1)


def _option(dest: str, spec: Flag, default: Any) -> Callable[[F], F]:
    names = [f"{spec.name}/{spec.secondary}"] if spec.secondary else [spec.name]
    if spec.short:
        names.insert(0, spec.short)
    kwargs: Dict[str, Any] = {"help": spec.help, "show_default": spec.show_default}
    if spec.secondary:
        kwargs["default"] = default
    elif spec.is_flag:
        kwargs["is_flag"] = True
    else:
        kwargs["metavar"] = spec.metavar
        if spec.multiple:
            kwargs["multiple"] = True
        elif default is not None:
            kwargs["default"] = default
        if spec.choices:
            kwargs["type"] = click.Choice(list(spec.choices))
            kwargs.pop("metavar")
        elif spec.value_type is int:  # ASCII digits only, never int()'s Unicode digits
            kwargs["type"] = COUNT
        elif spec.value_type is not None:
            kwargs["type"] = spec.value_type
        elif spec.metavar in PATH_METAVARS:
            kwargs["type"] = PATH
    if spec.name in COMPLETERS:
        kwargs["shell_complete"] = COMPLETERS[spec.name]
    if spec.describe is not None:
        kwargs.update(cls=KnowledgeHelpOption, describe=spec.describe)
    return click.option(*names, dest, **kwargs)


def options(cls: type, argument: str, *, groups: Optional[Sequence[str]] = None) -> Callable[[F], F]:
    """Add ``cls``'s flags to a command; the command receives ``argument=<cls instance>``."""
    fields = flags_of(cls, groups)
    dests = {name: f"{argument}__{name}" for name in fields}

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(dest) for name, dest in dests.items()}
            kwargs[argument] = from_flags(cls, values, groups)
            return command(*args, **kwargs)

        decorated: Any = wrapper
        for name, (spec, default) in reversed(list(fields.items())):
            decorated = _option(dests[name], spec, default)(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate
