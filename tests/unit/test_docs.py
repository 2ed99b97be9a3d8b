"""The docs say what the code does: every method, notification, setting and error kind is
documented, the method reference matches the wire types, and the raw wire example is exact."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import attrs

from lore_sidecar.settings import OPTIONS, build
from lore_sidecar.wire.converter import camel
from lore_sidecar.wire.methods import COMMANDS, METHOD_TO_TYPES, NOTIFICATIONS

DOCS = Path(__file__).resolve().parents[2] / "docs"
PKG = Path(__file__).resolve().parents[2] / "lore_sidecar"
PROTOCOL = (DOCS / "protocol.md").read_text()


def block(text: str, tag: str) -> str:
    """The body of the first fenced block tagged `tag`."""
    m = re.search(rf"^```{re.escape(tag)}\n(.*?)^```", text, re.S | re.M)
    assert m, f"no ```{tag} block"
    return m.group(1)


def reference() -> dict[str, tuple[list[str], list[str]]]:
    """method -> (params, result fields) from the method reference table."""
    rows = {}
    for line in PROTOCOL.splitlines():
        m = re.match(r"^\| `(lore/\w+)` \| (.*?) \| (.*?) \|$", line)
        if m:
            split = lambda s: [x.strip() for x in s.split(",") if x.strip() and x.strip() != "—"]  # noqa: E731
            rows[m.group(1)] = (split(m.group(2)), split(m.group(3)))
    return rows


def raw_frames(text: str) -> list[tuple[int, bytes]]:
    """(declared length, body bytes) of each line of a raw-session block."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"Content-Length: (\d+)\\r\\n\\r\\n(.*)", line)
        assert m, f"not a frame: {line!r}"
        out.append((int(m.group(1)), m.group(2).encode()))
    return out


def test_every_lore_method_notification_and_command_is_in_protocol_md():
    missing = [m for m in [*METHOD_TO_TYPES, *NOTIFICATIONS, *COMMANDS] if f"`{m}`" not in PROTOCOL]
    assert missing == []


def test_every_setting_is_in_configuration_md():
    text = (DOCS / "configuration.md").read_text()
    assert [o for o in OPTIONS if f"`{o}`" not in text] == []


def test_every_default_configuration_md_states_is_the_default_the_code_applies():
    """A row `| `option` | `default` | ...` says what an option is when nobody sets it
    (a default the code leaves to something else, None, is documented in words instead)."""
    text = (DOCS / "configuration.md").read_text()
    said = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| `([^`|]*)` \|", text, re.M) if m.group(1) in OPTIONS}
    assert len(said) > 50 and "readWaitMs" in said  # control: the table is read
    settings = build({})
    wrong = {}
    for option, doc in said.items():
        section, field = OPTIONS[option][1]
        value = getattr(settings if section is None else getattr(settings, section), field)
        if value is None:
            continue
        if isinstance(value, bool):
            same = doc == str(value).lower()
        elif isinstance(value, int | float):
            same = float(doc) == value
        else:
            same = doc == str(value)
        if not same:
            wrong[option] = (doc, value)
    assert wrong == {}


def test_the_method_reference_lists_each_method_with_exactly_its_wire_params():
    table = reference()
    assert set(table) == set(METHOD_TO_TYPES)
    for method, params_type in METHOD_TO_TYPES.items():
        wire = [camel(a.name) + ("?" if a.default is not attrs.NOTHING else "") for a in attrs.fields(params_type)]
        assert table[method][0] == wire, method


def test_control_the_reference_parser_reads_a_row():
    assert reference()["lore/recall"][0][0] == "query" and "queryId" in reference()["lore/recall"][1]


def test_every_raw_frame_in_the_docs_declares_its_true_length():
    frames = raw_frames(block(PROTOCOL, "raw-session"))
    assert frames and [declared for declared, _ in frames] == [len(body) for _, body in frames]
    for _, body in frames:
        json.loads(body)


def kinds_raised() -> set[str]:
    """Every `data.kind` the code can produce: LoreError and its subclasses' first argument,
    `_fail` of the LLM client, and literal `{"kind": ...}` error data."""
    kinds: set[str] = set()
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            first = node.args[0]
            if name in ("LoreError", "LLMUnavailable", "_fail", "__init__") and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str) and re.fullmatch(r"[a-z]+[A-Za-z]*", first.value):
                kinds.add(first.value)
            for kw in node.keywords:
                if kw.arg == "data" and isinstance(kw.value, ast.Dict):
                    for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                        if isinstance(k, ast.Constant) and k.value == "kind" and isinstance(v, ast.Constant):
                            kinds.add(v.value)
    return kinds


def test_the_stable_error_kinds_list_names_every_kind_the_code_produces():
    documented = set(re.findall(r"`([a-z][A-Za-z]+)`", PROTOCOL[PROTOCOL.index("Stable `data.kind`"):
                                                                PROTOCOL.index("Framing is defensive")]))
    kinds = kinds_raised()
    assert {"notWriter", "staleEpoch", "internal", "priorityBudget", "noApiKey"} <= kinds  # control: the scan sees them
    assert sorted(kinds - documented) == []


TESTS = PKG.parent / "tests"


def cited_tests(text: str) -> list[tuple[str, str]]:
    """(test file, test function) of every `file.py::test_name` the text cites; a bare
    `::test_name` is in the file cited just before it, and `test_name_…` names a prefix
    (the function's name is `test_name_` followed by more word characters)."""
    cited, last = [], None
    for path, name, cut in re.findall(r"`([\w/.-]*\.py)?::(\w+)(…?)[^`]*`", text):
        last = path or last
        assert last, f"`::{name}` cites no file before it"
        cited.append((last, name + (r"\w*" if cut else "")))
    return cited


def test_every_test_the_architecture_doc_cites_as_a_guard_exists():
    """A promise table pointing at a renamed or deleted test guards nothing: each cited file
    is found under tests/ and defines the cited function; each cited mutation is in the list."""
    text = (DOCS / "architecture.md").read_text()
    missing = []
    for path, name in cited_tests(text):
        files = [PKG.parent / path] if "/" in path else list(TESTS.rglob(path))
        if not any(f.is_file() and re.search(rf"^(async )?def {name}\(", f.read_text(), re.M) for f in files):
            missing.append(f"{path}::{name}")
    assert not missing, f"architecture.md cites tests that do not exist: {missing}"
    import sys
    sys.path.insert(0, str(PKG.parent / "tools"))
    from mutations import MUTATIONS
    names = {m.name for m in MUTATIONS}
    cited = {n for group in re.findall(r"mutations? ((?:`[\w-]+`(?:,? (?:and )?)?)+)", text)
             for n in re.findall(r"`([\w-]+)`", group)}
    assert cited and not cited - names, f"architecture.md cites mutations not in tools/mutations.py: {cited - names}"


def test_control_a_cited_test_that_does_not_exist_is_found_missing():
    refs = cited_tests("`tests/unit/test_docs.py::test_no_such_test` then `::test_every_setting_…`")
    assert refs == [("tests/unit/test_docs.py", "test_no_such_test"),
                    ("tests/unit/test_docs.py", r"test_every_setting_\w*")]
    assert not re.search(r"^def test_no_such_test\(", (TESTS / "unit/test_docs.py").read_text(), re.M)
