"""Rows to sizing specs and to the public JSON shape."""

from __future__ import annotations

import dataclasses

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.convert import gpu_to_dict, gpu_to_spec, model_to_dict, model_to_spec
from app.catalog.models import Gpu, MigProfile, Model
from app.catalog.queries import get_gpu, get_model
from app.sizing.specs import GpuPrices, GpuSpec, ModelSpec
from app.sizing.specs import MigProfile as MigProfileSpec

DEEPSEEK_LIKE = ModelSpec(
    name="DeepSeek-V3-like",
    params_total=671_026_419_200,
    layers=61,
    hidden_size=7168,
    attention_heads=128,
    kv_heads=128,
    head_dim=128,
    attention="mla",
    params_active=37_000_000_000,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    sliding_window=None,
    sliding_window_layers=0,
    experts=256,
    experts_per_token=8,
    expert_params=654_000_000_000,
    native_precision="fp8",
    max_context=163840,
    vocab_size=129_280,
    tie_word_embeddings=False,
    quantized_components=("attention", "dense_mlp", "experts"),
)

H100_LIKE = GpuSpec(
    name="H100-like",
    memory_gb=80.0,
    memory_bandwidth_tb_per_s=3.35,
    peak_tflops={"bf16": 989.5, "fp16": 989.5, "fp8": 1979.0, "int8": 1979.0, "fp4": None},
    native_precisions=("bf16", "fp16", "fp8", "int8"),
    interconnect_kind="nvlink4",
    interconnect_bandwidth_gb_per_s=450.0,
    interconnect_latency_us=10.0,
    gpus_per_node=8,
    hourly_price_usd=3.0,
    host_cpu_cores=14,
    mig_profiles=(
        MigProfileSpec("1g.10gb", 1, 1, 10.0, 7),
        MigProfileSpec("3g.40gb", 3, 4, 40.0, 2),
        MigProfileSpec("7g.80gb", 7, 8, 80.0, 1),
    ),
    memory_visible_gib=79.19,
    architecture="hopper",
    prices=GpuPrices(
        reserved_1y_usd_per_hour=2.16,
        reserved_3y_usd_per_hour=1.62,
        spot_usd_per_hour=1.5,
        spot_interruptions_per_hour=0.05,
        purchase_usd=27_500.0,
        power_w=700.0,
        idle_power_w=None,
    ),
)


def _model_row(spec: ModelSpec) -> Model:
    fields = dataclasses.asdict(spec)
    fields["quantized_components"] = list(spec.quantized_components or ()) or None
    return Model(slug="deepseek-like", source="test", **fields)


def _gpu_row(spec: GpuSpec) -> Gpu:
    fields = dataclasses.asdict(spec)
    peaks = fields.pop("peak_tflops")
    profiles = fields.pop("mig_profiles")
    prices = fields.pop("prices")
    fields["native_precisions"] = list(spec.native_precisions or ())
    return Gpu(
        slug="h100-like",
        vendor="nvidia",
        source="test",
        confidence="derived",
        **fields,
        **{f"peak_tflops_{key}": value for key, value in peaks.items()},
        **{f"prices_{key}": value for key, value in prices.items()},
        # Stored in reverse: the relationship's order_by must restore the spec's order.
        mig_profiles=[MigProfile(**profile) for profile in reversed(profiles)],
    )


def test_a_model_spec_survives_the_database_round_trip(session: Session) -> None:
    session.add(_model_row(DEEPSEEK_LIKE))
    session.commit()
    session.expunge_all()
    row = get_model(session, "deepseek-like")
    assert row is not None
    assert model_to_spec(row) == DEEPSEEK_LIKE


def test_a_gpu_spec_survives_the_database_round_trip(session: Session) -> None:
    session.add(_gpu_row(H100_LIKE))
    session.commit()
    session.expunge_all()
    row = get_gpu(session, "h100-like")
    assert row is not None
    assert gpu_to_spec(row) == H100_LIKE


def test_unknown_native_precision_stays_unknown_rather_than_guessed(seeded: Session) -> None:
    row = get_model(seeded, "qwen3-30b-a3b")
    assert row is not None and row.native_precision is None
    spec = model_to_spec(row)
    assert spec.native_precision is None
    assert spec.is_moe and spec.experts == 128
    assert model_to_dict(row)["native_precision"] is None


