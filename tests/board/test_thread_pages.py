"""Public thread pages are bounded (issue 10): at most a page of replies, keyset pages
onward and back, and every reply's `url` still lands on the page that holds it.

The design: `?from=<reply id>` answers the page that starts at that reply, and a short
script sends a `#reply-<id>` that is not on the page to `?from=<id>#reply-<id>` (a
fragment never reaches the server). The landing is proven in Chromium in
tests/moderation/test_browser_thread_pages.py (where the browser fixtures live).
"""

import re

import pytest

from board.http.pages import REPLIES_PAGE_SIZE
from moderation import actions as moderation
from tests.conftest import question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

REPLY = re.compile(r'<article class="reply" id="reply-(\d+)">')


def thread_with_replies(poster, count: int) -> tuple[int, list[dict]]:
    thread = poster.post(question()).json()
    replies = [poster.post(reply(thread["id"], body=f"R{i}")).json() for i in range(count)]
    return thread["id"], replies


def shown(response) -> list[int]:
    assert response.status_code == 200
    return [int(found) for found in REPLY.findall(response.content.decode())]


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" rel="{rel}">', response.content.decode())
    return found.group(1).replace("&amp;", "&") if found else None


@pytest.mark.django_db
def test_it_renders_one_page_of_replies_and_walks_every_reply_once(anonymous):
    # given: a thread of two and a half pages
    thread_id, replies = thread_with_replies(anonymous, REPLIES_PAGE_SIZE * 2 + 5)
    ids = [r["id"] for r in replies]

    # when: a reader follows "Later replies" to the end
    first = anonymous.client.get(f"/threads/{thread_id}")
    pages, page = [shown(first)], first
    while link(page, "next"):
        page = anonymous.client.get(f"/threads/{thread_id}{link(page, 'next')}")
        pages.append(shown(page))

    # then: pages of at most one page size, every reply once, in order
    assert [len(p) for p in pages] == [REPLIES_PAGE_SIZE, REPLIES_PAGE_SIZE, 5]
    assert sum(pages, []) == ids
    assert link(first, "prev") is None
    assert f"Replies 1–{REPLIES_PAGE_SIZE} of {len(ids)}" in first.content.decode()
    assert f"Replies {2 * REPLIES_PAGE_SIZE + 1}–{len(ids)} of" in page.content.decode()


@pytest.mark.django_db
def test_it_goes_back_a_page_from_where_a_reader_started(anonymous):
    thread_id, replies = thread_with_replies(anonymous, REPLIES_PAGE_SIZE + 10)
    ids = [r["id"] for r in replies]

    started = anonymous.client.get(f"/threads/{thread_id}?from={ids[55]}")
    back = anonymous.client.get(f"/threads/{thread_id}{link(started, 'prev')}")

    assert shown(started) == ids[55:]
    assert shown(back) == ids[5:55]
    assert shown(anonymous.client.get(f"/threads/{thread_id}{link(back, 'prev')}")) == ids[:5]
    assert link(back, "next") is not None and link(back, "first") == f"/threads/{thread_id}"


@pytest.mark.django_db
def test_every_replys_url_has_a_page_that_starts_at_it(anonymous):
    thread_id, replies = thread_with_replies(anonymous, REPLIES_PAGE_SIZE + 20)
    last = replies[-1]
    path, fragment = last["url"].removeprefix("http://testserver").split("#")
    assert (path, fragment) == (f"/threads/{thread_id}", f"reply-{last['id']}")

    # The first page does not hold it; the page the script asks for starts with it.
    assert last["id"] not in shown(anonymous.client.get(path))
    assert shown(anonymous.client.get(f"{path}?from={last['id']}"))[0] == last["id"]


@pytest.mark.django_db
def test_a_reply_no_longer_public_starts_the_page_at_the_next_one(anonymous):
    thread_id, replies = thread_with_replies(anonymous, 3)
    moderation.entry_hide(actor="op", entry_id=replies[1]["id"], reason="off topic")

    page = anonymous.client.get(f"/threads/{thread_id}?from={replies[1]['id']}")

    assert shown(page) == [replies[2]["id"]]
    assert b"R1" not in page.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    ["from=abc", "from=-3", "from=\u0663", "from=99999999999999999999999", "cursor=!!",
     "before=bm90LWpzb24", "before=eyJhZnRlciI6LTF9"],
)
def test_nonsense_paging_answers_404_not_500(anonymous, query):
    thread_id, _ = thread_with_replies(anonymous, 1)

    assert anonymous.client.get(f"/threads/{thread_id}?{query}").status_code == 404


@pytest.mark.django_db
def test_a_page_takes_as_many_queries_for_a_long_thread_as_for_a_short_one(
    anonymous, django_assert_max_num_queries
):
    short_id, _ = thread_with_replies(anonymous, 2)
    long_id, _ = thread_with_replies(anonymous, REPLIES_PAGE_SIZE * 3)

    with django_assert_max_num_queries(5):
        short = anonymous.client.get(f"/threads/{short_id}")
    with django_assert_max_num_queries(5):
        long = anonymous.client.get(f"/threads/{long_id}")

    assert len(shown(short)) == 2 and len(shown(long)) == REPLIES_PAGE_SIZE
