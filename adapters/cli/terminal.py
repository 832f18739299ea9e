"""Terminal input and output of the ``mcpwire`` command (see :mod:`mcpwire_adapters.cli.commands`).

Owns: escaping what a server sends before it reaches the terminal, the progress line, aligned
tables, and answering what a server asks mid-call (elicitation forms and URLs, sampling,
roots) by asking the person at the terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Awaitable, Literal, TextIO, TypeVar
from urllib.parse import urlsplit

import msgspec
import trio

from mcpwire.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    InputRequest,
    ListRootsRequest,
    ListRootsResult,
    Root,
    TextContent,
)

from ..errors import McpwireAdapterError

T = TypeVar("T")

# Exit codes of the command (docs/cli.md).
EXIT_OK, EXIT_TOOL_ERROR, EXIT_RPC_ERROR, EXIT_UNREACHABLE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
_BAR = 24

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)]}  # C0, DEL, C1
Action = Literal["accept", "decline", "cancel"]
_ACTIONS: dict[str, Action] = {
    "": "accept", "a": "accept", "accept": "accept", "y": "accept", "yes": "accept",
    "d": "decline", "decline": "decline", "n": "decline", "no": "decline", "c": "cancel", "cancel": "cancel",
}


class CliError(McpwireAdapterError):
    """An expected failure: printed as one ``error:`` line, then exit with ``exit_code``."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class _EndOfInput(McpwireAdapterError):
    """stdin ended while a question was open."""


def clean(text: Any, *, keep_newlines: bool = False) -> str:
    """``text`` as a string with control characters escaped (and, unless kept, newlines and
    tabs folded into spaces): a server's strings must not move the cursor or recolour."""
    if isinstance(text, str):
        value = text
    else:
        try:
            value = json.dumps(text, ensure_ascii=False)
        except (TypeError, ValueError):
            value = str(text)
    if keep_newlines:
        return value.translate({c: e for c, e in _CONTROL.items() if c not in (0x09, 0x0A)})
    return " ".join(value.split()).translate(_CONTROL)


# -- the terminal --------------------------------------------------------------------------------
class Terminal:
    """stdout for results, stderr for the rest, stdin for answers; one progress line at most."""

    def __init__(self, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.err_tty = stderr.isatty()
        self.in_tty = stdin.isatty()
        self.out_width: int | None = shutil.get_terminal_size().columns if stdout.isatty() else None
        self._bar = 0  # length of the progress line on screen (TTY only), 0 when none
        self._task_line = ""  # the last task state shown (tasks extension), to show each change once
        self._asking = False  # a question is on screen, its answer not typed yet

    def out(self, text: str = "") -> None:
        self.end_progress()
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def say(self, text: str) -> None:
        self.end_progress()
        if self._asking:  # interrupted while waiting for an answer: start a new line
            self._asking = False
            self.stderr.write("\n")
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def ask(self, question: str) -> str:
        """One line from stdin (without its newline); :class:`_EndOfInput` at end of input."""
        self.end_progress()
        self.stderr.write(question)
        self.stderr.flush()
        self._asking = True
        line = self.stdin.readline()
        self._asking = False
        if not line:
            self.stderr.write("(end of input)\n")
            raise _EndOfInput()
        answer = line.rstrip("\r\n")
        if not self.in_tty:  # piped answers: echo them so the transcript reads like a session
            self.stderr.write(answer + "\n")
        self.stderr.flush()
        return answer

    def progress(self, value: float, total: float | None, message: str | None) -> None:
        fraction = value / total if total else None
        shown = f"{value:g}/{total:g}" if total else f"{value:g}"
        note = f" {clean(message)}" if message else ""
        if not self.err_tty:
            percent = f" ({fraction:.0%})" if fraction is not None else ""
            self.stderr.write(f"progress {shown}{percent}{note}\n")
        else:
            if fraction is not None:
                filled = round(_BAR * min(max(fraction, 0.0), 1.0))
                line = f"[{'#' * filled}{'.' * (_BAR - filled)}] {fraction:4.0%}{note}"
            else:
                line = f"[{'working':^{_BAR}}] {shown}{note}"
            line = line[: max(shutil.get_terminal_size().columns - 1, 20)]
            self.stderr.write("\r" + line + " " * max(self._bar - len(line), 0))
            self._bar = len(line)
        self.stderr.flush()

    def task(self, task: Any) -> None:
        """A followed task's state (tasks extension): one line per change, or the status line of a
        terminal, redrawn while the task is polled."""
        message = f" {clean(task.status_message)}" if isinstance(task.status_message, str) else ""
        line = f"task {clean(task.task_id)[:12]}: {clean(task.status)}{message}"
        if line == self._task_line:
            return
        self._task_line = line
        if not self.err_tty:
            self.stderr.write(line + "\n")
        else:
            line = line[: max(shutil.get_terminal_size().columns - 1, 20)]
            self.stderr.write("\r" + line + " " * max(self._bar - len(line), 0))
            self._bar = len(line)
        self.stderr.flush()

    def end_progress(self) -> None:
        if self._bar:
            self.stderr.write("\n")
            self._bar = 0


# -- tables ----------------------------------------------------------------------------------------
def table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None) -> list[str]:
    """Rows aligned under ``headers``, indented two spaces. The first column is never cut (names
    are for copying); the middle ones are at most 40 characters; with a ``width`` each line is
    cut to fit it."""
    cells = [[clean(c) for c in row] for row in rows]
    sizes = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row[:-1]):
            sizes[i] = max(sizes[i], len(cell) if i == 0 else min(len(cell), 40))

    def line(row: Sequence[str]) -> str:
        parts = [(c if i == 0 else _cut(c, sizes[i])).ljust(sizes[i]) for i, c in enumerate(row[:-1])]
        text = "  " + "  ".join([*parts, row[-1]])
        return _cut(text, width - 1) if width and len(text) >= width else text.rstrip()

    return [line(headers), *(line(row) for row in cells)]


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: max(size - 3, 0)] + "..."


