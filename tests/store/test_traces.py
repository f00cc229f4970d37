"""Traces fit their budget: a long text keeps its head and tail, a long trajectory renders within its limit."""

from wikiskill.store.traces import TraceStep, Trajectory, cut


def test_traces_are_cut_keeping_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    short = cut(text, 100)
    assert len(short) <= 100 and short.startswith("HEAD") and short.endswith("TAIL") and "characters cut" in short
    long = Trajectory(
        task_id="t",
        split="train",
        kind="interactive",
        question="q",
        steps=[TraceStep(action=f"go {i}", observation="o" * 100, score=0) for i in range(500)],
    )
    assert len(long.render(15_000)) <= 15_000
