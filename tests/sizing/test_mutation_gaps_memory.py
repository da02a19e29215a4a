"""Memory (app/sizing/memory.py) at the inputs where mutants of `make mutation` survived:

- one sequence is what a fit holds when no concurrency is asked for;
- without a block size the cache is kept token by token; blocks of 2 round a context too;
- an MLA replica of several GPUs holds the latent on each of them, in its capacity and in its
  shared prefix;
- a drafter's KV is in the shared prefix as in every sequence; a prefix no second sequence
  shares saves nothing;
- weights fit only with room to spare; no sequence holds no prefix.
"""

from __future__ import annotations

import pytest

from app.sizing import memory

from .specs import DEEPSEEK_V3, LLAMA_31_8B

# Llama 3.1 8B's KV per token in bf16: K and V x 32 layers x 8 KV heads x 128 dims x 2 bytes.
KV_8B = 2 * 32 * 8 * 128 * 2
WEIGHTS_8B = 8_030_261_248 * 2  # bf16
# DeepSeek-V3's per token in bf16: 61 layers x (512 latent + 64 RoPE key) x 2 bytes, on every GPU.
KV_V3_PER_GPU = 61 * (512 + 64) * 2


def test_one_sequence_is_the_default_concurrency() -> None:
    """2,048 + 512 tokens of one sequence: 2,560 x 131,072 bytes of KV beside the weights."""
    one = memory.fit(
        LLAMA_31_8B,
        memory_gb=80,
        gpus=1,
        weight_precision="bf16",
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=512,
    )
    assert one.kv_bytes_at_concurrency == 2560 * KV_8B
    assert one.memory_used_bytes == WEIGHTS_8B + 2560 * KV_8B
    budget = memory.fit_budget(
        LLAMA_31_8B,
        weights=WEIGHTS_8B,
        usable=72e9,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=512,
    )
    assert budget.kv_bytes_at_concurrency == 2560 * KV_8B


def _fit_8b(block_size: int | None) -> memory.FitResult:
    """Room for 25,491 tokens of KV and a context of 2,049 + 500 = 2,549 tokens (both odd)."""
    blocks = {} if block_size is None else {"block_size": block_size}
    return memory.fit_budget(
        LLAMA_31_8B,
        weights=16e9,
        usable=16e9 + 25_491 * KV_8B,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2049,
        output_tokens=500,
        **blocks,
    )


def test_without_a_block_size_the_cache_is_kept_token_by_token() -> None:
    fit = _fit_8b(None)
    assert fit.kv_budget_bytes == 25_491 * KV_8B
    assert fit.kv_bytes_per_sequence == 2549 * KV_8B
    assert fit.kv_capacity_tokens == 25_491
    assert fit.max_concurrency == 10  # 25,491 / 2,549 = 10.0004


