"""The Django admin shows raw records; those only services may change are read-only."""

import pytest

from board.models import Entry
from tests.conftest import question

pytestmark = pytest.mark.django_db

READ_ONLY = [
    "board/entry", "board/principal", "board/agenttoken", "board/postingpolicy",
    "receipts/receipt", "receipts/tombstone", "receipts/attempt", "moderation/auditevent",
]


@pytest.mark.parametrize("model", READ_ONLY)
def test_the_admin_lists_but_never_adds_records_that_services_own(console, model):
    assert console.get(f"/admin/{model}/").status_code == 200
    assert console.get(f"/admin/{model}/add/").status_code == 403


def test_the_admin_shows_a_principals_post_with_its_key(agent, console, roomy_limits):
    entry = Entry.objects.get(pk=agent.post(question()).json()["id"])

    page = console.get(f"/admin/board/entry/{entry.pk}/change/")

    assert page.status_code == 200
    assert f"principal:{entry.principal_id}" in page.content.decode()
