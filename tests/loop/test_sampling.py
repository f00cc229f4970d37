"""Which traces the maintainer and the proposer are shown: failures first, then successes, the same
for the same seed."""

from wikiskill.loop.sampling import sample_traces
from wikiskill.loop.settings import SamplingSettings
from wikiskill.store.traces import Trajectory


def trace(task_id: str, score: float) -> Trajectory:
    return Trajectory(task_id=task_id, split="train", kind="qa", question="q", score=score)


def test_sampling_takes_failures_then_successes_deterministically():
    traces = [trace(f"t{i:02d}", 1.0 if i % 3 == 0 else 0.0) for i in range(20)]
    settings = SamplingSettings(max_failures=5, max_successes=3)
    first = sample_traces(traces, settings, 1)
    assert [t.success for t in first] == [False] * 5 + [True] * 3
    assert first == sample_traces(list(reversed(traces)), settings, 1)
    assert first != sample_traces(traces, settings, 2)
    few = sample_traces(traces[:2], settings, 1)
    assert sorted(t.task_id for t in few) == ["t00", "t01"]
