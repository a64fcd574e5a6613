"""``prefixexec guard [options] -- SERVER_COMMAND [ARGS...]``: an MCP stdio proxy that checks
every ``tools/call`` with the scorer's own rules before forwarding it (spec: spec/guard.md)."""

from __future__ import annotations

import argparse
from typing import Literal

import attrs

from prefixexec.cli import int_at_least

NAME = "guard"


@attrs.frozen(slots=True)
class Options:
    """``guard``'s arguments, typed (API-PIPELINE)."""

    server: tuple[str, ...] = ()
    mode: Literal["block", "warn"] = "block"
    trace: str | None = None
    rules: str | None = None
    label_rules: str | None = None
    context: tuple[str, ...] = ()
    no_id_keys: bool = False
    timeout: float = 60.0
    model: str = "mcp-client"
    method: str = "prefixexec-guard"
    task: str | None = None
    listen: str | None = None
    upstream: str | None = None
    max_line_bytes: int | None = None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0: {text!r}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="run an MCP server behind a proxy that checks every tools/call before it runs",
        description="Start SERVER_COMMAND as an MCP server over stdio and speak MCP to the client on "
        "this process's stdin/stdout. Every tools/call is checked first (the tool is in the server's "
        "tools/list, its arguments satisfy the tool's inputSchema, identifier arguments occurred "
        "earlier in the session, the --rules preconditions hold); a call that fails a check is "
        "answered with isError and a one-line reason naming the rule and label, and never reaches "
        "the server (--mode block), or is forwarded and recorded (--mode warn). --trace writes every "
        "call as OTLP JSON lines that `prefixexec score --adapter otel --success-attr @ok` reads.",
    )
    parser.add_argument("--mode", choices=("block", "warn"), default="block", help="block (default) or warn")
    parser.add_argument("--trace", metavar="FILE", help="append every call to FILE (OTLP JSON lines)")
    parser.add_argument(
        "--rules", metavar="FILE", help="TOML file of guard rules (requires, argument, provenance)"
    )
    parser.add_argument(
        "--label-rules",
        metavar="FILE",
        help="TOML label rules ([[otel]] tables) for labelling the server's errors, as score takes them",
    )
    parser.add_argument(
        "--context",
        metavar="FILE",
        action="append",
        default=[],
        help="a UTF-8 text the agent has seen (its task, the user's messages): identifiers in it may be "
        "used (repeatable)",
    )
    parser.add_argument(
        "--no-id-keys",
        action="store_true",
        help="do not check arguments named like ids (id, *_id, *Id) by default; only [[provenance]] rules",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="seconds to wait for each answer (0: no limit)",
    )
    parser.add_argument("--model", default="mcp-client", help="the model named in the trace")
    parser.add_argument("--method", default="prefixexec-guard", help="the agent (method) named in the trace")
    parser.add_argument("--task", metavar="ID", help="the task id of the session in the trace")
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="streamable HTTP instead of stdio: serve MCP clients on HOST:PORT (port 0: any free port; "
        "the URL is printed on stderr), in front of the server at --upstream",
    )
    parser.add_argument("--upstream", metavar="URL", help="with --listen: the MCP server (streamable HTTP)")
    parser.add_argument(
        "--max-line-bytes",
        type=int_at_least(1),
        metavar="N",
        help="the longest line read from the client or the server, and the longest HTTP body "
        "(default 67108864 = 64 MiB; spec HOSTILE-GUARD-LINE)",
    )
    parser.add_argument("server", nargs=argparse.REMAINDER, metavar="-- SERVER_COMMAND [ARGS...]")


def run(options: Options) -> int:
    from prefixexec.adapters.errors import InputError
    from prefixexec.adapters.inputs import open_binary
    from prefixexec.adapters.labels import load_label_rules
    from prefixexec.guard import Guard, load_guard_rules
    from prefixexec.guard.proxy import MAX_LINE, ProxyOptions, serve

    command = list(options.server)
    if command[:1] == ["--"]:
        command = command[1:]
    if (options.listen is None) != (options.upstream is None):
        raise InputError("guard", "--listen and --upstream go together (the streamable-HTTP guard)")
    if options.listen is not None and command:
        raise InputError("guard", "give either --listen/--upstream or a server command after --, not both")
    if not command and options.listen is None:
        raise InputError(
            "guard", "no server command: give it after --, e.g. prefixexec guard -- mcp-server-git"
        )
    http = None
    if options.listen is not None:
        from prefixexec.guard.http import MAX_BODY, HttpOptions, parse_listen, parse_upstream

        host, port = parse_listen(options.listen)
        assert options.upstream is not None  # (checked above: --listen and --upstream go together)
        parse_upstream(options.upstream)
        http = HttpOptions(host, port, options.upstream, options.timeout, options.max_line_bytes or MAX_BODY)
    proxy = ProxyOptions(
        command=tuple(command),
        mode=options.mode,
        trace=options.trace,
        timeout=options.timeout,
        model=options.model,
        method=options.method,
        task=options.task,
        max_line=options.max_line_bytes or MAX_LINE,
    )
    rules = load_guard_rules(options.rules, id_keys=not options.no_id_keys)
    label_rules = load_label_rules(options.label_rules, "otel")
    context: list[str] = []
    for path in options.context:
        with open_binary(path, "a UTF-8 text") as handle:
            data = handle.read(1 << 24)
        try:
            context.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputError(path, "--context: not UTF-8 text") from None
    guard = Guard(
        rules=rules,
        label_rules=label_rules,
        mode=proxy.mode,
        trace=proxy.trace,
        model=proxy.model,
        method=proxy.method,
        task=proxy.task,
        context=context,
    )
    if http is not None:
        from prefixexec.guard.http import serve_http

        return serve_http(guard, http)
    return serve(guard, proxy)