def _arguments(required: Sequence[str], optional: Sequence[str]) -> str:
    return " ".join([*required, *(f"[{name}]" for name in optional)])


def _tool_row(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("inputSchema")
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties")
    names = [str(k) for k in props] if isinstance(props, dict) else []
    req = schema.get("required")
    required = [str(r) for r in req] if isinstance(req, list) else []
    return [str(tool.get("name", "?")), _arguments(required, [n for n in names if n not in required]),
            str(tool.get("description") or tool.get("title") or "")]


def _prompt_row(prompt: dict[str, Any]) -> list[str]:
    raw = prompt.get("arguments")
    args = [a for a in raw if isinstance(a, dict)] if isinstance(raw, list) else []
    required = [str(a.get("name")) for a in args if a.get("required") is True]
    optional = [str(a.get("name")) for a in args if a.get("required") is not True]
    return [str(prompt.get("name", "?")), _arguments(required, optional),
            str(prompt.get("description") or prompt.get("title") or "")]


def _resource_row(resource: dict[str, Any], key: str) -> list[str]:
    return [str(resource.get(key, "?")), str(resource.get("name", "")), str(resource.get("mimeType", "")),
            str(resource.get("description") or resource.get("title") or "")]


# The columns `mcpwire inspect` shows for each list, and how a row is made from an entry.
LIST_COLUMNS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], list[str]]]] = {
    "tools": (("NAME", "ARGUMENTS", "DESCRIPTION"), _tool_row),
    "resources": (("URI", "NAME", "MIME TYPE", "DESCRIPTION"), lambda r: _resource_row(r, "uri")),
    "resourceTemplates": (("URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"),
                          lambda r: _resource_row(r, "uriTemplate")),
    "prompts": (("NAME", "ARGUMENTS", "DESCRIPTION"), _prompt_row),
}


def capabilities_text(capabilities: Any) -> str:
    """``tools (listChanged), resources (subscribe), logging``: each capability with its flags."""
    if not isinstance(capabilities, dict) or not capabilities:
        return "none"
    parts = []
    for name, value in capabilities.items():
        flags = [str(k) for k, v in value.items() if v is not False and v is not None] if isinstance(value, dict) else []
        parts.append(f"{name} ({', '.join(flags)})" if flags else str(name))
    return ", ".join(parts)


