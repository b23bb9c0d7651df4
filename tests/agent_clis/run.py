"""Run the real agent CLIs (Claude Code, Codex) headless against a local base URL.

The CLIs are pinned in ``tests/agent_clis/package.json`` and installed with
``npm ci --prefix tests/agent_clis``; when they are missing, ``cli_path`` returns None
and tests should skip. Each run gets a fresh HOME (and CODEX_HOME) under ``tmp`` and a
clean environment: nothing of the caller's ANTHROPIC_*/OPENAI_*/CODEX_* variables leaks
in, so a run can only ever talk to ``base_url``.

``base_url`` is the server root, e.g. ``http://127.0.0.1:8080``: Claude Code appends
``/v1/messages?beta=true`` itself; for Codex ``/v1`` is appended (it posts to
``{base_url}/v1/responses``). A base URL already ending in ``/v1`` is accepted by both.

Both return an ``AgentRun`` (a text-mode ``subprocess.CompletedProcess``) with two extra
attributes: ``home`` (the HOME used) and ``elapsed`` (seconds). On timeout the process
group is killed and the result has ``returncode == TIMEOUT_RC`` and whatever output had
arrived.

Outputs: ``claude -p --output-format json`` prints one JSON object on stdout
(``result`` = final text, ``is_error``, ``num_turns``, ``api_error_status``...);
``codex exec`` prints only the final agent message on stdout and its transcript
(banner, tool runs, errors) on stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN_DIR = HERE / "node_modules" / ".bin"
TIMEOUT_RC = 124
DEFAULT_TIMEOUT = 120.0
CODEX_PROVIDER = "nerve"
CODEX_KEY_ENV = "NERVE_API_KEY"


class AgentRun(subprocess.CompletedProcess[str]):
    """A finished CLI run: returncode, stdout, stderr, plus the HOME it used and its duration."""

    home: Path
    elapsed: float


# Variables passed through from the caller (everything else is dropped).
_PASS_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


def _is_native(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"MZ\x90\x00")


def _claude_native() -> Path | None:
    """The platform package's binary (used when the postinstall did not run)."""
    base = HERE / "node_modules" / "@anthropic-ai"
    machine = os.uname().machine
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if arch is None:
        return None
    system = "darwin" if sys.platform == "darwin" else "linux"
    for suffix in (f"{system}-{arch}", f"{system}-{arch}-musl"):
        candidate = base / f"claude-code-{suffix}" / "claude"
        if candidate.is_file():
            return candidate
    return None


def cli_path(name: str) -> Path | None:
    """Path of the installed ``claude`` or ``codex`` executable, or None if not installed."""
    if name not in ("claude", "codex"):
        raise ValueError(f"unknown agent CLI {name!r}")
    link = BIN_DIR / name
    if name == "claude":
        # bin/claude.exe is replaced by the native binary in the package's postinstall;
        # with --ignore-scripts it stays a stub, so fall back to the platform package.
        if link.exists() and _is_native(link.resolve()) and link.resolve().stat().st_size > 1 << 20:
            return link
        return _claude_native()
    return link if link.exists() else None


def _base_env(home: Path, extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "TERM": "dumb", "NO_COLOR": "1", "CI": "1"})
    if extra:
        env.update(extra)
    return env


def _fresh_dir(tmp: Path, prefix: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=tmp))


def _run(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, home: Path
) -> AgentRun:
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,  # codex exec reads stdin when it is not a TTY
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so a timeout can kill the CLI and its tool children
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        rc = TIMEOUT_RC
        err += f"\n[agent_clis.run] timed out after {timeout:.0f}s: {' '.join(argv[:3])} ...\n"
    result = AgentRun(list(argv), rc, out, err)
    result.home = home
    result.elapsed = time.monotonic() - start
    return result


def _require(name: str) -> Path:
    path = cli_path(name)
    if path is None:
        raise FileNotFoundError(
            f"{name} is not installed: run `npm ci --prefix tests/agent_clis` (see package.json)"
        )
    return path


