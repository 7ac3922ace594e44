"""An intent begun over one transport and resumed over the other is one entry, with the
route of its first attempt. (Faults and refusals over MCP: test_faults, test_refusals and
test_not_final run each of their scenarios over both transports.)"""

import pytest
from live import client_for, entries_for, new_id
from settle_client import Settled, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("begun, resumed", [("http", "mcp"), ("mcp", "http")])
def test_an_intent_begun_over_one_transport_is_resumed_over_the_other_as_one_entry(
    proxy, token, journal, begun, resumed
):
    proxy.reset(["drop"] * 50)
    request_id = new_id()
    with pytest.raises(Unconfirmed):
        client_for(proxy, token, journal, begun, deadline=3.0).post_question(
            "Begun elsewhere?", f"identity {request_id}", actor={"name": "mcp-test"},
            request_id=request_id)
    proxy.reset()

    [outcome] = client_for(proxy, token, journal, resumed).resume()

    assert isinstance(outcome, Settled)
    assert outcome.how == "replayed"
    [entry] = entries_for(request_id)
    first_route = "api" if begun == "http" else "mcp"
    assert (outcome.entry["id"], outcome.entry["route"], entry.route) == (
        entry.id, first_route, first_route)
