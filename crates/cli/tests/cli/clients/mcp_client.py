"""Drives `cairn mcp` with the official Python MCP client, as another agent would, and prints one
JSON line per check for the Rust test to compare."""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def say(**fields):
    print(json.dumps(fields), flush=True)


def text(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def main():
    server = StdioServerParameters(
        command=os.environ["CAIRN_EXE"],
        args=["mcp"],
        env={**os.environ, "CAIRN_HOME": os.environ["CAIRN_HOME"]},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            say(server=init.server_info.name, instructions="search_memory" in (init.instructions or ""))
            tools = await session.list_tools()
            say(tools=sorted(t.name for t in tools.tools))
            added = await session.call_tool("remember", {"text": "The staging database for Orchard runs on port 5433."})
            say(remembered=text(added).startswith("Remembered (memory "), error=added.is_error)
            found = await session.call_tool("search_memory", {"query": "which port does the Orchard staging database use"})
            say(found="port 5433" in text(found), error=found.is_error)
            empty = await session.call_tool("search_memory", {"query": "  "})
            say(empty_query=text(empty), error=empty.is_error)
            resumed = await session.call_tool("resume_episode", {"words": "zebra quantum lighthouse"})
            say(resumed=text(resumed), error=resumed.is_error)


asyncio.run(main())
