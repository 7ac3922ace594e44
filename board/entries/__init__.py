"""What an entry is, whichever door it came through (SPEC 5.1, 5.2).

- `fields`: a posted entry's fields (`EntryFields`) and their text rules, the one place a
  post is checked; `RefusedShape`, a post whose shape step 1 refused, as a door read it.
- `problems`: reading an object with a pydantic class, its refusals in SPEC 5's words.
- `stream_safe`: the bound on combining marks checked before NFC (SPEC 11.6).
- `objects`: an entry as it is answered and delivered, its timestamps.
- `cursors`: the public lists' opaque keyset cursors.
- `signals`: what the board tells the apps to its right about entries.

The doors (board/http, board/mcp) read the wire into these; nothing here reads bytes,
a request or a tool call.
"""
