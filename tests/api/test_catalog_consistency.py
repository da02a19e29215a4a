"""Consistency on write: a MIG layout a card cannot hold is refused, on a
catalog write and on an inline GPU alike, naming the profile's field; every seeded card's
profiles (NVIDIA's own) pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

from app.sizing.specs import MIG_MEMORY_SLICES, PARAMS_SHAPE_TOLERANCE, MigProfile, mig_profile_problems, shape_params
from tests.support import seeded_app

from .test_catalog_writes import gpu_body

SEED_DIR = Path(__file__).resolve().parents[2] / "catalog_seed"

TOKEN = "consistency-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SEVEN_WHOLE_CARDS = {"name": "7g.96gb", "compute_slices": 7, "memory_slices": 8, "memory_gb": 96, "max_instances": 7}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "consistency", api_tokens=(TOKEN,)) as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def refused(client: FlaskClient, body: dict[str, Any]) -> dict[str, list[str]]:
    response = client.post("/v1/gpus", json=body, headers=AUTH)
    assert response.status_code == 422, response.get_data(as_text=True)
    errors: dict[str, list[str]] = response.get_json()["errors"]
    return errors


def test_seven_whole_card_instances_on_one_card_are_refused(client: FlaskClient) -> None:
    errors = refused(client, gpu_body("seven-cards", mig_profiles=[SEVEN_WHOLE_CARDS]))
    # 7 instances of 8/8 of the memory: 56 eighths.
    assert errors == {
        "mig_profiles.0.max_instances": [
            f"7 instances of 8/8 of the memory need 56 eighths: a card has {MIG_MEMORY_SLICES}"
        ]
    }
    assert client.get("/v1/gpus/seven-cards").status_code == 404


@pytest.mark.parametrize(
    ("profile", "field"),
    [
        # 4 x 3 compute slices: 12 of 7
        (
            {"name": "3g.24gb", "compute_slices": 3, "memory_slices": 2, "memory_gb": 24, "max_instances": 4},
            "max_instances",
        ),
        # one eighth of 96 GB is 12 GB, not 20
        (
            {"name": "1g.20gb", "compute_slices": 1, "memory_slices": 1, "memory_gb": 20, "max_instances": 7},
            "memory_gb",
        ),
    ],
)
def test_a_profile_past_its_card_is_refused_naming_the_field(
    client: FlaskClient, profile: dict[str, Any], field: str
) -> None:
    assert list(refused(client, gpu_body("past-card", mig_profiles=[profile]))) == [f"mig_profiles.0.{field}"]


def test_an_inline_gpu_is_held_to_the_same_layout(client: FlaskClient) -> None:
    gpu = {
        "memory_gb": 96,
        "memory_bandwidth_tb_per_s": 4,
        "peak_tflops": {"bf16": 900},
        "mig_profiles": [SEVEN_WHOLE_CARDS],
    }
    response = client.post("/v1/fleet", json={"model": "llama-3.1-8b", "gpu": gpu, "requests_per_day": 1e6})
    assert response.status_code == 422
    assert list(response.get_json()["errors"]) == ["gpu.mig_profiles.0.max_instances"]


def test_every_seeded_profile_fits_its_card_as_nvidias_do() -> None:
    # NVIDIA's names round a profile's memory up to a whole GB: 3g.71gb is 4/8 of the H200's 141 GB.
    cards = yaml.safe_load((SEED_DIR / "gpus.yaml").read_text(encoding="utf-8"))["gpus"]
    profiles = [(card, p) for card in cards for p in card.get("mig_profiles") or []]
    assert len(profiles) > 50
    for card, profile in profiles:
        assert mig_profile_problems(MigProfile(**profile), card["memory_gb"]) == {}, (card["slug"], profile)


# --- params_total against the shape ------------------------------------------------------------


def model_document(slug: str, **changes: Any) -> dict[str, Any]:
    """Llama 3.1 8B's shape (catalog_seed/models.yaml) under another slug."""
    models = yaml.safe_load((SEED_DIR / "models.yaml").read_text(encoding="utf-8"))["models"]
    seed = next(m for m in models if m["slug"] == "llama-3.1-8b")
    return {**{k: v for k, v in seed.items() if v is not None}, "slug": slug, **changes}


def test_a_params_total_its_shape_cannot_hold_is_refused_naming_it(client: FlaskClient) -> None:
    response = client.post("/v1/models", json=model_document("thousand", params_total=1000), headers=AUTH)
    assert response.status_code == 422, response.get_data(as_text=True)
    [message] = response.get_json()["errors"]["params_total"]
    counted = shape_params(model_document("thousand"))
    assert counted is not None and f"{counted:,} its shape counts" in message and "params_beyond_shape" in message


def test_a_params_total_past_its_shape_is_stored_when_the_write_says_why(client: FlaskClient) -> None:
    counted = shape_params(model_document("with-vision"))
    assert counted is not None
    body = model_document(
        "with-vision", params_total=round(counted * 1.2), params_beyond_shape="a 1.6B-parameter vision tower"
    )
    response = client.post("/v1/models", json=body, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["params_beyond_shape"] == "a 1.6B-parameter vision tower"


def test_every_seeded_model_its_shape_describes_is_within_the_tolerance() -> None:
    models = yaml.safe_load((SEED_DIR / "models.yaml").read_text(encoding="utf-8"))["models"]
    counted = [(m, shape_params(m)) for m in models]
    described = [(m, c) for m, c in counted if c is not None]
    assert len(described) >= len(models) - 1  # DeepSeek V3's MLA projections are not in the fields
    for model, shape in described:
        assert abs(model["params_total"] / shape - 1) <= PARAMS_SHAPE_TOLERANCE, model["slug"]
