"""Every method, notification and setting is documented."""

from pathlib import Path

from lore_sidecar.settings import OPTIONS
from lore_sidecar.wire.methods import COMMANDS, METHOD_TO_TYPES, NOTIFICATIONS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_lore_method_notification_and_command_is_in_protocol_md():
    text = (DOCS / "protocol.md").read_text()
    missing = [m for m in [*METHOD_TO_TYPES, *NOTIFICATIONS, *COMMANDS] if f"`{m}`" not in text]
    assert missing == []


def test_every_setting_is_in_configuration_md():
    text = (DOCS / "configuration.md").read_text()
    assert [o for o in OPTIONS if f"`{o}`" not in text] == []
