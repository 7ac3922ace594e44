"""The MCP door (SPEC 6): the Streamable HTTP `endpoint`, the `tools` table (each tool
one call of an answer in board.http.answers) and the `words` each result says to the
agent."""
