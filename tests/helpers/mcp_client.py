"""Driving ``edgeprof mcp`` as an agent does: the server started as a subprocess and spoken to through the MCP
SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def server_params(root: Path, *extra: str, command: list[str] | None = None, env: dict | None = None):
    from mcp import StdioServerParameters

    argv = command or [str(BIN / "edgeprof")]
    return StdioServerParameters(command=argv[0], args=[*argv[1:], "mcp", "--root", str(root), *extra],
                                 env=dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                                          **(env or {})),
                                 cwd=str(root))


def _answer(res):
    text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
    doc = res.structured_content if res.structured_content is not None else (None if res.is_error else json.loads(text))
    return res.is_error, doc, text


def run_calls(root: Path, calls: list[tuple[str, dict]], *extra: str, concurrent: bool = False,
              call_timeout: float = 300.0, **server):
    """(tool names, {name: description}, {name: annotations}, [(is_error, document, text)] per call). With
    ``concurrent`` every call is sent at once; each must answer within ``call_timeout`` seconds."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async def go():
        async with stdio_client(server_params(root, *extra, **server)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = await s.list_tools()

            async def one(name, args):
                return _answer(await asyncio.wait_for(s.call_tool(name, args), call_timeout))
            if concurrent:
                out = await asyncio.gather(*(one(n, a) for n, a in calls))
            else:
                out = [await one(n, a) for n, a in calls]
            run_calls.schemas = {t.name: t.input_schema for t in tools.tools}  # the last server's input schemas
            run_calls.output_schemas = {t.name: t.output_schema for t in tools.tools}
            return ([t.name for t in tools.tools], {t.name: t.description for t in tools.tools},
                    {t.name: t.annotations for t in tools.tools}, list(out))
    return asyncio.run(go())
