"""SPEC PR-3: process, check_safety and safe_execute over MCP answer what the REST API answers;
a blocked request is a verdict, not an error."""

from __future__ import annotations

from nerve.server import NerveApp
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Call, text_of


async def test_check_safety_blocks_a_destructive_command_with_the_verdict(call: Call) -> None:
    result = await call("check_safety", kind="shell", content="rm -rf /")
    assert not result.is_error
    assert result.structured_content == {
        "allowed": False,
        "risk_level": "critical",
        "reason": "rm deletes the root directory (/) recursively",
        "blocked_by": "rule",
        "category": "destructive",
    }


async def test_check_safety_takes_the_workspace_and_the_sql_mode(call: Call) -> None:
    """SF-1 over MCP: the same scope as POST /api/safety/check."""
    inside = await call("check_safety", kind="shell", content="rm -rf dist", cwd="/w/proj")
    assert inside.structured_content["allowed"] is True
    outside = await call("check_safety", kind="shell", content="rm -rf /w/other", cwd="/w/proj")
    assert outside.structured_content["category"] == "workspace"
    write = await call("check_safety", kind="sql", content="INSERT INTO t VALUES (1)",
                       mode="read_only")  # fmt: skip
    assert write.structured_content["allowed"] is False
    bad = await call("check_safety", kind="shell", content="ls", cwd="proj")
    assert bad.is_error and "cwd" in text_of(bad) and "absolute" in text_of(bad)


async def test_check_safety_allows_a_harmless_query_and_matches_the_python_api(
    call: Call, nerve_app: NerveApp
) -> None:
    result = await call("check_safety", kind="sql", content="SELECT name FROM users WHERE id = 1")
    direct = await nerve_app.pipeline.safety.check("sql", "SELECT name FROM users WHERE id = 1")
    assert result.structured_content == direct.to_dict()
    assert result.structured_content["allowed"] is True


async def test_process_understands_without_executing_by_default(call: Call) -> None:
    result = await call("process", text="Priya ko report bhejo", user_id="asha")
    assert not result.is_error
    out = result.structured_content
    assert out is not None
    assert set(out) == {"language", "intent", "safety", "execution"}
    assert "hi" in out["language"]["languages"]
    assert out["safety"]["allowed"] is True
    assert out["execution"] is None  # execute defaults to false over MCP


async def test_process_with_execute_runs_the_handler_when_allowed(call: Call) -> None:
    result = await call("process", text="explain recursion in one line", execute=True)
    out = result.structured_content
    assert out is not None
    assert out["intent"]["intent"] == "explain"
    assert out["execution"]["status"] == "ok"  # answered by a model through the gateway
    assert out["execution"]["result"] == {"answer": "Hello from fake"}


async def test_safe_execute_of_rm_rf_root_returns_the_blocking_verdict_not_an_error(
    call: Call,
) -> None:
    result = await call("safe_execute", text="rm -rf /", user_id="asha")
    assert not result.is_error
    out = result.structured_content
    assert out is not None
    assert out["allowed"] is False and out["executed"] is False
    assert out["safety"]["allowed"] is False
    assert out["safety"]["risk_level"] == "critical"
    assert out["safety"]["blocked_by"] == "rule"
    assert out["execution"]["status"] == "blocked"


async def test_safe_execute_executes_what_safety_allows(call: Call, upstream: FakeUpstream) -> None:
    result = await call("safe_execute", text="explain recursion in one line")
    out = result.structured_content
    assert out is not None
    assert out["allowed"] is True and out["executed"] is True
    assert out["safety"]["blocked_by"] is None
    assert out["execution"]["result"] == {"answer": "Hello from fake"}
    assert len(upstream.requests) == 1


async def test_safe_execute_never_reaches_a_model_for_a_blocked_request(
    call: Call, upstream: FakeUpstream
) -> None:
    result = await call("safe_execute", text="drop the production database now")
    out = result.structured_content
    assert out is not None
    assert out["allowed"] is False and out["executed"] is False
    assert upstream.requests == []


async def test_process_refuses_a_blank_user_id_or_a_nul_naming_the_argument(call: Call) -> None:
    """Issue 13: what is processed is remembered for the user, so memory's rules apply."""
    for tool in ("process", "safe_execute"):
        result = await call(tool, text="remember that I like tea", user_id="  ")
        assert result.is_error
        assert text_of(result) == f"{tool}: invalid arguments: 'user_id': must not be blank"
        result = await call(tool, text="tea\u0000")
        assert result.is_error and "'text': must not hold control characters" in text_of(result)
