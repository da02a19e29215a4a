"""Precision policy, tensor-parallel sizes, MIG slices, cost."""

from dataclasses import replace

import pytest

from app.sizing import cost, parallelism, precision
from app.sizing.specs import GpuPrices, ModelSpec

from .specs import A100_80, B200, H100_SXM, LLAMA_31_8B, UNKNOWN_NATIVES

GPT_OSS_LIKE = ModelSpec("mxfp4 model", 10**10, 24, 2880, 64, 8, 64, native_precision="mxfp4")


def test_auto_picks_fp8_on_hopper_over_int8_of_the_same_size():
    choice = precision.choose_weight_precision("auto", LLAMA_31_8B, H100_SXM)
    assert choice.weight_precision == "fp8" and choice.native and not choice.warnings


def test_auto_picks_int8_on_ampere_which_has_no_fp8():
    assert precision.choose_weight_precision("auto", LLAMA_31_8B, A100_80).weight_precision == "int8"


def test_auto_prefers_nvfp4_over_plain_int4_on_blackwell():
    assert precision.choose_weight_precision("auto", LLAMA_31_8B, B200).weight_precision == "nvfp4"


def test_unknown_native_list_assumes_bf16_and_says_so():
    choice = precision.choose_weight_precision("auto", LLAMA_31_8B, UNKNOWN_NATIVES)
    assert choice.weight_precision == "bf16"
    assert any("assuming bf16 only" in w for w in choice.warnings)


def test_fp8_on_an_a100_is_allowed_but_converted_up():
    choice = precision.choose_weight_precision("fp8", LLAMA_31_8B, A100_80)
    assert choice.weight_precision == "fp8" and not choice.native
    assert any("converted up" in w for w in choice.warnings)


def test_int4_weight_only_runs_anywhere_without_a_warning():
    assert not precision.choose_weight_precision("int4", LLAMA_31_8B, A100_80).warnings


def test_auto_keeps_a_4_bit_checkpoint_on_a_card_without_fp4():
    choice = precision.choose_weight_precision("auto", GPT_OSS_LIKE, H100_SXM)
    assert choice.weight_precision == "mxfp4"
    assert choice.warnings


def test_default_is_the_checkpoint_format():
    assert precision.choose_weight_precision(None, LLAMA_31_8B, H100_SXM).weight_precision == "bf16"


def test_aliases_from_configs_normalise():
    assert precision.normalise("bfloat16") == "bf16"
    assert precision.normalise("FP8_E4M3") == "fp8"
    with pytest.raises(precision.UnknownPrecision):
        precision.normalise("fp7")


def test_compute_runs_at_the_bf16_peak_unless_native_is_asked():
    assert precision.compute_peak_tflops(H100_SXM, None, "fp8") == ("bf16", 989)
    assert precision.compute_peak_tflops(H100_SXM, "native", "fp8") == ("fp8", 1979)
    assert precision.compute_peak_tflops(A100_80, "native", "fp8") == ("bf16", 312)


def test_valid_tp_sizes_divide_heads_and_fit_kv_heads():
    assert parallelism.valid_tensor_parallel(LLAMA_31_8B, 8) == [1, 2, 4, 8]
    # Qwen2.5-7B: 28 query heads, 4 KV heads. 8 does not divide 28: a crash at start-up.
    qwen25_7b = ModelSpec("Qwen2.5 7B", 7_615_616_512, 28, 3584, 28, 4, 128)
    assert parallelism.valid_tensor_parallel(qwen25_7b, 8) == [1, 2, 4]
    # 40 heads over 10 KV heads: 5 divides both; 8 divides 40 but neither divides 10 nor 10 it.
    forty = ModelSpec("40 heads", 10**10, 40, 5120, 40, 10, 128)
    assert parallelism.valid_tensor_parallel(forty, 8) == [1, 2, 5]


def test_tp_may_exceed_kv_heads_when_it_is_a_multiple_of_them():
    model = ModelSpec("2 kv", 10**9, 16, 2048, 16, 2, 128)
    assert parallelism.valid_tensor_parallel(model, 8) == [1, 2, 4, 8]
    three = ModelSpec("3 kv", 10**9, 16, 2304, 12, 3, 192)
    assert parallelism.valid_tensor_parallel(three, 8) == [1, 3, 6]


