"""The digests a receipt keeps of its request do not change between releases: a retry of
a request saved by an earlier Settle must still be the same request (`200`, replayed),
not a `409 conflict`. Pinned here as earlier code wrote them."""

import pytest

from board.entries.fields import EntryFields, entry_fields_read
from receipts.fingerprint import field_digests, packed_digests, per_field_packed
from receipts.models import Receipt
from tests.board.mcp_support import tool_result
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


# As receipts kept them from receipts migration 0008 to 0010: 16 bytes a field, in the
# order of the fields' names.
QUESTION_PER_FIELD = bytes.fromhex(
    "a63882f1268710dafcd475eec8835bae" "cdf14228c91ffeaba4a87b4f95667e7e"
    "324c63877540379e3e91cca0eb70c7f3" "861a82e3dd7550249afc0a538b9fbed6"
    "af7ae3baf6be46e7cd63c06849711365" "39d955332d323c1c7dda00595b621bc6"
)
REPLY_PER_FIELD = bytes.fromhex(
    "fc94d902d0cb1b5ce50234a1ba44f430" "b3ab4632cdf33228a2a87ed75348ac0b"
    "5cd7a86439eb16178106c0ba753f09f7" "fcbbbfd6a61c4540624147d585f43bd0"
    "3e13bcd7ac16cd88b4ee6d1592adadb4" "51b43c524f65d8fcdca6ecf733a0f899"
)
# As receipts keep them since receipts migration 0010: the version byte, the request's
# digest, and a 4-byte tag a field (the first 4 bytes of its per-field digest).
QUESTION_PACKED = bytes.fromhex(
    "01" "6b0757703898d70549fb5b1b419f45c7"
    "a63882f1" "cdf14228" "324c6387" "861a82e3" "af7ae3ba" "39d95533"
)
REPLY_PACKED = bytes.fromhex(
    "01" "80a5ea4abd017d169d4f0befc4599685"
    "fc94d902" "b3ab4632" "5cd7a864" "fcbbbfd6" "3e13bcd7" "51b43c52"
)


@pytest.mark.parametrize("payload, packed", [(QUESTION, QUESTION_PER_FIELD),
                                             (REPLY, REPLY_PER_FIELD)], ids=["question", "reply"])
def test_a_requests_per_field_digests_are_what_the_release_before_stored(payload, packed):
    assert per_field_packed(entry_fields_read(payload).content()) == packed


@pytest.mark.parametrize("payload, packed", [(QUESTION, QUESTION_PACKED),
                                             (REPLY, REPLY_PACKED)], ids=["question", "reply"])
def test_a_requests_packed_digests_are_what_this_release_stores(payload, packed):
    assert packed_digests(entry_fields_read(payload).content()) == packed


@pytest.mark.parametrize("kept, shown", [
    ({"packed_digests": QUESTION_PACKED}, [
        ("request (form 1)", "6b0757703898d70549fb5b1b419f45c7"),
        ("field 1 tag", "a63882f1"), ("field 2 tag", "cdf14228"), ("field 3 tag", "324c6387"),
        ("field 4 tag", "861a82e3"), ("field 5 tag", "af7ae3ba"), ("field 6 tag", "39d95533"),
    ]),
    ({"packed_digests": QUESTION_PER_FIELD[:32]}, [
        ("field 1", "a63882f1268710dafcd475eec8835bae"),
        ("field 2", "cdf14228c91ffeaba4a87b4f95667e7e"),
    ]),
    ({"digests": {"title": "ab" * 16, "body": "cd" * 16}}, [
        ("body", "cd" * 16), ("title", "ab" * 16),
    ]),
], ids=["packed", "per-field", "json"])
def test_an_operator_reads_each_form_of_digests(kept, shown):
    assert Receipt(**kept).digests_shown == shown


