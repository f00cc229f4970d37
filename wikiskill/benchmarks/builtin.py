"""The built-in benchmark families, registered as entry points like any plugin.

Each family imports its suite's module only in `load`, so listing or checking names stays cheap.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..core.errors import BenchmarkError
from ..core.resources import data_dir
from .base import Benchmark, BenchmarkKind, BenchmarkSpec, LoadRequest, SplitCounts
from .specs import JSONL, QA_MAX_STEPS, TEXTWORLD_COOKING


class TextWorldCookingFamily:
    """`textworld-cooking`: TextWorld cooking games (First TextWorld Problems recipes), generated offline."""

    spec = TEXTWORLD_COOKING

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        return argument

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .textworld_cooking import TextWorldCooking

        counts = request.split_counts(self.spec)
        return TextWorldCooking(
            n_train=counts["train"], n_val=counts["val"], n_test=counts["test"], progress=request.progress
        )


class TextWorldFamily:
    """`textworld:<challenge>`: TextWorld's treasure hunter, coin collector and simple games.

    TextWorld's own names (`tw-treasure_hunter`) are taken too. Cooking keeps its one name,
    `textworld-cooking`, so that its evaluations and games are never split across two names.
    """

    spec = BenchmarkSpec(
        family="textworld",
        kind=BenchmarkKind.INTERACTIVE,
        summary="TextWorld's treasure hunter, coin collector and simple games, generated offline "
        "(the offline model plays coin-collector and simple)",
        argument="<challenge>",
        argument_required=True,
        default_splits=SplitCounts(train=20, val=10, test=50),
        max_steps=40,
        offline_playable=False,
        version="1",
        requires=("textworld",),
        examples=("textworld:treasure-hunter", "textworld:coin-collector", "textworld:simple"),
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        from .textworld_challenges import CHALLENGES

        name = (argument or "").lower().removeprefix("tw-").replace("_", "-")
        if name == "cooking":
            raise BenchmarkError("the cooking challenge is the benchmark `textworld-cooking`")
        if name not in CHALLENGES:
            raise BenchmarkError(
                f"unknown TextWorld challenge {argument!r}; choose one of: "
                f"{', '.join(f'textworld:{known}' for known in CHALLENGES)} (or textworld-cooking)"
            )
        return name

    def spec_for(self, argument: str) -> BenchmarkSpec:
        """The family's spec, offline-playable only where the offline model was measured to play the challenge."""
        from .textworld_challenges import CHALLENGES

        challenge = CHALLENGES[str(self.check(argument))]
        return self.spec.model_copy(update={"offline_playable": challenge.offline_playable})

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .textworld_challenges import open_challenge

        spec = self.spec_for(str(argument))
        return open_challenge(str(argument), spec, request.split_counts(spec), progress=request.progress)


