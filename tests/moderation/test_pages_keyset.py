"""Every console list pages by keyset (SPEC 11.7): Newest, Newer, Older and Oldest links
(rel first, prev, next, last) that keep the filters, pages that stay put while rows are
added, a cursor that does not read answered with the newest page and a message; search
through each engine's index, keeping its meaning; and the filters' plans through their
indexes."""

import base64
import json
import re
import uuid
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from board import selectors as search_index
from board.models import Entry
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from moderation import actions as moderation
from moderation import selectors
from moderation.models import AuditEvent
from tests.conftest import is_postgres, question, reply
from tests.query_plans import analyzed, plan_prepared, statements_sent
from tests.seeding import entries_seed

pytestmark = pytest.mark.django_db

SIZE = 4


@pytest.fixture(autouse=True)
def small_pages(monkeypatch):
    # Four rows a page, so a handful of rows make several pages.
    for page in ("entries", "audit", "deliveries"):
        monkeypatch.setattr(f"moderation.console.{page}.PAGE_SIZE", SIZE)


def links(response) -> dict[str, str]:
    """The page's navigation: rel → href (the inbox's own nav excluded unless asked)."""
    html = response.content.decode()
    nav = re.findall(r'<nav class="pages" aria-label="Pages">(.*?)</nav>', html, re.S)
    found = {}
    for block in nav[:1]:
        for rel, href, label in re.findall(r'<a rel="(\w+)" href="([^"]*)">(\w+)</a>', block):
            found[rel] = unescape(href)
            assert label == {"first": "Newest", "prev": "Newer", "next": "Older",
                             "last": "Oldest"}[rel]
    return found


def follow(client, path: str, href: str):
    return client.get(path + href if href.startswith("?") else href)


def entry_ids(response) -> list[int]:
    return [entry.pk for entry, _ in response.context["rows"]]


def test_it_pages_entries_newest_older_newer_oldest_with_the_filters_kept(
    console, agent, roomy_limits
):
    questions = []
    for n in range(10):
        questions.append(agent.post(question(title=f"Question {n}")).json()["id"])
        agent.post(reply(questions[-1]))  # replies between, filtered out
    newest_first = questions[::-1]

    first = console.get("/console/entries/", {"type": "question"})
    assert entry_ids(first) == newest_first[:4]
    nav = links(first)
    assert set(nav) == {"next", "last"}
    assert all(parse_qs(urlsplit(href).query)["type"] == ["question"] for href in nav.values())

    second = follow(console, "/console/entries/", nav["next"])
    assert entry_ids(second) == newest_first[4:8]
    assert set(links(second)) == {"first", "prev", "next", "last"}

    third = follow(console, "/console/entries/", links(second)["next"])
    assert entry_ids(third) == newest_first[8:]
    assert set(links(third)) == {"first", "prev"}

    back = follow(console, "/console/entries/", links(third)["prev"])
    assert entry_ids(back) == newest_first[4:8]

    oldest = follow(console, "/console/entries/", links(first)["last"])
    assert entry_ids(oldest) == newest_first[-4:]
    assert set(links(oldest)) == {"first", "prev"}
    assert entry_ids(follow(console, "/console/entries/", links(oldest)["prev"])) == (
        newest_first[2:6]
    )
    assert entry_ids(follow(console, "/console/entries/", links(oldest)["first"])) == (
        newest_first[:4]
    )
    for page in (first, second, third, oldest):
        assert b"Page 1 of" not in page.content


def test_it_keeps_an_operators_place_while_entries_are_added(console, agent, roomy_limits):
    ids = [agent.post(question()).json()["id"] for _ in range(9)][::-1]
    first = console.get("/console/entries/")
    assert entry_ids(first) == ids[:4]
    added = [agent.post(question()).json()["id"] for _ in range(3)][::-1]

    second = follow(console, "/console/entries/", links(first)["next"])
    assert entry_ids(second) == ids[4:8]
    newer = follow(console, "/console/entries/", links(second)["prev"])
    assert entry_ids(newer) == ids[:4]
    assert "prev" in links(newer)  # the three added since are newer still
    assert entry_ids(follow(console, "/console/entries/", links(newer)["prev"])) == added


