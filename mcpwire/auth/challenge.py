"""``WWW-Authenticate`` challenges: parsing (client side) and building (resource server side).

Owns the challenge grammar of RFC 9110 section 11.6.1 (``#challenge``, each an auth-scheme with
either a token68 or a comma list of ``name=value`` auth-params, a value a token or a
quoted-string) and the parameters MCP reads from a Bearer or DPoP challenge: ``resource_metadata``
(RFC 9728 section 5.1), ``scope`` and ``error`` (RFC 6750 section 3). Invariants: scheme and
parameter names are case-insensitive and come out lower-cased; a parameter named twice in one
challenge, an unterminated quoted-string or a stray character is :class:`AuthError`
(``malformed_challenge``), never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from .errors import AuthError

__all__ = ["Challenge", "parse_www_authenticate", "build_challenge", "auth_challenge"]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68 = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_MAX_HEADER = 8192  # a challenge longer than this is refused rather than scanned


class Challenge(msgspec.Struct, frozen=True, kw_only=True):
    """One challenge: ``scheme`` lower-cased, ``params`` with lower-cased names, or ``token68``."""

    scheme: str
    params: dict[str, str] = {}
    token68: str | None = None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scopes(self) -> tuple[str, ...] | None:
        """The ``scope`` parameter split on spaces, or None when absent."""
        value = self.params.get("scope")
        return None if value is None else tuple(s for s in value.split(" ") if s)

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def _bad(value: str, why: str) -> AuthError:
    return AuthError("malformed_challenge", f"{why} in WWW-Authenticate {value[:200]!r}")


def parse_www_authenticate(values: str | Iterable[str]) -> list[Challenge]:
    """Every challenge in one or more ``WWW-Authenticate`` field values, in order.

    Several field lines are one comma list (RFC 9110 section 5.3). Raises :class:`AuthError`
    (``malformed_challenge``) when the value does not follow the grammar.
    """
    value = values if isinstance(values, str) else ", ".join(values)
    if len(value) > _MAX_HEADER:
        raise _bad(value, f"longer than {_MAX_HEADER} characters")
    out: list[Challenge] = []
    i, n = 0, len(value)

    def skip(i: int, chars: str = " \t") -> int:
        while i < n and value[i] in chars:
            i += 1
        return i

    def token(i: int) -> tuple[str, int]:
        j = i
        while j < n and value[j] in _TCHAR:
            j += 1
        return value[i:j], j

    def quoted(i: int) -> tuple[str, int]:
        assert value[i] == '"'
        chars, j = [], i + 1
        while j < n:
            c = value[j]
            if c == "\\":
                if j + 1 >= n:
                    break
                chars.append(value[j + 1])
                j += 2
            elif c == '"':
                return "".join(chars), j + 1
            elif c < " " and c != "\t" or c == "\x7f":
                raise _bad(value, "a control character in a quoted-string")
            else:
                chars.append(c)
                j += 1
        raise _bad(value, "an unterminated quoted-string")

    def starts_param(i: int) -> bool:
        name, j = token(i)
        return bool(name) and skip(j) < n and value[skip(j)] == "="

    while True:
        i = skip(i, " \t,")
        if i >= n:
            return out
        scheme, i = token(i)
        if not scheme:
            raise _bad(value, f"no auth-scheme at offset {i}")
        params: dict[str, str] = {}
        token68: str | None = None
        j = skip(i)
        if j < n and value[j] != "," and j == i:
            raise _bad(value, f"no space after the scheme {scheme!r}")
        i = j
        if i < n and value[i] != ",":
            # token68 when the run of token68 characters (and trailing '=') ends the challenge
            k = i
            while k < n and value[k] in _TOKEN68:
                k += 1
            while k < n and value[k] == "=":
                k += 1
            end = skip(k)
            if k > i and (end >= n or value[end] == ","):  # a param always has a value after '='
                token68, i = value[i:k], end
            else:
                while True:
                    name, i = token(i)
                    if not name:
                        raise _bad(value, f"no parameter name at offset {i}")
                    i = skip(i)
                    if i >= n or value[i] != "=":
                        raise _bad(value, f"no '=' after the parameter {name!r}")
                    i = skip(i + 1)
                    if i < n and value[i] == '"':
                        param, i = quoted(i)
                    else:
                        param, i = token(i)
                        if not param:
                            raise _bad(value, f"no value for the parameter {name!r}")
                    key = name.lower()
                    if key in params:
                        raise _bad(value, f"the parameter {key!r} twice")
                    params[key] = param
                    i = skip(i)
                    if i >= n:
                        break
                    if value[i] != ",":
                        raise _bad(value, f"unexpected {value[i]!r} at offset {i}")
                    k = skip(i + 1, " \t,")
                    if k >= n or not starts_param(k):
                        break  # the next challenge (or trailing commas)
                    i = k
        out.append(Challenge(scheme=scheme.lower(), params=params, token68=token68))


def auth_challenge(challenges: Iterable[Challenge], schemes: tuple[str, ...] = ("bearer", "dpop")) -> Challenge | None:
    """The first challenge whose scheme is one of ``schemes`` (Bearer and DPoP by default)."""
    return next((c for c in challenges if c.scheme in schemes), None)


def _quote(value: str) -> str:
    if any(c < " " and c != "\t" or c == "\x7f" for c in value):
        raise ValueError(f"a control character in a challenge parameter: {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_challenge(scheme: str, params: Mapping[str, str | None]) -> str:
    """One challenge, each parameter as a quoted-string (absent ones left out), e.g.
    ``Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"``."""
    parts = [f"{name}={_quote(value)}" for name, value in params.items() if value is not None]
    return scheme + (" " + ", ".join(parts) if parts else "")
