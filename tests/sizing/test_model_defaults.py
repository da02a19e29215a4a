"""The defaults of a model's derivable fields (app.sizing.specs): the one rule each that the
catalog writes, inline planning models, the seed and the Hugging Face import all apply."""

from __future__ import annotations

from app.sizing.specs import (
    GQA,
    MHA,
    default_attention,
    default_head_dim,
    default_params_active,
    default_sliding_window_layers,
    model_defaults,
)

from .specs import QWEN3_30B_A3B

LLAMA_SHAPE = {"params_total": 8_030_261_248, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}


def test_head_dim_is_hidden_over_heads_when_whole() -> None:
    assert default_head_dim(4096, 32) == 128
    assert default_head_dim(5120, 40) == 128
    # Gemma 3 27B: 5376 / 32 = 168 is whole; 3000 / 64 is not, and then head_dim must be given.
    assert default_head_dim(5376, 32) == 168
    assert default_head_dim(3000, 64) is None


def test_attention_is_mha_with_one_kv_head_per_query_head_else_gqa() -> None:
    assert default_attention(32, 32) == MHA
    assert default_attention(32, 8) == GQA


def test_a_window_without_a_layer_count_covers_every_layer() -> None:
    assert default_sliding_window_layers(32, 4096) == 32
    assert default_sliding_window_layers(32, None) == 0


def test_params_active_is_the_total_for_a_dense_model() -> None:
    assert default_params_active(8_030_261_248, None, None, None) == 8_030_261_248


def test_params_active_counts_k_of_e_routed_experts_in_whole_parameters() -> None:
    spec = QWEN3_30B_A3B
    assert spec.experts and spec.experts_per_token and spec.expert_params
    active = default_params_active(spec.params_total, spec.experts, spec.experts_per_token, spec.expert_params)
    assert active == round(spec.active_params)  # the sizing core's real-valued share, here whole
    # A share that is not whole is rounded down, exactly, even near 10^14 parameters.
    assert default_params_active(10**14, 3, 1, 10**14 - 1) == 1 + (10**14 - 1) // 3


def test_model_defaults_fill_only_what_is_left_out() -> None:
    assert model_defaults(LLAMA_SHAPE) == {
        "head_dim": 128,
        "attention": GQA,
        "sliding_window_layers": 0,
        "params_active": 8_030_261_248,
    }
    given = {**LLAMA_SHAPE, "head_dim": 64, "attention": MHA, "sliding_window": 4096, "params_active": 7}
    assert model_defaults(given) == {"head_dim": 64, "attention": MHA, "sliding_window_layers": 32, "params_active": 7}
    assert model_defaults({**given, "sliding_window_layers": 5})["sliding_window_layers"] == 5
