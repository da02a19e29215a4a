"""`make bench` reads wrk's report correctly (the benchmark itself is too slow for `make test`)."""

from __future__ import annotations

import pytest

from bench.run import combine, parse_wrk

HEALTHZ = """\
Running 1s test @ http://127.0.0.1:33537/healthz
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.90ms    1.98ms  10.54ms   75.91%
    Req/Sec     1.02k   213.63     1.31k    50.00%
  Latency Distribution
     50%    2.66ms
     75%    5.44ms
     90%    6.61ms
     99%   10.08ms
  1026 requests in 1.01s, 209.41KB read
Requests/sec:   1018.32
Transfer/sec:    207.84KB
"""

# A 302 is not an error to wrk, but it is not a 2xx: the Lua counter sees it.
REDIRECTS_WITH_LUA_COUNTER = """\
Running 1s test @ http://127.0.0.1:33537/
  1 threads and 4 connections
  Latency Distribution
     50%    6.08ms
     75%    6.78ms
     90%    7.88ms
     99%   11.95ms
  738 requests in 1.01s, 300.03KB read
Requests/sec:    733.90
Transfer/sec:    298.36KB
Strict non-2xx responses: 738
"""

ERRORS_AND_OTHER_UNITS = """\
Running 30s test @ http://127.0.0.1:8000/v1/fit?model=nope&gpu=h100-sxm
  2 threads and 64 connections
  Latency Distribution
     50%  812.00us
     75%    1.20ms
     90%    1.90ms
     99%    1.52s
  61234 requests in 30.02s, 26.95MB read
  Socket errors: connect 0, read 12, write 0, timeout 3
  Non-2xx or 3xx responses: 640
Requests/sec:   2039.77
Transfer/sec:      0.90MB
"""


def test_requests_per_second_and_p99_in_milliseconds() -> None:
    result = parse_wrk(HEALTHZ)
    assert (result.requests, result.requests_per_s, result.p99_ms) == (1026, 1018.32, 10.08)
    assert result.elapsed_s == 1.01
    assert (result.non_2xx, result.socket_errors) == (0, 0)


def test_the_strict_counter_wins_over_wrks_own_line() -> None:
    assert parse_wrk(REDIRECTS_WITH_LUA_COUNTER).non_2xx == 738


def test_other_units_errors_and_timeouts() -> None:
    result = parse_wrk(ERRORS_AND_OTHER_UNITS)
    assert result.p99_ms == pytest.approx(1520.0)
    assert (result.non_2xx, result.socket_errors, result.requests) == (640, 15, 61234)


def test_output_without_figures_is_refused() -> None:
    with pytest.raises(ValueError, match="not wrk --latency output"):
        parse_wrk("unable to connect to 127.0.0.1:8000 Connection refused\n")


def test_rounds_combine_into_requests_over_total_time_and_the_worst_p99() -> None:
    first, second = parse_wrk(HEALTHZ), parse_wrk(ERRORS_AND_OTHER_UNITS)
    both = combine([first, second])
    assert both.requests == 1026 + 61234
    assert both.requests_per_s == pytest.approx((1026 + 61234) / (1.01 + 30.02))
    assert both.p99_ms == pytest.approx(1520.0)
    assert (both.non_2xx, both.socket_errors) == (640, 15)
