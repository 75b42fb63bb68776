#!/usr/bin/env python3
"""A minimal MCP server that meets agentura's file contract, in Python's
standard library alone (no SDK, no pip package): streamable HTTP, MCP
2025-11-25 through initialize, one tool that takes a text file and hands
back a new one.

    python3 contract_server.py [--port 8010] [--break MODE[,MODE...]]

It is what docs/other-languages.md walks through, and what `agentura check`
is tested against. --break breaks one point of the contract on purpose
(markers, mcp-file-object, inline, url, fields, links, size, digest,
headers, token), so the test can see the check name it.

What the contract asks of it (docs/contract.md):
  * the tool's file parameter is marked "x-file": true (and "x-mcp-file");
  * it takes the file as a data: URI or an http(s) URL, plain or in an
    object {"name", "content"}, and declares a URI string (SEP-2631 §5);
  * a produced file is announced in structuredContent as
    {download_url, filename, mime_type, size_bytes, sha256}, with a text
    line "Tool produced: ..." and a resource_link;
  * the download URL serves exactly those bytes, as an attachment, with
    nosniff, and only with its signed, expiring token (403 otherwise).
"""

import argparse
import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTOCOL = "2025-11-25"
MAX_BYTES = 10 << 20  # the cap on an input, however it comes
URL_TTL = 3600  # seconds a download URL lives
KEY = secrets.token_bytes(32)  # signs the download tokens

BREAK = set()
FILES = {}  # id -> (name, mime, bytes)
LOCK = threading.Lock()
BASE = ""  # http://127.0.0.1:PORT, set at start


# --- signed download tokens: a JWT (HS256) binding the file id and expiry ---

def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def unb64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def sign(file_id):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"fid": file_id, "exp": int(time.time()) + URL_TTL}).encode())
    mac = hmac.new(KEY, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(mac)}"


