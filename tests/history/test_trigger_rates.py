"""The trigger-rate arithmetic on its own: which tasks a skill is for, and the share of their
runs that loaded it, against the share on the others."""

from collections import Counter

from wikiskill.history.triggers import changed_tasks, named_tasks, triggers


def test_a_purpose_names_a_task_only_as_a_whole_id():
    purpose = "Made for val-1 and t2; see also val-10's neighbour."
    assert named_tasks(purpose, ["val-1", "val-10", "t2", "t", "val"]) == {"val-1", "val-10", "t2"}
    assert named_tasks("fixes val-12", ["val-1", "val-12"]) == {"val-12"}


def test_a_task_is_for_the_skill_when_its_mean_over_the_trials_changes_without_it():
    with_skill = {"a": [1.0, 0.0], "b": [1.0, 1.0], "c": [0.0, 1.0]}
    without = {"a": [0.0, 1.0], "b": [0.0, 1.0], "c": [0.0, 0.0]}
    assert changed_tasks(with_skill, without) == {"b", "c"}  # a: 0.5 either way


def test_rates_divide_the_runs_that_loaded_the_skill_by_every_scored_run_of_each_group():
    runs = Counter({"a": 2, "b": 2, "c": 2, "d": 2})
    loads = {"a": Counter({"s": 2}), "b": Counter({"s": 1, "x": 2}), "c": Counter({"x": 1})}
    found = triggers("s", loads, runs, ["a", "b", "c", "d"], {"a", "b"})
    assert (found.tasks_for, found.rate_for, found.rate_other) == (["a", "b"], 0.75, 0.0)
    everything = triggers("s", loads, runs, ["a", "b", "c", "d"], {"a", "b", "c", "d"})
    assert (everything.rate_for, everything.rate_other) == (3 / 8, None)  # no other task: no control
