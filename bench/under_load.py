"""The default fit with every core busy with other processes (issue 12, item 4).

Usage::

    python bench/under_load.py                     # digits, 5 repeats, under load
    python bench/under_load.py --quiet-too         # and the same without busy processes
    python bench/under_load.py --quick             # 1 repeat
    python bench/under_load.py --sets digits,s1,a1 --busy 2 --repeats 3 --markdown load.md

Every measurement is a fresh Python process (``python bench/under_load.py
--child SET``): it imports numpy, scikit-learn and fastrbfkm, makes the set
(see ``bench/sets.py``), fits ``RBFKMeans(n_clusters=k, random_state=0)``
once as a warm-up (compiling or loading numba's cache), then times a second,
identical fit and prints the times as one line of JSON. The parent also
times the whole child, start to exit. The children run under three
configurations, alternating within every repeat:

- ``default``: the library's default, with ``NUMBA_NUM_THREADS``,
  ``NUMBA_THREADING_LAYER``, ``OMP_NUM_THREADS``, ``OMP_WAIT_POLICY``,
  ``KMP_BLOCKTIME`` and ``GOMP_SPINCOUNT`` removed from the environment;
- ``NUMBA_NUM_THREADS=1``: the same with numba on one thread;
- ``OMP_WAIT_POLICY=PASSIVE``: the same with OpenMP threads that sleep
  instead of spinning at barriers (for reference).

Under load, each child runs beside ``--busy`` (default: ``os.cpu_count()``)
busy processes, started fresh for it and stopped as soon as it ends: each is
a pure-Python busy loop (``python -c``) that also stops itself after
``--busy-max`` seconds (default 600; a child is given ``--busy-max`` - 30
seconds before it is killed, so the load outlasts it). They are stopped in a
``finally`` block, so also on errors, Ctrl-C and SIGTERM.

The table gives, per set, load and configuration, the median time of the
timed ``fit``, its range, the median time of the whole child, and the median
fit time over the median fit time with ``NUMBA_NUM_THREADS=1`` in the same
load; the issue's target for the default is at most 1.5. A header names the
machine, the versions, numba's threading layer (as the default children
report it) and the load before and after. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from machine import header, load_1min

BENCH = Path(__file__).resolve().parent
CONFIGS = {
    "default": {},
    "NUMBA_NUM_THREADS=1": {"NUMBA_NUM_THREADS": "1"},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
}
REFERENCE = "NUMBA_NUM_THREADS=1"
CLEARED = (
    "NUMBA_NUM_THREADS",
    "NUMBA_THREADING_LAYER",
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "KMP_BLOCKTIME",
    "GOMP_SPINCOUNT",
)
TARGET = 1.5
BUSY_LOOP = """\
import sys, time
end = time.monotonic() + float(sys.argv[1])
x = 0
while time.monotonic() < end:
    for _ in range(10_000):
        x = (x * 1103515245 + 12345) % 2147483648
"""


def progress(message: str) -> None:
    print(f"[under_load] {message}", file=sys.stderr, flush=True)


# -------------------------------------------------------------- the child


def child(name: str) -> None:
    """Run in a fresh process: make the set, warm up, time one default fit,
    print ``{"fit_s", "warmup_s", "setup_s", ...}`` as JSON."""
    started = time.perf_counter()
    import numba
    from sets import SETS

    from fastrbfkm import RBFKMeans

    bench = SETS[name]
    X, _ = bench.make()
    setup = time.perf_counter()
    RBFKMeans(n_clusters=bench.k, random_state=0).fit(X)
    warmed = time.perf_counter()
    km = RBFKMeans(n_clusters=bench.k, random_state=0)
    fit_started = time.perf_counter()
    km.fit(X)
    fit_s = time.perf_counter() - fit_started
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none"
    report = {
        "fit_s": fit_s,
        "warmup_s": warmed - setup,
        "setup_s": setup - started,
        "threads": numba.config.NUMBA_NUM_THREADS,
        "layer": layer,
        "inertia": float(km.inertia_),
    }
    print(json.dumps(report), flush=True)


# ------------------------------------------------------ the busy processes


def stop(processes: list[subprocess.Popen]) -> None:
    """Terminate the processes, then kill those still alive after 5 s."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def busy(count: int, max_seconds: float) -> Iterator[list[subprocess.Popen]]:
    """``count`` busy-loop processes that stop themselves after
    ``max_seconds``, and are stopped when the ``with`` block ends."""
    processes: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", BUSY_LOOP, str(max_seconds)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
            )
        time.sleep(0.5 if count else 0.0)  # let them start spinning
        yield processes
    finally:
        stop(processes)


def raise_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so ``finally`` blocks stop the busy loops."""

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


# ------------------------------------------------------------ measurements


@dataclass
class Measurement:
    """One child: its times, what numba ran with, and whether it failed."""

    name: str
    loaded: bool
    config: str
    child_s: float
    fit_s: float = float("nan")
    threads: int | None = None
    layer: str | None = None
    load_held: bool = True
    error: str | None = None


def child_env(settings: dict[str, str]) -> dict[str, str]:
    """This process's environment without the thread settings, plus ``settings``."""
    env = {key: value for key, value in os.environ.items() if key not in CLEARED}
    env.update(settings)
    return env


