"""The BFCL multi-turn benchmark as shipped in the PyPI package ``bfcl-eval`` (spec: BFCL-DATA, BFCL-STATE).

Everything here reads the benchmark's own files: the task entries and ground truth under
``bfcl_eval/data``, the function docs under ``data/multi_turn_func_doc`` and the executable API
classes under ``eval_checker/multi_turn_eval/func_source_code``. The package is imported lazily,
so that ``prefixexec`` works without it until the BFCL adapter is used. Nothing here executes
text: BFCL's own ``eval``-based executor is never imported by this module.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from importlib import resources
from types import MappingProxyType, ModuleType
from typing import Any

import attrs

from ..errors import InputError

#: The package version whose data and classes this adapter was written and audited against.
BFCL_VERSION = "2026.3.23"
#: How to install the benchmark (its full dependency tree is huge; the classes need only mpmath).
INSTALL_HINT = f"pip install --no-deps bfcl-eval=={BFCL_VERSION} mpmath"

#: The four multi-turn categories of the paper, in report order.
CATEGORIES: tuple[str, ...] = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)

#: The executable API classes of the multi-turn categories.
CLASS_NAMES: tuple[str, ...] = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)

_DATA_NAME = re.compile(r"^BFCL_v(\d+)_(multi_turn_[a-z_]+)\.json$")


def normalise_category(name: str) -> str:
    """``multi_turn_base`` for ``multi_turn_base`` or ``base``; raises ``ValueError`` otherwise."""
    full = name if name.startswith("multi_turn_") else f"multi_turn_{name}"
    if full not in CATEGORIES:
        raise ValueError(
            f"unknown BFCL multi-turn category {name!r} (expected one of: {', '.join(CATEGORIES)})"
        )
    return full


def category_of(task_id: str) -> str:
    """The category of a task id such as ``multi_turn_base_12`` (BFCL's own rule: drop the index)."""
    return task_id.rsplit("_", 1)[0]


def long_context(category: str) -> bool:
    """BFCL's flag for ``_load_scenario``: ``long_context`` or ``composite`` in the category name."""
    return "long_context" in category or "composite" in category


@cache
def package() -> ModuleType:
    """The installed ``bfcl_eval`` package; a clear error if it is missing."""
    try:
        return importlib.import_module("bfcl_eval")
    except ImportError:
        raise InputError(
            "bfcl-eval", f"the BFCL adapter needs the benchmark package: {INSTALL_HINT}"
        ) from None


def installed_version() -> str | None:
    """The installed ``bfcl-eval`` version, or ``None``."""
    from importlib import metadata

    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return None


@contextmanager
def utc() -> Iterator[None]:
    """Pin the process time zone to UTC while BFCL classes run (TradingBot reads local time)."""
    old = os.environ.get("TZ")
    if old == "UTC" or not hasattr(time, "tzset"):
        yield
        return
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


@attrs.frozen(slots=True)
class MethodInfo:
    """A public method of an API class with its function doc (BFCL-BIND, BFCL-TYPES)."""

    cls: str
    name: str
    #: Parameter names in signature order (all positional-or-keyword).
    params: tuple[str, ...]
    required: frozenset[str]
    #: Parameter name -> its JSON schema from the function doc.
    schema: Mapping[str, Mapping[str, Any]]
    #: Parameter name -> its mutable default (a list or dict), frozen: each call that leaves the
    #: argument out gets a fresh copy, so no call changes what a later one gets (BFCL-DEFAULTS).
    defaults: Mapping[str, Any] = MappingProxyType({})


@attrs.frozen(slots=True)
class Catalogue:
    """The API classes and their 128 public methods; no method name is shared between classes."""

    classes: Mapping[str, type]
    methods: Mapping[str, MethodInfo]
    stateless: frozenset[str]


def _backend_config() -> Any:
    package()
    return importlib.import_module("bfcl_eval.constants.executable_backend_config")


@cache
def catalogue() -> Catalogue:
    """Load the classes and docs once per process and check that signatures match the docs."""
    config = _backend_config()
    data = resources.files("bfcl_eval").joinpath("data", "multi_turn_func_doc")
    classes: dict[str, type] = {}
    methods: dict[str, MethodInfo] = {}
    for cls_name in CLASS_NAMES:
        module = importlib.import_module(config.CLASS_FILE_PATH_MAPPING[cls_name])
        cls = getattr(module, cls_name)
        classes[cls_name] = cls
        docs: dict[str, dict[str, Any]] = {}
        text = data.joinpath(config.MULTI_TURN_FUNC_DOC_FILE_MAPPING[cls_name]).read_text(encoding="utf-8")
        for line in text.split("\n"):
            if line.strip():
                doc = json.loads(line)
                docs[doc["name"]] = doc
        for name, function in inspect.getmembers(cls, predicate=inspect.isfunction):
            if name.startswith("_"):
                continue
            parameters = list(inspect.signature(function).parameters.values())[1:]
            if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters):
                raise RuntimeError(
                    f"bfcl-eval changed: {cls_name}.{name} has a parameter kind this adapter does not bind"
                )
            if name not in docs or name in methods:
                raise RuntimeError(f"bfcl-eval changed: {cls_name}.{name} has no unique function doc")
            properties = docs[name]["parameters"].get("properties", {})
            if set(properties) != {p.name for p in parameters}:
                raise RuntimeError(f"bfcl-eval changed: {cls_name}.{name} signature and doc disagree")
            methods[name] = MethodInfo(
                cls=cls_name,
                name=name,
                params=tuple(p.name for p in parameters),
                required=frozenset(p.name for p in parameters if p.default is inspect.Parameter.empty),
                schema=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in properties.items()}),
                defaults=MappingProxyType(
                    {p.name: _freeze(p.default) for p in parameters if isinstance(p.default, list | dict)}
                ),
            )
    return Catalogue(
        classes=MappingProxyType(classes),
        methods=MappingProxyType(methods),
        stateless=frozenset(config.STATELESS_CLASSES),
    )


