"""Outbound deliveries (SPEC 9): the outbox written with the entry, and the one layer that
retries. A room of its own inside the `maintenance` app (its models keep that app's label,
so tables and migrations are the app's).

Design note
-----------
Telling a webhook endpoint about a new entry is the one side effect Settle has outside
its own database, so it is the one place where an outcome can be truly unknown: a
request may have landed when its answer was lost. The mechanism is built so that every
such moment leaves a row someone can inspect, and so that nothing claims more than it
knows.

* **Outbox in the entry's transaction.** `board` asks for `entry_companions` inside the
  transaction that creates an entry (a replay asks nothing); the receiver here answers
  with one `INSERT ... SELECT` of a `Delivery` per enabled endpoint, which the engine
  runs in the entry's own statement on PostgreSQL, so the entry and its deliveries
  commit together or not at all, in no extra round trip. The send task is queued on
  commit, and a broker outage only costs a log line: the minute sweep finds what is due.
* **Intent before the side effect.** An attempt first wins a compare-and-set from
  `accepted` to `running` (writing its own attempt id and a lease ending at database
  time now + timeout + margin) and inserts its attempt row, in one short transaction;
  only then does the request leave, with no transaction open. A worker that dies
  leaves a `running` row whose lease ends; the sweep then treats it as "the request
  left and no answer came".
* **Every change is a compare-and-set** on (state, current attempt), written once
  (`Delivery._moved`, under the transitions), so a late result never overwrites an
  operator's decision, and a redelivered or duplicated task finds the state moved on and
  does nothing: Celery is a doorbell, not a retry layer. (The rules applied to many rows
  at once, cancel for deleted entries and deadlines, pick their rows by state in the
  statement that changes them.)
* **What happens after an ambiguous send** depends on what the receiver supports
  (SPEC 9): `dedupe` gets the next attempt with the same id, `lookup` is asked first,
  `none` goes to `outcome_unknown` for an operator. Cancelling never claims `cancelled`
  for something that may have been sent.
* **One clock per question.** Leases and due times compare against the database's
  `now`; an attempt's own budget uses the monotonic clock (`webhooks`).

The modules
-----------
* `models`: `Endpoint`, `Delivery` (the state machine: its transitions, each one
  compare-and-set), `DeliveryAttempt`; `rules`: what an answer counts as, the schedule.
* `outbox`: the rows written with the entry, and the cancel rule when entries go.
* `doorbell`: the send messages to Celery, batched per process; `tasks`: the send
  tasks and beat's sweep, thin.
* `attempts`: one attempt (claim, request, settle); `sweep`: what the send task and beat's
  minute do; `webhooks`: the request itself (address rules, signing, the watchdog).
* `endpoints` and `actions`: what operators do (moderation calls them and audits);
  `selectors`: what the console reads; `rates`: the endpoints' success rates, tallied per
  minute by beat for the console; `metrics`: the `/metrics` series.

The order is one way: tasks -> sweep -> attempts -> webhooks, models, and tasks -> rates
-> selectors, models; the doorbell names its tasks instead of importing them.
"""
