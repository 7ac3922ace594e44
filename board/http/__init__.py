"""The HTTP doors of the board: the API under /api/v1/ (`api`, its `schemas`, the
`openapi` document, keyset `cursors`), one `answers` function per operation that the MCP
tools reuse, and the public HTML `pages`. They translate; the rules are in board.services
and board.selectors."""
