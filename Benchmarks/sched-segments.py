#!/usr/bin/env python3
"""Splits a sequential run's wall clock into the hand-overs between threads.

Reads `perf sched timehist -w` output on stdin. Each "A awakened: B" line is a hand-over from
thread A to thread B; when the next hand-over starts at B (B awakened C), B held the request for the
time between the two. Prints, for each chain A -> B -> C seen more than 100 times, how long B took
(median and mean, microseconds): in a sequential run those segments add up to one request.

  SESSIONFETCHER_ENGINE=libcurl perf sched record -o sched.data -- \\
    fetcher-bench child small fetcher --inflight 1 --count 3000 --base http://127.0.0.1:PORT/ --work DIR
  perf sched timehist -i sched.data -w | python3 Benchmarks/sched-segments.py
"""

import collections
import re
import statistics
import sys

WAKEUP = re.compile(
    r"\s*([\d.]+)\s+\[\d+\]\s+(\S+?)(?:\[[\d/]+\])?\s+awakened: (\S+?)(?:\[[\d/]+\])?\s*$"
)


def main() -> None:
    events = []
    for line in sys.stdin:
        match = WAKEUP.match(line)
        if match:
            events.append((float(match.group(1)), match.group(2), match.group(3)))
    segments = collections.defaultdict(list)
    for first, second in zip(events, events[1:]):
        if first[2] == second[1]:
            segments[(first[1], second[1], second[2])].append((second[0] - first[0]) * 1e6)
    for (waker, holder, next_thread), times in sorted(segments.items(), key=lambda item: -len(item[1])):
        if len(times) <= 100:
            continue
        print(
            f"{waker:>18} -> {holder:>18} -> {next_thread:>18}: n={len(times):6d} "
            f"median {statistics.median(times):6.1f} us, mean {statistics.mean(times):6.1f} us"
        )


if __name__ == "__main__":
    main()
