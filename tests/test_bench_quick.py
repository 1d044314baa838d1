"""``portakern bench --quick`` is a smoke test: one sample per row, no rows that start
processes (docs/performance.md gives its measured time)."""

from __future__ import annotations

import pytest

from portakern.bench import measure, suite


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "pkcache"))


def test_quick_starts_no_process_and_takes_one_sample(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("--quick started a new-process or busy-machine row")

    monkeypatch.setattr(suite, "bench_startup", refuse)
    monkeypatch.setattr(suite, "bench_busy", refuse)
    seen = []
    real = measure.interleaved

    def counting(fns, repeats, budget):
        seen.append(repeats)
        return real(fns, repeats, budget)

    monkeypatch.setattr(suite, "interleaved", counting)
    rows, _ = suite.run(backend="CPU", quick=True, only=["saxpy"], startup=True,
                        progress=False, repeats=7)
    assert any(r.name == "saxpy" and r.ok for r in rows)
    # One sample per kernel row; the launch-overhead rows take four of microseconds each.
    assert seen and seen[0] == 1 and max(seen) <= 4, seen


def test_one_repeat_means_one_sample():
    calls = []
    measure.interleaved([lambda: calls.append(1)], 1, 10.0)
    # One warm-up call, then one sample of back-to-back calls.
    assert len(calls) >= 2
    before = len(calls)
    measure.interleaved([lambda: calls.append(1)], 3, 10.0)
    assert len(calls) - before >= 4  # warm-up and at least three samples
