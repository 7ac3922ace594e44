"""A reply's `url` lands on that reply in a real browser (issue 10): the thread page's
script sends a `#reply-<id>` that is not on the page to `?from=<id>#reply-<id>`.

Here rather than in tests/board because the browser fixtures (one Chromium for the whole
run) live in this folder's conftest."""

import pytest

from board.http.pages import REPLIES_PAGE_SIZE
from moderation import actions as moderation
from tests.board.test_thread_pages import thread_with_replies

pytestmark = pytest.mark.usefixtures("roomy_limits")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_replys_url_lands_on_that_reply_in_a_browser(browser_page, anonymous, live_server):
    # given: a reply on the third page of its thread
    thread_id, replies = thread_with_replies(anonymous, REPLIES_PAGE_SIZE * 2 + 5)
    target = replies[REPLIES_PAGE_SIZE * 2 + 2]
    path = target["url"].removeprefix("http://testserver")

    # when: a reader opens its url
    browser_page.goto(path)
    browser_page.wait_for_url(f"**/threads/{thread_id}?from={target['id']}#reply-{target['id']}")

    # then: it is on the page, scrolled into view
    article = browser_page.locator(f"#reply-{target['id']}")
    assert article.is_visible() and "R102" in article.inner_text()
    assert article.evaluate("e => { const r = e.getBoundingClientRect();"
                            " return r.top >= 0 && r.top < window.innerHeight; }")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_url_on_the_first_page_or_of_a_hidden_reply_stays_put(browser_page, anonymous):
    thread_id, replies = thread_with_replies(anonymous, 3)
    moderation.entry_hide(actor="op", entry_id=replies[1]["id"], reason="off topic")

    browser_page.goto(f"/threads/{thread_id}#reply-{replies[0]['id']}")
    browser_page.wait_for_load_state()
    assert browser_page.url.endswith(f"/threads/{thread_id}#reply-{replies[0]['id']}")

    # A hidden reply's url asks once for its page, then stays: no loop.
    browser_page.goto(f"/threads/{thread_id}#reply-{replies[1]['id']}")
    browser_page.wait_for_url(f"**?from={replies[1]['id']}#reply-{replies[1]['id']}")
    browser_page.wait_for_timeout(300)
    assert browser_page.url.endswith(f"?from={replies[1]['id']}#reply-{replies[1]['id']}")
    assert browser_page.locator("article.reply").count() == 1
