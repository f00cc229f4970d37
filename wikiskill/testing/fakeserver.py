"""A local OpenAI-compatible chat-completions server for tests and speed benchmarks.

Standard library only. A `handler` callable decides each answer::

    def handler(body: dict) -> Reply | str:   # body = parsed JSON request
        return "hello"                          # or Reply(tool_calls=[...]), Reply(status=429, ...)

    with FakeOpenAIServer(handler, latency=0.2) as server:
        litellm.completion(model="openai/fake-model", api_base=server.base_url, api_key="x", ...)
        server.requests  # request bodies received so far

Endpoints: POST /v1/chat/completions (also /chat/completions) and GET /v1/models; for the coding
CLIs that speak other APIs, the same handler also answers the Anthropic Messages API
(`/v1/messages`, `anthropic_api`), the Responses API (`/v1/responses`, `responses_api`) and the
Gemini API (`/v1beta/models/M:streamGenerateContent`, `gemini_api`): each turns its request into
the chat body the handler reads and the handler's reply into its own (streamed) answer.
With ``text_tools=True`` the server acts like a local model without a tool parser: it never
returns native tool calls (a scripted call comes back as a ```json-fenced
``{"name": ..., "arguments": ...}`` in the content) and fences any JSON object it answers.
With ``context_window=N`` it acts like a model with an N-token window: a request whose prompt
(about 4 characters a token of its messages' and tools' JSON) plus its `max_tokens` exceeds N
gets OpenAI's 400 `context_length_exceeded` error, before the handler sees it.
Usage reports `prompt_tokens_details.cached_tokens`: none by default (``prompt_cache="off"``: a
reply then depends on its request alone, so a run interrupted and resumed, or spread over
workers, is billed as the same run in one piece); with ``prompt_cache="prefix"`` the prompt
tokens of the longest prefix (the tools, then whole messages) that an earlier request sent, as
OpenAI's automatic prompt cache does; with ``"marked"`` only prefixes that end at a message
carrying `cache_control`, as Anthropic does.

A request with ``"stream": true`` gets the same completion as Server-Sent Events in OpenAI's
format (see `wikiskill.testing.sse`), sent in one piece with a Content-Length; errors stay JSON.

Standalone, answering every request with a fixed content::

    python -m wikiskill.testing.fakeserver --port 8765 --latency 0.2 --completion-tokens 20

(add `--text-tools` for the mode without native tool calls), with the replies of a JSON file in
order (`--script FILE`, see `scripted`), or with a handler (`--handler MODULE:NAME`, a
handler(body) as above). `--port 0` picks a free port; the first line printed gives the base URL.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from wikiskill.testing import anthropic_api, gemini_api, responses_api, sse
from wikiskill.testing.promptcache import PROMPT_CACHE_MODES, PromptCache
from wikiskill.testing.promptcache import messages_text as _messages_text
from wikiskill.testing.promptcache import rough_tokens as _rough_tokens
from wikiskill.testing.wire import JsonObject

MODEL_ID = "fake-model"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
DIALECTS = (anthropic_api, responses_api, gemini_api)
"""The other APIs served: each module has `matches(path)`, `to_chat(body, path)`,
`render(completion, body, path) -> (content type, bytes)` and `error(status, message, kind)`."""


@dataclass
class Reply:
    """What the server answers to one chat-completions request.

    `tool_calls` items are ``{"name": str, "arguments": dict | str}``; the server assigns
    ids ``call_<n>`` and JSON-encodes dict arguments. Token counts default to a rough
    ``len(text) // 4`` of the request messages / of the reply.

    Faults: a non-200 `status` sends an OpenAI-style error body (message = `content` or
    the HTTP reason phrase) with `headers` (e.g. ``{"Retry-After": "2"}``); `delay` sleeps
    that many seconds before answering (on top of the server's `latency`); `truncate`
    sends half the body under the full Content-Length and closes the connection.
    """

    content: str | None = None
    tool_calls: list[JsonObject] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False


Handler = Callable[[JsonObject], "Reply | str"]


def as_text_reply(reply: Reply) -> Reply:
    """`reply` as a model without native tool calls writes it: calls and JSON in ```json fences."""
    if reply.status != 200:
        return reply
    parts = [reply.content] if reply.content else []
    if parts and parts[0].lstrip().startswith("{"):
        try:
            json.loads(parts[0])
            parts = ["Here is the JSON object:", f"```json\n{parts[0]}\n```"]
        except ValueError:
            pass
    for call in reply.tool_calls or []:
        arguments = call.get("arguments")
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments or {}
        shown = json.dumps({"name": call["name"], "arguments": arguments})
        parts += [f"I will call {call['name']}.", f"```json\n{shown}\n```"]
    return Reply(
        content="\n".join(parts),
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        headers=reply.headers,
        delay=reply.delay,
        truncate=reply.truncate,
    )


def _request_tokens(body: JsonObject) -> int:
    """The prompt tokens a server with a context window counts for a request: about 4 characters
    a token of the messages' and tools' JSON."""
    return _rough_tokens(json.dumps(body.get("messages") or []) + json.dumps(body.get("tools") or []))


def _overflow_body(window: int, prompt: int, completion: int) -> JsonObject:
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
        "Please reduce the length of the messages or completion."
    )
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def _error_body(status: int, message: str | None) -> JsonObject:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }
    kind = kinds.get(status, "server_error" if status >= 500 else "api_error")
    code = "rate_limit_exceeded" if status == 429 else kind
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = f"HTTP {status}"
    return {"error": {"message": message or reason, "type": kind, "param": None, "code": code}}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default backlog of 5 drops connections when many clients start at once
    owner: FakeOpenAIServer
    server_address: tuple[str, int]  # bound to an IPv4 host given as text, never bytes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.open_sockets: set[socket.socket] = set()
        super().__init__(*args, **kwargs)

    # Track connections so stop() can also end idle keep-alive connections, whose
    # handler threads would otherwise keep serving after serve_forever() returns.
    def process_request(self, request: Any, client_address: Any) -> None:
        self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.open_sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out and hang up are expected here; stay quiet


@dataclass
class Answer:
    """What the server sends for one chat request: a JSON `body`, or the `chunks` of a stream."""

    status: int
    body: JsonObject = field(default_factory=dict)
    chunks: list[JsonObject] | None = None
    headers: dict[str, str] | None = None
    truncate: bool = False


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response carries a Content-Length
    disable_nagle_algorithm = True  # else delayed ACKs hold back every reply
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") in MODELS_PATHS:
            data = [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fakeserver"}]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error_body(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        route = self.path.split("?", 1)[0].rstrip("/")
        dialect = next((module for module in DIALECTS if module.matches(route)), None)
        if route not in CHAT_PATHS and dialect is None:
            self._send_json(404, _error_body(404, f"no route POST {self.path}"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_json(400, _error_body(400, "request body is not valid JSON"))
            return
        if dialect is not None:
            self._answer_in(dialect, body, route)
            return
        answer = self.server.owner.answer(body)
        if answer.chunks is not None:
            self._send(answer.status, sse.encode(answer.chunks), "text/event-stream", answer.headers, answer.truncate)
        else:
            self._send_json(answer.status, answer.body, answer.headers, answer.truncate)

    def _answer_in(self, dialect: Any, body: JsonObject, route: str) -> None:
        """Answer a request of another API through the chat handler, in that API's format."""
        answer = self.server.owner.answer(dialect.to_chat(body, route))
        if answer.status != 200:
            error = answer.body["error"]
            self._send_json(
                answer.status,
                dialect.error(answer.status, error["message"], error["type"]),
                answer.headers,
                answer.truncate,
            )
            return
        content_type, data = dialect.render(answer.body, body, route)
        self._send(answer.status, data, content_type, answer.headers, answer.truncate)

    def _send_json(
        self, status: int, obj: JsonObject, headers: dict[str, str] | None = None, truncate: bool = False
    ) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers, truncate)

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None, truncate: bool
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            if truncate:
                self.send_header("Connection", "close")
                self.close_connection = True
                data = data[: len(data) // 2]
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its read timeout)


class FakeOpenAIServer:
    """OpenAI-compatible chat-completions server on a background thread.

    `handler(body) -> Reply | str` answers each chat request (a str is the content);
    `latency` seconds are slept before every answer; `text_tools` turns native tool calls and
    bare JSON into fenced text; `context_window` refuses requests too long for that many tokens
    (`overflows` lists them); `prompt_cache` is how cached prompt tokens are reported
    (`PROMPT_CACHE_MODES`). Use as a context manager, or call `start()` / `stop()`.
    `port=0` picks a free port.
    """

    def __init__(
        self,
        handler: Handler,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        text_tools: bool = False,
        context_window: int | None = None,
        prompt_cache: str = "off",
    ) -> None:
        self.handler = handler
        self.prompt_cache = PromptCache(prompt_cache)
        self.latency = latency
        self.text_tools = text_tools
        self.context_window = context_window
        self._lock = threading.Lock()
        self._requests: list[JsonObject] = []
        self._overflows: list[JsonObject] = []
        self._ids = itertools.count(1)
        self._httpd = _HTTPServer((host, port), _RequestHandler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self._httpd.server_address[0]}:{self.port}/v1"

    @property
    def requests(self) -> list[JsonObject]:
        """A snapshot of the chat request bodies received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def overflows(self) -> list[JsonObject]:
        """The request bodies refused as longer than `context_window`."""
        with self._lock:
            return list(self._overflows)

    def start(self) -> FakeOpenAIServer:
        # A short poll interval keeps stop() (which waits for the next poll) quick.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        for sock in list(self._httpd.open_sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def answer(self, body: JsonObject) -> Answer:
        """The answer to the chat request `body`, which is recorded: refused when longer than
        `context_window`, else the handler's reply after the latency and the reply's delay."""
        with self._lock:
            self._requests.append(body)
        if self.context_window is not None:
            prompt, max_tokens = _request_tokens(body), int(body.get("max_tokens") or 0)
            if prompt + max_tokens > self.context_window:
                with self._lock:
                    self._overflows.append(body)
                return Answer(400, _overflow_body(self.context_window, prompt, max_tokens))
        with self._lock:
            cached = self.prompt_cache.read(body)
        try:
            reply = self.handler(body)
        except Exception as exc:  # a broken test handler should show up as a 500, not a hang
            return Answer(500, _error_body(500, f"handler raised {exc!r}"))
        if isinstance(reply, str):
            reply = Reply(content=reply)
        if self.text_tools:
            reply = as_text_reply(reply)
        if self.latency or reply.delay:
            time.sleep(self.latency + reply.delay)
        if reply.status != 200:
            return Answer(
                reply.status, _error_body(reply.status, reply.content), headers=reply.headers, truncate=reply.truncate
            )
        completion = self._completion(body, reply, cached)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return Answer(
                200, chunks=sse.chunks(completion, include_usage), headers=reply.headers, truncate=reply.truncate
            )
        return Answer(200, completion, headers=reply.headers, truncate=reply.truncate)

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _message_and_usage(self, body: JsonObject, reply: Reply, cached: int | None) -> tuple[JsonObject, JsonObject]:
        tool_calls = [
            {
                "id": f"call_{self._next_id()}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments") or {}),
                },
            }
            for call in reply.tool_calls or []
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = _rough_tokens(_messages_text(body.get("messages", [])))
        completion = reply.completion_tokens
        if completion is None:
            completion = _rough_tokens((reply.content or "") + json.dumps(tool_calls) * bool(tool_calls))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt)}
        return message, usage

    def _completion(self, body: JsonObject, reply: Reply, cached: int | None = None) -> JsonObject:
        """The `chat.completion` answering `body`; a streamed answer re-encodes it."""
        message, usage = self._message_and_usage(body, reply, cached)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        return {
            "id": f"chatcmpl-fake{self._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", MODEL_ID),
            "choices": [choice],
            "usage": usage,
        }


def _load_handler(spec: str) -> Handler:
    module, _, name = spec.partition(":")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


def scripted(path: str) -> Handler:
    """A handler that answers with the replies of the JSON file `path` in order, then repeats its
    last one: each a string (the content) or an object of `Reply`'s fields, such as
    ``{"tool_calls": [{"name": "finish", "arguments": {...}}]}`` or ``{"status": 429}``."""
    with open(path, encoding="utf-8") as file:
        items = json.load(file)
    if not isinstance(items, list) or not items:
        raise SystemExit(f"{path}: give a JSON list of replies (strings or objects of Reply's fields)")
    replies = [Reply(content=item) if isinstance(item, str) else Reply(**item) for item in items]
    served = itertools.count()
    lock = threading.Lock()

    def handler(body: JsonObject) -> Reply:
        with lock:
            index = next(served)
        return replies[min(index, len(replies) - 1)]

    return handler


def main(argv: list[str] | None = None) -> None:
    """Serve an OpenAI-compatible API on 127.0.0.1 until interrupted: a fixed short answer to every
    request, or the replies of a script, or a handler's."""
    parser = argparse.ArgumentParser(prog="python -m wikiskill.testing.fakeserver", description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept before each answer")
    parser.add_argument("--content", default="ok", help="the answer content")
    parser.add_argument("--completion-tokens", type=int, default=None, help="reported completion tokens")
    parser.add_argument(
        "--text-tools",
        action="store_true",
        help="never return native tool calls; write calls and JSON in ```json fences",
    )
    parser.add_argument(
        "--context-window",
        type=int,
        default=None,
        metavar="TOKENS",
        help="refuse requests longer than this many tokens, as OpenAI does (context_length_exceeded)",
    )
    parser.add_argument(
        "--prompt-cache",
        choices=PROMPT_CACHE_MODES,
        default="off",
        help="report cached prompt tokens for any repeated prefix, only for marked ones, or none",
    )
    parser.add_argument(
        "--handler",
        default=None,
        metavar="MODULE:NAME",
        help="answer with this handler(body) -> Reply | str instead (e.g. a scripted world)",
    )
    parser.add_argument(
        "--script",
        default=None,
        metavar="FILE",
        help="answer with the replies of this JSON list in order, then its last one again",
    )
    args = parser.parse_args(argv)
    reply = Reply(content=args.content, completion_tokens=args.completion_tokens)
    if args.handler:
        handler = _load_handler(args.handler)
    elif args.script:
        handler = scripted(args.script)
    else:
        handler = lambda body: reply  # noqa: E731
    with FakeOpenAIServer(
        handler,
        latency=args.latency,
        host=args.host,
        port=args.port,
        text_tools=args.text_tools,
        context_window=args.context_window,
        prompt_cache=args.prompt_cache,
    ) as server:
        print(f"fake OpenAI server at {server.base_url} (latency {args.latency}s)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
