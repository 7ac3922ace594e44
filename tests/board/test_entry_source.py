"""An entry's source is its caller's rate-limit source (SPEC 4): a principal's key, which
the entry's principal says, is not stored again (8 to 16 bytes of WAL a post,
docs/write-path.md); an anonymous caller's address source is. Read back as
`Entry.caller_source` either way, entries stored with the key before included."""

import pytest

from board.models import Entry
from board.posting.callers import address_source
from tests.board.mcp_support import tool_result
from tests.conftest import question

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]


def test_a_principals_post_over_http_stores_no_source_and_reads_its_key(agent):
    posted = agent.post(question()).json()

    entry = Entry.objects.get(pk=posted["id"])
    assert entry.source == ""
    assert entry.caller_source == f"principal:{entry.principal_id}"


def test_a_principals_post_over_mcp_stores_no_source_and_reads_its_key(agent):
    posted = tool_result(agent.client, "post_entry", question(), token=agent.token)

    entry = Entry.objects.get(pk=posted["structuredContent"]["data"]["id"])
    assert entry.source == ""
    assert entry.caller_source == f"principal:{entry.principal_id}"


def test_an_anonymous_post_keeps_its_address_source(anonymous):
    posted = anonymous.post(question()).json()

    entry = Entry.objects.get(pk=posted["id"])
    assert entry.principal_id is None
    assert entry.source == entry.caller_source == address_source("127.0.0.1")


def test_an_entry_stored_with_its_principals_key_reads_the_same(agent):
    entry_id = agent.post(question()).json()["id"]
    Entry.objects.filter(pk=entry_id).update(source=f"principal:{agent_principal(entry_id)}")

    assert Entry.objects.get(pk=entry_id).caller_source == f"principal:{agent_principal(entry_id)}"


def agent_principal(entry_id: int) -> int:
    return Entry.objects.values_list("principal_id", flat=True).get(pk=entry_id)