def test_unknown_gpu_figures_stay_none_in_the_spec(seeded: Session) -> None:
    row = get_gpu(seeded, "a10g")
    assert row is not None
    spec = gpu_to_spec(row)
    assert spec.memory_gb is None and spec.native_precisions is None
    assert spec.peak_tflops == {key: None for key in ("bf16", "fp16", "fp8", "int8", "fp4")}
    assert spec.mig_profiles == ()


def test_model_dict_has_the_public_fields_and_no_id(seeded: Session) -> None:
    row = get_model(seeded, "llama-3.1-8b")
    assert row is not None
    public = model_to_dict(row)
    assert "id" not in public
    api_md_fields = {
        "slug", "name", "params_total", "params_active", "layers", "hidden_size",
        "attention_heads", "kv_heads", "head_dim", "attention", "kv_lora_rank",
        "qk_rope_head_dim", "sliding_window", "sliding_window_layers", "experts",
        "experts_per_token", "expert_params", "native_precision", "max_context", "source",
    }  # fmt: skip
    extras = {
        "family", "hf_repo", "instruct_repo", "aliases", "vocab_size", "intermediate_size", "moe_intermediate_size",
        "shared_experts", "tie_word_embeddings", "quantized_components", "license", "notes", "params_beyond_shape",
        "version",
    }  # fmt: skip
    assert set(public) == api_md_fields | extras
    assert public["params_total"] == 8_030_261_248
    assert public["version"] == 1
    assert public["quantized_components"] is None  # the format's convention


def test_quantized_components_reach_the_spec_as_a_tuple_and_the_dict_as_a_list(seeded: Session) -> None:
    row = get_model(seeded, "qwen3-30b-a3b")
    assert row is not None
    assert model_to_spec(row).quantized_components == ("attention", "experts")
    assert model_to_dict(row)["quantized_components"] == ["attention", "experts"]
    # none_as_null: an unknown list is SQL NULL, not the JSON text 'null'.
    unknown = seeded.scalars(select(Model.slug).where(Model.quantized_components.is_(None))).all()
    assert sorted(unknown) == ["llama-3.1-405b", "llama-3.1-8b"]


def test_the_model_spec_carries_what_splits_the_weights(seeded: Session) -> None:
    row = get_model(seeded, "llama-3.1-8b")
    assert row is not None
    spec = model_to_spec(row)
    assert (spec.vocab_size, spec.tie_word_embeddings) == (row.vocab_size, False)
    assert spec.vocab_size is not None


def test_visible_memory_and_architecture_reach_the_gpu_spec(seeded: Session) -> None:
    h100, l4 = get_gpu(seeded, "h100-sxm"), get_gpu(seeded, "l4")
    assert h100 is not None and l4 is not None
    assert (gpu_to_spec(h100).memory_visible_gib, gpu_to_spec(h100).architecture) == (79.19, "hopper")
    assert gpu_to_dict(h100)["memory_visible_gib"] == 79.19
    # Not measured: None, for the engine to derive.
    assert (gpu_to_spec(l4).memory_visible_gib, gpu_to_spec(l4).architecture) == (None, "ada")
    assert gpu_to_dict(l4)["memory_visible_gib"] is None


def test_gpu_dict_nests_peaks_interconnect_and_profiles(seeded: Session) -> None:
    row = get_gpu(seeded, "h100-sxm")
    assert row is not None
    public = gpu_to_dict(row)
    assert "id" not in public
    assert public["peak_tflops"] == {
        "bf16": 989.5,
        "fp16": 989.5,
        "fp8": 1979.0,
        "int8": 1979.0,
        "fp4": None,
    }
    assert public["interconnect"] == {
        "kind": "nvlink4",
        "bandwidth_gb_per_s": 450.0,
        "latency_us": 10.0,
    }
    assert public["mig_profiles"][0] == {
        "name": "1g.10gb",
        "compute_slices": 1,
        "memory_slices": 1,
        "memory_gb": 10.0,
        "max_instances": 7,
    }
    assert public["native_precisions"] == ["tf32", "bf16", "fp16", "fp8", "int8"]
    for field in ("architecture", "form_factor", "host_cpu_cores", "price_date", "confidence", "memory_visible_gib",
                  "source", "notes", "version", "gpus_per_node", "hourly_price_usd"):  # fmt: skip
        assert field in public
    assert not any(key.startswith(("peak_tflops_", "interconnect_")) for key in public)
