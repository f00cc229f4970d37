"""Sound before spent, for task folders: before a round, each task that carries solution/ is
checked by the suite's own check, and a task whose check does not score its reference 1 is left
out of every split, train and test as well as val, and named by `status`."""

from taskfolders import encode_suite
from wikiskill import api
from wikiskill.history.status import status
from wikiskill.loop.harness import Harness
from wikiskill.loop.soundness import leave_out_unsound

WRONG_REFERENCE = "def encode(word):\n    return word\n"


def test_an_unsound_task_in_train_and_in_test_is_left_out_of_both(tmp_path):
    splits = {"train": ["enc-a", "bad-t"], "val": ["enc-c"], "test": ["enc-e", "bad-e"]}
    suite = encode_suite(tmp_path, splits, {"bad-t": WRONG_REFERENCE, "bad-e": WRONG_REFERENCE})
    ws = api.init_workspace(
        tmp_path / "ws", benchmark=f"tasks:{suite}", model="openai/fake-model", api_base="http://127.0.0.1:9/v1"
    )
    with Harness.open(ws) as harness:
        leave_out_unsound(harness)
        kept = {split: [task.id for task in harness.benchmark.tasks(split)] for split in ("train", "val", "test")}
    assert kept == {"train": ["enc-a"], "val": ["enc-c"], "test": ["enc-e"]}
    assert sorted(status(ws).unsound) == ["bad-e", "bad-t"]
    assert all("the reference must score 1; it scored 0" in why for why in status(ws).unsound.values())
    with Harness.open(ws) as harness:  # a later command leaves them out as the last evolve did
        assert [task.id for task in harness.benchmark.tasks("test")] == ["enc-e"]
        assert [task.id for task in harness.benchmark.tasks("train")] == ["enc-a"]
