"""The scope a verdict is judged in (SF-1): the workspace, the SQL mode and the dialect."""

from __future__ import annotations

import pytest

from nerve.errors import RequestError
from nerve.safety import DEFAULT_SCOPE, Scope, ScopeError, check_rules


def test_cwd_alone_is_the_workspace_and_paths_resolve_against_it() -> None:
    scope = Scope.of("/home/dev/proj/")
    assert scope.cwd == "/home/dev/proj" and scope.roots == ("/home/dev/proj",)
    assert scope.inside("build") is True
    assert scope.inside("./src/../dist") is True
    assert scope.inside("/home/dev/proj") is True  # the root itself: judged by the `.` rules
    assert scope.inside("../other") is False
    assert scope.inside("/home/dev/proj-old") is False  # a prefix is not a parent
    assert scope.resolve("a/../../b") == "/home/dev/b"


def test_roots_name_the_workspace_and_cwd_only_resolves() -> None:
    scope = Scope.of("/w/app", ["/w/app", "/var/cache/app"])
    assert scope.inside("../../var/cache/app/x") is True
    assert scope.inside("/var/cache") is False


def test_without_a_workspace_nothing_is_inside_or_outside() -> None:
    assert DEFAULT_SCOPE.inside("/etc") is None
    assert Scope.of(None, ["/w"]).inside("relative/path") is None  # no cwd to resolve it by
    assert Scope.of(None, ["/w"]).inside("/w/x") is True


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cwd": "proj"}, "cwd"),
        ({"cwd": ""}, "cwd"),
        ({"roots": ["/ok", "rel"]}, "roots"),
        ({"roots": ["/a\x00b"]}, "roots"),
        ({"mode": "readonly"}, "mode"),
        ({"dialect": "db2"}, "dialect"),
        ({"roots": [f"/r{i}" for i in range(33)]}, "roots"),
    ],
)
def test_a_bad_scope_is_a_request_error_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ScopeError) as caught:
        Scope.of(**kwargs)
    assert isinstance(caught.value, RequestError) and caught.value.status == 400
    assert field in caught.value.message


def test_the_same_delete_is_fine_inside_the_workspace_and_refused_outside() -> None:
    scope = Scope.of("/home/dev/proj")
    assert check_rules("shell", "rm -rf node_modules dist", scope).allowed
    outside = check_rules("shell", "rm -rf /home/dev/other", scope)
    assert not outside.allowed and outside.category == "workspace"
    escaped = check_rules("shell", "rm -rf ../other", scope)
    assert not escaped.allowed and escaped.category == "workspace"
    assert check_rules("shell", "rm -rf /tmp/scratch", scope).allowed  # temp is nobody's
