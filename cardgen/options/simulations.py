"""game.yaml's `simulations:` section: the designer's balance simulations, run only by `cardgen simulate`.

These models only describe the section (they load with the manifest): nothing here imports or runs the
designer's module, so `cardgen validate` and `cardgen build` read the section and never run a simulation.
"""
from __future__ import annotations

from pydantic import Field, model_validator

from cardgen.options import Strict

MAX_RUNS = 1_000_000  # of one simulation: a mistyped 100,000,000 would run for hours
MAX_SECONDS = 3600.0


class TargetSpec(Strict):
    """What the rulebook wants of one measure: a value within a tolerance, or a bound (at_least, at_most)."""

    value: float | None = None
    tolerance: float = Field(0.0, ge=0, description="how far from `value` the measure may be")
    at_least: float | None = None
    at_most: float | None = None
    min_runs: int = Field(1, ge=1, le=MAX_RUNS, description="fewer runs than this cannot tell")
    note: str | None = Field(None, description="where the target comes from (the rulebook's section)")

    @model_validator(mode="after")
    def _one_target(self) -> "TargetSpec":
        if self.value is None and self.at_least is None and self.at_most is None:
            raise ValueError("a target needs `value:` (with `tolerance:`) or `at_least:` / `at_most:`")
        return self


class SimulationSpec(Strict):
    """One simulation: the designer's module in data/<game>/ and its function, how often to run it, its targets."""

    module: str = Field(description="a Python file in data/<game>/, e.g. simulate.py")
    function: str = Field("simulate", pattern=r"^[A-Za-z_]\w*$",
                          description="called once per run as function(cards, rng) -> {measure: value(s)}")
    runs: int = Field(1000, ge=1, le=MAX_RUNS)
    seed: int = 1
    time_limit: float = Field(60.0, gt=0, le=MAX_SECONDS, description="seconds for all runs, then it is stopped")
    description: str | None = None
    targets: dict[str, TargetSpec] = Field(default_factory=dict)