def _installed(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "none"


class ReasoningGymFamily:
    """`reasoning-gym:<dataset>[,<dataset>...]`: procedurally generated QA with disjoint seeded splits."""

    spec = BenchmarkSpec(
        family="reasoning-gym",
        kind=BenchmarkKind.QA,
        summary="reasoning-gym's procedurally generated reasoning QA, scored by each dataset's own scorer",
        argument="<dataset>[,...]",
        argument_required=True,
        default_splits=SplitCounts(train=40, val=20, test=100),
        max_steps=QA_MAX_STEPS,
        version=f"1+reasoning-gym-{_installed('reasoning-gym')}",
        needs="pip install 'wikiskill[reasoning-gym]'",
        requires=("reasoning_gym",),
        examples=("reasoning-gym:basic_arithmetic", "reasoning-gym:leg_counting,letter_counting"),
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        from .reasoning_gym_qa import check_datasets

        return ",".join(check_datasets(argument or ""))

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .reasoning_gym_qa import ReasoningGymQA

        return ReasoningGymQA(str(argument).split(","), self.spec, request.split_counts(self.spec))


class ExampleQAFamily:
    """`example-qa`: a small letter-counting and word-reversal QA suite that ships with wikiskill."""

    spec = BenchmarkSpec(
        family="example-qa",
        kind=BenchmarkKind.QA,
        summary="a small letter-counting and word-reversal QA suite that ships with wikiskill",
        max_steps=QA_MAX_STEPS,
        version="1",
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        return argument

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .jsonl import JsonlQA

        return JsonlQA(data_dir("benchmarks") / "example-qa", name=self.spec.family, spec=self.spec)


class JsonlFamily:
    """`jsonl:DIR`: your own QA data, DIR/{train,val,test}.jsonl with an id, question and answer per line."""

    spec = JSONL

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """With a `base`, the folder is made absolute and its files are checked line by line."""
        if argument is None or base is None:
            return argument
        from .jsonl import JsonlQA

        directory = (base / Path(argument).expanduser()).resolve()
        JsonlQA(directory)
        return str(directory)

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .jsonl import JsonlQA

        if argument is None:
            raise BenchmarkError("jsonl needs a folder: jsonl:DIR")
        directory = Path(argument).expanduser()
        if not directory.is_absolute() and request.root is not None:
            directory = request.root / directory
        return JsonlQA(directory, spec=self.spec)


class TaskFoldersFamily:
    """`tasks:PATH`: a suite of task folders (`task_folders.py`); QA or workdir by its scorer."""

    @property
    def spec(self) -> BenchmarkSpec:
        """From `task_folders`, imported only when the family is used."""
        from .task_folders import TASKS

        return TASKS

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """With a `base`, the folder is made absolute and the whole suite is checked."""
        if argument is None or base is None:
            return argument
        from .task_folders import TaskFolders

        return TaskFolders(base / Path(argument).expanduser()).name.partition(":")[2]

    def spec_for(self, argument: str) -> BenchmarkSpec:
        """The suite's spec: QA under a QA scorer, else workdir; judged under `judge`. The
        family's own when suite.yaml cannot be read (opening the suite says why)."""
        from .task_folders import read_settings

        try:
            settings = read_settings(Path(argument).expanduser())
        except BenchmarkError:
            return self.spec
        kind = BenchmarkKind.QA if settings.qa else BenchmarkKind.WORKDIR
        return self.spec.model_copy(update={"kind": kind, "judged": settings.judged})

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .task_folders import TaskFolders

        if argument is None:
            raise BenchmarkError("tasks needs a folder: tasks:PATH")
        directory = Path(argument).expanduser()
        if not directory.is_absolute() and request.root is not None:
            directory = request.root / directory
        return TaskFolders(directory)


class HarborFamily:
    """`harbor:PATH`: Harbor-format task folders, each task in its own container (`harbor.py`);
    `harbor:NAME@VERSION`: a dataset of a Harbor registry (`harbor_registry.py`)."""

    @property
    def spec(self) -> BenchmarkSpec:
        """From `harbor`, imported only when the family is used."""
        from .harbor import HARBOR

        return HARBOR

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """With a `base`, the folder is made absolute and every task folder is checked; a
        dataset's name is kept as it is (`init` fetches it)."""
        if argument is None or base is None:
            return argument
        from .harbor import HarborSuite
        from .harbor_registry import dataset_ref

        folder = base / Path(argument).expanduser()
        if not folder.exists() and dataset_ref(argument) is not None:
            return argument
        return HarborSuite(folder).name.partition(":")[2]

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        """The suite, a registry dataset it names fetched first unless it is here already (made
        once per machine: a workspace's, from the entry of its `harbor.dataset_digest`)."""
        from .harbor import HarborSuite
        from .harbor_datasets import fetch_named

        if argument is None:
            raise BenchmarkError("harbor needs a folder or a dataset: harbor:PATH or harbor:NAME@VERSION")
        settings = request.config.harbor
        fetch_named(self.spec.benchmark_name(argument), settings.registry, request.root, settings.dataset_digest)
        directory = harbor_folder(argument, request.root, settings.dataset_digest)
        return HarborSuite(directory, request.config.harbor, request.config.splits)


def harbor_folder(argument: str, root: Path | None, digest: str | None) -> Path:
    """The folder `harbor:ARGUMENT` reads: the path, or the folder of the registry dataset it
    names, made from the registry entry of `digest` (fetched by `harbor_datasets.py`)."""
    from .harbor_registry import dataset_ref, made_dataset

    directory = Path(argument).expanduser()
    if not directory.is_absolute() and root is not None:
        directory = root / directory
    dataset = dataset_ref(argument)
    if dataset is not None and not directory.exists():
        return made_dataset(*dataset, digest)
    return directory
