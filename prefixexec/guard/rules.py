"""The guard's own rules: provenance scope and TOML precondition rules (spec: spec/guard.md).

A guard rules file (``--rules FILE``) is TOML in the layout of ``--label-rules`` (arrays of
tables, each rule a ``label`` from the same five and, where it matches text, an RE2 ``pattern``):

.. code-block:: toml

    [[requires]]              # GUARD-REQUIRES: tool B only after tool A succeeded
    tool = "git_commit"
    after = "git_add"
    label = "precondition"    # optional; precondition by default

    [[argument]]              # GUARD-ARGUMENT: an argument's value must match (RE2, searched)
    tool = "read_query"       # "*": every tool
    argument = "query"
    pattern = "(?i)^\\\\s*select\\\\b"
    label = "precondition"    # optional; precondition by default

    [[provenance]]            # GUARD-PROVENANCE: which arguments must have occurred earlier
    tool = "git_show"         # "*": every tool
    argument = "revision"
    values = "all"            # "id-like" (default): only values that look like identifiers
    check = true              # false: never check this argument (an exemption)
    label = "information"     # optional; information by default

Bad files are refused with one line naming the file, the rule and what is wrong.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.labels import rules_file_bytes
from prefixexec.adapters.regex import Pattern, checked_pattern
from prefixexec.adapters.taubench.semantics import id_like
from prefixexec.kernel import Label
from prefixexec.kernel.actions import parse_label

#: Any tool (``tool = "*"``).
ANY = "*"
#: GUARD-PROVENANCE-KEYS: argument names checked by default: ``id``, ``*_id``, ``*Id``, ``*_ids``,
#: ``*Ids`` (and the same with a hyphen).
ID_KEY = re.compile(r"(?:^|[_-])ids?$|[a-z0-9]Ids?$|^ids?$", re.IGNORECASE)


@attrs.frozen(slots=True)
class Requires:
    """GUARD-REQUIRES: ``tool`` runs only after a successful call of ``after`` in the session."""

    tool: str
    after: str
    label: Label = Label.PRECONDITION


@attrs.frozen(slots=True)
class ArgumentRule:
    """GUARD-ARGUMENT: the string value of ``argument`` of ``tool`` must match ``pattern``."""

    tool: str
    argument: str
    pattern: Pattern = attrs.field(eq=False)
    text: str
    label: Label = Label.PRECONDITION


@attrs.frozen(slots=True)
class Provenance:
    """GUARD-PROVENANCE: whether ``argument`` of ``tool`` is checked, and which of its values."""

    tool: str
    argument: str
    all_values: bool = False
    check: bool = True
    label: Label = Label.INFORMATION


@attrs.frozen(slots=True)
class GuardRules:
    """Every rule of a guard rules file (none: only the built-in checks)."""

    requires: tuple[Requires, ...] = ()
    arguments: tuple[ArgumentRule, ...] = ()
    provenance: tuple[Provenance, ...] = ()
    #: GUARD-PROVENANCE-KEYS: check id-like values of arguments named like ids (``--no-id-keys``: not).
    id_keys: bool = True

    def provenance_of(self, tool: str, argument: str) -> Provenance | None:
        """The provenance rule for one argument: the last matching ``[[provenance]]`` entry (an
        exact tool before ``*``), else the default for an id-like name, else ``None``."""
        found: Provenance | None = None
        for rule in self.provenance:
            if rule.argument == argument and rule.tool in (tool, ANY):
                if found is None or rule.tool != ANY or found.tool == ANY:
                    found = rule
        if found is not None:
            return found if found.check else None
        if self.id_keys and ID_KEY.search(argument):
            return Provenance(tool, argument)
        return None


NO_GUARD_RULES = GuardRules()

_TABLES = {"requires": {"tool", "after", "label"}, "argument": {"tool", "argument", "pattern", "label"}}
_TABLES["provenance"] = {"tool", "argument", "values", "check", "label"}


def _label(entry: Mapping[str, Any], default: Label, path: str, where: str) -> Label:
    value = entry.get("label", default.value)
    try:
        return parse_label(value) if isinstance(value, str) else parse_label(repr(value))
    except ValueError as exc:
        raise InputError(path, f"{where}: 'label' {exc}") from None


def _name(entry: Mapping[str, Any], key: str, path: str, where: str) -> str:
    value = entry.get(key)
    if value is None:
        raise InputError(path, f"{where}: {key!r} is absent")
    if not isinstance(value, str) or not value:
        raise InputError(path, f"{where}: {key!r} must be a non-empty string: {value!r}")
    return value


def _entries(document: Mapping[str, Any], table: str, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    entries = document.get(table, [])
    if not isinstance(entries, list):
        raise InputError(path, f"[{table}] must be an array of tables ([[{table}]]), one per rule")
    for n, entry in enumerate(entries, 1):
        where = f"{table} rule {n}"
        if not isinstance(entry, dict):
            raise InputError(path, f"{where}: must be a table")
        extra = sorted(set(entry) - _TABLES[table])
        if extra:
            keys = ", ".join(sorted(_TABLES[table]))
            raise InputError(path, f"{where}: unknown key {extra[0]!r} (a {table} rule has {keys})")
        yield where, entry


def load_guard_rules(path: str | None, *, id_keys: bool = True) -> GuardRules:
    """The rules of the TOML file ``path`` (GUARD-RULES-FILE); none when ``path`` is ``None``."""
    if path is None:
        return GuardRules(id_keys=id_keys)
    data = rules_file_bytes(path)
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, "guard rules are not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"guard rules are not valid TOML: {exc}") from None
    unknown = sorted(set(document) - set(_TABLES))
    if unknown:
        raise InputError(path, f"unknown table {unknown[0]!r} (known: {', '.join(sorted(_TABLES))})")
    requires = tuple(
        Requires(
            _name(e, "tool", path, w), _name(e, "after", path, w), _label(e, Label.PRECONDITION, path, w)
        )
        for w, e in _entries(document, "requires", path)
    )
    arguments = []
    for where, entry in _entries(document, "argument", path):
        text = _name(entry, "pattern", path, where)
        arguments.append(
            ArgumentRule(
                _name(entry, "tool", path, where),
                _name(entry, "argument", path, where),
                checked_pattern(text, path, f"{where}: 'pattern'"),
                text,
                _label(entry, Label.PRECONDITION, path, where),
            )
        )
    provenance = []
    for where, entry in _entries(document, "provenance", path):
        values = entry.get("values", "id-like")
        if values not in ("id-like", "all"):
            raise InputError(path, f'{where}: \'values\' must be "id-like" or "all": {values!r}')
        check = entry.get("check", True)
        if not isinstance(check, bool):
            raise InputError(path, f"{where}: 'check' must be true or false: {check!r}")
        provenance.append(
            Provenance(
                _name(entry, "tool", path, where),
                _name(entry, "argument", path, where),
                values == "all",
                check,
                _label(entry, Label.INFORMATION, path, where),
            )
        )
    return GuardRules(requires, tuple(arguments), tuple(provenance), id_keys)


def checked_values(value: object, rule: Provenance) -> Iterator[str]:
    """The values of one argument that GUARD-PROVENANCE checks: every string (and integer) inside
    it, only those that look like identifiers (``id_like``, TAU-ENTITY's test) unless the rule
    says ``values = "all"``."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str | int):
        text = str(value).strip()
        if text and (rule.all_values or id_like(text)):
            yield text
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from checked_values(inner, rule)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from checked_values(inner, rule)


__all__ = [
    "ANY",
    "NO_GUARD_RULES",
    "ArgumentRule",
    "GuardRules",
    "Provenance",
    "Requires",
    "checked_values",
    "load_guard_rules",
]
