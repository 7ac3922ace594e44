"""Every console page laid out in Chromium at a desk (1280 px) and a phone (390 px), with
the data a board that has run a while shows (issue 32): nothing sticks out of its box or
the viewport sideways, no word that would fit on a line is split across two, a figure
stays beside its unit, no control touches the next one, and the charts' text is neither
larger than the body text nor cut off. Screenshots land in tests/artifacts/layout-*.png.

The checks run in the page (LAYOUT below) and name what they found, so a failure reads as
a list of culprits: "tokens at 390 px: word 'my-agent' split in TH ...".
"""

from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from maintenance.activity import activity_roll_up
from maintenance.deliveries.models import Delivery
from maintenance.forecast import forecast_record
from maintenance.models import MaintenanceRun
from moderation import actions as moderation
from moderation import erasure
from moderation.access import two_factor
from tests.chromium import ARTIFACTS
from tests.conftest import question, reply
from tests.maintenance.conftest import (  # noqa: F401 (fixtures)
    delivery_settings,
    drive,
    endpoint_for,
    receiver,
)
from tests.maintenance.webhook_receiver import Behaviour
from tests.moderation.test_browser import log_in
from tests.moderation.test_browser_phone_width import filled
from tests.moderation.two_factor_helpers import code_for

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings", "roomy_limits"),
]

WIDTHS = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

# One pass over the page, in the page: a list of problems, each one line naming its element.
LAYOUT = (Path(__file__).parent / "layout_checks.js").read_text()


def board_that_has_run_a_while(receiver) -> dict:  # noqa: F811
    """Agents with hyphenated names and entries, holds, a policy the console set, an
    erasure done, deliveries lost, marked and listed, one purge run: what an operator's
    pages show on an ordinary day. Returns the ids the pages are opened with."""
    payloads = [question(title="A question with a title long enough to wrap " * 3)
                for _ in range(3)]
    entry_ids = [
        board.entry_post(
            token=None, address="127.0.0.1", route="api", fields=entry_fields_read(payload)
        ).entry.pk
        for payload in payloads
    ]
    filled(receiver, entry_ids)  # a token, hide, pause, a lost delivery, one run

    _, token = moderation.token_issue(actor="operator", name="my-agent", hourly_limit=20)
    asked = board.entry_post(
        token=token, address="127.0.0.1", route="api",
        fields=entry_fields_read(question(title="Why did my retry answer 409?")),
    )
    for _ in range(2):
        board.entry_post(token=token, address="127.0.0.1", route="api",
                         fields=entry_fields_read(reply(asked.entry.pk)))
    _, spam = moderation.token_issue(actor="operator", name="spam-agent")
    board.entry_post(
        token=spam, address="127.0.0.1", route="api", fields=entry_fields_read(question())
    )
    erasure.principal_erase(actor="operator", name="spam-agent", reason="a spam flood")

    moderation.retention_set(actor="operator", policy="entry", seconds=14 * 86400,
                             reason="a shorter promise")
    moderation.retention_set(actor="operator", policy="entry", seconds=7 * 86400,
                             principal="my-agent")
    moderation.hold_add(actor="operator", reason="legal asked to keep it",
                        thread_id=asked.entry.pk)
    moderation.hold_add(actor="operator", reason="an investigation", principal="my-agent")

    blackhole = endpoint_for(receiver, name="blackhole")
    receiver.script.append(Behaviour(close=True))
    marked = board.entry_post(
        token=None, address="127.0.0.1", route="api", fields=entry_fields_read(question())
    )
    delivery = drive(Delivery.objects.get(entry_id=marked.entry.pk, endpoint=blackhole))
    moderation.delivery_mark(actor="operator", delivery_id=delivery.pk, state="failed",
                             reason="the receiver says it never came")
    MaintenanceRun.objects.create(
        job="purge-deletion-records", started_at=timezone.now() - timedelta(hours=1),
        finished_at=timezone.now() - timedelta(hours=1), duration_seconds=0.02,
        counts={"receipts": 20},
    )
    # What beat keeps: the dashboard's rollup and the retention page's forecast.
    activity_roll_up(now=timezone.now())
    forecast_record(now=timezone.now())
    return {
        "question": asked.entry.pk,
        "request_id": payloads[1]["request_id"],
        "erasure": erasure.Erasure.objects.get(principal__name="spam-agent").pk,
    }


