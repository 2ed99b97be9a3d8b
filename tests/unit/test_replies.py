"""A `lore/*` reply is written as the JSON its handler built, byte for byte what pygls's
cattrs walk over it would have written."""

import enum
import json

from lsprotocol import types as lsp
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCResponseMessage

from lore_sidecar.rpc.server import create_server


class Colour(enum.Enum):
    RED = "red"


def _both(protocol, message):
    fast = json.dumps(message, default=protocol._serialize_message)
    walked = json.dumps(message, default=lambda d: LanguageServerProtocol._serialize_message(protocol, d))
    return fast, walked


def test_a_reply_is_written_as_built_and_whatever_is_not_plain_json_in_it_is_still_unstructured():
    protocol = create_server({}).protocol
    result = {
        "hits": [{"uri": "lore://m/1", "score": 0.5, "range": [1, 2], "title": None, "cues": ["a", "b"]}] * 3,
        "total": 3, "densePartial": False, "nested": {"deep": [[1, 2.5, "x", True, None]]},
        # not plain JSON: an attrs object and an enum inside the built reply
        "location": lsp.Location(uri="file:///x", range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(1, 0))),
        "colour": Colour.RED,
    }
    for payload in (result, [result, 1], {}, []):
        message = JsonRPCResponseMessage(id=7, jsonrpc="2.0", result=payload)
        fast, walked = _both(protocol, message)
        assert fast == walked
    # What json.dumps alone could not write was unstructured, as the walk does it.
    fast, _ = _both(protocol, JsonRPCResponseMessage(id=7, jsonrpc="2.0", result=result))
    assert json.loads(fast)["result"]["location"]["range"]["end"]["line"] == 1
    assert json.loads(fast)["result"]["colour"] == "red"


def test_typed_lsp_replies_still_go_through_the_converter():
    protocol = create_server({}).protocol
    message = lsp.WorkspaceSymbolResponse(id=3, result=[lsp.WorkspaceSymbol(
        name="n", kind=lsp.SymbolKind.String, location=lsp.LocationUriOnly(uri="lore://k/1"))])
    fast, walked = _both(protocol, message)
    assert fast == walked and json.loads(fast)["result"][0]["location"] == {"uri": "lore://k/1"}
