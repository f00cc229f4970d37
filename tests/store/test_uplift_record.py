"""uplift.json read back: one written before trigger rates were recorded still reads, its skills'
`loading` told from whether it counted loads."""

import json

from wikiskill.store.trailers import SkillLoading
from wikiskill.store.uplift_record import UpliftResult


def skill(name: str, loads: int | None) -> dict:
    return {
        "skill": name,
        "marginal": 0.0,
        "ci95": [0.0, 0.0],
        "tokens": 10,
        "retire": True,
        "loads": loads,
        "never_loaded": loads == 0,
    }


def test_an_uplift_recorded_before_trigger_rates_reads_counted_loads_as_on_demand():
    older = {
        "split": "test",
        "trials": 1,
        "tasks": 3,
        "arms": [],
        "per_skill": [skill("cli", 0), skill("builtin", None)],
    }
    cli, builtin = UpliftResult.from_json(json.dumps(older)).per_skill
    assert cli.loading is SkillLoading.ON_DEMAND and cli.never_loaded and cli.rate_for is None
    assert not cli.rarely_loaded and cli.trigger_text() == "loaded in 0 run(s)"
    assert builtin.loading is SkillLoading.UNSEEN and builtin.trigger_text() == "loads not recorded"
    again = UpliftResult.from_json(UpliftResult.from_json(json.dumps(older)).to_json())
    assert [value.loading for value in again.per_skill] == [SkillLoading.ON_DEMAND, SkillLoading.UNSEEN]