@pytest.mark.parametrize(
    "asked",
    [
        {"after": "not a cursor"},
        {"before": "%%%"},
        {"after": "x" * 5000},
        {"after": base64.urlsafe_b64encode(b'["99999999999999999999999"]').decode()},
        {"after": base64.urlsafe_b64encode(b'{"after": 3}').decode()},
        {"before": base64.urlsafe_b64encode(json.dumps(["-1e999"]).encode()).decode()},
        {"after": base64.urlsafe_b64encode(b"\xff\xfe").decode()},
    ],
)
def test_it_answers_a_cursor_that_does_not_read_with_the_newest_page(
    console, agent, roomy_limits, asked
):
    ids = [agent.post(question()).json()["id"] for _ in range(5)][::-1]
    response = console.get("/console/entries/", {**asked, "type": "question"})
    assert response.status_code == 200
    assert entry_ids(response) == ids[:4]
    assert b"did not read" in response.content


@pytest.mark.parametrize("page", ["audit", "deliveries", "operations"])
def test_it_answers_a_bad_cursor_on_every_list_with_its_newest_page(console, page):
    tricky = base64.urlsafe_b64encode(b'["2026-01-01T00:00:00", "zz"]').decode()
    for asked in ({"after": tricky}, {"before": "..."}, {"after": "x" * 300}):
        response = console.get(f"/console/{page}/", asked)
        assert response.status_code == 200


def test_it_finds_a_piece_of_title_or_body_in_any_case_through_the_index(
    console, agent, roomy_limits
):
    title = agent.post(question(title="Grüße aus KÖLN am Rhein", body="plain")).json()["id"]
    body = agent.post(question(body="a rare xyzzy-Plugh word")).json()["id"]
    agent.post(question(title="nothing here", body="abc and 50 percent"))
    in_reply = agent.post(reply(body, body="Zürich ÉTÉ noted")).json()["id"]

    def found(q: str, **params) -> list[int]:
        response = console.get("/console/entries/", {"q": q, **params})
        assert response.status_code == 200
        return entry_ids(response)

    assert found("köln") == [title]
    assert found("GRÜSSE") == [] and found("grüße") == [title]
    assert found("XYZZY-plugh") == [body]
    assert found("zürich été") == [in_reply]
    assert found("a_c") == [] and found("50%") == []  # LIKE's wildcards are plain text
    assert found('"xyzzy') == [] and found("yzzy-p") == [body]
    assert found("plugh", type="reply") == []


def test_it_never_finds_a_deleted_entrys_text(console, agent, roomy_limits):
    kept = agent.post(question(body="shared phrase, kept")).json()["id"]
    gone = agent.post(question(title="Unique secretive title", body="shared phrase")).json()["id"]
    moderation.entry_delete(actor="op", entry_id=gone, reason="spam")

    response = console.get("/console/entries/", {"q": "shared phrase"})
    assert entry_ids(response) == [kept]
    assert entry_ids(console.get("/console/entries/", {"q": "secretive"})) == []
    Entry.objects.filter(pk=kept).update(body="rewritten")
    assert entry_ids(console.get("/console/entries/", {"q": "shared phrase"})) == []
    assert entry_ids(console.get("/console/entries/", {"q": "rewritten"})) == [kept]


def test_it_refuses_a_search_shorter_than_three_characters_and_keeps_the_other_filters(
    console, agent, roomy_limits
):
    q = agent.post(question(title="ab ab")).json()["id"]
    r = agent.post(reply(q, body="ab")).json()["id"]
    response = console.get("/console/entries/", {"q": "ab", "type": "reply"})
    assert response.status_code == 200
    assert "Search needs at least 3 characters." in response.content.decode()
    assert entry_ids(response) == [r]


