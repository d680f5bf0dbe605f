"""`spork-verify PATH... [options]`: verify every module-level proc of each file.

Exit codes (one mapping, `exit_code`; specs/cli.md CLI-1): 0 all proved (with `--sizes`: no
hazard at those sizes), 1 any refuted (or a hazard an in-file sync_check found), 2 rejected
input or usage, 3 unknown/unsupported/vacuous (none refuted), 4 internal error, 5
`--check-cert`: the file does not match its certificate, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import os
import sys

try:  # Ctrl-C while the verifier's modules load (the console script imports them before main())
    import argparse
    import contextlib
    import dataclasses
    import math
    import traceback
    from pathlib import Path
    from typing import NoReturn

    from verifier import __version__
    from verifier.cli_io import (
        QueryWriter, ReportSink, UsageError, check_emit_dir, check_output_file,
        exit_after_interrupt, ignore_further_interrupts, interrupt_requested,
        interruptible_solvers, say, stop_if_interrupted)
    from verifier.diagnostics import InternalError, RejectedInput, SporkError, Unsupported
    from verifier.encode.recheck import RECHECK_SOLVERS, RecheckSession, RecheckUnavailable
    from verifier.lang.ir.ir import Proc
    from verifier.load.load_ahead import LoadAhead
    from verifier.load.load_isolated import DEFAULT_TIMEOUT_S, isolation
    from verifier.load.load_scheduled import ENV_VAR, ExoGpuUnavailable, check_python, load_file
    from verifier.report import FORMATS
    from verifier.report.progress import Progress, colour_verdicts, use_colour
    from verifier.cli_chain import named_references, unchecked_chain, with_chain
    from verifier.cli_gate import add_options as add_gate_options
    from verifier.cli_gate import announce, cache_options, certificates_allowed
    from verifier.load.load_isolated import LoadedFile
    from verifier.results import ChainStatus, ProcResult, SyncCheckStatus, Verdict
except KeyboardInterrupt:  # exits 130 quietly, as main() does (CLI-4), never a traceback
    sys.stderr.write("spork-verify: interrupted\n")
    sys.stderr.flush()
    os._exit(130)  # not SystemExit: see cli_io.exit_after_interrupt


def exit_code(results: list[ProcResult]) -> int:
    if any(r.internal_error for r in results):
        return 4
    verdicts = {r.verdict for r in results}
    if Verdict.refuted in verdicts or any(s.status is SyncCheckStatus.hazard
                                          for r in results for s in r.sync_checks):
        return 1  # a hazard an in-file sync_check found at its sizes is refuted too (SYNC-6)
    if Verdict.rejected in verdicts:
        return 2
    if verdicts - {Verdict.proved, Verdict.no_hazard_at_sizes}:
        return 3  # unknown, unsupported, vacuous: nothing proved, nothing refuted
    if any(r.chain is not None and r.chain.status is not ChainStatus.proved for r in results):
        return 3  # a chain asked for and only tested (or not decided) is not a proof: CHAIN-9.3
    return 0


MAX_CONCRETE_SIZE = 1 << 20  # --sizes beyond this would not finish in the concrete machine


def name_values(text: str) -> dict[str, int]:
    """`NAME=VALUE[,NAME=VALUE...]` (--sizes, --assume)."""
    out: dict[str, int] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip().lstrip("-").isdigit():
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE...], got {part!r}")
        if name.strip() in out and out[name.strip()] != int(value):
            raise argparse.ArgumentTypeError(f"{name.strip()} is given twice, with "
                                             f"{out[name.strip()]} and {int(value)}")
        out[name.strip()] = int(value)
    return out


def parse_sizes(text: str) -> dict[str, int]:
    sizes = name_values(text)
    for name, value in sizes.items():
        part = f"{name}={value}"
        if abs(value) > MAX_CONCRETE_SIZE:
            raise argparse.ArgumentTypeError(
                f"{part}: the concrete machine runs every thread and iteration, so sizes are at "
                f"most {MAX_CONCRETE_SIZE:,} (CLI-2); drop --sizes to prove all sizes at once")
    return sizes


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    if value < 0.001:  # z3 counts whole milliseconds, and 0 ms would mean no limit at all
        raise argparse.ArgumentTypeError(f"{text} s is below the 1 ms resolution of the limits; "
                                         "give at least 0.001")
    return value


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spork-verify",
        description="Prove Exo-GPU (spork26) procs correctly synchronized for all sizes.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="Python files with @proc functions")
    p.add_argument("--proc", action="append", default=[], metavar="NAME",
                   help="verify only this proc (repeatable)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--emit-cuda", metavar="DIR",
                   help="write certified CUDA for every proved proc into DIR")
    p.add_argument("--sizes", type=parse_sizes, metavar="NAME=VALUE,...",
                   help="run the concrete abstract machine at these sizes instead of proving")
    p.add_argument("--assume", type=name_values, action="append", default=[],
                   metavar="NAME=VALUE,...",
                   help="prove for all sizes the asserts admit that also have these values "
                   "(size arguments only; repeatable): the report says so, the certificate "
                   "binds them and the emitted CUDA checks them at run time (CLI-11)")
    p.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                   help="wall-clock safety net per solver query, reported as such when hit "
                   "(default 300); the budget that decides is --rlimit")
    p.add_argument("--rlimit", type=positive_int, metavar="UNITS",
                   help="deterministic solver budget per query in Z3 resource units "
                   "(default 60,000,000): the verdict does not depend on the machine's load")
    p.add_argument("--jobs", "-j", type=positive_int, default=1, metavar="N",
                   help="solve obligations in N worker processes (same results for every N)")
    add_gate_options(p)  # --cache-mode, --no-cache, --ci (CLI-12)
    p.add_argument("--load-timeout", type=positive_seconds, default=DEFAULT_TIMEOUT_S,
                   metavar="SECONDS", help="time limit for running each file to build its procs "
                   f"(default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--exo-gpu-python", metavar="PYTHON", default=os.environ.get(ENV_VAR) or None,
                   help="a Python with upstream Exo-GPU installed: a file whose script calls "
                   "rewrites spork-verify does not reproduce is run there and the procs "
                   "Exo-GPU prints are verified (specs/upstream_api.md SCHED-*; default "
                   f"${ENV_VAR})")
    p.add_argument("--against", metavar="REF.py:PROC",
                   help="also prove each proc's sequential reading equal to this exo-lang proc "
                   "(the chain of equivalence, specs/chain.md); a kernel file may name its "
                   "own with a line `# spork-verify: against REF.py:PROC`")
    p.add_argument("--check-cert", metavar="FILE.cu",
                   help="check a CUDA file written by --emit-cuda: not a byte changed, the same "
                   "IR as PATH (default: the source its header names), and a re-run proof with "
                   "the same query hashes (exit 5 on any mismatch)")
    p.add_argument("--smt2", metavar="DIR",
                   help="write the SMT-LIB2 query of every obligation the solver decided "
                   "into DIR/PROC/ID.smt2")
    p.add_argument("--recheck", metavar="SOLVER", choices=RECHECK_SOLVERS,
                   help="re-decide every proved obligation with an independent solver "
                   f"({', '.join(RECHECK_SOLVERS)}; the extra cvc5: pip install -e '.[cvc5]' in a "
                   "clone, see docs/integrations.md); a disagreement is an internal error")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress line on stderr (it shows only on a terminal, after 1 s)")
    p.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                   help="colour the verdicts (auto: on a terminal, unless NO_COLOR is set)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every obligation")
    p.add_argument("--cex-table", action="store_true",
                   help="show each refuted race as a per-thread table (also with -v)")
    p.add_argument("--cex-svg", metavar="DIR",
                   help="write one SVG picture per refuted race into DIR")
    p.add_argument("--explain", metavar="CODE",
                   help="print the rule, an example and the fix of an error code (e.g. ERR-V01)")
    p.add_argument("--version", action="version", version=f"spork-verify {__version__}")
    return p


def _error_result(file: str, name: str, e: SporkError) -> ProcResult:
    from verifier.encode.verify import static_finding

    internal = isinstance(e, InternalError)
    verdict = Verdict.rejected if isinstance(e, RejectedInput) else \
        Verdict.unknown if internal else Verdict.unsupported
    return ProcResult(file, name, verdict, 0.0, (), (static_finding(e),), e.loc,
                      internal_error=internal)


def options(args: argparse.Namespace) -> "Options":
    """The proof options the command line asks for (CLI-7: budget, workers, cache)."""
    from verifier.encode import Options

    given = {"timeout_s": args.timeout, "rlimit": args.rlimit}
    return Options(jobs=args.jobs, **cache_options(args),  # CLI-12, SEC-7
                   releases=bool(args.emit_cuda or args.check_cert),  # CG-R2
                   fixed_sizes=assumed(args) or None,  # CLI-11
                   **{k: v for k, v in given.items() if v is not None})


def assumed(args: argparse.Namespace) -> dict[str, int]:
    """Every `--assume NAME=VALUE` together; one name with two values is a usage error."""
    out: dict[str, int] = {}
    for given in getattr(args, "assume", None) or ():
        for name, value in given.items():
            if out.setdefault(name, value) != value:
                raise UsageError(f"--assume gives {name} twice, with {out[name]} and {value}")
    return out


def verify_file(path: str, args: argparse.Namespace, progress: Progress | None = None,
                recheck: RecheckSession | None = None, queries: QueryWriter | None = None,
                loaded: LoadedFile | None = None) -> tuple[list[ProcResult], int]:
    """Results of every proc in the file (`loaded` already, or loaded now), and how many
    proved procs got no CUDA."""
    from verifier.encode.assumptions import check_assumed_names

    if args.recheck and recheck is None:  # a caller that did not open a session (pytest plugin)
        with RecheckSession(args.recheck, options(args).timeout_s) as session:
            return verify_file(path, args, progress, session, queries, loaded)
    if loaded is None:
        loaded = load_file(path, args.load_timeout, args.exo_gpu_python)
    if loaded.error is not None:
        failed = _error_result(path, loaded.error.proc or "<file>", loaded.error)
        return [dataclasses.replace(failed, load_output=loaded.output, isolation=isolation())], 0
    origin = dict(zip(map(id, loaded.procs), loaded.scheduled_by))  # SCHED-6
    procs = list(loaded.procs)
    references = named_references(path)
    if args.proc:
        procs = [p for p in procs if p.name in args.proc]
    results = []
    not_lowered = 0
    assumptions = assumed(args)
    ahead = _proved_ahead(procs, args, recheck, queries)
    for p in procs:
        try:
            check_assumed_names(p, assumptions, ("size",))  # CLI-11: sizes only
            if args.sizes is not None:
                from verifier.encode.concrete import run_concrete

                results.append(run_concrete(p, {**args.sizes, **assumptions}))
            elif id(p) in ahead:
                results.append(ahead[id(p)])
            else:
                results.append(_prove(p, args, progress, recheck, queries))
        except SporkError as e:
            results.append(_error_result(path, p.name, e))
        reference = args.against or references.get(p.name) or references.get(None)
        if reference and assumptions and args.sizes is None:
            results[-1] = unchecked_chain(results[-1], reference)  # CLI-11
        elif reference and args.sizes is None:
            base = None if args.against else Path(path).parent
            results[-1] = with_chain(results[-1], p, reference, base, args.timeout)
        if id(p) in origin:
            results[-1] = dataclasses.replace(results[-1], scheduled_by=origin[id(p)])
        if args.emit_cuda and results[-1].verdict is Verdict.proved and \
                results[-1].certificate is not None:
            not_lowered += not _emit(p, results[-1], args.emit_cuda)
    if loaded.sync_calls:  # the file's own sync_check calls, answered now (SYNC-3..7)
        from verifier.cli_sync import settle

        results = settle(loaded.sync_calls, procs, results, options(args), args.proc)
    return [dataclasses.replace(r, load_output=loaded.output, isolation=isolation())
            for r in results], not_lowered


def _proved_ahead(procs: list[Proc], args: argparse.Namespace,
                  recheck: RecheckSession | None, queries: QueryWriter | None
                  ) -> dict[int, ProcResult]:
    """The file's procs proved side by side, one per core (CLI-7), where each proof is the
    plain `_prove`: not with --sizes, --jobs (its own workers), --smt2 or --recheck."""
    if args.sizes is not None or args.jobs > 1 or recheck is not None or queries is not None:
        return {}
    from verifier.cli_procs import prove_side_by_side, workers

    return prove_side_by_side(procs, lambda p: _prove(p, args, None, None, None), workers())


def _prove(p: Proc, args: argparse.Namespace, progress: Progress | None,
           recheck: RecheckSession | None, queries: QueryWriter | None) -> ProcResult:
    """Prove one proc; write its queries (--smt2), re-decide them (--recheck), add hints."""
    from verifier.encode import verify_proc
    from verifier.encode.hints import add_sync_hints
    from verifier.encode.recheck import recheck_result

    def tick(done: int, known: int, name: str = p.name) -> None:
        stop_if_interrupted()
        if progress is not None:
            progress.obligations(name, done, known)

    keep = bool(args.smt2 or recheck)
    opts = options(args)
    result = verify_proc(p, dataclasses.replace(opts, keep_queries=keep), tick)
    stop_if_interrupted()  # checks cancelled by Ctrl-C must not make a verdict
    if queries is not None:
        queries.write(result)
    if recheck is not None:
        result = recheck_result(result, recheck)
    result = add_sync_hints(p, result, opts)
    stop_if_interrupted()
    if keep:  # the texts were for the files and the second solver; the report has the hashes
        result = dataclasses.replace(result, obligations=tuple(
            dataclasses.replace(o, query="") for o in result.obligations), releases=tuple(
            dataclasses.replace(x, obligations=tuple(dataclasses.replace(o, query="")
                                                     for o in x.obligations))
            for x in result.releases))
    return result


def _emit(p: Proc, result: ProcResult, folder: str) -> bool:
    """Write `folder/PROC.cu`, byte for byte as its seal says (CLI-9); False, said on stderr,
    when the proc is proved but cannot be lowered or written."""
    from verifier.codegen import emit_cuda

    if not certificates_allowed():  # SEC-6: the file ran unconfined
        print(f"spork-verify: no CUDA emitted for {p.name}: kernel files cannot be confined "
              "on this machine, so no certificate is written (SEC-6)", file=sys.stderr)
        return False
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{p.name}.cu").write_bytes(emit_cuda(p, result.certificate).encode("utf-8"))
    except (Unsupported, RejectedInput) as e:  # proved, but not lowered: say why
        say(f"spork-verify: no CUDA emitted for {p.name}: {e.render()}")
        return False
    except OSError as e:  # checked writable before the proofs; the disk may be full
        say(f"spork-verify: error: --emit-cuda {out}: cannot write {p.name}.cu: {e.strerror}")
        return False
    return True


def write_pictures(results: list[ProcResult] | None, folder: str) -> bool:
    """Create `folder` (before any proof, results None) or fill it; False with a message if it
    cannot be written."""
    from verifier.report.cex_svg import write_cex_svgs

    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if results is None:
            return True
        written = write_cex_svgs(results, folder)
    except OSError as e:
        say(f"spork-verify: error: --cex-svg {folder}: cannot write there ({e.strerror})")
        return False
    say(f"spork-verify: {len(written)} counterexample picture(s) in {folder}")
    return True


def explain_code(code: str) -> int:
    from verifier.report.catalog import catalog, explain

    text = explain(code)
    if text is None:
        say(f"spork-verify: unknown error code {code!r} (codes look like ERR-V01; "
            f"{len(catalog())} are listed in docs/error-codes.md)")
        return 2
    sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; Ctrl-C at any moment (even while modules load) exits 130 quietly."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        ignore_further_interrupts()
        say("spork-verify: interrupted")
        return 130


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    if args.explain:
        return explain_code(args.explain)
    if not args.paths and not args.check_cert:
        parser.print_usage(sys.stderr)
        say("spork-verify: error: give at least one PATH")
        return 2
    try:
        _check_destinations(args)
        announce(args)  # SEC-5, SEC-6: --ci without confinement is refused here
        if args.check_cert:
            from verifier.cli_cert import check_cert

            return check_cert(args.check_cert, args.paths, args.load_timeout, options(args),
                              args.exo_gpu_python)
        if args.cex_svg and not write_pictures(None, args.cex_svg):
            return 2
        return _verify_all(args)
    except UsageError as e:
        say(f"spork-verify: error: {e}")
        return 2
    except ExoGpuUnavailable as e:  # SCHED-5: the interpreter named cannot run Exo-GPU
        say(f"spork-verify: error: {e}")
        return 2
    except RejectedInput as e:
        say(e.render())
        return 2
    except Exception:  # a bug in spork-verify, not the user's mistake
        say("spork-verify: internal error (this is a bug in spork-verify, please report it):")
        traceback.print_exc()
        return 4


def _check_destinations(args: argparse.Namespace) -> None:
    """Where results will go is checked before any proof, never after it (CLI-2)."""
    if args.output:
        check_output_file(args.output, args.paths + ([args.check_cert] if args.check_cert
                                                     else []))
    if args.emit_cuda:
        check_emit_dir(args.emit_cuda)
    if args.exo_gpu_python:
        check_python(args.exo_gpu_python)  # SCHED-5: before any proof, exit 2
    if args.smt2:
        check_emit_dir(args.smt2, "--smt2", ".smt2")
    given = assumed(args)  # CLI-11: two values for one name, or --sizes disagreeing, or a chain
    clash = [f"{k}={v}" for k, v in given.items() if (args.sizes or {}).get(k, v) != v]
    if clash:
        raise UsageError(f"--sizes gives other values than --assume {', '.join(clash)}: the "
                         "concrete run must be at sizes the assumptions admit")
    if given and args.against:
        raise UsageError("--against is not supported with --assume: the chain is proved for "
                         "all sizes, not for the assumed ones; drop one of them")
    if given and args.check_cert:
        raise UsageError("--check-cert re-applies the assumptions its header records; drop "
                         "--assume")
    if args.sizes is not None and (args.smt2 or args.recheck):
        raise UsageError("--smt2 and --recheck need proofs; --sizes runs the concrete machine "
                         "instead: drop one of them")


def _verify_all(args: argparse.Namespace) -> int:
    """Verify each PATH, writing each file's results as it finishes (CLI-3); Ctrl-C stops a
    running check, writes what finished and exits 130 (CLI-4)."""
    from verifier.report import render

    progress = Progress(not args.no_progress)
    colour = args.format == "text" and not args.output and use_colour(args.color, sys.stdout)

    def text_of(results: list[ProcResult]) -> str:
        text = render(args.format, results, args.verbose, args.cex_table)
        return colour_verdicts(text) if colour else text

    sink = ReportSink(text_of, args.format == "text", args.output, progress.clear)
    not_lowered = 0
    interrupted = False
    queries = QueryWriter(args.smt2) if args.smt2 else None
    # the first file's loading child runs while the prover imports
    ahead = LoadAhead(args.paths[0], args.load_timeout, args.exo_gpu_python)
    try:
        from verifier.encode.solver import stop_checks_on_interrupt

        recheck = RecheckSession(args.recheck, options(args).timeout_s) if args.recheck \
            else None
        with interruptible_solvers(stop_checks_on_interrupt()), \
                recheck or contextlib.nullcontext():
            for index, path in enumerate(args.paths, 1):
                progress.file(path, index, len(args.paths))
                file_results, failures = verify_file(path, args, progress, recheck, queries,
                                                     ahead.result() if index == 1 else None)
                stop_if_interrupted()
                not_lowered += failures
                sink.add_file(file_results)
    except KeyboardInterrupt:
        interrupted = True
        ignore_further_interrupts()
    except RecheckUnavailable as e:  # before any proof: the solver is not installed
        raise UsageError(str(e)) from None
    except Exception:
        if not interrupt_requested():
            raise  # a bug: main() reports it as an internal error, after the report below
        interrupted = True  # z3 calls other than check() end in an exception once interrupted
        ignore_further_interrupts()
    finally:
        ahead.cancel()  # nothing to do unless interrupted before the first file was taken
        progress.clear()
        sink.finish()  # also on an internal error: the document holds what finished
    results = sink.results
    if args.cex_svg and not write_pictures(results, args.cex_svg):
        return 2
    if interrupted:
        say(f"spork-verify: interrupted; the report holds the {len(results)} result(s) that "
            "finished")
        return 130
    if not results:
        say("spork-verify: no @proc found" + (f" named {', '.join(args.proc)}" if args.proc
            else " (a kernel file defines `@proc def name(...)` at module level)"))
        return 2
    code = exit_code(results)
    code = 3 if not_lowered and code == 0 else code
    write_error = sink.write_error or (queries is not None and queries.write_error)
    return 2 if write_error and code in (0, 3) else code


def run() -> NoReturn:
    """The `spork-verify` command: main()'s status as the process's exit status."""
    code = main()
    if code == 130:
        exit_after_interrupt()
    sys.exit(code)


if __name__ == "__main__":
    run()