@pytest.mark.parametrize(("block_size", "context", "capacity"), [(2, 2550, 25_490), (16, 2560, 25_488)])
def test_blocks_round_the_context_up_and_the_capacity_down(block_size: int, context: int, capacity: int) -> None:
    """Blocks of 2: 2,549 tokens take 1,275 blocks (2,550 tokens), 25,491 tokens of room 12,745
    blocks (25,490); of 16: 160 blocks (2,560) and 1,593 blocks (25,488). Either way 9 sequences."""
    assert context == -(-2549 // block_size) * block_size
    assert capacity == 25_491 // block_size * block_size
    fit = _fit_8b(block_size)
    assert fit.kv_bytes_per_sequence == context * KV_8B
    assert fit.kv_capacity_tokens == capacity
    assert fit.max_concurrency == capacity // context == 9


def test_an_mla_replica_of_eight_gpus_holds_the_latent_on_each_in_capacity_and_prefix() -> None:
    """DeepSeek-V3 on 8 GPUs: 8 x 70,272 = 562,176 bytes a token. Room for 1,000 tokens is 62 blocks
    of 16 (992 tokens); a 64-token shared prefix takes 4 of them, each sequence of 100 + 100 tokens
    13 blocks (208 tokens), 144 beyond the prefix: (992 - 64) / 144 = 6.4, 6 sequences."""
    per_token = 8 * KV_V3_PER_GPU
    assert per_token == 562_176
    weights = 700e9
    fit = memory.fit_budget(
        DEEPSEEK_V3,
        weights=weights,
        usable=weights + 1000 * per_token,
        gpus=8,
        kv_precision="bf16",
        prompt_tokens=100,
        output_tokens=100,
        block_size=16,
        shared_prefix_tokens=64,
    )
    assert fit.kv_bytes_per_token == per_token
    assert fit.kv_capacity_tokens == 992
    assert fit.shared_prefix_kv_bytes == 64 * per_token
    assert fit.kv_bytes_per_sequence == (208 - 64) * per_token
    assert fit.max_concurrency == 6
    assert fit.kv_bytes_saved == 64 * per_token * 5


def test_a_drafters_kv_is_held_in_the_shared_prefix_too() -> None:
    """Llama 3.1 8B with a drafter keeping 1,000 bytes a token: 132,072 a token. A 100-token prefix
    shares 6 blocks of 16 (96 tokens); a sequence of 2,048 + 500 takes 160 blocks (2,560 tokens),
    2,464 beyond the prefix. Room for 20,000 tokens: (20,000 - 96) / 2,464 = 8.08, 8 sequences."""
    per_token = KV_8B + 1000
    fit = memory.fit_budget(
        LLAMA_31_8B,
        weights=16e9,
        usable=16e9 + 20_000 * per_token,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=500,
        concurrency=8,
        block_size=16,
        shared_prefix_tokens=100,
        draft_kv_bytes_per_token=1000,
    )
    assert fit.kv_bytes_per_token == per_token
    assert (fit.shared_prefix_tokens, fit.shared_prefix_kv_bytes) == (96, 96 * per_token)
    assert fit.kv_bytes_per_sequence == (2560 - 96) * per_token
    assert (fit.max_concurrency, fit.fits) == (8, True)
    assert fit.kv_bytes_at_concurrency == 8 * (2560 - 96) * per_token + 96 * per_token


@pytest.mark.parametrize(
    ("spare_bytes", "fits_weights"),
    [(-1e9, False), (0, False), (1, True), (KV_8B - 1, True)],
)
def test_weights_fit_only_with_room_to_spare_and_less_than_a_token_of_room_holds_nothing(
    spare_bytes: float, fits_weights: bool
) -> None:
    """1 GB short or exactly full: the weights do not fit. One byte, or a byte short of a token's
    131,072, over: they fit, but no token of KV does, so no sequence."""
    for block_size in (1, 16):
        fit = memory.fit_budget(
            LLAMA_31_8B,
            weights=16e9,
            usable=16e9 + spare_bytes,
            gpus=1,
            kv_precision="bf16",
            prompt_tokens=2048,
            output_tokens=512,
            block_size=block_size,
        )
        assert fit.fits_weights is fits_weights
        assert (fit.kv_capacity_tokens, fit.max_concurrency, fit.fits) == (0, 0, False)


def test_no_sequence_holds_no_shared_prefix_either() -> None:
    """At a concurrency of 0 the cache holds nothing: the weights are all the memory used."""
    fit = memory.fit_budget(
        LLAMA_31_8B,
        weights=16e9,
        usable=72e9,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=512,
        concurrency=0,
        block_size=16,
        shared_prefix_tokens=1024,
    )
    assert fit.shared_prefix_kv_bytes == 1024 * KV_8B
    assert (fit.kv_bytes_at_concurrency, fit.memory_used_bytes) == (0.0, 16e9)


def test_a_sequences_kv_is_one_gpus_unless_told_the_tensor_parallel_size() -> None:
    """DeepSeek-V3's latent, 1,000 tokens: 1,000 x 70,272 bytes on one GPU, 8 times that over 8."""
    assert memory.kv_bytes_per_token_per_layer(DEEPSEEK_V3, "bf16") == (512 + 64) * 2
    assert memory.kv_bytes_for_context(DEEPSEEK_V3, "bf16", 1000) == 1000 * KV_V3_PER_GPU
    assert memory.kv_bytes_for_context(DEEPSEEK_V3, "bf16", 1000, 8) == 8 * 1000 * KV_V3_PER_GPU


def test_a_prefix_that_only_one_sequence_holds_saves_nothing() -> None:
    """Room for 3,000 tokens (187 blocks of 16: 2,992); a 1,024-token prefix, sequences of 2,560
    tokens taking 1,536 beyond it: (2,992 - 1,024) / 1,536 = 1.3, one sequence, nothing shared."""
    fit = memory.fit_budget(
        LLAMA_31_8B,
        weights=16e9,
        usable=16e9 + 3000 * KV_8B,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=512,
        block_size=16,
        shared_prefix_tokens=1024,
    )
    assert (fit.kv_capacity_tokens, fit.max_concurrency) == (2992, 1)
    assert fit.kv_bytes_saved == 0.0