def test_it_says_a_search_shows_at_most_the_newest_thousand_matches(console, agent, roomy_limits):
    agent.post(question(title="needle"))
    page = console.get("/console/entries/", {"q": "needle"}).content.decode()
    assert "newest 1,000 matches at most" in page
    assert "entries, newest first" not in console.get("/console/entries/").content.decode()


def audit_at(moment, n: int) -> list[int]:
    return [
        AuditEvent.objects.create(created_at=moment, actor="alice", action="posting_pause",
                                  reason=f"event {i}").pk
        for i in range(n)
    ]


def test_it_pages_the_audit_log_through_ties_without_gaps_or_repeats(console):
    moment = timezone.now()
    tied = audit_at(moment, 7)
    earlier = audit_at(moment - timedelta(seconds=1), 2)
    # Newest first: the seven sharing the newer moment, by id descending, then the two.
    expected = tied[::-1] + earlier[::-1]
    AuditEvent.objects.create(created_at=moment, actor="bob", action="posting_resume")

    seen, response = [], console.get("/console/audit/", {"actor": "alice"})
    while True:
        seen += [event.pk for event in response.context["page"]]
        nav = links(response)
        assert all(parse_qs(urlsplit(h).query)["actor"] == ["alice"] for h in nav.values())
        if "next" not in nav:
            break
        response = follow(console, "/console/audit/", nav["next"])
    assert seen == expected
    oldest = follow(console, "/console/audit/", links(console.get(
        "/console/audit/", {"actor": "alice"}))["last"])
    assert [event.pk for event in oldest.context["page"]] == expected[-SIZE:]


def test_it_pages_the_audit_log_by_action_filter(console):
    for n in range(6):
        moderation.posting_pause(actor="alice", reason=f"pause {n}")
        moderation.posting_resume(actor="alice", reason=f"resume {n}")
    first = console.get("/console/audit/", {"action": "posting_resume"})
    assert [e.reason for e in first.context["page"]] == [f"resume {n}" for n in (5, 4, 3, 2)]
    second = follow(console, "/console/audit/", links(first)["next"])
    assert [e.reason for e in second.context["page"]] == ["resume 1", "resume 0"]


def deliveries(endpoint, *, state: str, moments: list) -> list[uuid.UUID]:
    made = [
        Delivery.objects.create(
            id=uuid.uuid4(), endpoint=endpoint, entry_id=n + 1, state=state,
            deadline_at=moment + timedelta(days=1), created_at=moment,
        )
        for n, moment in enumerate(moments)
    ]
    return [delivery.pk for delivery in made]


@pytest.fixture
def two_endpoints(settings):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"
    url = "https://hooks.example.com/in"
    return (
        moderation.endpoint_add(actor="op", name="crm", url=url)[0],
        moderation.endpoint_add(actor="op", name="log", url=url)[0],
    )


def test_it_pages_deliveries_by_state_and_endpoint_ties_included(console, two_endpoints):
    crm, other = two_endpoints
    now = timezone.now()
    same = [now] * 6
    failed = deliveries(crm, state="failed", moments=same + [now - timedelta(hours=1)] * 3)
    deliveries(crm, state="succeeded", moments=same)
    deliveries(other, state="failed", moments=same)
    expected = sorted(failed[:6], key=str, reverse=True) + sorted(failed[6:], key=str, reverse=True)

    seen = []
    response = console.get("/console/deliveries/", {"state": "failed", "endpoint": "crm"})
    while True:
        seen += [row.delivery.pk for row in response.context["rows"]]
        nav = links(response)
        for href in nav.values():
            asked = parse_qs(urlsplit(href).query)
            assert asked["state"] == ["failed"] and asked["endpoint"] == ["crm"]
        if "next" not in nav:
            break
        response = follow(console, "/console/deliveries/", nav["next"])
    assert seen == expected
    last = follow(console, "/console/deliveries/", links(response)["first"])
    oldest = follow(console, "/console/deliveries/", links(last)["last"])
    assert [row.delivery.pk for row in oldest.context["rows"]] == expected[-SIZE:]


