"""Tests for mcpwire.wire.headers: every MCP HTTP header rule (wire reference 13.4-13.6).

Cases marked "runner" are copied from the official conformance runner 0.2.0-alpha.12
(dist/index.js): http-header-validation, http-custom-header-server-validation,
http-custom-headers and http-invalid-tool-headers.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpwire.wire.errors import (
    ErrorCode,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from mcpwire.wire.headers import (
    MCP_METHOD,
    MCP_NAME,
    MCP_PARAM_PREFIX,
    MCP_PROTOCOL_VERSION,
    NAMED_METHODS,
    HeaderMismatch,
    HeaderView,
    InvalidParamHeader,
    ParamHeader,
    check_request_headers,
    decode_param_value,
    encode_param_value,
    param_headers,
    protocol_version_header,
    request_headers,
)

V = "2026-07-28"
Headers = list[tuple[bytes, bytes]]


def hv(*pairs: tuple[str, str]) -> HeaderView:
    return HeaderView([(k.encode(), v.encode("utf-8")) for k, v in pairs])


def mismatch(match: str) -> Any:
    return pytest.raises(HeaderMismatch, match=re.escape(match))


# --------------------------------------------------------------------------- constants, errors


def test_constants() -> None:
    assert MCP_PROTOCOL_VERSION == b"mcp-protocol-version"
    assert MCP_METHOD == b"mcp-method"
    assert MCP_NAME == b"mcp-name"
    assert MCP_PARAM_PREFIX == b"mcp-param-"
    assert dict(NAMED_METHODS) == {
        "tools/call": "name", "prompts/get": "name", "resources/read": "uri",
        # The tasks extension: Streamable HTTP, Routing Headers
        "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId",
    }


def test_error_classes() -> None:
    err = HeaderMismatch("x")
    assert isinstance(err, RemoteProtocolError)
    assert (err.code, err.http_status) == (ErrorCode.HEADER_MISMATCH, 400)
    inv = InvalidParamHeader("y")
    assert isinstance(inv, ProtocolError)
    assert not isinstance(inv, (RemoteProtocolError, LocalProtocolError))
    assert inv.code == ErrorCode.INVALID_PARAMS
    assert inv.code == -32602


# --------------------------------------------------------------------------- HeaderView


def test_header_view_case_insensitive_and_trimmed() -> None:
    view = hv(("MCP-METHOD", " \ttools/list\t "), ("Content-Type", "application/json"))
    assert view.get_one(b"mcp-method") == b"tools/list"
    assert view.get_one(b"Mcp-Method") == b"tools/list"
    assert view.require_one(b"content-type") == b"application/json"
    assert b"MCP-Method" in view
    assert b"mcp-name" not in view
    assert view.get_one(b"mcp-name") is None


def test_header_view_missing_and_repeated() -> None:
    view = hv(("Mcp-Method", "a"), ("mcp-method", "a"))
    assert b"mcp-method" in view
    with mismatch("Missing or repeated required header: mcp-method"):
        view.get_one(b"mcp-method")
    with mismatch("Missing or repeated required header: Mcp-Method"):
        view.require_one(b"mcp-method", "Mcp-Method")
    with mismatch("Missing or repeated required header: mcp-name"):
        view.require_one(b"mcp-name")
    assert HeaderView([]).get_one(b"x") is None


def test_header_view_empty_value_is_present() -> None:
    view = hv(("Mcp-Param-EmptyVal", ""))
    assert view.require_one(b"mcp-param-emptyval") == b""


# --------------------------------------------------------------------------- x-mcp-header annotations


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def ann(kind: str, name: Any) -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": name}


# runner http-custom-headers: the annotated test_custom_headers tool, verbatim shapes.
CUSTOM_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"},
        "empty_val": {"type": "string", "x-mcp-header": "EmptyVal"},
        "method_val": {"type": "string", "x-mcp-header": "Method"},
        "float_val": {"type": "number", "description": "no annotation"},
        "non_ascii_val": {"type": "string", "x-mcp-header": "NonAscii"},
        "whitespace_val": {"type": "string", "x-mcp-header": "Whitespace"},
        "leading_space_val": {"type": "string", "x-mcp-header": "LeadingSpace"},
        "trailing_space_val": {"type": "string", "x-mcp-header": "TrailingSpace"},
        "internal_space_val": {"type": "string", "x-mcp-header": "InternalSpace"},
        "control_char_val": {"type": "string", "x-mcp-header": "ControlChar"},
        "crlf_val": {"type": "string", "x-mcp-header": "CrLf"},
        "tab_val": {"type": "string", "x-mcp-header": "Tab"},
        "query": {"type": "string"},
    },
    "required": ["region", "priority", "query"],
}

# runner http-custom-headers: MCP_CONFORMANCE_CONTEXT.toolCalls[0].arguments
CUSTOM_TOOL_ARGS: dict[str, Any] = {
    "region": "us-west1",
    "priority": 42,
    "verbose": False,
    "debug": True,
    "empty_val": "",
    "method_val": "test-method",
    "float_val": 3.14159,
    "non_ascii_val": "Hello, 世界",
    "whitespace_val": " padded ",
    "leading_space_val": " us-west1",
    "trailing_space_val": "us-west1 ",
    "internal_space_val": "us west 1",
    "control_char_val": "line1\nline2",
    "crlf_val": "line1\r\nline2",
    "tab_val": "\tindented",
    "query": "SELECT * FROM users",
}

# runner http-invalid-tool-headers: the eleven invalid tools, and what each breaks.
RUNNER_INVALID: dict[str, tuple[dict[str, Any], str]] = {
    "invalid_empty_header": (obj(value=ann("string", "")), "must not be empty"),
    "invalid_object_header": (obj(data=ann("object", "Data")), "requires type"),
    "invalid_array_header": (
        obj(items={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
        "requires type",
    ),
    "invalid_null_header": (obj(nil=ann("null", "Nil")), "requires type"),
    "invalid_number_header": (obj(score=ann("number", "Score")), "requires type"),
    "invalid_duplicate_same_case": (
        obj(field1=ann("string", "Region"), field2=ann("string", "Region")),
        "unique ignoring case",
    ),
    "invalid_duplicate_diff_case": (
        obj(field1=ann("string", "MyField"), field2=ann("string", "myfield")),
        "unique ignoring case",
    ),
    "invalid_space_in_name": (obj(value=ann("string", "My Region")), "RFC 9110 token"),
    "invalid_colon_in_name": (obj(value=ann("string", "Region:Primary")), "RFC 9110 token"),
    "invalid_non_ascii_name": (obj(value=ann("string", "Région")), "RFC 9110 token"),
    "invalid_control_char_name": (obj(value=ann("string", "Region\t1")), "RFC 9110 token"),
}


@pytest.mark.parametrize("tool", sorted(RUNNER_INVALID))
def test_runner_invalid_annotations_rejected(tool: str) -> None:
    schema, rule = RUNNER_INVALID[tool]
    with pytest.raises(InvalidParamHeader, match=re.escape(rule)) as info:
        param_headers(schema, tool=tool)
    assert info.value.code == -32602
    assert f"tool {tool!r}" in info.value.message


def test_runner_invalid_messages_name_the_property() -> None:
    with pytest.raises(InvalidParamHeader, match="property 'score'"):
        param_headers(RUNNER_INVALID["invalid_number_header"][0])
    with pytest.raises(InvalidParamHeader, match="'myfield' on property 'field2' repeats 'MyField'"):
        param_headers(RUNNER_INVALID["invalid_duplicate_diff_case"][0])


def test_runner_valid_tools_accepted() -> None:
    # http-invalid-tool-headers valid_tool
    assert param_headers(obj(region=ann("string", "Region"))) == (
        ParamHeader(argument="region", header="Region", kind="string"),
    )
    found = param_headers(CUSTOM_TOOL_SCHEMA)
    assert [(p.argument, p.header, p.kind) for p in found] == [
        ("region", "Region", "string"),
        ("priority", "Priority", "integer"),
        ("verbose", "Verbose", "boolean"),
        ("debug", "Debug", "boolean"),
        ("empty_val", "EmptyVal", "string"),
        ("method_val", "Method", "string"),  # Mcp-Param-Method, not Mcp-Method
        ("non_ascii_val", "NonAscii", "string"),
        ("whitespace_val", "Whitespace", "string"),
        ("leading_space_val", "LeadingSpace", "string"),
        ("trailing_space_val", "TrailingSpace", "string"),
        ("internal_space_val", "InternalSpace", "string"),
        ("control_char_val", "ControlChar", "string"),
        ("crlf_val", "CrLf", "string"),
        ("tab_val", "Tab", "string"),
    ]
    # http-standard-headers tools and any schema without annotations
    assert param_headers({"type": "object", "properties": {}, "required": []}) == ()
    assert param_headers({}) == ()


def test_token_charset_accepted() -> None:
    name = "!#$%&'*+-.^_`|~09AZaz"
    assert param_headers(obj(v=ann("string", name)))[0].header_name == "Mcp-Param-" + name


def test_nested_properties_count() -> None:
    schema = obj(
        region=ann("string", "Region"),
        target=obj(zone=ann("integer", "Zone"), deeper=obj(flag=ann("boolean", "Flag"))),
    )
    assert param_headers(schema) == (
        ParamHeader(argument="region", header="Region", kind="string"),
        ParamHeader(argument="target", header="Zone", kind="integer", path=("zone",)),
        ParamHeader(argument="target", header="Flag", kind="boolean", path=("deeper", "flag")),
    )


@pytest.mark.parametrize(
    "schema",
    [
        {**obj(), "x-mcp-header": "Root"},
        obj(list={"type": "array", "items": ann("string", "Item")}),
        obj(tuple={"type": "array", "prefixItems": [ann("string", "Item")]}),
        obj(choice={"oneOf": [ann("string", "Choice")]}),
        obj(choice={"anyOf": [obj(a=ann("string", "A"))]}),
        {**obj(), "$defs": {"region": ann("string", "Region")}},
        {**obj(), "additionalProperties": ann("string", "Extra")},
        {**obj(), "patternProperties": {"^x": ann("string", "Extra")}},
    ],
)
def test_annotation_not_reached_through_properties_only(schema: dict[str, Any]) -> None:
    with pytest.raises(InvalidParamHeader, match="through `properties` keywords only"):
        param_headers(schema)


@pytest.mark.parametrize(
    ("prop", "rule"),
    [
        ({"x-mcp-header": "T"}, "got None"),  # no type at all
        ({"type": ["string", "null"], "x-mcp-header": "T"}, "got ['string', 'null']"),
        (ann("string", 7), "x-mcp-header 7 on property 'p' must be a string"),
        (ann("string", "A\r\nB"), "RFC 9110 token"),
        (ann("string", "Region\n"), "RFC 9110 token"),
        (ann("string", "a/b"), "RFC 9110 token"),
    ],
)
def test_more_invalid_annotations(prop: dict[str, Any], rule: str) -> None:
    with pytest.raises(InvalidParamHeader, match=re.escape(rule)):
        param_headers(obj(p=prop))


def test_annotation_inside_data_keywords_is_data() -> None:
    prop = {**ann("string", "Region"), "default": {"x-mcp-header": "x"}, "examples": [{"x-mcp-header": 1}]}
    assert param_headers({**obj(region=prop), "const": {"x-mcp-header": ""}}) == (
        ParamHeader(argument="region", header="Region", kind="string"),
    )


def test_deep_schema_no_recursion_error() -> None:
    schema: dict[str, Any] = ann("string", "Deep")
    for _ in range(5000):
        schema = obj(n=schema)
    (found,) = param_headers(schema)
    assert found.argument == "n" and len(found.path) == 4999


# --------------------------------------------------------------------------- value encoding


def b64(text: str) -> bytes:
    return b"=?base64?" + base64.b64encode(text.encode()) + b"?="


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        # SEP-2243 "Value Encoding Edge Cases" table
        ("us-west1", b"us-west1"),
        (" us-west1", b"=?base64?IHVzLXdlc3Qx?="),
        ("us-west1 ", b"=?base64?dXMtd2VzdDEg?="),
        (" us-west1 ", b"=?base64?IHVzLXdlc3QxIA==?="),
        ("us west 1", b"us west 1"),
        (True, b"true"),
        (False, b"false"),
        (42, b"42"),
        ("日本語", b"=?base64?5pel5pys6Kqe?="),
        ("line1\nline2", b"=?base64?bGluZTEKbGluZTI=?="),
        ("line1\r\nline2", b"=?base64?bGluZTENCmxpbmUy?="),
        ("\tindented", b"=?base64?CWluZGVudGVk?="),
        ("", b""),
        ("Hello, 世界", b"=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", b"=?base64?IHBhZGRlZCA=?="),
        ("=?base64?literal?=", b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        # ours
        (-7, b"-7"),
        (0, b"0"),
        (10**30, b"1" + b"0" * 30),
        ("a\tb", b"=?base64?YQli?="),  # internal tab is a control char for the runner's Ns
        ("del\x7f", b64("del\x7f")),
        ("\x00", b64("\x00")),
        ("=?base64??=", b64("=?base64??=")),
        ("=?base64?=", b"=?base64?="),  # too short to be the sentinel
        ("=?BASE64?SGVsbG8=?=", b"=?BASE64?SGVsbG8=?="),  # markers are case-sensitive
        ("file:///path/to/file%20name.txt", b"file:///path/to/file%20name.txt"),
        ("https://example.com/resource?id=123", b"https://example.com/resource?id=123"),
        ("~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./", b"~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./"),
    ],
)
def test_encode_table(value: str | int | bool, wire: bytes) -> None:
    assert encode_param_value(value) == wire


def test_encode_rejects_other_types() -> None:
    with pytest.raises(LocalProtocolError):
        encode_param_value(1.5)  # type: ignore[arg-type]


def test_encode_refuses_oversize_int() -> None:
    with pytest.raises(LocalProtocolError, match="too many digits"):
        encode_param_value(10**5000)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"=?base64?SGVsbG8=?=", "Hello"),  # runner ServerAcceptsValidBase64
        (b"SGVsbG8=", "SGVsbG8="),  # runner ServerLiteralMissingBase64Prefix
        (b"=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # runner ServerLiteralMissingBase64Suffix
        (b"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # case-sensitive markers
        (b"  us-west1 \t", "us-west1"),
        (b"a\tb c", "a\tb c"),
        (b"", ""),
        (b"=?base64??=", ""),
        (b" =?base64?IHBhZGRlZCA=?= ", " padded "),
    ],
)
def test_decode(raw: bytes, text: str) -> None:
    assert decode_param_value(raw) == text


@pytest.mark.parametrize(
    "raw",
    [
        b"=?base64?SGVsbG8?=",  # runner ServerRejectsInvalidBase64Padding
        b"=?base64?SGVs!!!bG8=?=",  # runner ServerRejectsInvalidBase64Chars
        b"=?base64?SGVsbG8=SGVs?=",  # data after padding
        b"=?base64?SGVs bG8=?=",
        b"=?base64?/w==?=",  # 0xFF is not UTF-8
        "caf\u00e9".encode("latin-1"),  # obs-text
        "café".encode(),
        b"a\x00b",
        b"a\x7fb",
        b"a\nb",
    ],
)
def test_decode_malformed(raw: bytes) -> None:
    with mismatch("Mcp-Param-Region is malformed"):
        decode_param_value(raw, header="Mcp-Param-Region")


@given(st.text())
def test_decode_encode_roundtrip_text(text: str) -> None:
    wire = encode_param_value(text)
    assert all(0x20 <= b <= 0x7E for b in wire)
    assert wire == wire.strip(b" \t")  # survives any HTTP stack's OWS trimming
    assert decode_param_value(wire) == text


@given(st.one_of(st.integers(), st.booleans()))
def test_decode_encode_roundtrip_scalars(value: int | bool) -> None:
    expected = ("true" if value else "false") if isinstance(value, bool) else str(value)
    assert decode_param_value(encode_param_value(value)) == expected


# --------------------------------------------------------------------------- runner's client checks


def _runner_ms(header: str) -> str:
    m = re.fullmatch(r"=\?base64\?(.*)\?=", header)
    return base64.b64decode(m.group(1) + "==").decode() if m else header


def _runner_needs_b64(value: str) -> bool:  # runner Ns
    return any(ord(c) < 32 or ord(c) > 126 for c in value) or value != value.strip()


def runner_accepts(header: str, body: Any, kind: str) -> bool:
    """The runner's checkParamHeader/Ps/Fs for one header (header as Node would parse it)."""
    expected = ("true" if body else "false") if kind == "boolean" else str(body)
    if _runner_needs_b64(expected) and not re.fullmatch(r"=\?base64\?(.*)\?=", header):
        return False
    decoded = _runner_ms(header)
    if kind in ("number", "integer"):
        return float(decoded) == float(expected)
    return decoded == expected