def verify(token, file_id):
    """Returns None if the token is good for file_id, else the reason."""
    if "token" in BREAK:
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return "a download token is required: use the whole URL, including ?token="
    try:
        want = hmac.new(KEY, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(want, unb64url(parts[2])):
            return "token signature is invalid"
        claims = json.loads(unb64url(parts[1]))
    except (ValueError, binascii.Error):
        return "token is malformed"
    if claims.get("fid") != file_id:
        return "token is for another file"
    if claims.get("exp", 0) < time.time():
        return "token expired"
    return None


# --- the tool ---

# A URI string, as SEP-2631 §5 declares a file input; read_input takes the
# object {"name", "content"} of agentura's contract as well.
SOURCE = {
    "description": "the text file to turn to upper case",
    "type": "string",
    "format": "uri",
    "x-file": True,
    # It offers no files/authorizeUpload, so it says the file comes inline
    # (omitted, transferModes would allow an upload too: SEP-2631 §5).
    "x-mcp-file": {"accept": ["text/plain", "text/markdown", "text/csv"], "maxSize": MAX_BYTES, "transferModes": ["inline"]},
}


def tools():
    source = dict(SOURCE)
    if "markers" in BREAK:
        del source["x-file"], source["x-mcp-file"]
    if "mcp-file-object" in BREAK:
        source["x-mcp-file"] = {"accept": "text/plain", "maxSize": "ten megabytes"}
    return [{
        "name": "uppercase_text",
        "description": "Turns the letters of a text file to upper case and hands back the result as a new file.",
        "inputSchema": {
            "type": "object",
            "properties": {"source": source},
            "required": ["source"],
        },
    }]


class ToolError(Exception):
    pass


def read_input(value):
    """The file a client sent: (name, bytes) from a data: URI or a URL."""
    name = "input.txt"
    if isinstance(value, dict):
        name = os.path.basename(str(value.get("name") or name)) or name
        value = value.get("content", "")
    if not isinstance(value, str) or not value:
        raise ToolError("source: give the file as a data: URI or an http(s) URL")
    if value.startswith("data:"):
        if "inline" in BREAK:
            raise ToolError("source: data: URIs are not accepted")
        head, _, data = value.partition(",")
        for param in head.split(";")[1:]:
            if param.startswith("name="):
                name = os.path.basename(urllib.parse.unquote(param[5:])) or name
        body = base64.b64decode(data) if head.endswith(";base64") else urllib.parse.unquote_to_bytes(data)
    elif value.startswith(("http://", "https://")):
        if "url" in BREAK:
            raise ToolError("source: URLs are not fetched")
        with urllib.request.urlopen(value, timeout=30) as resp:
            body = resp.read(MAX_BYTES + 1)
        name = os.path.basename(urllib.parse.urlparse(value).path) or name
    else:
        raise ToolError(f"source: {value[:40]!r} is neither a data: URI nor a URL: the client did not resolve its file reference")
    if len(body) > MAX_BYTES:
        raise ToolError(f"source: more than {MAX_BYTES} bytes")
    return name, body


def uppercase_text(args):
    name, body = read_input(args.get("source"))
    out_name = "upper-" + name
    out = body.decode("utf-8", errors="replace").upper().encode()
    file_id = secrets.token_hex(16)
    with LOCK:
        FILES[file_id] = (out_name, "text/plain", out)
    url = f"{BASE}/files/{file_id}/{urllib.parse.quote(out_name)}?token={sign(file_id)}"
    size = len(out) + (1 if "size" in BREAK else 0)
    digest = hashlib.sha256(b"other bytes" if "digest" in BREAK else out).hexdigest()
    produced = {"download_url": url, "filename": out_name, "mime_type": "text/plain",
                "size_bytes": size, "sha256": digest}
    if "fields" in BREAK:
        del produced["sha256"]
    content = [{"type": "text", "text": f"Turned {name} to upper case."}]
    if "links" not in BREAK:
        content.append({"type": "text", "text": f"Tool produced: {out_name} (text, {len(out)} B) {url}"})
        content.append({"type": "resource_link", "uri": url, "name": out_name, "mimeType": "text/plain", "size": len(out)})
    return {"content": content, "structuredContent": produced}


# --- MCP over streamable HTTP ---

def handle(msg):
    """The JSON-RPC answer to one message, or None for a notification."""
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if mid is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": PROTOCOL, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "py-contract-server", "version": "1"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": tools()}
    elif method == "tools/call":
        if params.get("name") != "uppercase_text":
            return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": f"unknown tool {params.get('name')!r}"}}
        try:
            result = uppercase_text(params.get("arguments") or {})
        except (ToolError, OSError, ValueError) as e:
            result = {"content": [{"type": "text", "text": str(e)}], "isError": True}
    else:  # server/discover (2026-07-28) among them: the client falls back to initialize
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("contract_server: " + fmt % args + "\n")

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reply_json(self, status, obj):
        self.reply(status, json.dumps(obj).encode(), [("Content-Type", "application/json")])

    def do_POST(self):
        if urllib.parse.urlparse(self.path).path != "/mcp":
            return self.reply_json(404, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        if length > 2 * MAX_BYTES:
            return self.reply_json(413, {"error": "request too large"})
        try:
            msg = json.loads(self.rfile.read(length))
        except ValueError:
            return self.reply_json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        if not isinstance(msg, dict):
            return self.reply_json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "one message per request"}})
        answer = handle(msg)
        if answer is None:
            return self.reply(202)
        self.reply_json(200, answer)

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == "/mcp":  # no server-initiated stream
            return self.reply(405, headers=[("Allow", "POST")])
        parts = u.path.split("/")
        if len(parts) < 4 or parts[1] != "files":
            return self.reply_json(404, {"error": "not found"})
        file_id = parts[2]
        token = (urllib.parse.parse_qs(u.query).get("token") or [""])[0]
        why = verify(token, file_id)
        if why:
            return self.reply_json(403, {"error": why})
        with LOCK:
            f = FILES.get(file_id)
        if f is None:
            return self.reply_json(404, {"error": "no such file"})
        name, mime, body = f
        headers = [("Content-Type", mime)]
        if "headers" not in BREAK:
            quoted = urllib.parse.quote(name)
            headers += [("Content-Disposition", f"attachment; filename=\"{name.encode('ascii', 'replace').decode()}\"; filename*=UTF-8''{quoted}"),
                        ("X-Content-Type-Options", "nosniff"),
                        ("Content-Security-Policy", "default-src 'none'; sandbox")]
        self.reply(200, body, headers)


def main():
    global BASE
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8010)
    p.add_argument("--break", dest="breaks", default="", help="comma-separated points to break on purpose")
    a = p.parse_args()
    BREAK.update(x for x in a.breaks.split(",") if x)
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    BASE = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"serving MCP at {BASE}/mcp", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
