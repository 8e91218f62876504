"""
Reference readers of a stdio MCP stream, as the families of receivers read it (not a test file).

  reference-readers.py serve               a server that reads stdin as the Python SDK's stdio server does
                                           (TextIOWrapper over sys.stdin.buffer, UTF-8, universal newlines:
                                           a line ends at CR, LF or CRLF) and parses with Python's json (NaN,
                                           Infinity, integers of any size). Each request it reads is appended to
                                           $EXECUTED as {"method", "tool", "id"} and answered.
  reference-readers.py read MODE           reads all of stdin as MODE does and prints each message it reads,
                                           one JSON line each ({"method", "tool", "id", "kind", "code"}):
    universal-strict    the Python SDK (universal newlines, strict UTF-8: a bad byte ends the reading)
    universal-replace   Java BufferedReader.readLine / .NET StreamReader.ReadLine (CR, LF, CRLF; bad bytes
                        replaced)
    splitlines          str.splitlines() users and Java's Scanner.nextLine (also VT, FF, FS, GS, RS, NEL,
                        U+2028, U+2029)
    cstring             a reader that takes a line as a C string (LF ends it, the first NUL cuts it)
    stream              a stream decoder (Go's json.Decoder, Jackson's MappingIterator) over each LF line: values
                        one after another, scalars too, up to the first that does not parse
    universal-bom       readLine with a parser that skips a leading byte order mark (Gson's JsonReader)
Ids are printed as JSON text (exact, as Python read them).
"""
import io
import json
import os
import sys


def describe(message):
    if not isinstance(message, dict) or "jsonrpc" not in message:
        return None
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    method = message.get("method")
    error = message.get("error")
    return {
        "kind": "request" if method is not None and "id" in message else "notification" if method is not None else "answer",
        "method": method if isinstance(method, str) else None,
        "tool": params.get("name") if method == "tools/call" and isinstance(params.get("name"), str) else None,
        "id": json.dumps(message["id"]) if "id" in message else None,
        "code": error.get("code") if isinstance(error, dict) else None,
    }


def messages_of(line):
    line = line.strip(" \t\r\n")
    if line == "":
        return []
    try:
        value = json.loads(line)
    except ValueError:
        return []
    values = value if isinstance(value, list) else [value]
    return [d for d in (describe(v) for v in values) if d is not None]


def stream_messages(line):
    decoder = json.JSONDecoder()
    at, out = 0, []
    for _ in range(1000):
        while at < len(line) and line[at] in " \t\r\n":
            at += 1
        if at >= len(line):
            break
        try:
            value, at = decoder.raw_decode(line, at)
        except ValueError:
            break
        values = value if isinstance(value, list) else [value]
        out += [d for d in (describe(v) for v in values) if d is not None]
    return out


def lines_of(mode, data):
    if mode == "universal-strict":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            # The SDK's reader stops at the bad byte: what came before it was read.
            text = data[: err.start].decode("utf-8")
            text = text[: text.rfind("\n") + 1] if "\n" in text else ""
        return io.StringIO(text, newline=None).read().split("\n")
    if mode == "universal-replace":
        return io.StringIO(data.decode("utf-8", errors="replace"), newline=None).read().split("\n")
    if mode == "splitlines":
        return data.decode("utf-8", errors="replace").splitlines()
    if mode == "stream":
        return data.decode("utf-8", errors="replace").split("\n")
    if mode == "universal-bom":
        text = io.StringIO(data.decode("utf-8", errors="replace"), newline=None).read()
        return [line[1:] if line.startswith("\ufeff") else line for line in text.split("\n")]
    if mode == "cstring":
        return [line.split("\0", 1)[0] for line in data.decode("utf-8", errors="replace").split("\n")]
    raise SystemExit(f"unknown mode {mode}")


def serve():
    executed = open(os.environ["EXECUTED"], "a", encoding="utf-8")
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
    for line in stdin:
        for message in messages_of(line):
            if message["kind"] != "request":
                continue
            executed.write(json.dumps(message) + "\n")
            executed.flush()
            answer = {"jsonrpc": "2.0", "id": json.loads(message["id"]), "result": {"content": [{"type": "text", "text": f"ran {message['tool'] or message['method']}"}]}}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve()
    else:
        data = sys.stdin.buffer.read()
        for line in lines_of(sys.argv[2], data):
            for message in stream_messages(line) if sys.argv[2] == "stream" else messages_of(line):
                print(json.dumps(message))