def test_it_pages_the_inbox_and_bounds_its_count(console, two_endpoints, monkeypatch):
    crm, _ = two_endpoints
    now = timezone.now()
    unknown = deliveries(
        crm, state="outcome_unknown", moments=[now - timedelta(minutes=n) for n in range(10)]
    )
    page = console.get("/console/operations/")
    assert [row.delivery.pk for row in page.context["inbox"]] == unknown[:4]
    assert "(10)" in page.content.decode()
    oldest = follow(console, "/console/operations/", links(page)["last"])
    assert [row.delivery.pk for row in oldest.context["inbox"]] == unknown[-4:]
    older = follow(console, "/console/operations/", links(page)["next"])
    assert [row.delivery.pk for row in older.context["inbox"]] == unknown[4:8]

    # On the deliveries page its newest page only, with the way to the rest.
    listed = console.get("/console/deliveries/").content.decode()
    assert "pages through the rest" in listed

    monkeypatch.setattr(selectors, "INBOX_COUNTED_UP_TO", 9)
    assert "(more than 9)" in console.get("/console/operations/").content.decode()
    monkeypatch.setattr(selectors, "INBOX_COUNTED_UP_TO", 10)
    assert "(10)" in console.get("/console/operations/").content.decode()


# --- Plans ---------------------------------------------------------------------------------


@pytest.fixture
def board_of_thousands(agent, roomy_limits):
    """Three thousand entries written in bulk after one real post, a few hidden and
    deleted, the statistics fresh: enough rows for a planner to prefer an index."""
    template = Entry.objects.get(pk=agent.post(question()).json()["id"])
    now = timezone.now()
    rows = [
        Entry(
            type="question", title=f"Question number {n}", body=f"body text {n} " * 20,
            actor_name=f"agent-{n % 50}", submission_mode="autonomous", route="api",
            source=template.source, created_at=now, visible=n % 500 != 0,
            deleted_at=now if n % 700 == 0 else None,
        )
        for n in range(3000)
    ]
    Entry.objects.bulk_create(rows, batch_size=500)
    rare = Entry.objects.order_by("-id")[1500]
    Entry.objects.filter(pk=rare.pk).update(body="a quokka appears once")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return rare.pk


def plan(queryset) -> str:
    return queryset.explain()


def test_it_searches_and_filters_entries_through_their_indexes(board_of_thousands):
    search = selectors.entry_search(text="quokka").order_by("-id")[:5]
    hidden = selectors.entry_search(visibility="hidden").order_by("-id")[:5]
    deleted = selectors.entry_search(visibility="deleted").order_by("-id")[:5]
    by_actor = selectors.entry_search(actor="agent-7").order_by("-id")[:5]
    assert [entry.pk for entry in search] == [board_of_thousands]
    if is_postgres():
        assert "entry_hidden_newest" in plan(hidden)
        assert "entry_deleted_newest" in plan(deleted)
        assert "entry_actor_newest" in plan(by_actor)
        assert "Sort" not in plan(hidden) and "Sort" not in plan(by_actor)
        # Three thousand rows are read faster whole than by a trigram index, so the
        # planner is told to avoid that: with an index it cannot use (Django's icontains,
        # UPPER(body) LIKE ...), it would still scan every row.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
        searched = plan(search_index.text_matching(Entry.objects.all(), "quokka"))
        assert "entry_body_trigrams" in searched and "entry_title_trigrams" in searched
        assert "Seq Scan on board_entry" not in searched
    else:
        assert "board_entry_search VIRTUAL TABLE INDEX" in plan(search)
        assert "entry_hidden_newest" in plan(hidden)
        assert "entry_deleted_newest" in plan(deleted)
        assert "entry_actor_newest" in plan(by_actor)
        assert "TEMP B-TREE" not in plan(hidden) and "TEMP B-TREE" not in plan(by_actor)


