"""The command group, the error guard every command runs in, and the options several commands share."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
import warnings

import click

from ..conventions import TOOL_VERSION as __version__
from ..conventions import display, shown
from ..errors import EdgeprofError, InputErrors

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
TAXONOMY_HELP = "TOML file extending or overriding the operator taxonomy (see README)."
KIT = "Arm kit spelling"


class Ctx:
    def __init__(self, debug: bool):
        self.debug = debug


def say(msg="", *, err: bool = False, nl: bool = True, lines: bool = False, rendered: bool = False) -> None:
    """Every text a command writes for people (stdout, or stderr with ``err``) goes through here and so through
    :func:`edgeprof.conventions.shown`: no control character of a name reaches the terminal, each is shown as
    ``\\x1b``. ``lines``: several lines (tab and newline kept). ``rendered``: Markdown edgeprof rendered (its names
    escaped already). JSON goes through :func:`echo_json`; rich tables through :mod:`edgeprof.render.terminal`."""
    click.echo(shown(msg, lines=lines, rendered=rendered), err=err, nl=nl)


def warn(msg: str) -> None:
    say(f"edgeprof: warning: {msg}", err=True)


def info(msg: str) -> None:
    say(f"edgeprof: {msg}", err=True)


def _fail(err: Exception, debug: bool) -> None:
    if debug:
        raise err
    lines = err.messages if isinstance(err, InputErrors) else [str(err)]
    for line in lines:
        say("edgeprof: error: " + line, err=True)
    sys.exit(getattr(err, "exit_code", 2))


@contextlib.contextmanager
def _quiet_numerics():
    """numpy's RuntimeWarnings (an empty mean, a division by zero) are handled where they matter; they never
    reach the terminal as raw warnings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        yield


