"""``edgeprof mcp``: edgeprof's commands as tools of a Model Context Protocol server (stdio), for coding agents.

Needs the ``mcp`` extra (the official MCP Python SDK). This module is the thin adapter: the tools are the
functions of :mod:`edgeprof.server.tools` (their signatures and docstrings are what the agent sees), and every
call runs in a confined worker process with a time and memory budget (:mod:`edgeprof.server.worker`): nothing
outside the roots is read or written — arguments, files found in folders, paths named by manifests — and a
call that hangs or grows is stopped without stopping the server. The server is read-only unless started with
``--allow-write``: only then are the tools that write files (``analyze``, ``report``) offered. An edgeprof
error is a tool error carrying edgeprof's one-line message. The lines people read — a tool error and each
answer's ``summary`` — are escaped as the CLI's are (:func:`edgeprof.conventions.shown`); the ``result`` keeps
raw names, as JSON does.
"""

from __future__ import annotations

import functools
import json
import os
import sys

from ..errors import MissingExtraError, UsageError


def build(roots: list[str], allow_write: bool = False, *, timeout: float | None = None, memory: int | None = None):
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, TextContent, ToolAnnotations
    except ImportError:
        raise MissingExtraError("mcp", "edgeprof mcp") from None
    from ..conventions import TOOL_VERSION as __version__
    from ..conventions import shown
    from ..render import json_schema
    from ..server import tools
    from ..server.worker import DEFAULT_MEMORY, DEFAULT_TIMEOUT, CallFailed, CannotStart, Pool

    roots = list(roots) or [os.getcwd()]
    for r in roots:
        if not os.path.isdir(r):
            raise UsageError(f"--root {r}: not a folder")
    pool = Pool(roots, allow_write=allow_write, timeout=timeout or DEFAULT_TIMEOUT, memory=memory or DEFAULT_MEMORY)
    server = MCPServer("edgeprof", version=__version__,
                       instructions="edgeprof: ExecuTorch, XNNPACK and Apple Neural Engine profiles as findings with "
                                    "evidence. Every tool returns the command's JSON. Paths must lie inside the roots; "
                                    f"each call has a {pool.timeout:g} s time budget.")

    def register(fn):
        @functools.wraps(fn)
        def call(**kwargs):
            try:
                doc = pool.call(fn.__name__, kwargs)
            except CallFailed as e:
                raise ToolError(shown(str(e))) from None  # (every tool error leaves here: escaped once)
            # the document as structured content (checked by clients against the published output schema) and
            # as its JSON text
            return CallToolResult(content=[TextContent(type="text", text=json.dumps(doc, ensure_ascii=False))],
                                  structured_content=doc)
        call.__signature__ = _described(fn, tools.ARGS)  # type: ignore[attr-defined]  # read by inspect.signature
        writes = fn.__name__ in tools.WRITE_TOOLS
        server.tool(description=" ".join(fn.__doc__.split()),
                    annotations=ToolAnnotations(readOnlyHint=not writes, destructiveHint=False,
                                                idempotentHint=True, openWorldHint=False))(call)
        # the output schema: the declared document types (edgeprof schema), not the SDK's view of ``dict``
        server._tool_manager.get_tool(fn.__name__).fn_metadata.output_schema = \
            json_schema.tool_output_schema(tools.OUTPUT_KINDS[fn.__name__])

    for name, fn in tools.TOOLS.items():
        if allow_write or name not in tools.WRITE_TOOLS:
            register(fn)
    try:
        pool.warm()  # a budget no worker can start under is refused here, in one line
    except CannotStart as e:
        raise UsageError(str(e)) from None
    server.edgeprof_pool = pool
    return server


def _described(fn, args: dict):
    """The tool's signature with each argument's description (what the agent sees in the input schema)."""
    import inspect
    import typing

    from pydantic import Field

    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)
    params = [p.replace(annotation=typing.Annotated[hints[p.name], Field(description=args.get(p.name, p.name))])
              for p in sig.parameters.values()]
    return sig.replace(parameters=params, return_annotation=hints.get("return", dict))


def serve(roots: list[str], allow_write: bool = False, *, timeout: float | None = None, memory: int | None = None) -> None:
    server = build(roots, allow_write, timeout=timeout, memory=memory)
    try:
        server.run("stdio")
    finally:
        server.edgeprof_pool.close()
        print("edgeprof mcp: stopped", file=sys.stderr)
