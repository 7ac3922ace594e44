"""The console's words (issue 32): a count in the singular or the plural as it falls, where
a retention value comes from when the console set it, what a hold covers, and errors in
the console's words rather than the command line's flags."""

import re

import pytest

from board.models import Entry
from board.retention import holds
from maintenance.deliveries.models import Delivery
from moderation import actions as moderation
from tests.conftest import question, reply
from tests.maintenance.conftest import (  # noqa: F401 (fixtures)
    delivery_settings,
    drive,
    endpoint_for,
    receiver,
)
from tests.maintenance.webhook_receiver import Behaviour
from tests.moderation.conftest import logged_in
from tests.moderation.test_pages_inbox import posted

RETENTION = "/console/retention/"


def keeps_for(page: str, job: str) -> str:
    """The text of the `Keeps for` cell in the job's row of the policies and runs table."""
    row = re.search(rf"<code>{job}</code></th>(.*?)</tr>", page, re.S).group(1)
    cell = re.search(r'<td class="keeps-for">(.*?)</td>', row, re.S).group(1)
    return re.sub(r"\s+", " ", cell)


@pytest.mark.django_db
def test_a_value_the_console_set_is_said_to_come_from_the_console(console):
    before = console.get(RETENTION).content.decode()
    moderation.retention_set(actor="operator", policy="entry", seconds=14 * 86400)

    after = console.get(RETENTION).content.decode()

    assert keeps_for(before, "purge-expired-threads") == (
        '30 days <span class="meta">(from <code>SETTLE_ENTRY_RETENTION</code>)</span>'
    )
    assert keeps_for(after, "purge-expired-threads") == (
        '14 days <span class="meta">(set in the console)</span>'
    )
    assert "SETTLE_DELETION_RETENTION" in keeps_for(after, "purge-deletion-records")


@pytest.mark.django_db
def test_a_hold_says_what_it_covers_in_words(console, agent):
    question_id = agent.post(question()).json()["id"]
    for _ in range(2):
        agent.post(reply(question_id))
    moderation.hold_add(actor="operator", reason="legal", thread_id=question_id)

    page = console.get(RETENTION).content.decode()

    covers = re.search(r'<td class="covers">(.*?)</td>', page, re.S).group(1)
    assert covers == (
        f'3 entries in 1 thread (<a href="/console/entries/{question_id}/">thread '
        f"{question_id}</a>)"
    )
    assert '<h3 id="place-hold">Place a hold</h3>' in page


@pytest.mark.django_db
def test_a_hold_on_one_entry_reads_in_the_singular(console, agent):
    agent.post(question())
    moderation.hold_add(actor="operator", reason="legal", principal="agent")

    page = console.get(RETENTION).content.decode()

    assert re.search(r'<td class="covers">1 entry in 1 thread \(', page)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_one_delivery_waiting_is_settled_as_it(operator, receiver):  # noqa: F811
    endpoint = endpoint_for(receiver)
    receiver.script.append(Behaviour(close=True))
    _, entry_id = posted()
    assert drive(Delivery.objects.get(entry_id=entry_id, endpoint=endpoint)).state == (
        "outcome_unknown"
    )

    page = logged_in(operator).get("/console/").content.decode()

    text = re.sub(r"<[^>]+>", "", re.search(
        r'<section class="card deliveries-waiting.*?</section>', page, re.S
    ).group(0))
    assert "1 delivery with an unknown outcome waits for an operator: settle it." in text
    assert Entry.objects.filter(pk=entry_id).exists()


@pytest.mark.django_db
def test_console_errors_name_the_console_fields_not_the_command_flags(
    administrator, agent, settings
):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"
    agent.post(question())
    console = logged_in(administrator)

    http = console.post("/console/deliveries/endpoints/add", {
        "name": "plain", "url": "http://hooks.example.com/in", "supports": "none",
    }).content.decode()
    both = console.post(RETENTION.rstrip("/") + "/holds", {
        "thread": "1", "principal": "agent", "reason": "legal",
    }, follow=True).content.decode()
    deletion = console.post(RETENTION.rstrip("/") + "/policy", {
        "policy": "deletion", "principal": "agent", "duration": "7d",
    }, follow=True).content.decode()

    assert "http only with Allow private addresses ticked" in http
    assert "give a thread id or a principal, one of the two" in both
    assert "an agent&#x27;s own retention applies to the entry policy only" in deletion
    for page in (http, both, deletion):
        assert "--allow-private" not in page and "--thread" not in page
        assert "--principal" not in page


@pytest.mark.django_db
def test_a_hold_on_an_agent_with_more_entries_than_the_bound_says_more_than(
    console, agent, monkeypatch
):
    # given: an agent's three questions, one with a reply, a bound of two entries, and
    # two threads shown
    monkeypatch.setattr(holds, "COVERS_BOUND", 2)
    monkeypatch.setattr(holds, "COVERS_SHOWN", 2)
    questions = [agent.post(question()).json()["id"] for _ in range(3)]
    agent.post(reply(questions[0]))
    moderation.hold_add(actor="operator", reason="legal", principal="agent")

    page = console.get(RETENTION).content.decode()

    covers = re.search(r'<td class="covers">(.*?)</td>', page, re.S).group(1)
    assert covers.startswith("more than 2 entries in at least 3 threads (")
    assert covers.count('<a href="/console/entries/') == 2 and covers.endswith(", …)")


@pytest.mark.django_db
def test_a_hold_on_an_agent_counts_every_entry_of_its_threads_below_the_bound(console, agent):
    # given: two questions of the agent and a reply to the first
    questions = [agent.post(question()).json()["id"] for _ in range(2)]
    agent.post(reply(questions[0]))
    moderation.hold_add(actor="operator", reason="legal", principal="agent")

    page = console.get(RETENTION).content.decode()

    covers = re.search(r'<td class="covers">(.*?)</td>', page, re.S).group(1)
    assert covers.startswith("3 entries in 2 threads (")