def _as_dict(headers: Headers) -> dict[str, str]:
    names = [n.lower() for n, _ in headers]
    assert len(names) == len(set(names)), "no header is sent twice"
    return {n.decode().lower(): v.decode().strip(" \t") for n, v in headers}


def test_runner_http_custom_headers_call() -> None:
    anns = param_headers(CUSTOM_TOOL_SCHEMA)
    headers = request_headers(
        method="tools/call",
        name="test_custom_headers",
        protocol_version=V,
        params_headers=anns,
        arguments=CUSTOM_TOOL_ARGS,
    )
    sent = _as_dict(headers)
    assert sent["mcp-protocol-version"] == V
    assert sent["mcp-method"] == "tools/call"
    assert sent["mcp-name"] == "test_custom_headers"
    for a in anns:
        key = "mcp-param-" + a.header.lower()
        assert runner_accepts(sent[key], CUSTOM_TOOL_ARGS[a.argument], a.kind), a
    assert "mcp-param-floatval" not in sent and "mcp-param-query" not in sent
    assert sent["mcp-param-method"] == "test-method" and sent["mcp-method"] == "tools/call"
    assert sent["mcp-param-emptyval"] == ""
    assert sent["mcp-param-internalspace"] == "us west 1"
    # emitted names keep the annotation's case
    assert (b"Mcp-Param-NonAscii", b"=?base64?SGVsbG8sIOS4lueVjA==?=") in headers
    # and our own server accepts the request
    view = HeaderView(headers)
    params = {"name": "test_custom_headers", "arguments": CUSTOM_TOOL_ARGS}
    check_request_headers(view, method="tools/call", params=params, param_headers=anns)


