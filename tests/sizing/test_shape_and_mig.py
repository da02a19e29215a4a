"""What a model's shape counts (specs.shape_params) against the published totals, worked out
here by hand, and what makes a MIG profile impossible on its card (specs.mig_profile_problems)."""

from app.sizing.specs import MLA, MigProfile, mig_profile_problems, shape_params

LLAMA_31_8B = {
    "hidden_size": 4096,
    "layers": 32,
    "attention_heads": 32,
    "kv_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}


def test_a_dense_shape_counts_its_embeddings_head_attention_and_gated_mlp():
    # Embeddings and an untied head: 2 x 128,256 x 4,096. A layer: Q and O (4,096 x 4,096 each),
    # K and V (4,096 x 1,024 each), and three 4,096 x 14,336 MLP matrices.
    embeddings = 2 * 128_256 * 4096
    layer = 4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 14336
    assert shape_params(LLAMA_31_8B) == embeddings + 32 * layer == 8_029_995_008  # Meta's 8.03B, norms aside


def test_tied_embeddings_count_once_and_a_given_head_dim_is_used():
    # Llama 3.2 1B: 16 layers of 2,048, 32 heads of 64, 8 KV heads, 8,192-wide MLP, tied: 1.24B.
    shape = {
        "hidden_size": 2048,
        "layers": 16,
        "attention_heads": 32,
        "kv_heads": 8,
        "head_dim": 64,
        "intermediate_size": 8192,
        "vocab_size": 128256,
        "tie_word_embeddings": True,
    }
    layer = 2048 * (2 * 32 * 64 + 2 * 8 * 64) + 3 * 2048 * 8192
    assert shape_params(shape) == 128_256 * 2048 + 16 * layer == 1_235_746_816
    # A head_dim other than hidden / heads changes Q, K, V and O (Qwen3's 128 at 32 heads of 2,048).
    wide = shape_params({**shape, "head_dim": 128})
    assert wide == 128_256 * 2048 + 16 * (2048 * (2 * 32 * 128 + 2 * 8 * 128) + 3 * 2048 * 8192)


def test_a_mixture_of_experts_counts_every_routed_and_shared_expert_and_the_router():
    # Mixtral 8x7B: Llama's layer with 8 experts of 14,336 and a 4,096 x 8 router, 32,000 tokens: 46.7B.
    mixtral = {**LLAMA_31_8B, "vocab_size": 32000, "experts": 8, "experts_per_token": 2}
    layer = 4096 * (2 * 4096 + 2 * 1024) + 8 * 3 * 4096 * 14336 + 4096 * 8
    assert shape_params(mixtral) == 2 * 32000 * 4096 + 32 * layer == 46_702_526_464
    # Experts of their own width, plus a shared one (DeepSeek-style, here on a toy shape).
    toy = {
        "hidden_size": 64,
        "layers": 2,
        "attention_heads": 4,
        "kv_heads": 2,
        "intermediate_size": 256,
        "moe_intermediate_size": 32,
        "experts": 4,
        "shared_experts": 1,
        "vocab_size": 100,
    }
    attention = 64 * (2 * 4 * 16 + 2 * 2 * 16)
    assert shape_params(toy) == 2 * 100 * 64 + 2 * (attention + 5 * 3 * 64 * 32 + 64 * 4)


def test_a_shape_that_does_not_describe_its_weights_counts_nothing():
    assert shape_params({**LLAMA_31_8B, "attention": MLA}) is None  # low-rank projections
    assert shape_params({**LLAMA_31_8B, "vocab_size": None}) is None
    assert shape_params({**LLAMA_31_8B, "intermediate_size": None}) is None
    # 4,100 over 32 heads is not whole and no head_dim is given.
    assert shape_params({**LLAMA_31_8B, "hidden_size": 4100}) is None


def test_a_mig_profile_fits_its_card_s_eighths_and_sevenths():
    # A100 80GB's 3g.40gb: 2 instances of 4/8 of the memory and 3 of 7 compute slices.
    assert mig_profile_problems(MigProfile("3g.40gb", 3, 4, 40, 2), 80) == {}
    # H200's 3g.71gb: 4/8 of 141 GB is 70.5, named 71 (rounded up); 72 would be more.
    assert mig_profile_problems(MigProfile("3g.71gb", 3, 4, 71, 2), 141) == {}
    too_big = mig_profile_problems(MigProfile("3g.72gb", 3, 4, 72, 2), 141)
    assert too_big == {"memory_gb": "72 GB is more than 4/8 of the card's 141 GB (71 GB rounded up)"}
    # Nine instances of an eighth need 9 eighths; two of 4 compute slices need 8 of 7.
    assert mig_profile_problems(MigProfile("1g.10gb", 1, 1, 10, 9), 80)["max_instances"] == (
        "9 instances of 1/8 of the memory need 9 eighths: a card has 8"
    )
    assert mig_profile_problems(MigProfile("4g.40gb", 4, 4, 40, 2), 80)["max_instances"] == (
        "2 instances of 4 compute slices need 8: a card has at most 7"
    )
    # Exactly the card's eighths and sevenths is allowed; no card memory, no memory check.
    assert mig_profile_problems(MigProfile("1g.10gb", 1, 1, 10, 7), 80) == {}
    assert mig_profile_problems(MigProfile("3g.40gb", 3, 4, 500, 2), None) == {}
