"""Words of any language are found by their own spelling: the real Tantivy index under
tmp_path, asked with the terms recall asks with (query.search_terms). Each search is beside
a control: an English word in the same index found the same way, so a miss is the
language's, not the harness's.

Case folding, decided: Unicode full case folding (`Straße`, `STRASSE` and `strasse` are one
word), and Latin letters lose their accents (`canción` = `cancion`, `Größe` = `grosse`), as
a user typing without accents or with a keyboard that lacks ß expects."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.recall.query import search_terms
from lore_sidecar.model import Doc
from lore_sidecar.store.text_index import TextIndex

TEXTS = {
    1: "Die Größe der Straßenbahnhaltestelle überrascht mich jeden Morgen.",  # German compound, umlauts
    2: "La canción que escuchamos en la playa era de mi abuelo.",  # Spanish accents
    3: "昨日は東京都の図書館で新しい料理の本を借りました。",  # Japanese, no spaces
    4: "나는 주말마다 도서관에서 소설을 읽어요.",  # Korean, particles attached
    5: "我每天早上在公园里跑步，然后喝咖啡。",  # Chinese
    6: "We repaired the garden fence with cedar boards on Sunday.",  # English control
    7: "Ich wohne an der Hauptstraße neben dem Bäcker.",
    # Distractors: they share the fragments an ASCII-only analysis cuts from the words above
    # (Größe -> gr + e, canción -> canci + n), and not the words.
    8: "Grüße aus der Grünanlage!",
    9: "La canció catalana que cantava la meva àvia.",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    ti = TextIndex(tmp_path_factory.mktemp("text"), writable=True)
    ti.upsert([Doc(kind="messages", key=k, project_id=1, title="", body=t) for k, t in TEXTS.items()])
    ti.commit(1)
    yield ti
    ti.close()


def found(ti: TextIndex, query: str, *, conjunctive: bool = True) -> list[int]:
    hits = ti.search(search_terms(query), kinds=["messages"], project_ids=None, limit=10, conjunctive=conjunctive)
    return [key for _, key, _ in hits]


def test_the_english_control_is_found_by_its_words(index):
    assert found(index, "cedar fence") == [6]


@pytest.mark.parametrize(("query", "key"), [
    ("Größe", 1),  # a word with an umlaut, as written
    ("Straßenbahnhaltestelle", 1),  # a whole German compound
    ("STRASSENBAHNHALTESTELLE", 1),  # the same, capitalised as German writes ß in capitals
    ("canción", 2),  # a Spanish accented word, as written (not the Catalan canció)
    ("canció", 9),
    ("cancion playa", 2),  # typed without its accent
    ("grosse", 1),  # ö and ß typed as o and ss
    ("東京", 3),  # a two-character word inside a Japanese sentence
    ("図書館", 3),
    ("料理", 3),
    ("도서관", 4),  # a Korean word with its particle (도서관에서) in the text
    ("소설", 4),
    ("公园", 5),  # Chinese: a word inside a sentence without spaces
    ("咖啡", 5),
])
def test_a_word_of_any_language_finds_its_message(index, query, key):
    assert found(index, query) == [key]


def test_case_folds_the_unicode_way_strasse_and_strasse(index):
    assert found(index, "HAUPTSTRASSE") == [7]
    assert found(index, "hauptstraße") == [7]
    assert found(index, "Hauptstrasse") == [7]


def test_a_word_found_in_one_language_does_not_match_others(index):
    # Negative beside the controls above: a Japanese word that no text holds finds nothing,
    # while 東京 (same script, same index) finds its message.
    assert found(index, "大阪") == []
    assert found(index, "東京") == [3]