def claude_env(
    base_url: str, home: Path, *, key: str = "dummy", auth: str = "api_key", retries: int = 0
) -> dict[str, str]:
    """Environment for a headless, offline Claude Code run against ``base_url``.

    ``auth="api_key"`` sends ``x-api-key: KEY``; ``auth="bearer"`` sends
    ``Authorization: Bearer KEY`` (ANTHROPIC_AUTH_TOKEN). ``retries`` is
    CLAUDE_CODE_MAX_RETRIES: its default of 10 backs off for minutes on a 5xx.
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    env = {
        "ANTHROPIC_BASE_URL": root,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no HEAD /api/hello, telemetry...
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(retries),
        "IS_SANDBOX": "1",  # lets --dangerously-skip-permissions run as root
    }
    env["ANTHROPIC_AUTH_TOKEN" if auth == "bearer" else "ANTHROPIC_API_KEY"] = key
    return _base_env(home, env)


def run_claude(
    base_url: str,
    prompt: str,
    tmp: Path,
    *,
    key: str = "dummy",
    model: str | None = None,
    auth: str = "api_key",
    allowed_tools: Sequence[str] = ("Bash",),
    output_format: str = "json",
    retries: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> AgentRun:
    """``claude -p PROMPT --output-format json`` with a fresh HOME; Bash runs unprompted.

    ``model`` is passed as ``--model`` (aliases like "sonnet"/"haiku" resolve to the
    CLI's own ids; any other string is sent verbatim). Without it the CLI's default
    main model is requested.
    """
    exe = _require("claude")
    home = _fresh_dir(tmp, "claude-home-")
    work = home / "work"
    work.mkdir()
    env = claude_env(base_url, home, key=key, auth=auth, retries=retries)
    env.update(extra_env or {})
    argv = [str(exe), "-p", prompt, "--output-format", output_format]
    if output_format == "stream-json":
        argv.append("--verbose")
    if allowed_tools:
        argv += ["--allowedTools", ",".join(allowed_tools)]
    if model:
        argv += ["--model", model]
    argv += list(extra_args)
    return _run(argv, cwd=work, env=env, timeout=timeout, home=home)


def codex_config(
    base_url: str, *, model: str = "gpt-5-codex", retries: int = 0, extra_toml: str = ""
) -> str:
    """config.toml text: one custom Responses provider reading its key from NERVE_API_KEY."""
    root = base_url.rstrip("/")
    api = root if root.endswith("/v1") else root + "/v1"
    return (
        f"model = {json.dumps(model)}\n"
        f'model_provider = "{CODEX_PROVIDER}"\n'
        f"{extra_toml}\n"
        f"[model_providers.{CODEX_PROVIDER}]\n"
        f'name = "{CODEX_PROVIDER}"\n'
        f"base_url = {json.dumps(api)}\n"
        'wire_api = "responses"\n'
        f'env_key = "{CODEX_KEY_ENV}"\n'
        f"request_max_retries = {retries}\n"
        f"stream_max_retries = {retries}\n"
    )


def run_codex(
    base_url: str,
    prompt: str,
    tmp: Path,
    *,
    key: str = "dummy",
    model: str = "gpt-5-codex",
    full_access: bool = True,
    json_events: bool = False,
    retries: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    extra_toml: str = "",
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> AgentRun:
    """``codex exec --skip-git-repo-check PROMPT`` with a fresh HOME and CODEX_HOME.

    ``full_access`` adds ``--dangerously-bypass-approvals-and-sandbox`` (no approvals,
    no bubblewrap sandbox) so tool calls run; ``json_events`` adds ``--json`` (JSONL
    events on stdout instead of the final message). ``retries`` sets the provider's
    request/stream retries (Codex's defaults retry a 5xx ~30 times over ~25 s).
    """
    exe = _require("codex")
    home = _fresh_dir(tmp, "codex-home-")
    codex_home = home / ".codex"
    codex_home.mkdir()
    work = home / "work"
    work.mkdir()
    (codex_home / "config.toml").write_text(
        codex_config(base_url, model=model, retries=retries, extra_toml=extra_toml)
    )
    env = _base_env(home, {"CODEX_HOME": str(codex_home), CODEX_KEY_ENV: key})
    env.update(extra_env or {})
    argv = [str(exe), "exec", "--skip-git-repo-check"]
    if full_access:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    if json_events:
        argv.append("--json")
    argv += [*extra_args, "--", prompt]
    return _run(argv, cwd=work, env=env, timeout=timeout, home=home)


def claude_result(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The JSON object ``claude -p --output-format json`` printed (last JSON line)."""
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            parsed: dict[str, object] = json.loads(line)
            return parsed
    raise ValueError(f"no JSON result on stdout: {proc.stdout[:500]!r} / {proc.stderr[-500:]!r}")


def main(argv: Sequence[str]) -> int:
    """Manual smoke: ``python -m tests.agent_clis.run claude|codex BASE_URL PROMPT [MODEL]``."""
    if len(argv) < 3 or argv[0] not in ("claude", "codex"):
        print(main.__doc__, file=sys.stderr)
        return 2
    name, base_url, prompt = argv[0], argv[1], argv[2]
    tmp = Path(tempfile.mkdtemp(prefix="agent-cli-"))
    if name == "claude":
        proc = run_claude(base_url, prompt, tmp, model=argv[3] if len(argv) > 3 else None)
    else:
        proc = run_codex(base_url, prompt, tmp, model=argv[3] if len(argv) > 3 else "gpt-5-codex")
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    print(f"[exit {proc.returncode} in {proc.elapsed:.1f}s, home {proc.home}]", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