# -- call: answering what the server asks ------------------------------------------------------------
class Answerer:
    """Answers a round of input requests in the terminal (``on_input`` of :meth:`Session.call_tool`)."""

    def __init__(self, term: Terminal, roots: Sequence[str]) -> None:
        self.term = term
        self.roots = list(roots)

    def __call__(self, requests: dict[str, InputRequest]) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            if isinstance(request, ElicitRequest):
                answers[key] = self.elicit(key, request)
            elif isinstance(request, CreateMessageRequest):
                answers[key] = self.sample(key, request)
            elif isinstance(request, ListRootsRequest):
                answers[key] = self.list_roots(key)
        return answers

    def _choice(self, question: str) -> Action:
        while True:
            answer = self.term.ask(f"  {question} [a]ccept, [d]ecline or [c]ancel? [a] ").strip().lower()
            action = _ACTIONS.get(answer)
            if action is not None:
                return action
            self.term.say("  please answer a, d or c")

    def elicit(self, key: str, request: ElicitRequest) -> ElicitResult:
        params = request.params
        try:
            if params.mode == "url":
                self.term.say(f"? The server asks you to open a URL ({clean(key)}): {clean(params.message)}")
                self.term.say(f"  {clean(params.url)}")
                return ElicitResult(action=self._choice("Open it and continue?"))
            self.term.say(f"? The server asks ({clean(key)}): {clean(params.message)}")
            action = self._choice("Answer?")
            if action != "accept":
                return ElicitResult(action=action)
            schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
            props = schema.get("properties")
            req = schema.get("required")
            required = set(req) if isinstance(req, list) else set()
            content: dict[str, Any] = {}
            for name, prop in (props.items() if isinstance(props, dict) else ()):
                value = self.field(str(name), prop if isinstance(prop, dict) else {}, name in required)
                if value is not None:
                    content[str(name)] = value
            return ElicitResult(action="accept", content=content)
        except _EndOfInput:
            return ElicitResult(action="cancel")

    def field(self, name: str, prop: dict[str, Any], required: bool) -> Any:
        """Ask for one property of a form; ``None`` leaves an optional one out."""
        choices = _choices(prop)
        kind = prop.get("type")
        many = kind == "array"
        if choices:
            for i, (value, title) in enumerate(choices, 1):
                self.term.say(f"    {i}) {clean(title)}" + (f" ({clean(value)})" if title != value else ""))
            kind_text = "numbers or values, comma-separated" if many else "number or value"
        else:
            kind_text = {"boolean": "y/n"}.get(str(kind), str(kind or "string"))
        label = clean(prop.get("title") or name)
        about = f" - {clean(prop['description'])}" if isinstance(prop.get("description"), str) else ""
        default = prop.get("default")
        hint = f" [{clean(default)}]" if default is not None else ""
        question = f"  {label}{about} ({kind_text}{', required' if required else ''}){hint}: "
        while True:
            text = self.term.ask(question).strip()
            if not text:
                if default is not None:
                    return default
                if not required:
                    return None
                self.term.say("    a value is required")
                continue
            try:
                return _convert(text, prop, choices, many)
            except ValueError as exc:
                self.term.say(f"    {exc}")

    def sample(self, key: str, request: CreateMessageRequest) -> CreateMessageResult:
        params = request.params
        self.term.say(f"? The server asks for a reply from your model ({clean(key)}), "
                      f"at most {params.max_tokens} tokens. You are the model:")
        if isinstance(params.system_prompt, str):
            self.term.say(f"  system: {clean(params.system_prompt)}")
        for message in params.messages:
            blocks = message.content if isinstance(message.content, list) else [message.content]
            for block in blocks:
                self.term.say(f"  {message.role}: {summary(msgspec.to_builtins(block))}")
        try:
            reply = self.term.ask("  assistant: ")
        except _EndOfInput:
            raise CliError("no reply given to the sampling request; the call was abandoned", EXIT_INTERRUPTED) from None
        return CreateMessageResult(role="assistant", content=TextContent(text=reply), model="human (mcpwire-cli)",
                                   stop_reason="endTurn")

    def list_roots(self, key: str) -> ListRootsResult:
        if self.roots:
            self.term.say(f"? The server asks for your roots ({clean(key)}): answering {', '.join(self.roots)}")
            return ListRootsResult(roots=[Root(uri=uri) for uri in self.roots])
        self.term.say(f"? The server asks for your roots ({clean(key)}): a file:// URI or path per line, "
                      "empty line to finish")
        roots: list[Root] = []
        while True:
            try:
                text = self.term.ask("  root: ").strip()
            except _EndOfInput:
                break
            if not text:
                break
            roots.append(Root(uri=root_uri(text)))
        return ListRootsResult(roots=roots)


