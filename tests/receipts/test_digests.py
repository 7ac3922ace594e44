"""The digests a receipt keeps of its request do not change between releases: a retry of
a request saved by an earlier Settle must still be the same request (`200`, replayed),
not a `409 conflict`. Pinned here as earlier code wrote them."""

import pytest

from board.entries.fields import EntryFields, entry_fields_read
from receipts.fingerprint import field_digests, packed_digests
from receipts.models import Receipt
from tests.conftest import question

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
    return field_digests(entry_fields_read(payload).content())


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


# As receipts keep them since `packed_digests` (receipts migration 0008): 16 bytes a
# field, in the order of the fields' names.
QUESTION_PACKED = bytes.fromhex(
    "a63882f1268710dafcd475eec8835bae" "cdf14228c91ffeaba4a87b4f95667e7e"
    "324c63877540379e3e91cca0eb70c7f3" "861a82e3dd7550249afc0a538b9fbed6"
    "af7ae3baf6be46e7cd63c06849711365" "39d955332d323c1c7dda00595b621bc6"
)
REPLY_PACKED = bytes.fromhex(
    "fc94d902d0cb1b5ce50234a1ba44f430" "b3ab4632cdf33228a2a87ed75348ac0b"
    "5cd7a86439eb16178106c0ba753f09f7" "fcbbbfd6a61c4540624147d585f43bd0"
    "3e13bcd7ac16cd88b4ee6d1592adadb4" "51b43c524f65d8fcdca6ecf733a0f899"
)


@pytest.mark.parametrize("payload, packed", [(QUESTION, QUESTION_PACKED),
                                             (REPLY, REPLY_PACKED)], ids=["question", "reply"])
def test_a_requests_packed_digests_are_what_this_release_stores(payload, packed):
    assert packed_digests(entry_fields_read(payload).content()) == packed


@pytest.mark.django_db
def test_a_retry_of_a_post_whose_receipt_keeps_json_digests_still_replays(agent):
    # given: a receipt as a release before the packed form wrote it
    payload = question()
    first = agent.post(payload)
    Receipt.objects.update(digests=digests_of(payload), packed_digests=None)

    # when
    retried = agent.post(payload)
    changed = agent.post({**payload, "body": "Another body."})

    # then: the same request replays, a changed one is told which field changed
    assert (first.status_code, retried.status_code) == (201, 200)
    assert retried.json()["id"] == first.json()["id"]
    assert changed.status_code == 409
    assert changed.json()["error"]["conflicting_fields"] == ["body"]


@pytest.mark.django_db
def test_a_changed_field_is_named_from_packed_digests(agent):
    payload = question()
    assert agent.post(payload).status_code == 201

    changed = agent.post({**payload, "title": "Another title?", "body": "Another body."})

    assert changed.status_code == 409
    assert changed.json()["error"]["conflicting_fields"] == ["body", "title"]


class WithTags(EntryFields):
    """The entry's fields as they would be with an optional field added later."""

    tags: list[str] | None = None
    added_later = frozenset({"tags"})


def test_a_field_added_later_leaves_earlier_requests_digests_as_they_were():
    fields = WithTags(**QUESTION)

    assert field_digests(fields.content()) == QUESTION_DIGESTS


def test_a_field_added_later_is_digested_once_it_is_set():
    fields = WithTags(**QUESTION, tags=["retries"])

    assert set(field_digests(fields.content())) == {*QUESTION_DIGESTS, "tags"}
