"""Structuring wire params into the attrs types, with readable errors."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from lore_sidecar.errors import BadParams
from lore_sidecar.wire import types as t

T = TypeVar("T")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _make() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)
    def strict_str(value: Any, _: type) -> str:
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {type(value).__name__}")
        return value

    def strict_int(value: Any, _: type) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an integer, got {type(value).__name__}")
        return value

    def strict_bool(value: Any, _: type) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"expected a boolean, got {type(value).__name__}")
        return value

    def strict_float(value: Any, _: type) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"expected a number, got {type(value).__name__}")
        return float(value)

    conv.register_structure_hook(str, strict_str)
    conv.register_structure_hook(int, strict_int)
    conv.register_structure_hook(bool, strict_bool)
    conv.register_structure_hook(float, strict_float)
    conv.register_structure_hook(Any, lambda v, _: v)
    # Every params type in wire/types.py, camelCase on the wire: a new type cannot be missed.
    # Each type's structuring function is generated the first time a request needs it, not
    # at import: generating all of them cost ~15 ms before `initialize` could be answered.
    wire_types = frozenset(v for v in vars(t).values() if isinstance(v, type) and attrs.has(v))

    def camel_case_fn(cls: type) -> Any:
        overrides = {f.name: override(rename=camel(f.name)) for f in attrs.fields(cls)}
        return make_dict_structure_fn(cls, conv, **overrides)

    conv.register_structure_hook_factory(wire_types.__contains__, camel_case_fn)

    return conv


CONVERTER = _make()


def structure(params: Any, cls: type[T]) -> T:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise BadParams("params must be an object", [f"params: expected an object, got {type(params).__name__}"])
    try:
        value = CONVERTER.structure(params, cls)
    except cattrs.BaseValidationError as exc:
        errors = cattrs.transform_error(exc, path="params")
        raise BadParams("invalid params: " + "; ".join(errors), errors) from None
    except (TypeError, ValueError) as exc:
        raise BadParams(f"invalid params: {exc}", [str(exc)]) from None
    errors = _check(value)
    if errors:
        raise BadParams("invalid params: " + "; ".join(errors), errors)
    return value


def _check(value: Any) -> list[str]:
    errors = []
    for (cls, name), (lo, hi) in t.LIMITS.items():
        if isinstance(value, cls):
            v = getattr(value, name)
            if v is not None and not lo <= v <= hi:  # None: an optional field left out
                errors.append(f"params.{camel(name)}: must be in {lo}..{hi}, got {v}")
    if isinstance(value, t.RecordMessagesParams):
        if len(value.messages) > t.MAX_MESSAGES_PER_CALL:
            errors.append(f"params.messages: at most {t.MAX_MESSAGES_PER_CALL} per call")
        for i, m in enumerate(value.messages):
            c = m.content
            ok = isinstance(c, str) or (isinstance(c, list) and all(isinstance(b, dict | str) for b in c)) or isinstance(c, dict)
            if not ok:
                errors.append(f"params.messages[{i}].content: expected a string or a list of content blocks")
    if isinstance(value, t.RecallParams) and not value.query.strip():
        errors.append("params.query: must not be empty")
    if isinstance(value, t.RecallParams) and value.as_of is not None and not _is_time(value.as_of):
        errors.append(f"params.asOf: not an ISO-8601 date or time: {value.as_of[:40]!r}")
    if isinstance(value, t.RecallParams) and value.now is not None and not _is_time(value.now):
        errors.append(f"params.now: not an ISO-8601 date or time: {value.now[:40]!r}")
    if isinstance(value, t.RecordMessagesParams):
        for i, m in enumerate(value.messages):
            if m.created_at is not None and not _is_time(m.created_at):
                errors.append(f"params.messages[{i}].createdAt: not an ISO-8601 time: {m.created_at[:40]!r}")
    return errors


def _is_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        return True
    except ValueError:
        return False