def root_uri(text: str) -> str:
    """A root given on the command line as a URI: a path (absolute or not) becomes a file: URI."""
    return text if urlsplit(text).scheme not in ("", "c", "d") else Path(text).expanduser().resolve().as_uri()


def _choices(prop: dict[str, Any]) -> list[tuple[Any, str]]:
    """(value, title) of an enum property, or of the items of a multi-select one."""
    source = prop.get("items") if prop.get("type") == "array" and isinstance(prop.get("items"), dict) else prop
    assert isinstance(source, dict)
    if isinstance(source.get("enum"), list):
        names = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else None
        values = source["enum"]
        return [(v, str(names[i]) if names and i < len(names) else str(v)) for i, v in enumerate(values)]
    for keyword in ("oneOf", "anyOf"):
        options = source.get(keyword)
        if isinstance(options, list):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options if isinstance(o, dict) and "const" in o]
    return []


def _convert(text: str, prop: dict[str, Any], choices: list[tuple[Any, str]], many: bool) -> Any:
    """The typed value of an answer, or ValueError with what is wrong."""
    if choices:
        picked = []
        for part in ([p.strip() for p in text.split(",") if p.strip()] if many else [text]):
            if part.isdigit() and 1 <= int(part) <= len(choices):
                picked.append(choices[int(part) - 1][0])
            elif any(part == str(v) for v, _ in choices):
                picked.append(next(v for v, _ in choices if part == str(v)))
            else:
                raise ValueError(f"{part!r} is not one of the choices")
        return picked if many else picked[0]
    kind = prop.get("type")
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer y or n")
    if kind in ("number", "integer"):
        try:
            number: float = int(text)
        except ValueError:
            if kind == "integer":
                raise ValueError("an integer is needed") from None
            try:
                number = float(text)
            except ValueError:
                raise ValueError("a number is needed") from None
        if isinstance(prop.get("minimum"), (int, float)) and number < prop["minimum"]:
            raise ValueError(f"the minimum is {prop['minimum']}")
        if isinstance(prop.get("maximum"), (int, float)) and number > prop["maximum"]:
            raise ValueError(f"the maximum is {prop['maximum']}")
        return number
    if isinstance(prop.get("minLength"), int) and len(text) < prop["minLength"]:
        raise ValueError(f"at least {prop['minLength']} characters")
    if isinstance(prop.get("maxLength"), int) and len(text) > prop["maxLength"]:
        raise ValueError(f"at most {prop['maxLength']} characters")
    return text


def summary(block: Any) -> str:
    """One content block as one line: text as is, anything else described."""
    if not isinstance(block, dict):
        return f"[{clean(block)}]"
    kind = block.get("type")
    if kind == "text":
        return clean(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(block["data"]) * 3 // 4 if isinstance(block.get("data"), str) else 0
        return f"[{kind} {clean(block.get('mimeType', '?'))}, about {size} bytes]"
    if kind == "resource_link":
        return f"[resource link {clean(block.get('uri', '?'))}" + (
            f" ({clean(block['name'])})]" if block.get("name") else "]")
    if kind == "resource":
        found = block.get("resource")
        inner: dict[str, Any] = found if isinstance(found, dict) else {}
        what = f"{len(inner['text'])} characters of text" if isinstance(inner.get("text"), str) else "binary"
        return f"[embedded resource {clean(inner.get('uri', '?'))} ({clean(inner.get('mimeType', '?'))}, {what})]"
    return f"[{clean(kind or 'unknown')} content]"


def os_reason(exc: BaseException) -> str:
    """What the innermost OSError behind ``exc`` says ("Connection refused")."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, BaseExceptionGroup):
            seen = seen.exceptions[0]
            continue
        if isinstance(seen, socket.gaierror) and seen.strerror:
            return seen.strerror
        if isinstance(seen, OSError) and isinstance(seen.errno, int) and seen.errno > 0:
            return os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return str(exc)


def trio_run(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``trio.run``, with a nursery's group of one exception turned back into that exception."""
    try:
        return trio.run(fn, *args)
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if leaf is group:
            raise
        raise leaf from None
