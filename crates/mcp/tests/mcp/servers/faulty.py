"""A deliberately faulty MCP server on stdio, for the client's bad-input tests. Its first argument
picks the fault:

  garbage  prints lines that are not JSON-RPC on stdout, then behaves
  hang     never answers the handshake
  die      answers the handshake and the listing, then exits in the middle of its first call
           (the file named by the second argument remembers that it died once)
  big      answers a call with 50 MB of text
  stderr   writes to stderr and exits at once
  slow     reads nothing for the seconds of its second argument (5 by default), then behaves
           (a server whose first start downloads it, as npx does)

Any other mode behaves. Every mode lists two tools: `work` (marked read-only) and `change` (not
marked), and answers a call of either with "worked".
"""

import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else ""


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if mode == "stderr":
    sys.stderr.write("faulty: cannot find my config file /nowhere/config.json\n")
    sys.stderr.flush()
    sys.exit(3)
if mode == "hang":
    time.sleep(600)
if mode == "slow":
    time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 5)
if mode == "garbage":
    print("Server starting... (this line is not JSON-RPC)", flush=True)
    print("{not json at all", flush=True)

for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "faulty", "version": "1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "work",
            "description": "Does some work.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": True},
        }, {
            "name": "change",
            "description": "Changes something.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}})
    elif method == "tools/call":
        if mode == "die" and not os.path.exists(sys.argv[2]):
            open(sys.argv[2], "w").close()
            sys.stderr.write("faulty: segmentation fault (simulated)\n")
            sys.stderr.flush()
            sys.exit(139)
        text = "x" * (50 * 1024 * 1024) if mode == "big" else "worked"
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
