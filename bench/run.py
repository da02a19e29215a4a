"""`make bench`: requests/s and p99 of the real server under wrk, on loopback.

Starts gunicorn as `make serve` does (WEB_CONCURRENCY = cores), runs wrk for DURATION_S on
/healthz and on each planning GET, and prints each planning figure's requests/s as a ratio
to /healthz's in the same run (target: at least TARGET_RATIO). The same planning GETs are
then run with a unique cache-buster per request, so that every answer is computed (reported,
not held to the target: a whole-catalog ranking is tens of milliseconds of arithmetic).
Then a SOAK_S run at SOAK_CONNECTIONS connections on /v1/fit must answer nothing but 2xx.
Exits 1 when a target is missed.

    python -m bench.run [--duration 10] [--soak 30] [--workers N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.server import Server, running_server

DURATION_S = 10
ROUNDS = 2
DRAIN_S = 1.0
SOAK_S = 30
CONNECTIONS = 16
SOAK_CONNECTIONS = 64
TARGET_RATIO = 0.6
HEALTHZ = ("/healthz", "/healthz")
PLANNING = (
    ("GET /v1/fit", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"),
    ("GET /v1/throughput", "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm"),
    ("GET /v1/fleet (whole catalog)", "/v1/fleet?model=llama-3.2-1b&requests_per_day=100000&tpot_slo_ms=50"),
    (
        "GET /v1/fleet (catalog, 70B)",
        "/v1/fleet?model=llama-3.1-70b&requests_per_day=2000000&prompt_tokens=2000&output_tokens=400"
        "&tpot_slo_ms=40&ttft_slo_ms=1500&peak_to_average=2.5",
    ),
    (
        "GET /v1/latency (analytic)",
        "/v1/latency?model=llama-3.1-8b&gpu=h100-sxm&sweep_rates=1,4,8&tpot_slo_ms=40&prompt_tokens_cv=0.5",
    ),
    (
        "GET /v1/latency (simulate 5k)",
        "/v1/latency?model=llama-3.1-8b&gpu=h100-sxm&request_rate=4&mode=simulate&requests=5000",
    ),
)
SOAK_URL = PLANNING[0][1]

# A fresh cache-buster on every request (query parameters starting with _ are ignored): each answer is
# computed, none comes from a worker's memo of recent answers.
UNIQUE_URL_LUA = """
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args) counter = 0 end
function request()
  counter = counter + 1
  return wrk.format(nil, wrk.path .. "&_nocache=" .. id .. "." .. counter)
end
"""

# Counts every answer outside 200-299 (wrk's own "Non-2xx or 3xx" line counts only >= 400).
STRICT_2XX_LUA = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) non_2xx = 0 end
function response(status, headers, body)
  if status < 200 or status > 299 then non_2xx = non_2xx + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("non_2xx") end
  io.write(string.format("Strict non-2xx responses: %d\\n", total))
end
"""

_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
_RPS = re.compile(r"^Requests/sec:\s+([\d.]+)", re.MULTILINE)
_P99 = re.compile(r"^\s*99(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$", re.MULTILINE)
_TOTAL = re.compile(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)", re.MULTILINE)
_NON_2XX = re.compile(r"^\s*Non-2xx or 3xx responses:\s+(\d+)", re.MULTILINE)
_STRICT = re.compile(r"^Strict non-2xx responses:\s+(\d+)", re.MULTILINE)
_SOCKET = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")


@dataclass(frozen=True)
class WrkResult:
    requests: int
    elapsed_s: float
    requests_per_s: float
    p99_ms: float
    non_2xx: int
    socket_errors: int


def combine(rounds: list[WrkResult]) -> WrkResult:
    """Several runs of one endpoint as one: requests over total time, the worst p99."""
    requests = sum(r.requests for r in rounds)
    elapsed = sum(r.elapsed_s for r in rounds)
    return WrkResult(
        requests=requests,
        elapsed_s=elapsed,
        requests_per_s=requests / elapsed if elapsed else 0.0,
        p99_ms=max(r.p99_ms for r in rounds),
        non_2xx=sum(r.non_2xx for r in rounds),
        socket_errors=sum(r.socket_errors for r in rounds),
    )


def parse_wrk(output: str) -> WrkResult:
    """The figures of one `wrk --latency` run (raises ValueError when a figure is missing)."""
    rps, p99, total = _RPS.search(output), _P99.search(output), _TOTAL.search(output)
    if rps is None or p99 is None or total is None:
        raise ValueError(f"not wrk --latency output:\n{output}")
    strict, loose = _STRICT.search(output), _NON_2XX.search(output)
    non_2xx = int(strict.group(1)) if strict else int(loose.group(1)) if loose else 0
    socket = _SOCKET.search(output)
    return WrkResult(
        requests=int(total.group(1)),
        elapsed_s=float(total.group(2)) * _UNITS_MS[total.group(3)] / 1000,
        requests_per_s=float(rps.group(1)),
        p99_ms=float(p99.group(1)) * _UNITS_MS[p99.group(2)],
        non_2xx=non_2xx,
        socket_errors=sum(int(n) for n in socket.groups()) if socket else 0,
    )


def ensure_wrk() -> str:
    """wrk from Debian's packages, installed once if it is missing."""
    found = shutil.which("wrk")
    if found:
        return found
    print("wrk not found: installing Debian's package", file=sys.stderr)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    found = shutil.which("wrk")
    if not found:
        raise RuntimeError("wrk is still not on PATH after apt-get install")
    return found


