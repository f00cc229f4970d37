"""The `offline` model: all three roles without an LLM, deterministic and network-free.

It is a no-LLM baseline that exercises the whole loop (rollouts, wiki pages, proposals, the gate,
git history) on interactive benchmarks without any key. Its skills are rule lines that the
offline agent really follows, so they help or hurt for real; it is never a stand-in for results
with real models.
"""