@pytest.fixture
def questions_and_replies(agent, roomy_limits):
    """Three thousand entries as posts write them, a question then its reply: each type
    half of the board, so a type's own index is worth reading."""
    seeded = entries_seed(token=agent.token, count=3000, replies_per_question=1)
    analyzed()
    return seeded


@pytest.mark.parametrize(("kind", "index"), [("question", "entry_question_newest"),
                                             ("reply", "entry_reply_newest")])
def test_it_filters_entries_by_type_through_the_types_own_index_both_ways(
    console, questions_and_replies, kind, index
):
    # The statements each page sends, planned as the database runs them prepared: the
    # type's index is partial (on id, one a type), so the type must be in the statement.
    ids = getattr(questions_and_replies, f"{kind}_ids")
    with statements_sent() as sent:
        newest = console.get("/console/entries/", {"type": kind})
        oldest = follow(console, "/console/entries/", links(newest)["last"])
        older = follow(console, "/console/entries/", links(newest)["next"])
    assert entry_ids(newest) == ids[::-1][:SIZE]
    assert entry_ids(oldest) == ids[::-1][-SIZE:]
    assert entry_ids(older) == ids[::-1][SIZE:2 * SIZE]
    listed = [(sql, params) for sql, params in sent
              if 'FROM "board_entry"' in sql and 'ORDER BY "board_entry"."id"' in sql]
    assert len(listed) >= 3
    for sql, params in listed:
        plan = plan_prepared(sql, params)
        assert index in plan, plan
        if is_postgres():
            assert f"Index Scan Backward using {index}" in plan or (
                f"Index Scan using {index}" in plan), plan
            assert "Sort" not in plan and "Seq Scan on board_entry" not in plan, plan
        else:
            assert "TEMP B-TREE" not in plan, plan


def test_it_lists_deliveries_and_the_inbox_through_their_indexes(two_endpoints):
    crm, other = two_endpoints
    now = timezone.now()
    # The endpoint filtered by holds a tenth of the deliveries: the index that leads
    # with it is the plan, not the newest-first walk filtered (half of them were a
    # coin toss for the planner, depending on ANALYZE's sample).
    for endpoint, count in ((crm, 300), (other, 2700)):
        deliveries(endpoint, state="succeeded",
                   moments=[now - timedelta(seconds=n) for n in range(count)])
    deliveries(crm, state="outcome_unknown", moments=[now] * 5)
    DeliveryAttempt.objects.bulk_create(
        DeliveryAttempt(attempt_id=uuid.uuid4(), delivery=delivery, kind="send",
                        started_at=delivery.created_at - timedelta(days=3), status_code=200)
        for delivery in Delivery.objects.all()
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    listed = Delivery.objects.order_by("-created_at", "-id")[:5]
    inbox = selectors.delivery_inbox().order_by("-created_at", "-id")[:5]
    by_endpoint = Delivery.objects.filter(endpoint=crm).order_by("-created_at", "-id")[:5]
    sort = "Sort" if is_postgres() else "TEMP B-TREE"
    assert "delivery_newest" in plan(listed) and sort not in plan(listed)
    assert "delivery_state_newest" in plan(inbox) and sort not in plan(inbox)
    assert "delivery_endpoint_newest_id" in plan(by_endpoint) and sort not in plan(by_endpoint)
    recent_sends = DeliveryAttempt.objects.filter(started_at__gte=now - timedelta(days=1))
    assert "attempt_started" in plan(recent_sends.values("delivery__endpoint").annotate(
        n=Count("attempt_id")))


def test_it_keeps_the_sqlite_search_index_triggers_after_every_migration():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's search index only")
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE "
                       "'board_entry_search_%' ORDER BY name")
        names = [name for (name,) in cursor.fetchall()]
    assert names == [
        "board_entry_search_delete", "board_entry_search_insert", "board_entry_search_update",
    ]