def test_a_seventh_of_an_h100_has_its_memory_a_seventh_of_compute_an_eighth_of_bandwidth():
    profile = H100_SXM.mig_profiles[0]
    sliced = parallelism.mig_target(H100_SXM, profile)
    assert sliced.memory_gb == 10
    assert sliced.peak_tflops["bf16"] == pytest.approx(989 / 7)
    assert sliced.memory_bandwidth_tb_per_s == pytest.approx(3.35 / 8)
    assert sliced.host_cpu_cores == pytest.approx(2)  # seed 002: 2 cores for a seventh, 14 for the card
    assert sliced.gpus_per_node == 1


def test_a_slice_costs_the_card_over_the_slices_one_card_holds():
    one_g_20 = H100_SXM.mig_profiles[1]  # a seventh of the SMs but a quarter of the memory: 4 per card
    assert parallelism.mig_target(H100_SXM, one_g_20).hourly_price_usd == pytest.approx(3.0 / 4)


def test_a_slice_takes_the_cards_prices_and_power_over_the_slices_one_card_holds():
    card = replace(
        H100_SXM,
        prices=GpuPrices(
            reserved_1y_usd_per_hour=2.16,
            spot_usd_per_hour=1.5,
            spot_interruptions_per_hour=0.05,
            purchase_usd=28_000,
            power_w=700,
            idle_power_w=70,
        ),
    )
    one_g_20 = next(p for p in card.mig_profiles if p.name == "1g.20gb")  # 4 to a card
    sliced = parallelism.mig_target(card, one_g_20).prices
    assert sliced.reserved_1y_usd_per_hour == pytest.approx(2.16 / 4)
    assert sliced.spot_usd_per_hour == pytest.approx(1.5 / 4)
    assert sliced.purchase_usd == pytest.approx(7_000)
    assert (sliced.power_w, sliced.idle_power_w) == (pytest.approx(175), pytest.approx(17.5))
    # A slice is taken back with its card: the same chance per hour, and an unknown stays unknown.
    assert sliced.spot_interruptions_per_hour == 0.05
    assert sliced.reserved_3y_usd_per_hour is None


@pytest.mark.parametrize(("tokens_per_s", "usd"), [(750, 0.93), (3000, 0.23)])
def test_cost_per_million_at_2_50_per_hour(tokens_per_s, usd):
    assert cost.cost_per_million_tokens_usd(2.50, 1, tokens_per_s) == pytest.approx(usd, abs=0.005)


def test_six_gpus_at_2_50_for_720_hours_is_10800_a_month():
    assert cost.cost(2.50, 6, 0, hours_per_month=720).monthly_cost_usd == pytest.approx(10_800)


def test_idle_time_raises_the_cost_per_token_not_the_bill():
    busy = cost.cost(2.50, 1, 3000, utilization=1.0)
    half = cost.cost(2.50, 1, 3000, utilization=0.5)
    assert half.monthly_cost_usd == busy.monthly_cost_usd
    assert half.cost_per_million_output_tokens_usd == pytest.approx(2 * busy.cost_per_million_output_tokens_usd)


def test_no_tokens_means_no_cost_per_token():
    assert cost.cost_per_million_tokens_usd(2.5, 1, 0) is None


def test_auto_ignores_int4_tensor_cores_because_engines_dequantise_int4():
    ampere_listing_int4 = A100_80.__class__(**{**A100_80.__dict__, "native_precisions": ("bf16", "int8", "int4")})
    assert precision.choose_weight_precision("auto", LLAMA_31_8B, ampere_listing_int4).weight_precision == "int8"


def test_a_native_list_of_training_formats_only_counts_as_unknown():
    tf32_only = A100_80.__class__(**{**A100_80.__dict__, "native_precisions": ("tf32", "fp64")})
    choice = precision.choose_weight_precision("auto", LLAMA_31_8B, tf32_only)
    assert choice.weight_precision == "bf16"
    assert any("assuming bf16 only" in w for w in choice.warnings)
