"""Specs the sizing tests share, written out from the seeds and catalog facts."""

from app.sizing.specs import GpuSpec, MigProfile, ModelSpec

# Llama 3.1 8B (config.json): 8,030,261,248 parameters, 32 layers, 32 q / 8 kv heads, head_dim 128.
LLAMA_31_8B = ModelSpec("Llama 3.1 8B", 8_030_261_248, 32, 4096, 32, 8, 128, max_context=131_072)
LLAMA_2_7B = ModelSpec("Llama 2 7B", 6_738_415_616, 32, 4096, 32, 32, 128, attention="mha", native_precision="fp16")
LLAMA_31_70B = ModelSpec("Llama 3.1 70B", 70_553_706_496, 80, 8192, 64, 8, 128)
# Qwen3 30B-A3B: 48 MoE layers x 128 experts x (3 x 2048 x 768) routed parameters, top-8.
QWEN3_30B_A3B = ModelSpec(
    "Qwen3 30B-A3B",
    30_532_122_624,
    48,
    2048,
    32,
    4,
    128,
    experts=128,
    experts_per_token=8,
    expert_params=48 * 128 * 3 * 2048 * 768,
)
# DeepSeek-V3: MLA, 61 layers, latent 512 + rope key 64.
DEEPSEEK_V3 = ModelSpec(
    "DeepSeek-V3",
    671_026_419_200,
    61,
    7168,
    128,
    128,
    128,
    attention="mla",
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    native_precision="fp8",
    experts=256,
    experts_per_token=8,
    expert_params=58 * 256 * 3 * 7168 * 2048,
)

# Seed 000's H100 SXM and L4; the MIG table of NVIDIA's user guide for H100 80GB.
H100_SXM = GpuSpec(
    "H100 SXM",
    80,
    3.35,
    {"bf16": 989, "fp8": 1979, "int8": 1979},
    native_precisions=("bf16", "fp16", "fp8", "int8"),
    interconnect_bandwidth_gb_per_s=450,
    interconnect_latency_us=10,
    host_cpu_cores=14,
    hourly_price_usd=3.0,
    mig_profiles=(
        MigProfile("1g.10gb", 1, 1, 10, 7),
        MigProfile("1g.20gb", 1, 2, 20, 4),
        MigProfile("3g.40gb", 3, 4, 40, 2),
        MigProfile("7g.80gb", 7, 8, 80, 1),
    ),
)
L4 = GpuSpec("L4", 24, 0.3, {"bf16": 121}, native_precisions=("bf16", "fp16", "fp8", "int8"), gpus_per_node=1)
A100_80 = GpuSpec("A100 80GB", 80, 2.039, {"bf16": 312, "int8": 624}, native_precisions=("bf16", "fp16", "int8"))
B200 = GpuSpec(
    "B200",
    180,
    7.7,
    {"bf16": 2250, "fp8": 4500, "fp4": 9000},
    native_precisions=("bf16", "fp16", "fp8", "int8", "fp4", "nvfp4", "mxfp4"),
)
UNKNOWN_NATIVES = GpuSpec("mystery", 48, 1.0, {"bf16": 100})
