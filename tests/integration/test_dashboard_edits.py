"""Corrections made through the dashboard's forms keep the guarantees of `lore/updateNode`:
the edit form carries the version the page showed, so a save over a change made since is
refused (409 `versionConflict`) and changes nothing, beside the same form at the current
version, which saves."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from tests.integration.test_dashboard_access import ask, start_ui

pytestmark = pytest.mark.slow


def version_on_page(page: str) -> str:
    found = re.search(r'<form method=post action="/node/edit".*?name="version" value="(\d+)"', page, re.S)
    assert found, page
    return found.group(1)


def content_on_page(page: str) -> str:
    found = re.search(r"<pre id=content>(.*?)</pre>", page, re.S)
    assert found, page
    return found.group(1)


def test_a_save_from_a_page_older_than_the_node_is_refused_and_changes_nothing(tmp_path):
    proc, url, _, done = start_ui(tmp_path)
    try:
        parts = urllib.parse.urlsplit(url)
        port, token = parts.port, urllib.parse.parse_qs(parts.query)["token"][0]
        status, headers, _ = ask(port, "/retain", method="POST",
                                 body={"token": token, "content": "Invoices are numbered per year", "category": "decision"})
        assert status == 303, headers
        uri = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["uri"][0]

        def page() -> str:
            status, _, text = ask(port, "/node?" + urllib.parse.urlencode({"uri": uri, "token": token}))
            assert status == 200, text
            return text

        shown = version_on_page(page())  # two tabs open on the same page, both showing this version
        first = {"token": token, "uri": uri, "version": shown, "content": "Invoices are numbered per year and branch"}
        status, _, text = ask(port, "/node/edit", method="POST", body=first)
        assert status == 303, text  # the control: a save at the version the page showed goes through
        after = page()
        assert content_on_page(after) == first["content"] and version_on_page(after) != shown

        stale = {**first, "content": "Invoices are numbered globally"}  # the other tab, still at `shown`
        status, _, text = ask(port, "/node/edit", method="POST", body=stale)
        assert status == 409 and "versionConflict" in text, (status, text)
        assert content_on_page(page()) == first["content"]  # the first save stands
    finally:
        done.write_text("")
        proc.terminate()
        proc.wait(10)