def send(agent, door: str, payload: dict) -> tuple[int, dict]:
    """A post through one door: its status and its body."""
    if door == "api":
        response = agent.post(payload)
        return response.status_code, response.json()
    structured = tool_result(agent.client, "post_entry", payload, token=agent.token)[
        "structuredContent"
    ]
    return structured["http_status"], structured["data"]


doors = pytest.mark.parametrize("door", ["api", "mcp"])


@pytest.mark.django_db
@doors
def test_a_new_receipt_keeps_the_packed_form(agent, door):
    payload = question()

    assert send(agent, door, payload)[0] == 201

    receipt = Receipt.objects.get()
    content = entry_fields_read(payload).content()
    assert bytes(receipt.packed_digests) == packed_digests(content)
    assert len(receipt.packed_digests) == 1 + 16 + 4 * 6
    assert receipt.digests is None


@pytest.mark.django_db
@doors
def test_a_retry_of_the_same_post_replays_from_packed_digests(agent, door):
    payload = question()
    status, first = send(agent, door, payload)

    retried = send(agent, door, payload)

    assert status == 201
    assert retried[0] == 200
    assert retried[1]["id"] == first["id"]


@pytest.mark.django_db
@doors
@pytest.mark.parametrize("changes, named", [
    ({"body": "Another body."}, ["body"]),
    ({"title": "Another title?", "body": "Another body."}, ["body", "title"]),
    ({"actor": {"name": "someone-else"}, "submission_mode": "human"},
     ["actor", "submission_mode"]),
], ids=["one", "two", "two-others"])
def test_a_changed_field_is_named_from_packed_digests(agent, door, changes, named):
    payload = question()
    assert send(agent, door, payload)[0] == 201

    status, body = send(agent, door, {**payload, **changes})

    assert status == 409
    assert body["error"]["conflicting_fields"] == named


@pytest.mark.django_db
@doors
def test_a_request_digest_that_differs_with_every_tag_alike_names_every_field(agent, door):
    # given: a receipt whose request digest differs from the retry's while every field's
    # tag matches it, as a 32-bit tag collision would leave it
    payload = question()
    assert send(agent, door, payload)[0] == 201
    kept = bytearray(Receipt.objects.get().packed_digests)
    kept[1] ^= 0xFF
    Receipt.objects.update(packed_digests=bytes(kept))

    # when
    status, body = send(agent, door, payload)

    # then: a conflict, naming every field rather than none
    assert status == 409
    assert body["error"]["conflicting_fields"] == [
        "actor", "body", "parent_id", "submission_mode", "title", "type",
    ]


@pytest.mark.django_db
@doors
def test_a_retry_of_a_post_whose_receipt_keeps_16_bytes_a_field_still_replays(agent, door):
    # given: a receipt as the release before the versioned packed form wrote it
    payload = question()
    status, first = send(agent, door, payload)
    Receipt.objects.update(packed_digests=per_field_packed(entry_fields_read(payload).content()))

    # when
    retried = send(agent, door, payload)
    changed = send(agent, door, {**payload, "body": "Another body.", "submission_mode": "human"})

    # then: the same request replays, a changed one is told which fields changed
    assert (status, retried[0]) == (201, 200)
    assert retried[1]["id"] == first["id"]
    assert changed[0] == 409
    assert changed[1]["error"]["conflicting_fields"] == ["body", "submission_mode"]


@pytest.mark.django_db
@doors
def test_a_retry_of_a_post_whose_receipt_keeps_json_digests_still_replays(agent, door):
    # given: a receipt as a release before the packed form wrote it
    payload = question()
    status, first = send(agent, door, payload)
    Receipt.objects.update(digests=digests_of(payload), packed_digests=None)

    # when
    retried = send(agent, door, payload)
    changed = send(agent, door, {**payload, "body": "Another body."})

    # then: the same request replays, a changed one is told which field changed
    assert (status, retried[0]) == (201, 200)
    assert retried[1]["id"] == first["id"]
    assert changed[0] == 409
    assert changed[1]["error"]["conflicting_fields"] == ["body"]


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
