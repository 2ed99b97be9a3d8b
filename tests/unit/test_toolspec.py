"""The ask agent's tool-call check (engine/ask/toolspec.check), pure: every way a model gets a
call wrong is a refusal naming what the tool takes; each beside the call that is right."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.ask.toolspec import SPECS, Result, check

GOOD = [
    ("Read", {"path": "a.py"}, {"path": "a.py"}),
    ("Read", {"file_path": "a.py"}, {"path": "a.py"}),  # Claude Code's name
    ("Read", {"filePath": "a.py", "offset": "3"}, {"path": "a.py", "offset": 3}),
    ("Read", {"path": "a.py", "limit": 20.0, "offset": None}, {"path": "a.py", "limit": 20}),
    ("Read", '{"path": "a.py"}', {"path": "a.py"}),
    ("remember", {"fact": "f", "file_paths": ["a.py"]}, {"fact": "f", "paths": ["a.py"]}),
    ("git_search", {"query": "q", "patch": "true"}, {"query": "q", "patch": True}),
    # hunt7a: a string "false" is false (a truthy non-empty string must not turn patches on).
    ("git_search", {"query": "q", "patch": "false"}, {"query": "q", "patch": False}),
    ("git_search", {"query": "q", "patch": "False"}, {"query": "q", "patch": False}),
    ("git_search", {"query": "q", "patch": False}, {"query": "q", "patch": False}),
    ("get_changed_files", None, {}),
    ("find_paths", {}, {}),
]
BAD = [
    ("Read", {"path": "a.py", "file_path": "b.py"}, "given twice"),
    ("Read", {}, "'path' is required"),
    ("Read", {"path": None}, "'path' is required"),
    ("Read", {"path": "a.py", "encoding": "utf-8"}, "no argument 'encoding'"),
    ("Read", {"path": ["a.py"]}, "'path' must be a string"),
    ("Read", {"path": "a.py", "offset": True}, "'offset' must be an integer"),
    ("Read", {"path": "a.py", "offset": 1.5}, "'offset' must be an integer"),
    ("Read", {"path": "a.py", "offset": "ten"}, "'offset' must be an integer"),
    # Text that str.isdigit() takes but int() does not: a refusal, never an exception out of the dispatch.
    ("Read", {"path": "a.py", "offset": "--5"}, "'offset' must be an integer"),
    ("Read", {"path": "a.py", "limit": "\u00b2"}, "'limit' must be an integer"),
    ("Read", '{"path": "a.', "not valid JSON"),
    ("Read", ["a.py"], "must be a JSON object"),
    ("Read", {"_unparsed": '{"pa'}, "not valid JSON"),
    ("Grep", {"pattern": "x", "path": "src"}, "no argument 'path'"),  # Claude Code's Grep takes one; ours not
    ("Glob", {"pattern": 5}, "'pattern' must be a string"),
    ("Grep", {"pattern": "x", "file_path": "src/a.py"}, "no argument 'file_path'"),  # an alias only where the tool has its target
    ("Glob", {"pattern": "*.py", "file": "src"}, "no argument 'file'"),
    ("remember", {"fact": "f", "paths": "a.py"}, "'paths' must be a list of strings"),
    ("remember", {"fact": "f", "paths": [1]}, "'paths' must be a list of strings"),
    ("git_search", {"query": "q", "patch": "yes"}, "'patch' must be true or false"),
    ("get_changed_files", {"all": True}, "takes: no arguments"),
    ("Bash", {"command": "ls"}, "no tool named 'Bash'"),
    ("read", {"path": "a.py"}, "no tool named 'read'"),
    (None, {}, "no tool named 'None'"),
]


@pytest.mark.parametrize("name, args, want", GOOD)
def test_a_right_call_or_an_unambiguous_alias_passes_as_the_schema_names_it(name, args, want):
    assert check(name, args) == want


@pytest.mark.parametrize("name, args, says", BAD)
def test_a_wrong_call_is_a_refusal_that_says_what_the_tool_takes(name, args, says):
    r = check(name, args)
    assert isinstance(r, Result) and r.refused and says in r.text, r
    if name in {s["name"] for s in SPECS}:
        assert f"{name} takes:" in r.text


def test_every_tool_of_the_specs_has_a_runner_and_a_checked_schema():
    """A spec without a runner in _run would raise inside the dispatch: each one is listed."""
    from lore_sidecar.engine.ask import toolspec

    source = open(toolspec.__file__).read()
    for spec in SPECS:
        assert f'name == "{spec["name"]}"' in source, spec["name"]
        assert set(spec["input_schema"].get("required", [])) <= set(spec["input_schema"]["properties"])