def measure(name: str, config: str, load: int, max_seconds: float) -> Measurement:
    """Run one child for set ``name`` under ``config`` beside ``load`` busy processes."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    with busy(load, max_seconds) as processes:
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command,
                env=child_env(CONFIGS[config]),
                capture_output=True,
                text=True,
                timeout=max_seconds - 30,
            )
        except subprocess.TimeoutExpired:
            seconds = time.perf_counter() - started
            return Measurement(name, load > 0, config, seconds, error="timeout")
        seconds = time.perf_counter() - started
        held = all(process.poll() is None for process in processes)
    result = Measurement(name, load > 0, config, seconds, load_held=held)
    if done.returncode != 0:
        result.error = f"exit {done.returncode}: " + done.stderr.strip()[-300:]
        return result
    report = json.loads(done.stdout.strip().splitlines()[-1])
    result.fit_s, result.threads, result.layer = report["fit_s"], report["threads"], report["layer"]
    return result


def run_phase(names: list[str], repeats: int, load: int, max_seconds: float) -> list[Measurement]:
    """Every set under every configuration, configurations alternating, ``repeats`` times."""
    results = []
    for rep in range(repeats):
        for name in names:
            for config in CONFIGS:
                m = measure(name, config, load, max_seconds)
                results.append(m)
                state = m.error or f"fit {m.fit_s:.3f} s, child {m.child_s:.2f} s"
                progress(f"{name} {config}, {load} busy, {rep + 1}/{repeats}: {state}")
    return results


# ------------------------------------------------------------------ the table


def median_fit(results: list[Measurement], name: str, loaded: bool, config: str) -> float:
    fits = [m.fit_s for m in results if (m.name, m.loaded, m.config) == (name, loaded, config)]
    return float(np.nanmedian(fits)) if fits and not np.all(np.isnan(fits)) else float("nan")


COLUMNS = (
    "set", "load", "config", "numba threads", "fit s (median)", "fit s (range)",
    "child s (median)", f"fit / {REFERENCE}", "target", "met",
)  # fmt: skip


def table_row(results: list[Measurement], name: str, loaded: bool, config: str, n_busy: int) -> str:
    """One line of the table: a set, a load and a configuration."""
    mine = [m for m in results if (m.name, m.loaded, m.config) == (name, loaded, config)]
    fits = np.array([m.fit_s for m in mine])
    ok = fits[~np.isnan(fits)]
    ratio = median_fit(results, name, loaded, config) / median_fit(results, name, loaded, REFERENCE)
    is_default = config == "default"
    cells = [
        name,
        f"{n_busy} busy" if loaded else "quiet",
        config,
        ", ".join(sorted({str(m.threads) for m in mine if m.threads is not None})) or "-",
        f"{np.median(ok):.3f}" if ok.size else "-",
        f"{ok.min():.3f}-{ok.max():.3f}" if ok.size else "-",
        f"{np.median([m.child_s for m in mine]):.2f}",
        f"{ratio:.2f}",
        f"<= {TARGET}" if is_default else "",
        ("yes" if ratio <= TARGET else "no") if is_default else "",
    ]
    return "| " + " | ".join(cells) + " |"


def notes(results: list[Measurement]) -> list[str]:
    """Failed children and children that outlived their load."""
    lines = [f"{m.name} {m.config}: {m.error}" for m in results if m.error]
    lines += [
        f"{m.name} {m.config}: a busy process ended before the child did"
        for m in results
        if m.loaded and not m.load_held and not m.error
    ]
    return lines


def markdown(results: list[Measurement], names: list[str], head: str, n_busy: int) -> str:
    """The header, the table and the notes, as markdown."""
    lines = [head, "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for loaded in (True, False):
        for name in names:
            if any((m.name, m.loaded) == (name, loaded) for m in results):
                lines += [table_row(results, name, loaded, c, n_busy) for c in CONFIGS]
    extra = notes(results)
    lines += ["", *(f"- {line}" for line in extra)] if extra else []
    return "\n".join(lines) + "\n"


def heading(results: list[Measurement], args: argparse.Namespace, before: float) -> str:
    """The machine line, and how the runs were made."""
    layers = sorted({m.layer for m in results if m.config == "default" and m.layer})
    return (
        header(", ".join(layers) or "unknown", before, load_1min())
        + f" A fresh child per measurement; medians of {args.repeats} run(s) per configuration,"
        + " configurations alternating;"
        + f" under load: {args.busy} pure-Python busy processes beside each child;"
        + f" cleared for every child: {', '.join(CLEARED)}."
    )


# ---------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="digits", help="comma-separated set names")
    parser.add_argument("--quick", action="store_true", help="1 repeat; small sets only")
    parser.add_argument("--repeats", type=int, help="runs per configuration (default 5)")
    parser.add_argument(
        "--busy", type=int, default=os.cpu_count() or 1, help="busy processes under load"
    )
    parser.add_argument(
        "--busy-max", type=float, default=600.0, help="seconds after which a busy loop stops"
    )
    parser.add_argument(
        "--quiet-too", action="store_true", help="also measure without busy processes"
    )
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return args
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    if args.repeats < 1 or args.busy < 0 or args.busy_max <= 60:
        parser.error("--repeats must be >= 1, --busy >= 0 and --busy-max > 60")
    from sets import choose  # imports fastrbfkm: not before a child needs it

    try:
        args.names = [s.name for s in choose(args.sets, args.quick)]
    except ValueError as exc:
        parser.error(str(exc))
    if not args.names:
        parser.error("no set left to run (--quick keeps only sets under 100,000 rows)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    raise_on_sigterm()
    before = load_1min()
    results = run_phase(args.names, args.repeats, args.busy, args.busy_max)
    if args.quiet_too:
        results += run_phase(args.names, args.repeats, 0, args.busy_max)
    text = markdown(results, args.names, heading(results, args, before), args.busy)
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("[under_load] interrupted; the busy processes are stopped", file=sys.stderr)
        sys.exit(130)
