"""docs/auth.md's reference section states every option as the code has it.

Each line of the ``text`` blocks under "Reference: every option" is read as a Python parameter
list (``Name(params)`` parsed as ``def Name(params): ...``) and compared with
``inspect.signature`` of the object it names: the same parameters, in the same order, of the same
kind (positional or keyword-only), with the same defaults. A line naming an object this test does
not know, or an object of the modules below left out of the section, fails.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import time
from pathlib import Path
from typing import Any

import mcpwire.auth as auth
from mcpwire_adapters.oauth import client as oauth, jose as oauth_jose, resource_server as oauth_server, store as oauth_store

DOC = Path(__file__).resolve().parents[2] / "docs" / "auth.md"
NAMES: dict[str, Any] = {
    "OAuth": oauth.OAuth, "follow_redirect": oauth.follow_redirect,
    "MemoryTokenStore": oauth_store.MemoryTokenStore, "FileTokenStore": oauth_store.FileTokenStore,
    "AuthorizationCode": auth.AuthorizationCode, "ClientCredentials": auth.ClientCredentials,
    "JwtBearer": auth.JwtBearer, "EnterpriseManaged": auth.EnterpriseManaged,
    "ClientInformation": auth.ClientInformation,
    "DPoPKey": oauth_jose.DPoPKey, "DPoPKey.generate": oauth_jose.DPoPKey.generate,
    "PrivateKeyJwt": oauth_jose.PrivateKeyJwt, "PrivateKeyJwt.from_pem": oauth_jose.PrivateKeyJwt.from_pem,
    "ClientAuth": auth.ClientAuth, "AuthorizationFlow": auth.AuthorizationFlow,
    "ResourceServer": auth.ResourceServer, "OAuthResource": oauth_server.OAuthResource,
    "JwtVerifier": oauth_jose.JwtVerifier, "IntrospectionVerifier": oauth_server.IntrospectionVerifier,
    "DPoPVerifier": oauth_jose.DPoPVerifier,
}
_DEFAULTS = {"time": time, "os": os}  # the names documented defaults may use


def reference_lines() -> list[str]:
    text = DOC.read_text()
    section = text.split("## Reference: every option", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```text\n(.*?)^```", section, re.M | re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def documented(line: str) -> tuple[str, list[tuple[str, inspect._ParameterKind, Any]]]:
    """The name and ``(parameter, kind, default)`` of one reference line (default ``empty``)."""
    name, _, rest = line.partition("(")
    tree = ast.parse(f"def f({rest[:-1]}): ...")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args

    def value(node: ast.expr) -> Any:
        return eval(compile(ast.Expression(node), DOC.name, "eval"), dict(_DEFAULTS))  # noqa: S307 - our own docs
    out: list[tuple[str, inspect._ParameterKind, Any]] = []
    positional = args.posonlyargs + args.args
    pad: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    for arg, default in zip(positional, pad + list(args.defaults), strict=True):
        out.append((arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    inspect.Parameter.empty if default is None else value(default)))
    if args.vararg is not None:
        out.append((args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append((arg.arg, inspect.Parameter.KEYWORD_ONLY,
                    inspect.Parameter.empty if kw_default is None else value(kw_default)))
    if args.kwarg is not None:
        out.append((args.kwarg.arg, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty))
    return name.strip(), out


def actual(target: Any) -> list[tuple[str, inspect._ParameterKind, Any]]:
    params = inspect.signature(target).parameters.values()
    return [(p.name, p.kind, tuple(p.default) if isinstance(p.default, list) else p.default) for p in params]


def test_every_reference_line_matches_the_code() -> None:
    lines = reference_lines()
    seen = []
    for line in lines:
        name, params = documented(line)
        assert name in NAMES, f"docs/auth.md documents {name!r}, which this test does not know"
        assert params == actual(NAMES[name]), f"docs/auth.md: {line}"
        seen.append(name)
    assert sorted(seen) == sorted(NAMES), "every option of these objects is in docs/auth.md's reference"


def test_the_comparison_sees_a_wrong_default_and_a_missing_option() -> None:
    name, params = documented('DPoPVerifier(*, algorithms=("ES256",), max_age=300.0)')
    assert name == "DPoPVerifier" and params != actual(oauth_jose.DPoPVerifier)
    _, params = documented("OAuthResource(server, verifier, *, dpop=None, clock=time.time)")
    assert params != actual(oauth_server.OAuthResource)
    _, params = documented("OAuthResource(server, verifier, *, dpop=None, clock=time.time, replay_cache=10000)")
    assert params == actual(oauth_server.OAuthResource)
