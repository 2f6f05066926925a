"""The MCP server: the dataset, the estimator and the linter for AI assistants, on the official ``mcp`` SDK.

``ecocompute mcp`` serves it over stdio (what Claude Desktop and Cursor start) or streamable HTTP
(``--http HOST:PORT``). Every tool is read-only and typed; every answer carries its provenance.
"""