def run_guarded(fn):
    """Run a command body: edgeprof errors become one-line messages and exit codes; an OSError, MemoryError or
    RecursionError not met where it happened is still one line and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # A command runs once and exits: objects alive now (imported modules) never need collecting, and
        # leaving them to the cyclic GC makes every collection during the analysis walk them again.
        gc.freeze()
        ctx = click.get_current_context()
        debug = bool((obj := ctx.find_object(Ctx)) and obj.debug)
        try:
            from ..files import command_scope  # (imported here: `--help` loads no file machinery)

            with _quiet_numerics(), command_scope():  # one command: what it reads it never writes over
                return fn(*args, **kwargs)
        except EdgeprofError as e:
            _fail(e, debug)
        except KeyboardInterrupt:
            say("edgeprof: interrupted", err=True)
            sys.exit(130)
        except OSError as e:
            if debug:
                raise
            where = f"{display(e.filename)}: " if getattr(e, "filename", None) else ""
            _fail(EdgeprofError(f"{where}{(e.strerror or str(e)).lower()}"), False)
        except MemoryError:
            if debug:
                raise
            _fail(EdgeprofError("out of memory: the input is larger than this machine can analyse"), False)
        except RecursionError:
            if debug:
                raise
            _fail(EdgeprofError("input nested too deeply to analyse"), False)

    return wrapper


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="edgeprof")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx, debug):
    """Profile analysis for on-device inference: ExecuTorch ETDumps, ONNX Runtime and LiteRT profiles, XNNPACK
    kernel logs, Core ML models and Apple Neural Engine reports.

    Start with `edgeprof example DIR` to get a small real run folder, then `edgeprof analyze DIR`. Each command's
    page: docs/commands/ (built as the documentation site: mkdocs serve).
    """
    ctx.obj = Ctx(debug)
    for stream in (sys.stdout, sys.stderr):  # a path that is not UTF-8 prints as U+FFFD, never a crash
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]  # a stream a caller put there may lack it


def echo_json(doc) -> None:
    from ..render import jsonfmt

    click.echo(jsonfmt.dumps(doc.to_json() if hasattr(doc, "to_json") else doc), nl=False)


class Fraction(click.ParamType):
    """A relative amount as people write it — ``3%`` or ``0.03`` — for every fraction option (one parser:
    :func:`edgeprof.conventions.parse_fraction`; a bare number above 1 is refused with the hint)."""

    name = "fraction"

    def __init__(self, upper: float = 1.0, lower: float = 0.0, allow_zero: bool = True):
        self.upper, self.lower, self.allow_zero = upper, lower, allow_zero

    def convert(self, value, param, ctx):
        from ..conventions import parse_fraction
        from ..errors import UsageError

        if isinstance(value, float):
            return value
        opt = param.opts[0] if param is not None and param.opts else "value"
        try:
            v = parse_fraction(value, opt, upper=self.upper, allow_zero=self.allow_zero)
        except UsageError as e:
            self.fail(str(e).split(": ", 1)[-1], param, ctx)
        if v < self.lower:
            self.fail(f"must be at least {100 * self.lower:g} %, got '{value}'", param, ctx)
        return v


def taxonomy_option(fn):
    return click.option("--taxonomy", type=click.Path(path_type=str), default=None, help=TAXONOMY_HELP)(fn)


def int_option(value: str, name: str) -> int:
    from ..errors import UsageError

    try:
        n = int(value)
    except ValueError:
        raise UsageError(f"{name} must be 'auto' or a whole number, got '{value[:40]}'") from None
    if n < 0:
        raise UsageError(f"{name} must not be negative")
    return n


def writes_files(as_json: bool, no_write: bool = False, *asked) -> bool:
    """The one rule for a view command's files (breakdown, latency, compare, kernels, plan): written by default
    (beside the input, the Arm kit's way) — but with ``--json`` (the result on stdout) only when an output was
    named (``--out``, ``--output-dir``: ``asked``), and never with ``--no-write``. Commands whose product is
    files (analyze, trace, report) keep their documented defaults."""
    if no_write:
        return False
    return not as_json or any(a not in (None, "", ()) for a in asked)


def fail_on_errors(errors) -> None:
    """Inputs that could not be used (the others were): exit 2 after the output, one line each."""
    if errors:
        raise InputErrors([msg for _, msg in errors])


def _launch_cv(ctx, param, value):
    """``auto`` (the evidence: --store, noise.json, the default) or a launch SD such as 15% or 0.15."""
    if value is None or str(value).strip().lower() == "auto":
        return "auto"
    from ..conventions import parse_fraction
    from ..errors import UsageError

    try:
        return parse_fraction(value, "--launch-cv", upper=2.0)
    except UsageError as e:  # a usage error of the command line: click's one line and exit 2
        raise click.BadParameter(str(e).removeprefix("--launch-cv: ")) from None


def _metric(ctx, param, value):
    from ..conventions import metric_name
    from ..conventions import MEMORY_METRICS

    if str(value).partition(":")[0] in MEMORY_METRICS:
        return value  # the command says where memory is gated instead (one line)
    try:
        return metric_name(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def click_option(o):
    """The click option of one :class:`edgeprof.options.Option` record."""
    decls = [o.flag] + ([o.dest] if o.dest else [])
    kw: dict = {"help": o.help}
    if o.kind == "flag":
        if "/" in o.flag:
            kw.update(default=o.default, show_default=True)
        else:
            kw.update(is_flag=True, default=o.default)
    elif o.kind == "fraction":
        kw.update(type=Fraction(lower=o.lower, upper=o.upper), default=o.cli_default, show_default=True)
    elif o.kind == "int":
        kw.update(type=click.IntRange(int(o.lower), int(o.upper)) if o.upper > 1 else int, default=o.default,
                  show_default=o.default is not None)
    elif o.kind == "path":
        kw.update(type=click.Path(path_type=str), default=o.default, required=o.required)
    elif o.kind == "launch_cv":
        kw.update(default=o.cli_default, show_default=True, callback=_launch_cv)
    elif o.kind == "metric":
        kw.update(default=o.cli_default, show_default=True, callback=_metric)
    else:  # text, warmup
        kw.update(default=o.cli_default, show_default=o.default is not None, required=o.required)
    return click.option(*decls, **kw)


def options_of(command: str, *names: str):
    """A decorator adding ``command``'s options (:mod:`edgeprof.options`; those named, in that order) to a click
    command."""
    from ..options import options

    def deco(fn):
        for o in reversed(options(command, *names)):
            fn = click_option(o)(fn)
        return fn
    return deco


# where a gate reports besides its exit code (edgeprof.cli.ci writes it)
CI_CHOICES = ("auto", "github", "none")


def ci_options(fn):
    """``--junit FILE`` and ``--ci auto|github|none``."""
    fn = click.option("--ci", "ci", type=click.Choice(CI_CHOICES), default="auto", show_default=True,
                      help="Where the gate reports besides its exit code: github writes a step summary "
                           "($GITHUB_STEP_SUMMARY) and annotations; auto is github when GITHUB_ACTIONS=true.")(fn)
    return click.option("--junit", "junit_out", type=click.Path(path_type=str), default=None,
                        help="Write a JUnit XML report of the gate (one test case per check) here.")(fn)


def on_github(ci: str) -> bool:
    return ci == "github" or (ci == "auto" and os.environ.get("GITHUB_ACTIONS") == "true")