@attrs.frozen(slots=True)
class Entry:
    """One BFCL multi-turn task with its ground truth (BFCL-DATA)."""

    id: str
    category: str
    #: The user messages of each turn (an empty tuple for a turn without a user message).
    questions: tuple[tuple[str, ...], ...]
    initial_config: Mapping[str, Any] = attrs.field(eq=False, repr=False)
    #: Class name -> its initial config as JSON text (``json.loads`` gives a fresh deep copy).
    config_text: Mapping[str, str] = attrs.field(eq=False, repr=False)
    involved_classes: tuple[str, ...]
    #: Held-out function -> the first turn at which it is exposed (miss_func only).
    missed: Mapping[str, int]
    #: Ground-truth call strings per turn.
    gold: tuple[tuple[str, ...], ...]

    @property
    def gold_calls(self) -> int:
        return sum(len(turn) for turn in self.gold)


def _data_file(category: str) -> tuple[Any, Any]:
    """The newest ``BFCL_v<N>_<category>.json`` and its ground truth (only v4 ships today)."""
    data = resources.files("bfcl_eval").joinpath("data")
    best: tuple[int, str] | None = None
    for item in data.iterdir():
        match = _DATA_NAME.match(item.name)
        if match and match.group(2) == category:
            version = int(match.group(1))
            if best is None or version > best[0]:
                best = (version, item.name)
    if best is None:
        raise InputError("bfcl-eval", f"no data file for category {category} in the installed package")
    return data.joinpath(best[1]), data.joinpath("possible_answer", best[1])


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A fresh mutable copy of a frozen configuration (dicts and lists), for ``_load_scenario``."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@cache
def entries(category: str) -> Mapping[str, Entry]:
    """Task id -> entry for one category, in file order."""
    catalogue()
    task_file, answer_file = _data_file(category)
    answers: dict[str, tuple[tuple[str, ...], ...]] = {}
    for line in answer_file.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            record = json.loads(line)
            answers[record["id"]] = tuple(tuple(turn) for turn in record["ground_truth"])
    found: dict[str, Entry] = {}
    for line in task_file.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        record = json.loads(line)
        task_id = record["id"]
        missed = {
            name: int(turn) for turn, names in record.get("missed_function", {}).items() for name in names
        }
        config = record.get("initial_config", {})
        found[task_id] = Entry(
            id=task_id,
            category=category,
            questions=tuple(
                tuple(str(m.get("content", "")) for m in turn if m.get("role") == "user")
                for turn in record["question"]
            ),
            initial_config=_freeze(config),
            config_text=MappingProxyType({name: json.dumps(value) for name, value in config.items()}),
            involved_classes=tuple(record["involved_classes"]),
            missed=MappingProxyType(missed),
            gold=answers[task_id],
        )
    return MappingProxyType(found)


def entry(task_id: str) -> Entry:
    """The entry of a task id; ``KeyError`` if the benchmark has no such multi-turn task."""
    category = category_of(task_id)
    if category not in CATEGORIES:
        raise KeyError(task_id)
    return entries(category)[task_id]


__all__ = [
    "BFCL_VERSION",
    "CATEGORIES",
    "CLASS_NAMES",
    "INSTALL_HINT",
    "Catalogue",
    "Entry",
    "MethodInfo",
    "catalogue",
    "category_of",
    "entries",
    "entry",
    "installed_version",
    "long_context",
    "normalise_category",
    "package",
    "thaw",
    "utc",
]