def test_runner_http_custom_headers_null_call() -> None:
    schema = obj(
        region=ann("string", "Region"),
        priority=ann("integer", "Priority"),
        verbose=ann("boolean", "Verbose"),
        query={"type": "string"},
    )
    args = {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"}
    sent = _as_dict(
        request_headers(
            method="tools/call",
            name="test_custom_headers_null",
            protocol_version=V,
            params_headers=param_headers(schema),
            arguments=args,
        )
    )
    assert "mcp-param-verbose" not in sent  # runner ClientCustomHeaderOmitNull
    assert sent["mcp-param-region"] == "us-east1" and sent["mcp-param-priority"] == "1"
    del args["verbose"]
    assert "mcp-param-verbose" not in _as_dict(
        request_headers(
            method="tools/call",
            name="t",
            protocol_version=V,
            params_headers=param_headers(schema),
            arguments=args,
        )
    )


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("tools/call", "test_headers"),
        ("tools/call", "my-hyphenated-tool"),
        ("resources/read", "file:///path/to/file%20name.txt"),
        ("resources/read", "https://example.com/resource?id=123"),
        ("prompts/get", "test_prompt"),
        ("tools/list", None),
        ("notifications/initialized", None),
    ],
)
def test_runner_http_standard_headers(method: str, name: str | None) -> None:
    headers = request_headers(method=method, name=name, protocol_version=V)
    sent = _as_dict(headers)
    assert sent["mcp-method"] == method  # compared raw by the runner
    assert sent.get("mcp-name") == name
    assert headers[0] == (b"MCP-Protocol-Version", V.encode())


