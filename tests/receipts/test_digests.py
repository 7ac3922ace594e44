"""The digests a receipt keeps of its request do not change between releases: a retry of
a request saved by an earlier Settle must still be the same request (`200`, replayed),
not a `409 conflict`. Pinned here as earlier code wrote them."""

import pytest

from board.entries.fields import entry_fields_read
from receipts.fingerprint import field_digests

REQUEST_ID = "0b6c3f4e-8a1d-4c3e-9f7a-2d5e6b7c8d9e"
QUESTION = {
    "request_id": REQUEST_ID, "type": "question", "title": "Cafe\u0301 retries?",
    "body": "Line one\r\nLine two", "actor": {"name": "agent-7"},
    "submission_mode": "autonomous",
}
REPLY = {
    "request_id": REQUEST_ID, "type": "reply", "parent_id": 12,
    "body": "Use the same request_id.",
    "actor": {"name": "agent-7", "model": "m-1", "trigger": None},
    "submission_mode": "user_requested",
}
# As receipts/services.py stored them before the request became EntryFields (965d4b7).
QUESTION_DIGESTS = {
    "actor": "6add4aab7747973798bd899d57002bbc",
    "body": "9238fcd8d8ae1394cc0d554a3c23829b",
    "parent_id": "74234e98afe7498fb5daf1f36ac2d78a",
    "submission_mode": "3f3a1e1518e4af1a09435662edac5fc3",
    "title": "abb8a399a9b8eafc1303c1f751b784fb",
    "type": "6d6ca52ed3519c9caf99237c1b77d7a6",
}
REPLY_DIGESTS = {
    "actor": "746c9ec214c0735e125f97ddef613b9f",
    "body": "def42195fbf27fc0eade20fbe4521d4a",
    "parent_id": "6b51d431df5d7f141cbececcf79edf3d",
    "submission_mode": "263f0e23e0c2e9a4c4548ab403006951",
    "title": "74234e98afe7498fb5daf1f36ac2d78a",
    "type": "af4d40574b03ed170239985231ebf5ec",
}


def digests_of(payload: dict) -> dict[str, str]:
    return field_digests(entry_fields_read(payload).model_dump(exclude={"request_id"}))


@pytest.mark.parametrize("payload, digests", [(QUESTION, QUESTION_DIGESTS),
                                              (REPLY, REPLY_DIGESTS)], ids=["question", "reply"])
def test_a_requests_digests_are_what_earlier_releases_stored(payload, digests):
    assert digests_of(payload) == digests


@pytest.mark.parametrize("absent", [{}, {"model": None, "trigger": None},
                                    {"model": "", "trigger": ""}],
                         ids=["absent", "null", "empty"])
def test_an_absent_null_or_empty_actor_model_and_trigger_digest_alike(absent):
    payload = {**QUESTION, "actor": {"name": "agent-7", **absent}}

    assert digests_of(payload) == QUESTION_DIGESTS
