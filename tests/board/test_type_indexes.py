"""The public list of threads, newest first, reads the questions' own index in the
list's order on both engines, through HTTP, its page and MCP alike, with its parameters
bound as the database prepares them: the type's indexes are partial, one a type, on id
alone (16 bytes of WAL a post less than one on (type, id), docs/write-path.md), so the
statement must say the type for a planner to use them."""

import pytest

from tests.board.mcp_support import tool_result
from tests.conftest import is_postgres
from tests.query_plans import analyzed, plan_prepared, statements_sent
from tests.seeding import entries_seed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]

NEWEST_FIRST = 'ORDER BY "board_entry"."id" DESC'


@pytest.fixture
def board_of_thousands(agent):
    """Three thousand entries, a question then its reply: enough rows for a planner to
    prefer an index, with replies as many as questions to pass over without one."""
    seeded = entries_seed(token=agent.token, count=3000, replies_per_question=1)
    analyzed()
    return seeded


def list_plans(read) -> list[str]:
    with statements_sent() as sent:
        read()
    listed = [(sql, params) for sql, params in sent if NEWEST_FIRST in sql]
    assert listed, "the list sent no statement in its order"
    return [plan_prepared(sql, params) for sql, params in listed]


def assert_read_by_the_questions_index(plans: list[str]) -> None:
    for plan in plans:
        assert "entry_question_newest" in plan, plan
        if is_postgres():
            assert "Index Scan Backward using entry_question_newest" in plan, plan
            assert "Sort" not in plan and "Seq Scan on board_entry" not in plan, plan
        else:
            assert "TEMP B-TREE" not in plan, plan


def test_the_api_lists_threads_through_the_questions_index(board_of_thousands, anonymous):
    def read():
        page = anonymous.get("/api/v1/threads?limit=5").json()
        assert [t["id"] for t in page["items"]] == board_of_thousands.question_ids[::-1][:5]
        cursor = anonymous.get(f"/api/v1/threads?limit=5&cursor={page['next_cursor']}")
        assert [t["id"] for t in cursor.json()["items"]] == (
            board_of_thousands.question_ids[::-1][5:10]
        )

    assert_read_by_the_questions_index(list_plans(read))


def test_the_threads_page_lists_them_through_the_questions_index(board_of_thousands, client):
    def read():
        assert client.get("/threads/").status_code == 200

    assert_read_by_the_questions_index(list_plans(read))


def test_mcp_lists_threads_through_the_questions_index(board_of_thousands, agent):
    def read():
        listed = tool_result(agent.client, "list_threads", {"limit": 3}, token=agent.token)
        assert [t["id"] for t in listed["structuredContent"]["data"]["items"]] == (
            board_of_thousands.question_ids[::-1][:3]
        )

    assert_read_by_the_questions_index(list_plans(read))