def test_request_headers_name_is_encoded_like_params() -> None:
    sent = _as_dict(request_headers(method="prompts/get", name=" é ", protocol_version=V))
    assert sent["mcp-name"] == b64(" é ").decode()


def test_request_headers_integer_kind() -> None:
    anns = param_headers(obj(n=ann("integer", "N")))

    def one(value: Any) -> Headers:
        return request_headers(
            method="tools/call",
            name="t",
            protocol_version=V,
            params_headers=anns,
            arguments={"n": value},
        )

    assert one(3.0)[-1] == (b"Mcp-Param-N", b"3")
    assert one(-12)[-1] == (b"Mcp-Param-N", b"-12")
    for bad in (3.5, float("inf"), True, "3", [3]):
        with pytest.raises(LocalProtocolError, match="Mcp-Param-N as integer"):
            one(bad)


@pytest.mark.parametrize(("kind", "bad"), [("string", 1), ("string", True), ("boolean", 1), ("boolean", "true")])
def test_request_headers_kind_mismatch_raises(kind: str, bad: Any) -> None:
    with pytest.raises(LocalProtocolError, match=f"as {kind}"):
        request_headers(
            method="tools/call",
            name="t",
            protocol_version=V,
            params_headers=param_headers(obj(v=ann(kind, "V"))),
            arguments={"v": bad},
        )


