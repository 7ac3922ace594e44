"""The journal: private files, no token, the intent committed before the first byte."""

import os
import sqlite3
import stat

import pytest
from live import entries_for, new_id
from settle_client import Client, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_journal_and_its_folders_are_private_whatever_the_umask(proxy, token, tmp_path):
    journal = tmp_path / "deep" / "state" / "journal.sqlite3"
    previous = os.umask(0)
    try:
        client = Client(proxy.url, token=token, journal=journal, deadline=3.0)
        client.post_question("Private?", f"identity {new_id()}", actor={"name": "j"})
    finally:
        os.umask(previous)

    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(journal.parent.parent.stat().st_mode) == 0o700
    for side in journal.parent.iterdir():
        assert stat.S_IMODE(side.stat().st_mode) == 0o600, side


def test_the_journal_never_holds_the_token(proxy, token, journal):
    client = Client(proxy.url, token=token, journal=journal, deadline=3.0)
    client.post_question("Secret?", f"identity {new_id()}", actor={"name": "j"})

    assert token.encode() not in journal.read_bytes()


def test_the_intent_is_committed_before_the_first_byte_is_sent(proxy, token, journal):
    proxy.reset(["hold"] * 10)
    request_id = new_id()
    seen_when_forwarded = []

    def look() -> None:
        proxy.seen.forwarded.wait(5)
        with sqlite3.connect(journal) as db:
            seen_when_forwarded.extend(db.execute(
                "SELECT request_id, base_url, state FROM intents").fetchall())

    import threading
    watcher = threading.Thread(target=look)
    watcher.start()
    client = Client(proxy.url + "/", token=token, journal=journal, deadline=1.5,
                    attempt_timeout=1.0)
    with pytest.raises(Unconfirmed):
        client.post_question("Journaled?", f"identity {request_id}", actor={"name": "j"},
                             request_id=request_id)
    watcher.join()

    assert seen_when_forwarded == [(request_id, proxy.url, "pending")]
    assert token.encode() not in journal.read_bytes()


def test_the_side_files_sqlite_makes_are_private_whatever_the_umask(proxy, token, tmp_path):
    """SQLite's rollback journal (and a WAL and its index, should anyone switch the file to
    WAL) exist only while a transaction writes: catch them in the middle of one."""
    journal = tmp_path / "state" / "journal.sqlite3"
    Client(proxy.url, token=token, journal=journal)
    previous = os.umask(0)
    try:
        modes = {}
        for mode in ("DELETE", "WAL"):
            db = sqlite3.connect(journal, isolation_level=None)
            db.execute(f"PRAGMA journal_mode={mode}")
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO intents (base_url, token_digest, request_id, type, body,"
                       f" created_at) VALUES ('u', 'd', '{mode}', 'question', '{{}}', 'now')")
            modes.update({p.name: stat.S_IMODE(p.stat().st_mode)
                          for p in journal.parent.iterdir()})
            db.execute("ROLLBACK")
            db.close()
    finally:
        os.umask(previous)

    assert set(modes) == {journal.name, f"{journal.name}-journal", f"{journal.name}-wal",
                          f"{journal.name}-shm"}
    assert set(modes.values()) == {0o600}


def test_the_default_path_comes_from_settle_journal(proxy, token, tmp_path, monkeypatch):
    monkeypatch.setenv("SETTLE_JOURNAL", str(tmp_path / "from-env.sqlite3"))

    Client(proxy.url, token=token).post_question("Where?", f"identity {new_id()}",
                                                 actor={"name": "j"})

    assert (tmp_path / "from-env.sqlite3").exists()


def test_pending_is_per_base_url_and_token_and_anonymous_is_its_own(tmp_path):
    journal = tmp_path / "journal.sqlite3"
    nowhere = "http://127.0.0.1:9/"
    scopes = {
        "a": Client(nowhere, token="token-a", journal=journal, deadline=0),
        "anonymous": Client(nowhere, journal=journal, deadline=0),
        "elsewhere": Client("http://127.0.0.1:10", token="token-a", journal=journal,
                            deadline=0),
    }
    made = {}
    for name, client in scopes.items():
        with pytest.raises(Unconfirmed) as pending:
            client.post_question("Whose?", f"from {name}", actor={"name": "j"})
        made[name] = pending.value.request_id

    for name, client in scopes.items():
        assert [p.request_id for p in client.pending()] == [made[name]]
    assert Client(nowhere, token="token-b", journal=journal).pending() == []


def test_a_journaled_settled_id_with_the_same_content_is_a_replay_and_sends_nothing(
    proxy, token, journal, settle_server, transport
):
    from live import client_for
    from settle_client.transports import HttpTransport

    request_id = new_id()
    lookups = HttpTransport(f"http://127.0.0.1:{settle_server}", token)

    def ask(client):
        return client.post_question("Twice?", f"identity {request_id}", actor={"name": "j"},
                                    request_id=request_id)

    first = ask(Client(proxy.url, token=token, journal=journal, transport=transport))
    proxy.reset()
    again = ask(client_for(proxy, token, journal, transport))
    also = ask(Client(proxy.url, token=token, journal=journal, transport=transport))

    assert (first.how, first.replayed, first.entry["replayed"]) == ("created", False, False)
    for answered in (again, also):
        assert (answered.how, answered.replayed) == ("replayed", True)
        assert answered.entry["id"] == first.entry["id"]
        assert answered.entry["replayed"] is True
    assert proxy.seen.requests == 0
    assert lookups.get_operation(request_id, timeout=5).data["attempts"] == 1
    assert len(entries_for(request_id)) == 1


def test_a_journaled_refused_id_is_refused_again_from_the_journal_with_its_message(
    proxy, token, journal
):
    from settle_client import Refused

    def ask(client):
        return client.post_reply(987654321, f"identity {request_id}", actor={"name": "j"},
                                 request_id=request_id)

    request_id = new_id()
    with pytest.raises(Refused) as first:
        ask(Client(proxy.url, token=token, journal=journal))
    proxy.reset()
    with pytest.raises(Refused) as again:
        ask(Client(proxy.url, token=token, journal=journal))

    assert again.value.as_json() == first.value.as_json()
    assert first.value.message == first.value.details["message"] != ""
    assert proxy.seen.requests == 0
