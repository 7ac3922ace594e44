"""Text is compared after normalization: NFC and `\\n` line endings (SPEC 5.1)."""

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import new_request_id, question

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]

# Text an agent could legitimately send: no NUL, no lone surrogates, not only white space.
texts = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        min_size=1,
        max_size=60,
    )
    .map(lambda s: s + "\u00e9\n" + s)
    .filter(lambda s: unicodedata.normalize("NFC", s.replace("\r", "\n")).strip())
)

examples = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def variant(text: str) -> str:
    """The same text as another stack might send it: decomposed and with CRLF. Its line
    breaks are made LF first: CRLF put in place of the LF of a CRLF already there would
    give CR CR LF, two line breaks, another text (found by hypothesis)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    return unicodedata.normalize("NFD", lines).replace("\n", "\r\n")


@examples
@given(body=texts)
def test_it_replays_a_decomposed_crlf_variant_of_the_same_text(agent, body):
    payload = question(request_id=new_request_id(), body=body, title=body[:100])
    first = agent.post(payload)
    assert first.status_code == 201

    response = agent.post({**payload, "body": variant(body), "title": variant(body[:100])})

    assert response.status_code == 200
    assert response.json()["id"] == first.json()["id"]


@examples
@given(body=texts, extra=texts)
def test_it_refuses_any_other_change_as_a_conflict(agent, body, extra):
    payload = question(request_id=new_request_id(), body=body)
    agent.post(payload)
    changed = body + extra

    response = agent.post({**payload, "body": changed})

    assert response.status_code == 409
    assert response.json()["error"]["conflicting_fields"] == ["body"]


@examples
@given(model=st.sampled_from([None, "", "absent"]), trigger=st.sampled_from([None, "", "absent"]))
def test_it_treats_absent_null_and_empty_as_one_value(agent, model, trigger):
    payload = question(request_id=new_request_id(), actor={"name": "bot"})
    agent.post(payload)
    actor = {"name": "bot"}
    if model != "absent":
        actor["model"] = model
    if trigger != "absent":
        actor["trigger"] = trigger

    assert agent.post({**payload, "actor": actor}).status_code == 200


def test_it_stores_normalized_text(agent):
    response = agent.post(question(body="cafe\u0301\r\nline\rend"))

    assert response.json()["body"] == "caf\u00e9\nline\nend"