def test_request_headers_nested_argument() -> None:
    anns = param_headers(obj(target=obj(zone=ann("string", "Zone"))))

    def zone(arguments: dict[str, Any]) -> str | None:
        sent = _as_dict(
            request_headers(method="tools/call", name="t", protocol_version=V, params_headers=anns, arguments=arguments)
        )
        return sent.get("mcp-param-zone")

    assert zone({"target": {"zone": "eu"}}) == "eu"
    assert zone({"target": "eu"}) is None
    assert zone({"target": {"zone": None}}) is None
    assert zone({}) is None


@pytest.mark.parametrize(("method", "version"), [("tööls/call", V), ("", V), ("a\nb", V), ("x", "v 1\r")])
def test_request_headers_unsendable_method_or_version(method: str, version: str) -> None:
    with pytest.raises(LocalProtocolError, match="cannot be sent as a header value"):
        request_headers(method=method, name=None, protocol_version=version)


# --------------------------------------------------------------------------- server checks


def std(method: str, name: str | None = None, **extra: str) -> list[tuple[str, str]]:
    pairs = [("MCP-Protocol-Version", V), ("Mcp-Method", method)]
    if name is not None:
        pairs.append(("Mcp-Name", name))
    return pairs + list(extra.items())


TOOL = "a_header_probe"
CALL = {"name": TOOL, "arguments": {}}