def enrolled_operator() -> None:
    """An account with a confirmed authenticator, for the login's code step."""
    user = get_user_model().objects.create_superuser("enrolled", "", "enrolled-password")
    device = two_factor.device_unconfirmed_new(user=user)
    assert two_factor.device_confirm(device=device, code=code_for(
        two_factor.secret_base32(device))) is not None


# A tall page is also saved in pieces of this height, each readable when looked at.
PIECE = 1400


def layout_problems(page, viewport: dict, name: str, label: str) -> list[str]:
    page.screenshot(path=str(ARTIFACTS / f"layout-{label}-{name}.png"), full_page=True)
    height = page.evaluate("document.documentElement.scrollHeight")
    if height > 2 * PIECE:
        for n, top in enumerate(range(0, height, PIECE), start=1):
            page.screenshot(
                path=str(ARTIFACTS / f"layout-{label}-{name}-{n}.png"), full_page=True,
                clip={"x": 0, "y": top, "width": viewport["width"],
                      "height": min(PIECE, height - top)},
            )
    return page.evaluate(LAYOUT)


def test_every_console_page_lays_out_at_a_desk_and_on_a_phone(
    playwright_chromium, live_server, browser_page, operator, receiver, monkeypatch  # noqa: F811
):
    # Two rows a page: every list shows its Newest/Newer/Older/Oldest links.
    for module in ("entries", "audit", "deliveries"):
        monkeypatch.setattr(f"moderation.console.{module}.PAGE_SIZE", 2)
    ids = board_that_has_run_a_while(receiver)
    enrolled_operator()
    ARTIFACTS.mkdir(exist_ok=True)
    question_id = ids["question"]
    pages = {
        "dashboard": "/console/",
        "posting": "/console/posting/",
        "entries": "/console/entries/",
        "thread": f"/console/entries/{question_id}/",
        "operations": f"/console/operations/?request_id={ids['request_id']}",
        "deliveries": "/console/deliveries/",
        "retention": "/console/retention/",
        "tokens": "/console/tokens/",
        "audit": "/console/audit/",
        "audit-oldest": "/console/audit/?oldest=1",
        "entries-oldest-search": "/console/entries/?q=question&oldest=1",
        "entries-bad-cursor": "/console/entries/?after=not-a-cursor&q=ab",
        "two-factor": "/console/2fa/",
        "delete": f"/console/entries/{question_id}/delete?reason=spam",
        "erase": "/console/tokens/erase?name=my-agent&reason=a+spam+flood",
        "erasure": f"/console/erasures/{ids['erasure']}/",
    }
    problems = {}
    log_in(browser_page)
    for label, viewport in WIDTHS.items():
        browser_page.set_viewport_size(viewport)
        for name, url in pages.items():
            # Asked first with the page's cookies: an answer with no page (a 405 with no
            # body) would leave the browser on its own error page.
            status = browser_page.request.get(url).status
            if status != 200:
                problems[f"{name} at {viewport['width']} px"] = [f"{url} answered {status}"]
                continue
            browser_page.goto(url)
            found = layout_problems(browser_page, viewport, name, label)
            if found:
                problems[f"{name} at {viewport['width']} px"] = found

    # Before logging in: the login page, and the code step of an enrolled account.
    _, browser = playwright_chromium
    for label, viewport in WIDTHS.items():
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        page = context.new_page()
        page.goto("/console/login/")
        if found := layout_problems(page, viewport, "login", label):
            problems[f"login at {viewport['width']} px"] = found
        page.get_by_label("Username").fill("enrolled")
        page.get_by_label("Password").fill("enrolled-password")
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("heading", name="Two-factor code").wait_for()
        if found := layout_problems(page, viewport, "login-code", label):
            problems[f"login code at {viewport['width']} px"] = found
        context.close()

    assert problems == {}, "\n".join(
        f"{where}:\n  " + "\n  ".join(found) for where, found in problems.items()
    )