def run_wrk(wrk: str, url: str, duration_s: int, connections: int, threads: int, script: str | None = None) -> str:
    args = [wrk, f"-t{threads}", f"-c{connections}", f"-d{duration_s}s", "--timeout", "5s", "--latency"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        if script:
            lua.write(script)
            lua.flush()
            args += ["-s", lua.name]
        # Bounded: wrk stops itself after duration_s; the margin only guards a hung wrk.
        result = subprocess.run([*args, url], capture_output=True, text=True, timeout=duration_s + 60, check=True)
    return result.stdout


def drain(server: Server) -> None:
    """Let the requests wrk left in flight finish (a cut-off whole-catalog run leaves up to a
    second of them), so that they do not count against the next run."""
    time.sleep(DRAIN_S)
    server.get(HEALTHZ[1], timeout=30.0)


def warm_up(server: Server, paths: list[str], workers: int) -> None:
    """Load each worker's catalog copy before measuring (the first request reloads it)."""
    for path in paths:
        for _ in range(4 * workers):
            status, _, _ = server.get(path)
            if status != 200:
                raise RuntimeError(f"{path} answered {status}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=DURATION_S, help="seconds per endpoint, over all rounds")
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="interleaved passes over the endpoints (evens out background load)"
    )
    parser.add_argument("--soak", type=int, default=SOAK_S, help="seconds of the 64-connection run (0: skip)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="gunicorn workers (cores)")
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--no-computed", action="store_true", help="skip the runs that bypass the answer memo")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    wrk = ensure_wrk()

    with (
        tempfile.TemporaryDirectory(prefix="fleet-sizer-bench-") as workdir,
        running_server(args.workers, workdir=Path(workdir)) as server,
    ):
        warm_up(server, [HEALTHZ[1], *(path for _, path in PLANNING)], args.workers)
        runs: list[tuple[str, str, str | None]] = [(name, path, None) for name, path in (HEALTHZ, *PLANNING)]
        if not args.no_computed:
            runs += [(f"computed {name}", path, UNIQUE_URL_LUA) for name, path in PLANNING]
        seconds = max(1, round(args.duration / args.rounds))
        for _, path, script in runs:  # one discarded second each: the first seconds run slow
            run_wrk(wrk, server.base_url + path, 1, args.connections, args.threads, script)
            drain(server)
        rounds: dict[str, list[WrkResult]] = {name: [] for name, _, _ in runs}
        for _ in range(args.rounds):
            for name, path, script in runs:
                output = run_wrk(wrk, server.base_url + path, seconds, args.connections, args.threads, script)
                rounds[name].append(parse_wrk(output))
                drain(server)
        combined = {name: combine(results) for name, results in rounds.items()}
        results = {name: combined[name] for name, _ in (HEALTHZ, *PLANNING)}
        computed = {name: combined[f"computed {name}"] for name, _ in PLANNING if f"computed {name}" in combined}
        soak = None
        if args.soak > 0:
            soak_out = run_wrk(
                wrk, server.base_url + SOAK_URL, args.soak, SOAK_CONNECTIONS, args.threads, STRICT_2XX_LUA
            )
            soak = parse_wrk(soak_out)

    healthz = results[HEALTHZ[0]].requests_per_s
    print(
        f"\nwrk {args.rounds} x {seconds} s per endpoint (interleaved), {args.connections} connections, "
        f"{args.threads} threads; gunicorn {args.workers} workers (1 app thread) on 127.0.0.1 ({os.cpu_count()} cores)"
    )
    print(f"{'endpoint':32} {'req/s':>9} {'p99 ms':>8} {'vs /healthz':>12} {'non-2xx':>8}")
    ok = True
    for name, result in results.items():
        ratio = result.requests_per_s / healthz if healthz else 0.0
        mark = ""
        if name != HEALTHZ[0]:
            passed = ratio >= TARGET_RATIO
            ok &= passed
            mark = "  ok" if passed else f"  BELOW {TARGET_RATIO}"
        ok &= result.non_2xx == 0
        print(f"{name:32} {result.requests_per_s:9.1f} {result.p99_ms:8.2f} {ratio:12.2f} {result.non_2xx:8d}{mark}")
    if computed:
        print("computed on every request (a unique cache-buster each time, so no worker's memo answers):")
        for name, result in computed.items():
            ratio = result.requests_per_s / healthz if healthz else 0.0
            ok &= result.non_2xx == 0
            print(f"{name:32} {result.requests_per_s:9.1f} {result.p99_ms:8.2f} {ratio:12.2f} {result.non_2xx:8d}")
    if soak is not None:
        clean = soak.non_2xx == 0 and soak.socket_errors == 0
        ok &= clean
        print(
            f"\nsoak: GET /v1/fit, {SOAK_CONNECTIONS} connections, {args.soak} s: {soak.requests} requests, "
            f"{soak.requests_per_s:.1f} req/s, p99 {soak.p99_ms:.2f} ms, {soak.non_2xx} non-2xx, "
            f"{soak.socket_errors} socket errors{'' if clean else '  FAILED'}"
        )
    if args.json:
        report = {
            "results": {name: asdict(result) for name, result in results.items()},
            "computed": {name: asdict(result) for name, result in computed.items()},
            "soak": asdict(soak) if soak else None,
            "ok": ok,
        }
        print(json.dumps(report, indent=2))
    print("\nall targets met" if ok else "\ntarget missed", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