# runner http-header-validation: the eight cases, in its order.
def test_runner_rejects_mismatched_method() -> None:
    view = hv(("MCP-Protocol-Version", V), ("Mcp-Method", "prompts/list"))
    with mismatch("Mcp-Method does not match the request body") as info:
        check_request_headers(view, method="tools/list", params=None)
    assert (info.value.code, info.value.http_status) == (-32020, 400)


def test_runner_rejects_missing_method() -> None:
    with mismatch("Missing or repeated required header: Mcp-Method"):
        check_request_headers(hv(("MCP-Protocol-Version", V)), method="tools/list", params=None)


def test_runner_rejects_mismatched_name() -> None:
    view = hv(*std("tools/call", "wrong_tool_name"))
    with mismatch("Mcp-Name does not match the request body"):
        check_request_headers(view, method="tools/call", params=CALL)


def test_runner_accepts_whitespace_around_name() -> None:
    check_request_headers(hv(*std("tools/call", f"  {TOOL}  ")), method="tools/call", params=CALL)


def test_runner_rejects_missing_name() -> None:
    with mismatch("Missing or repeated required header: Mcp-Name"):
        check_request_headers(hv(*std("tools/call")), method="tools/call", params=CALL)


@pytest.mark.parametrize("header_name", ["mcp-method", "MCP-METHOD"])
def test_runner_accepts_any_header_name_case(header_name: str) -> None:
    view = hv(("MCP-Protocol-Version", V), (header_name, "tools/list"))
    check_request_headers(view, method="tools/list", params=None)


def test_runner_rejects_case_mismatch_value() -> None:
    with mismatch("Mcp-Method does not match the request body"):
        check_request_headers(hv(*std("TOOLS/LIST")), method="tools/list", params=None)


def test_repeated_standard_headers() -> None:
    with mismatch("Missing or repeated required header: Mcp-Method"):
        check_request_headers(
            hv(("Mcp-Method", "tools/list"), ("mcp-method", "tools/list")),
            method="tools/list",
            params=None,
        )
    with mismatch("Missing or repeated required header: Mcp-Name"):
        check_request_headers(hv(*std("tools/call", TOOL), ("MCP-NAME", TOOL)), method="tools/call", params=CALL)


