"""An upstream process killed mid-stream (its socket closed by the kernel after two frames, the
chunked body never finished): the client gets one SSE error event instead of a transfer error,
and the server logs one line naming the provider and the model."""

from __future__ import annotations

import logging
import socket
import threading

import httpx

from nerve.config import parse_config

FRAME = (b'data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m1","choices":'
         b'[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n')  # fmt: skip


class DyingUpstream:
    """Answers one streaming request with two SSE chunks, then closes as a dead process would."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))  # fmt: skip
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n"
                         + (b"%x\r\n" % len(FRAME) + FRAME + b"\r\n") * 2)  # fmt: skip
        self.sock.close()


def test_an_upstream_killed_mid_stream_sends_an_error_event_and_logs_one_line(serve, caplog):
    dying = DyingUpstream()
    config = parse_config({
        "providers": [{"name": "dying", "base_url": dying.url, "api_key": "k"}],
        "routes": [{"name": "default", "model": {"provider": "dying", "model": "m1"}}],
    }, environ={})  # fmt: skip
    server = serve(config)
    body = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body,
                          timeout=10) as r:  # fmt: skip
            events = [line for line in r.iter_lines() if line.startswith("data:")]
        dying.thread.join(timeout=10)

    assert r.status_code == 200 and '"hi"' in events[0]
    assert '"error"' in events[-1] and "[DONE]" not in events[-1]
    cut = [rec.getMessage() for rec in caplog.records if "STREAM CUT" in rec.getMessage()]
    assert len(cut) == 1 and "dying/m1" in cut[0]
