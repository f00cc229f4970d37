"""The suites' sections of wikiskill.yaml: the split sizes of generated suites (`splits`) and how a
Harbor suite is split and its rewards read (`harbor`). In core's layer: it imports only `core`."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from ..core.section import Section


class SplitSizes(Section):
    train: int | None = Field(None, ge=1)
    """Number of train tasks of a generated suite; unset: the suite's default (`wikiskill benchmarks`
    lists them). Suites read from files (`jsonl:DIR`, `example-qa`) use their files."""
    val: int | None = Field(None, ge=1)
    """Number of validation tasks of a generated suite; unset: the suite's default."""
    test: int | None = Field(None, ge=1)
    """Number of test tasks of a generated suite; unset: the suite's default."""


class HarborIds(Section):
    train: list[str] = []
    """The train tasks' ids (task folder names)."""
    val: list[str] = []
    """The validation tasks' ids."""
    test: list[str] = []
    """The test tasks' ids; tasks named in no list are left out."""

    @property
    def given(self) -> bool:
        return bool(self.train or self.val or self.test)


class SuiteSkills(StrEnum):
    """What becomes of the skills a Harbor suite ships in a task's `environment/skills`."""

    REMOVE = "remove"
    """Left out of the image: the folder is built empty, so the agent starts with no skills but
    the evolved ones."""
    KEEP = "keep"
    """Built into the image as the task's Dockerfile says: the base the evolved skills add to."""


class HarborSettings(Section):
    registry: str | None = None
    """The Harbor registry `harbor:NAME@VERSION` is looked up in: a registry.json's path or URL
    (`init --registry-path` / `--registry-url`); unset: Harbor's public registry."""
    dataset_digest: str | None = None
    """The digest of the registry entry `harbor:NAME@VERSION` was fetched from, set by `init`: the
    dataset is read from that entry's cache folder, and a registry whose entry has since changed
    is refused, never used in its place. Unset: the one entry of that name fetched here."""
    ids: HarborIds = HarborIds()
    """The split as explicit id lists; all empty: a seeded split stratified by each task's
    `[metadata] category`, of the sizes in `splits` (unset sizes: half train, a quarter val, the
    rest test)."""
    exclude: list[str] = []
    """Tasks left out of the suite before it is split: ids or glob patterns (`build-*`), as
    Harbor's `--exclude-task-name`."""
    split_seed: int = 0
    """The seed of the stratified split."""
    require_sound: bool = True
    """`evolve` first checks each task that has a reference solution (a Harbor task's
    solution/solve.sh, a task folder's solution/, scores 1, the untouched task 0; once per task
    digest) and leaves unsound ones out of every split, recorded with the reason in
    raw/soundness/unsound.json; false: every task stays."""
    reward_key: str | None = None
    """Which key of a verifier's `reward.json` is the score; unset: its key `reward`, else its
    only key (several keys and none named `reward` is an infrastructure failure naming them)."""
    force_build: bool = False
    """Build each task's image from its `environment/Dockerfile` even where task.toml pins an
    `[environment] docker_image`; unset, the pinned image is run (pulled when it is not here)."""
    suite_skills: SuiteSkills = SuiteSkills.REMOVE
    """`remove`: a task's `environment/skills` (the suite's curated skills, which SkillsBench's
    Dockerfiles copy into the agent's skills folders) is built empty, so a workspace's skills are
    the only ones the agent has and `none` means none; `keep`: built as the Dockerfile says, the
    base the evolved skills add to. Part of the evaluation fingerprint."""