@pytest.mark.parametrize("size", [1, 255, 256, 257, 4096])
def test_name_of_any_length_is_compared_every_time(size: int) -> None:
    # Values up to 256 bytes are decoded once and remembered, longer ones each time: the answer
    # must not depend on which, nor on what an earlier request sent.
    name = "n" * size
    params = {"name": name, "arguments": {}}
    for _ in range(2):
        check_request_headers(hv(*std("tools/call", name)), method="tools/call", params=params)
        check_request_headers(hv(*std("tools/call", b64(name).decode())), method="tools/call", params=params)
        with mismatch("Mcp-Name does not match the request body"):
            check_request_headers(hv(*std("tools/call", name + "x")), method="tools/call", params=params)
        with mismatch("Mcp-Name is malformed"):
            check_request_headers(hv(*std("tools/call", name + "\x7f")), method="tools/call", params=params)


def test_name_for_resources_read_and_prompts_get() -> None:
    uri = "file:///path/to/file%20name.txt"
    check_request_headers(hv(*std("resources/read", uri)), method="resources/read", params={"uri": uri})
    with mismatch("Mcp-Name does not match the request body"):
        check_request_headers(
            hv(*std("resources/read", "name")), method="resources/read", params={"name": "name", "uri": uri}
        )
    check_request_headers(hv(*std("prompts/get", "p")), method="prompts/get", params={"name": "p"})
    # base64-wrapped names are decoded
    wrapped = b64("日本").decode()
    check_request_headers(hv(*std("prompts/get", wrapped)), method="prompts/get", params={"name": "日本"})
    with mismatch("Mcp-Name is malformed"):
        check_request_headers(hv(*std("prompts/get", "=?base64?***?=")), method="prompts/get", params={"name": "p"})


@pytest.mark.parametrize("params", [None, {}, {"name": 7}, {"name": None}])
def test_name_comparison_skipped_when_body_has_no_string(params: dict[str, Any] | None) -> None:
    check_request_headers(hv(*std("tools/call")), method="tools/call", params=params)


def test_other_methods_ignore_mcp_name() -> None:
    # The runner's client helper also sends Mcp-Name for tasks/* (extension): never refuse it.
    check_request_headers(hv(*std("tasks/get", "t-1")), method="tasks/get", params={"taskId": "t-1"})


# runner http-custom-header-server-validation, against a fixture tool like snodo's.
REGION = param_headers(obj(region=ann("string", "Region"), query={"type": "string"}))


def call(region_header: str | None, region: Any = "Hello", *more: tuple[str, str]) -> None:
    pairs = std("tools/call", "echo") + list(more)
    if region_header is not None:
        pairs.append(("Mcp-Param-Region", region_header))
    arguments = {"query": "q"} if region is ... else {"region": region, "query": "q"}
    check_request_headers(
        hv(*pairs),
        method="tools/call",
        params={"name": "echo", "arguments": arguments},
        param_headers=REGION,
    )


def test_runner_custom_header_cases() -> None:
    call("=?base64?SGVsbG8=?=")  # ServerAcceptsValidBase64
    with mismatch("Mcp-Param-Region is malformed"):
        call("=?base64?SGVsbG8?=")  # ServerRejectsInvalidBase64Padding
    with mismatch("Mcp-Param-Region is malformed"):
        call("=?base64?SGVs!!!bG8=?=")  # ServerRejectsInvalidBase64Chars
    call("SGVsbG8=", "SGVsbG8=")  # ServerLiteralMissingBase64Prefix
    call("=?base64?SGVsbG8=", "=?base64?SGVsbG8=")  # ServerLiteralMissingBase64Suffix
    with mismatch("Missing or repeated required header: Mcp-Param-Region"):
        call(None, "test-value")  # ServerRejectsMissingCustomHeader


def test_custom_header_more_cases() -> None:
    call(" Hello\t")
    call("Hello", "Hello", ("mcp-param-unknown", "x"))  # unannotated headers are not ours
    with mismatch("Mcp-Param-Region does not match the request body"):
        call("hello")
    with mismatch("Mcp-Param-Region does not match the request body"):
        call("=?BASE64?SGVsbG8=?=")  # literal, so not "Hello"
    with mismatch("Missing or repeated required header: Mcp-Param-Region"):
        call("Hello", "Hello", ("MCP-PARAM-REGION", "Hello"))
    call(None, None)  # null: nothing expected
    call(None, ...)  # absent: nothing expected
    with mismatch("Mcp-Param-Region does not match the request body"):
        call("Hello", None)  # a header with nothing in the body to mirror
    with mismatch("Mcp-Param-Region does not match the request body"):
        call("Hello", ...)
    call(None, {"not": "mirrorable"})  # left to argument validation (-32602)
    call("x", ["no"])


