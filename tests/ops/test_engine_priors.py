"""The engine constants stay physical: every fitted constant of catalog_seed/engines.yaml lies
inside the range bench/engine_priors.yaml states for it, away from its ends, and names its
rows, its prior and the prior's evidence."""

from __future__ import annotations

import math

import pytest
import yaml

from app.catalog.seed import SEED_DIR
from bench.fit_engines import (
    AT_BOUND,
    EFFICIENCY_FIELDS,
    TIME_CONSTANTS,
    Prior,
    load_catalog,
    load_priors,
    memory_knob_names,
)

PRIORS = load_priors()
ENGINES = yaml.safe_load((SEED_DIR / "engines.yaml").read_text(encoding="utf-8"))["engines"]
PROFILES = load_catalog().engines


def test_every_prior_lies_inside_its_own_range_and_has_evidence():
    for name, prior in PRIORS.constants.items():
        assert prior.low < prior.prior < prior.high, name
        assert prior.sd > 0 and prior.evidence and prior.missing, name
    for (arch, field), prior in PRIORS.efficiencies.items():
        assert 0 < prior.low < prior.prior < prior.high <= 1, (arch, field)


def test_the_bound_check_catches_a_constant_at_either_end():
    prior = Prior(1.0, 100.0, 10.0, 0.5, "e", "m")
    span = math.log(100.0)
    assert prior.at_bound(1.0) and prior.at_bound(100.0)
    assert prior.at_bound(math.exp(0.5 * AT_BOUND * span)) and not prior.at_bound(math.exp(2 * AT_BOUND * span))
    assert not prior.at_bound(10.0)


@pytest.mark.parametrize("entry", ENGINES, ids=[e["name"] for e in ENGINES])
def test_every_fitted_constant_sits_inside_its_range_and_not_at_a_bound(entry):
    profile = PROFILES[entry["name"]]
    for name in (*memory_knob_names(profile), *TIME_CONSTANTS):
        prior = PRIORS.constants[name]
        value = entry[name]
        assert prior.low <= value <= prior.high, (entry["name"], name, value)
        assert not prior.at_bound(value), (entry["name"], name, value)
        note = entry["fitted_on"][name]
        assert f"prior {prior.prior:g}" in note and prior.evidence in note, (entry["name"], name)
    for row in entry["efficiencies"]:
        for field in EFFICIENCY_FIELDS:
            prior = PRIORS.efficiency(row["architecture"], field)
            assert prior.low <= row[field] <= prior.high, (entry["name"], row)
            assert not prior.at_bound(row[field]), (entry["name"], row["architecture"], field, row[field])
        assert "prior" in entry["fitted_on"][f"efficiencies.{row['architecture']}"]


@pytest.mark.parametrize("entry", ENGINES, ids=[e["name"] for e in ENGINES])
def test_a_generation_without_rows_keeps_its_prior_not_another_engines_value(entry):
    rows = entry["uncertainty"]["rows"]
    for row in entry["efficiencies"]:
        arch = row["architecture"]
        if arch == "*" or rows.get(f"gpu:{arch}"):
            continue
        expected = [PRIORS.efficiency(arch, f).prior for f in EFFICIENCY_FIELDS]
        assert [row[f] for f in EFFICIENCY_FIELDS] == pytest.approx(expected), (entry["name"], arch)
        assert "no rows" in entry["fitted_on"][f"efficiencies.{arch}"]
