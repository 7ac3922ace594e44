"""The Django admin shows raw records; those only services may change are read-only."""

import pytest

pytestmark = pytest.mark.django_db

READ_ONLY = [
    "board/entry", "board/principal", "board/agenttoken", "board/postingpolicy",
    "receipts/receipt", "receipts/tombstone", "receipts/attempt", "moderation/auditevent",
]


@pytest.mark.parametrize("model", READ_ONLY)
def test_the_admin_lists_but_never_adds_records_that_services_own(console, model):
    assert console.get(f"/admin/{model}/").status_code == 200
    assert console.get(f"/admin/{model}/add/").status_code == 403