def test_custom_header_arguments_shapes() -> None:
    view = hv(*std("tools/call", "echo"), ("Mcp-Param-Region", "x"))
    with mismatch("Mcp-Param-Region does not match the request body"):
        check_request_headers(view, method="tools/call", params={"name": "echo"}, param_headers=REGION)
    check_request_headers(  # arguments of the wrong shape: -32602 later
        view, method="tools/call", params={"name": "echo", "arguments": [1]}, param_headers=REGION
    )
    # annotations only apply to tools/call
    check_request_headers(
        hv(*std("prompts/get", "echo")),
        method="prompts/get",
        params={"name": "echo", "arguments": {"region": "x"}},
        param_headers=REGION,
    )


@pytest.mark.parametrize(
    ("arg", "header", "body", "ok"),
    [
        ("n", "42", 42, True),
        ("n", "42.0", 42, True),
        ("n", "4.2e1", 42, True),
        ("n", "-3", -3, True),
        ("n", "3", 3.0, True),
        ("n", "0.1", 0.1, True),
        ("n", "=?base64?NDI=?=", 42, True),
        ("n", "42abc", 42, False),
        ("n", "0x2A", 42, False),
        ("n", "4_2", 42, False),
        ("n", "NaN", 42, False),
        ("n", "", 0, False),
        ("n", "43", 42, False),
        ("n", "1e99999999999999999999999", 1, False),
        ("n", "42", "42", True),  # body type decides, as in snodo; -32602 comes later
        ("b", "true", True, True),
        ("b", "false", False, True),
        ("b", "True", True, False),  # lowercase only
        ("b", "1", True, False),
        ("b", "true", "true", True),
    ],
)
def test_param_comparison(arg: str, header: str, body: Any, ok: bool) -> None:
    anns = param_headers(obj(n=ann("integer", "N"), b=ann("boolean", "B")))
    label = "Mcp-Param-" + arg.upper()
    view = hv(*std("tools/call", "t"), (label, header))
    params = {"name": "t", "arguments": {arg: body}}
    if ok:
        check_request_headers(view, method="tools/call", params=params, param_headers=anns)
    else:
        with mismatch(f"{label} does not match the request body"):
            check_request_headers(view, method="tools/call", params=params, param_headers=anns)


def test_nested_param_checked() -> None:
    anns = param_headers(obj(target=obj(zone=ann("string", "Zone"))))
    params = {"name": "t", "arguments": {"target": {"zone": "eu"}}}
    check_request_headers(
        hv(*std("tools/call", "t"), ("Mcp-Param-Zone", "eu")),
        method="tools/call",
        params=params,
        param_headers=anns,
    )
    with mismatch("Missing or repeated required header: Mcp-Param-Zone"):
        check_request_headers(hv(*std("tools/call", "t")), method="tools/call", params=params, param_headers=anns)


@given(
    st.dictionaries(
        st.sampled_from(["s", "i", "b"]),
        st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
    ),
    st.text(),
)
def test_client_to_server_roundtrip(raw_args: dict[str, Any], name: str) -> None:
    anns = param_headers(obj(s=ann("string", "S"), i=ann("integer", "I"), b=ann("boolean", "B")))
    kinds = {"s": str, "i": int, "b": bool}
    args = {k: v for k, v in raw_args.items() if v is None or (type(v) is kinds[k])}
    headers = request_headers(method="tools/call", name=name, protocol_version=V, params_headers=anns, arguments=args)
    check_request_headers(
        HeaderView(headers),
        method="tools/call",
        params={"name": name, "arguments": args},
        param_headers=anns,
    )


# --------------------------------------------------------------------------- protocol version


def test_protocol_version_header() -> None:
    assert protocol_version_header(hv(("mcp-protocol-version", f" {V} "))) == V
    assert protocol_version_header(hv(("Mcp-Method", "x"))) is None
    with mismatch("Missing or repeated required header: MCP-Protocol-Version"):
        protocol_version_header(hv(("MCP-Protocol-Version", V), ("mcp-protocol-version", V)))
    for bad in ("2026 07 28", "2026-07-28\x00", "versión"):
        with mismatch("MCP-Protocol-Version is malformed"):
            protocol_version_header(hv(("MCP-Protocol-Version", bad)))
