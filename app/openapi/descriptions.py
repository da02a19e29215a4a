"""The prose of openapi.yaml: one description per field name, and per-schema overrides where
the same name means something else (a request's knob and an answer's figure, a write's rule).

The generator raises when a field of a documented schema has no description here, so a new
field cannot go undocumented. Units live in the descriptions: `_gb` is 10^9 bytes, `_gib`
2^30 bytes, `_ms` milliseconds, and so on.
"""

from __future__ import annotations

from app.planning.batch import BATCH_MAX_WORK

FIELDS: dict[str, str] = {
    "length_samples": (
        "(prompt, output) token pairs the simulator draws each request's lengths from, with replacement, instead "
        "of gamma lengths: a request log's empirical distribution (a /v1/traces answer's length_samples), 1 to "
        "10,000 pairs; needs mode=simulate. prompt_tokens, output_tokens and their cvs are then the samples' (the "
        "analytic model and a fleet's sizing use those), so leave them out. POST only."
    ),
    "prefix_cache_hit_rate": (
        "Share of each prompt's tokens found in the prefix cache (vLLM's automatic prefix caching, SGLang's "
        "RadixAttention), 0-1; default 0. Cached tokens cost no prefill compute (the computed ones still attend to "
        "them), so TTFT and the steady state's prefill chunks shrink. The engine always computes a prompt's last "
        "token."
    ),
    "shared_prefix_tokens": (
        "A prefix every prompt shares (a system prompt), tokens, at most prompt_tokens; default 0. Its KV is held "
        "once per replica in the whole blocks it fills, not per sequence, which raises max_concurrency; it is "
        "cached for every request after the first (the cached share is the larger of this and "
        "prefix_cache_hit_rate's)."
    ),
    "shared_prefix_kv_bytes": "KV of the shared prefix, held once per replica (whole blocks only), bytes.",
    "kv_bytes_saved": (
        "KV that max_concurrency sequences would hold again each without sharing the prefix, bytes: "
        "shared_prefix_kv_bytes x (max_concurrency - 1)."
    ),
    "prefill_tokens_computed": (
        "Prompt tokens each request's prefill computes, tokens: prompt_tokens less those found in the prefix cache."
    ),
    "arrival": (
        "How requests arrive: `poisson` (default; exponential gaps) or `gamma` (gaps of gamma shape `burstiness`, "
        "vLLM's benchmark convention)."
    ),
    "burstiness": (
        "Gamma shape k of the inter-arrival times, dimensionless: 1 is Poisson, below 1 burstier (squared "
        "coefficient of variation 1/k), above 1 more regular. Needs `arrival=gamma`; 0.05 to 100."
    ),
    "prompt_tokens_cv": (
        "Spread of the prompt lengths: their coefficient of variation (sd / mean), dimensionless; 0 (default) is "
        "every prompt `prompt_tokens` long. Lengths are gamma-distributed, whole tokens, at least 1."
    ),
    "output_tokens_cv": (
        "Spread of the output lengths: their coefficient of variation (sd / mean), dimensionless; 0 (default) is "
        "every answer `output_tokens` long."
    ),
    "slo_percentile": "The percentile the SLOs hold at: 50, 90, 95 (default) or 99.",
    "makespan_s": "Time from t = 0, every request queued, to the last request's last token, s.",
    "prompt_tokens_total": "Prompt tokens of all the requests as drawn (and cut to fit the KV cache), tokens.",
    "output_tokens_total": "Output tokens of all the requests as drawn (and cut to fit the KV cache), tokens.",
    "total_tokens_per_s": "Prompt and output tokens of the batch over its makespan, tokens/s.",
    "cut_requests": (
        "Requests drawn longer than the KV cache holds (prompt + output), cut to fit it, count (an engine would "
        "refuse them)."
    ),
    "job_cost_usd": "What the batch costs: price_per_gpu_hour_usd x gpus x makespan, USD; null without a price.",
    "e2e_slo_ms": "End-to-end latency objective (arrival to last token) at `slo_percentile`, ms.",
    "request_rate": "Requests per second arriving at the replica, requests/s (or give `sweep_rates`).",
    "sweep_rates": "Request rates to evaluate, one answer row each, requests/s (at most 64; or give `request_rate`).",
    "mode": (
        "`analytic` (default): the queueing model, microseconds per rate. `simulate`: a discrete-event simulation "
        "of a vLLM-v1-like scheduler over sampled arrivals and lengths, deterministic for `seed`, with 95% "
        "confidence half-widths."
    ),
    "seed": "With `mode=simulate`: the random seed; the same seed gives the same answer.",
    "requests": (
        "With `mode=simulate`: requests simulated per rate (1,000 to 50,000; default 5,000; at most 200,000 over "
        "all rates), the first 10% a warm-up that is not measured."
    ),
    "stable": (
        "Whether the replica reaches a steady state at this rate (below its capacity); if not, the figures are null."
    ),
    "in_flight_mean": "Requests in the replica on average (queued and running), requests.",
    "queue_wait_ms": "Wait from arrival to the start of the request's prefill, ms.",
    "e2e_ms": "End-to-end latency, arrival to last token, ms.",
    "kv_fits": (
        "Whether the KV cache holds the load: the mean plus 3 sd of the tokens held fits (analytic), or no request "
        "was preempted (simulate)."
    ),
    "confidence_95_ms": "With `mode=simulate`: 95% confidence half-widths of the figures, by batch means, ms.",
    "preemptions": "With `mode=simulate`: requests preempted (KV cache full) and recomputed, count.",
    "measured_requests": "With `mode=simulate`: requests measured after the warm-up, count.",
    "saturation_rate": (
        "The replica's capacity, requests/s: its throughput with every request queued at once (the simulator's "
        "with `mode=simulate`); utilization is request_rate / saturation_rate."
    ),
    "max_request_rate": (
        "The highest request rate whose `slo_percentile` TTFT, TPOT and E2E meet the SLOs given and whose KV use "
        "fits, requests/s (by bisection; with `mode=simulate` on simulations of at most 10,000 requests, to 1/256 of "
        "saturation_rate); "
        "without SLOs, the highest stable and KV-safe rate."
    ),
    "max_request_rate_bound_by": (
        "What stops a higher rate: `ttft_slo`, `tpot_slo`, `e2e_slo`, `kv_capacity`, `max_num_seqs` or `saturation`."
    ),
    "max_request_rate_meets_slo": "Whether any rate meets the SLOs; null when none is given.",
    "rates": "One row per rate asked, in the order given.",
    "mean": "Mean, ms.",
    "p50": "Median (50th percentile), ms.",
    "p90": "90th percentile, ms.",
    "p95": "95th percentile, ms.",
    "p99": "99th percentile, ms.",
    "activation_bytes_per_token_expert_hidden": (
        "Added activation peak per routed expert of a token (fused MoE caches), bytes per batched token per unit of "
        "hidden size."
    ),
    "activation_bytes_per_token_hidden": (
        "Activation peak of the profiling pass, bytes per batched token per unit of hidden size."
    ),
    "activation_peak_bytes": "Peak activation memory of the profiling run, bytes.",
    "activation_peak_gib_per_gpu": "The engine's activation peak per GPU, GiB.",
    "activation_precision": (
        "Format of A and C (activations), which sets their bytes per element. Case-insensitive; the aliases "
        "(bfloat16, float16, half, fp8_e4m3, …) are accepted and normalised in the answer."
    ),
    "architecture": (
        "GPU architecture as in the GPUs' `architecture` (`hopper`, `ampere`, `ada`, `blackwell`, `cdna3`, ...), or "
        "`*` for any other."
    ),
    "arithmetic_intensity": (
        "FLOP per byte moved by the decode step, FLOP/byte. Null if the figure is unbounded (not finite)."
    ),
    "assumptions": "Defaults applied and caveats (also stored as the model's notes).",
    "attainable_tflops": (
        "min(peak, arithmetic_intensity × bandwidth), TFLOP/s. Null if the figure is unbounded (not finite)."
    ),
    "attention": (
        "Attention kind: `mha` (kv_heads = attention_heads), `gqa`, or `mla` (latent KV cache). Default: mha when "
        "kv_heads = attention_heads, else gqa."
    ),
    "attention_heads": "Query heads per layer, count.",
    "autoscaling": "What a KEDA/HPA policy needs (FleetAutoscaling).",
    "average_input_tokens_per_s": (
        "Average prompt (input) demand, tokens/s. Null if the figure is unbounded (not finite)."
    ),
    "average_tokens_per_s": "Average output demand, tokens/s. Null if the figure is unbounded (not finite).",
    "bandwidth_gb_per_s": "Link bandwidth per GPU and direction, GB/s (10^9 bytes per second).",
    "basis": (
        "What the figures rest on: `datasheet` (datasheet peaks and memory, scaled by the request's or the default "
        "efficiencies), `calibrated` (the newest stored calibration of this catalog model on this catalog GPU, MIG "
        "profile and weight precision supplied the fields in `calibration.fields_used`; never for inline models or "
        "GPUs), or `calibrated-nearest` (no calibration of this model: the efficiencies of the closest-sized model "
        "of the same family on the same target, said in `calibration` and `warnings`)."
    ),
    "bf16": "Dense peak at bf16, TFLOP/s per GPU.",
    "block_size": "KV block (page) size in tokens; capacity rounds down to whole blocks (1 for ideal).",
    "bound": "What bounds the GEMM.",
    "bound_by": (
        "What limits the replica's concurrency: an SLO (`tpot_slo`, `ttft_slo`; with meets_slo false, the SLO even "
        "concurrency 1 misses), the KV cache (`kv_capacity`), the step token budget (`max_batched_tokens`), the "
        "engine's cap on running sequences (`max_num_seqs`), or a measured figure (`measured`)."
    ),
    "bytes_by_dtype": "Stored bytes per safetensors dtype (`BF16`, `F8_E4M3`, `U8`, ...), bytes.",
    "bytes_moved": (
        "A, B and C moved once at their formats' widths, bytes. Null if the figure is unbounded (not finite)."
    ),
    "bytes_total": "Tensor data as stored, bytes.",
    "calibration": "The stored calibration this answer used; null when it used none.",
    "catalog": "Rows in the catalog, count each.",
    "checks": "/readyz only: the state of each check (`database`, `schema`, `catalog`).",
    "chunks_per_prompt": "Steps one prompt's prefill is split into, count.",
    "cold_start_s": (
        "Time for a new replica to serve: weights off storage at load_gb_per_s plus engine_startup_s, s. Null if "
        "the figure is unbounded (not finite)."
    ),
    "communication_ms": (
        "Tensor-parallel all-reduce time of one decode step, ms (0 without tensor parallelism or with "
        "include_communication false). Null if the figure is unbounded (not finite)."
    ),
    "compute": "Share of the tensor-core peak (at the compute precision) dense GEMMs reach, in (0, 1].",
    "compute_efficiency": (
        "Fraction of the datasheet peak FLOP/s achieved, dimensionless, 0 < x ≤ 1. Replace with a measured figure "
        "when you have one. Default: the engine's (ideal: the lab's)."
    ),
    "compute_ms": "Compute time of the decode step, ms. Null if the figure is unbounded (not finite).",
    "compute_precision": (
        "Format the matrix math runs in, which picks the peak TFLOP/s used. Default bf16; `native` uses the weight "
        "format's own peak when the GPU runs it natively. A format whose peak the GPU entry lacks answers 422. "
        "Case-insensitive; the aliases (bfloat16, float16, half, fp8_e4m3, …) are accepted and normalised in the "
        "answer."
    ),
    "compute_slices": "Compute slices (GPCs) of the card's seven, count.",
    "concurrency": "Sequences in flight on one replica at once (decode batch size), sequences.",
    "confidence": "How the figures were obtained.",
    "config": "The config.json object as published (Gemma 3: with its text_config).",
    "context_tokens": "Context at which decode reads the KV cache (see kv_read_context), tokens.",
    "continuous_batching": (
        "The continuous-batching steady state at `concurrency`; null when the decodes alone fill max_batched_tokens "
        "(no prompt could be admitted)."
    ),
    "continuous_batching_time_per_token_ms": (
        "continuous_batching.time_per_token_ms at this concurrency, ms; null when the decodes alone fill "
        "max_batched_tokens."
    ),
    "continuous_batching_tokens_per_s": (
        "continuous_batching.tokens_per_s at this concurrency, tokens/s; null as above."
    ),
    "speculative": (
        "Speculative decoding: the request's drafter (GET: dotted, `speculative.method=eagle`) and, in an answer, "
        "its step at this concurrency; null when not asked."
    ),
    "draft_weights_bytes": (
        "What the speculative drafter adds to weights_bytes (included there), bytes: the draft model's weights, "
        "one decoder layer of the model for an eagle/eagle3/mtp head, 0 for ngram; null without speculative."
    ),
    "draft_kv_bytes_per_token": (
        "What the drafter adds to kv_bytes_per_token (included there), bytes per token: the draft model's KV, one "
        "layer's of the model for a head, 0 for ngram; null without speculative."
    ),
    "speculative_speedup": "speculative.speedup at this concurrency; null without speculation.",
    "continuous_batching_ttft_ms": "continuous_batching.ttft_ms at this concurrency, ms; null as above.",
    "cost_per_million_output_tokens_decode_only_usd": (
        "Cost of 10^6 output tokens at the decode-only tokens_per_s (prefill ignored), USD; null without a price."
    ),
    "cost_per_million_output_tokens_usd": (
        "The fleet's cost of 10^6 output tokens, USD: monthly_cost_usd over the output tokens its average "
        "traffic brings in hours_per_month (spares, peak capacity and quiet hours included); null without a "
        "price, and for a prefill pool (see cost_per_million_prompt_tokens_usd)."
    ),
    "created_at": "When it was stored, ISO 8601 UTC.",
    "crossover_concurrency": (
        "Smallest concurrency at which the decode step turns compute-bound, sequences; null when it stays "
        "memory-bound at any concurrency."
    ),
    "cuda_graph_bytes": "Memory the captured CUDA graphs took, bytes.",
    "cuda_graph_gib": "CUDA-graph pools per GPU, GiB.",
    "cuda_graph_gib_per_gpu": "CUDA-graph pools per GPU, GiB.",
    "cuda_graph_in_budget": (
        "Whether the CUDA graphs come out of the KV budget (newer vLLM) or are captured after it."
    ),
    "decode_bound": "What bounds the decode step: memory traffic or compute.",
    "decode_compute_ms": "Compute time of the decode step, ms. Null if the figure is unbounded (not finite).",
    "decode_memory_ms": "Memory-traffic time of the decode step, ms. Null if the figure is unbounded (not finite).",
    "decode_step_ms": "A decode-only step, ms. Null if the figure is unbounded (not finite).",
    "dense_mlp": "Dense gated MLPs, all layers, count.",
    "deployment": (
        "Name of the Kubernetes Deployment the KEDA ScaledObject scales (`format=keda`), a DNS label. Default: "
        "`vllm-<model>`."
    ),
    "derivation": "How the model was derived (ImportDerivation).",
    "detail": "What went wrong with this request, in plain words.",
    "display_name": "Display name (e.g. `vLLM (V1 engine)`).",
    "dry_run": "Return the derived model without storing it (200 instead of 201).",
    "effective_tokens_per_s": (
        "Output tokens per second with each batch's prefill included (concurrency × output_tokens / "
        "request_latency), tokens/s: the cost basis. Null if the figure is unbounded (not finite)."
    ),
    "eligible": "Sized, meets the SLOs and has a price.",
    "embedding": "Input embedding, count.",
    "engine": (
        "Serving engine whose profile plans the answer: `ideal` (the seeds' arithmetic), `vllm`, `sglang`, "
        "`trtllm`, or any engine in GET /v1/engines; none (or null): the service's DEFAULT_ENGINE setting, `vllm` "
        "unless renamed."
    ),
    "engine_buffers_gib": "Runtime buffers taken before the free fraction is applied (TensorRT-LLM), GiB per GPU.",
    "engine_startup_s": "Engine start-up beyond loading the weights (CUDA graphs, KV allocation), s.",
    "engine_version": "The engine release the profile's constants describe (null for ideal).",
    "engines": "Serving-engine profiles, count.",
    "error_percent": "(predicted − measured) / measured, percent.",
    "errors": (
        "The fields at fault, keyed by field name (dotted paths for nested ones, e.g. `model.kv_heads`, "
        "`gpu.mig_profiles.0.memory_gb`), each with its messages."
    ),
    "excluded_params": (
        "Parameters set apart, by reason: `vision` (a multimodal checkpoint's vision tower) and `extra_layers` "
        "(layers past num_hidden_layers, e.g. DeepSeek's multi-token prediction), count."
    ),
    "expert_fraction": (
        "Expected share of routed-expert weights one decode step reads (1 for dense models), fraction 0–1."
    ),
    "expert_parallel": (
        "Expert-parallel size for a MoE model: must divide the experts and be at most the replica's GPUs; adds the "
        "all-to-all time."
    ),
    "expert_params": "Parameters of all routed experts of all layers together, count; less than params_total.",
    "experts": "Routed experts per MoE layer, count.",
    "experts_per_token": "Routed experts each token uses, count; at most experts.",
    "family": ("Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."),
    "fields_used": (
        "Its values this answer used: memory_overhead_gb as reserved_gb; a field the request gives itself is the "
        "request's."
    ),
    "fits": "The weights and `concurrency` sequences fit.",
    "fits_weights": "The weights fit in usable_bytes.",
    "fitted_on": "Constant name -> the training rows (measurement ids) it was fitted on.",
    "flops": "2 × m × k × n, FLOP. Null if the figure is unbounded (not finite).",
    "flops_per_step": (
        "Floating-point operations of one decode step, FLOP. Null if the figure is unbounded (not finite)."
    ),
    "forecast": (
        "POST only: traffic per period (at most 120), one `periods` row each, all sized with the replica planned "
        "for the busiest period (the highest requests_per_day × peak ratio; its figures are the answer's own) "
        "unless requests_per_day or requests_per_second is given."
    ),
    "form_factor": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "fp16": "Dense peak at fp16, TFLOP/s per GPU.",
    "fp4": "Dense peak at fp4 (also used for nvfp4 and mxfp4), TFLOP/s per GPU.",
    "fp8": "Dense peak at fp8, TFLOP/s per GPU.",
    "gpu": (
        "The GPU: a catalog slug (GET /v1/gpus) or an inline GPU (InlineGpu), for hardware not yet in the catalog."
    ),
    "gpu_memory_utilization": (
        "Fraction of each GPU's memory the engine may fill (vLLM's `--gpu-memory-utilization`), dimensionless, 0 < "
        "x ≤ 1. Default: the engine's (ideal: the lab's)."
    ),
    "gpus": (
        "GPUs billed, count (fractions allowed). Default: the throughput plan's tensor_parallel when tokens/s is "
        "derived, else 1."
    ),
    "gpus_average": "GPUs (whole cards) for replicas_average, GPUs.",
    "gpus_peak": "GPUs (whole cards) for replicas_peak, GPUs.",
    "gpus_per_node": "GPUs in one node (the largest tensor-parallel group), count.",
    "gpus_total": "GPUs (whole cards) for replicas_total, GPUs (MIG: cards holding the slices).",
    "head_dim": (
        "Width of one attention head, elements. Default: hidden_size / attention_heads (required when that is not a "
        "whole number)."
    ),
    "headroom": "Capacity kept above demand, fraction (0.2 = 20 %).",
    "hf_repo": "Hugging Face repository of the checkpoint.",
    "instruct_repo": (
        "Hugging Face repository of the instruction-tuned release of the same architecture, which vllm_command "
        "serves by default; null when hf_repo is itself the release deployed."
    ),
    "aliases": (
        "Other names a planning request may give for the model (a renamed or derived release of the same "
        "architecture, e.g. deepseek-r1 for DeepSeek-V3); matched in any case."
    ),
    "hidden_size": "Model (residual stream) width, elements.",
    "host_cpu_cores": "Host CPU cores allotted to each GPU, cores.",
    "hourly_cost_usd": "price_per_gpu_hour_usd × gpus, USD per hour. Null if the figure is unbounded (not finite).",
    "hourly_price_usd": "Price of one GPU for one hour, USD per GPU-hour.",
    "hours_per_month": "Billed hours per month, hours (730 = 8,760 / 12).",
    "id": "The calibration's id.",
    "in_use": (
        "Whether planning uses this calibration (the newest of its model, GPU, MIG profile and weight precision)."
    ),
    "include_communication": (
        "Add tensor-parallel all-reduce time to every step (needs the GPU's interconnect bandwidth and latency when "
        "tensor_parallel > 1)."
    ),
    "instance": "Path of the request.",
    "int8": "Dense peak at int8, TFLOP/s per GPU (TOPS).",
    "interconnect": "The GPU-to-GPU link within a node, for tensor-parallel communication.",
    "intermediate_size": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "items": "The models.",
    "itl_ms": "Measured mean inter-token latency, ms (fitted as tpot_ms when that is absent).",
    "k": "Columns of A, rows of B (the input width), elements.",
    "kind": "Link technology, e.g. `nvlink4`, `pcie5`, `infinity-fabric`.",
    "kv_budget_bytes": (
        "usable_bytes − weights_bytes: room left for the KV cache, bytes; 0 when the weights do not fit "
        "(fits_weights false), never negative."
    ),
    "kv_budget_gib_per_gpu": "KV-cache budget per GPU, GiB; 0 when the weights do not fit.",
    "kv_bytes_at_concurrency": "KV cache of `concurrency` full sequences, bytes.",
    "kv_bytes_per_sequence": (
        "KV cache of one sequence of prompt_tokens + output_tokens (sliding windows counted), whole replica, bytes."
    ),
    "kv_bytes_per_step": "KV-cache bytes one decode step reads, bytes.",
    "kv_bytes_per_token": "KV cache one token adds across all layers and the replica's GPUs, bytes.",
    "kv_bytes_per_token_difference_percent": (
        "The log's bytes per token against the planner's, percent (a warning beyond ±5%)."
    ),
    "kv_cache_bytes": "Memory given to the KV cache on one GPU, bytes.",
    "kv_capacity_source": "`log` when printed, else how it was derived.",
    "kv_capacity_tokens": "Tokens the KV budget holds, tokens (0 when the weights do not fit).",
    "kv_heads": "Key/value heads per layer, count; must divide attention_heads (unless attention is mla).",
    "kv_lora_rank": "MLA latent width cached per token and layer, elements; required when attention is mla.",
    "kv_precision": (
        "Number format of the KV cache. Case-insensitive; the aliases (bfloat16, float16, half, fp8_e4m3, …) are "
        "accepted and normalised in the answer."
    ),
    "kv_read_context": (
        "Context at which each decode step reads a sequence's KV cache: `average` = prompt_tokens + output_tokens / "
        "2, `full` = prompt_tokens + output_tokens."
    ),
    "kv_rule": (
        "How the engine sizes its KV cache per GPU: `util_of_visible` (vLLM: gpu_memory_utilization x visible "
        "memory, less weights, activation peak, non-torch memory and in-budget CUDA graphs), `static_fraction` "
        "(SGLang: the fraction of visible memory holds weights and the KV pool, less non-torch memory), "
        "`fraction_of_free` (TensorRT-LLM: the fraction of the memory free after weights and buffers)."
    ),
    "large_gpu_gib": "Visible memory from which the `_large_gpu` defaults apply, GiB (2^30 bytes); null: none.",
    "latency_us": "Latency of one collective hop, µs.",
    "layer_overhead_us": "Cost of every layer of every forward step beyond the roofline (kernel launches), us.",
    "sequence_overhead_us": (
        "Cost of every running sequence in every forward step (sampling, detokenising, scheduling), us."
    ),
    "collective_latency_us": (
        "Latency of every tensor- or expert-parallel collective beyond the interconnect's own (NCCL's "
        "small-message all-reduce), us."
    ),
    "expert_overhead_us": "Cost of every expert GEMM a step runs, per MoE layer on each GPU (grouped-GEMM tiles), us.",
    "mla_layer_overhead_us": "Extra cost of every layer of every forward step of an MLA model (its attention), us.",
    "layers": "Transformer layers, count.",
    "leaves_out": "What the estimate leaves out, in plain words (the same text on every answer).",
    "license": ("Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."),
    "limit": "Page size asked for, count.",
    "lines_used": "The log lines read (each cut to 500 characters).",
    "lm_head": "Output projection, count (0 when tied to the embedding).",
    "load_gb_per_s": "Speed at which a cold replica loads its weights from storage, GB/s (10^9 bytes per second).",
    "log_summary": "What the start-up log said, beside the planner's figures; null without a log.",
    "logits_bytes_per_vocab_entry": "Sampler logits, bytes per vocabulary entry per sequence (4: fp32).",
    "m": "Rows of A and C (tokens in the batch), elements.",
    "mape_percent": (
        "Mean absolute percentage error of the fitted model over every measured figure, percent; null without points."
    ),
    "match": (
        "`exact`: this model on this GPU, MIG profile and weight precision; `nearest`: the closest-sized model of "
        "the same family on the same target (its efficiencies only)."
    ),
    "max_batched_tokens": (
        "Per-step token budget (vLLM max_num_batched_tokens); default: the engine's (ideal 2048). An engine's "
        "activation peak grows with it."
    ),
    "max_batched_tokens_large_gpu": (
        "max_batched_tokens on GPUs with at least large_gpu_gib, tokens; only with large_gpu_gib."
    ),
    "max_concurrency": (
        "Sequences of prompt_tokens + output_tokens the KV budget holds at once, sequences (vLLM's 'maximum "
        "concurrency')."
    ),
    "max_concurrency_tokens": "The request length that concurrency is for, tokens.",
    "max_context": "Longest context the model supports, tokens (a longer prompt + output is warned about).",
    "max_in_flight_per_replica": (
        "Requests in flight one replica's KV cache holds (the 'maximum concurrency' vLLM logs at start-up), requests."
    ),
    "max_instances": "Instances of this profile one card holds at most, count.",
    "max_num_seqs": "Most sequences the engine runs at once (default: the engine's).",
    "max_num_seqs_large_gpu": "max_num_seqs on GPUs with at least large_gpu_gib, count; only with large_gpu_gib.",
    "max_replicas": "Replicas never to scale above (= replicas_total), replicas.",
    "measured": "The measured value, in the metric's unit.",
    "meets_slo": "The described replica meets ttft_slo_ms and tpot_slo_ms.",
    "memory": "Share of the memory bandwidth decode GEMVs and attention reads reach, in (0, 1].",
    "memory_bandwidth_tb_per_s": "Memory bandwidth to use, TB/s (10^12 bytes per second). Default: the GPU's.",
    "memory_efficiency": (
        "Fraction of the datasheet memory bandwidth achieved, dimensionless, 0 < x ≤ 1. Replace with a measured "
        "figure when you have one. Default: the engine's (ideal: the lab's)."
    ),
    "memory_gb": "Memory of one GPU, GB (10^9 bytes).",
    "memory_gb_per_gpu": "Memory of one GPU (or MIG slice), GB (10^9 bytes).",
    "memory_ms": "Memory-traffic time of the decode step, ms. Null if the figure is unbounded (not finite).",
    "memory_overhead_gb": (
        "Fitted memory per GPU beyond weights and KV cache, GB (10^9 bytes): planning uses it as reserved_gb. "
        "Negative when the driver shows more memory than the datasheet's GB. Null without a log."
    ),
    "memory_slices": "Memory slices of the card's eight, count.",
    "memory_used_bytes": "weights_bytes + kv_bytes_at_concurrency, bytes.",
    "memory_visible_gib": "Memory the driver shows per GPU, GiB (engines only).",
    "metric": "Which figure.",
    "mig_profile": (
        "Plan on one MIG slice of the GPU instead of the whole card: the profile's NVIDIA name (e.g. `1g.10gb`, "
        "`7g.80gb`). A name the GPU lacks answers 422 listing its profiles. Slices do not form tensor-parallel "
        "groups."
    ),
    "mig_profiles": "MIG profiles the card can be split into (not available as GET query parameters).",
    "min_gpus_to_fit": (
        "Smallest valid tensor_parallel that holds the weights and the requested concurrency, GPUs; null when none "
        "does."
    ),
    "min_replicas": "Replicas never to scale below (average demand plus spares), replicas.",
    "mixed_step_ms": (
        "A step carrying decodes and one prefill chunk, ms. Null if the figure is unbounded (not finite)."
    ),
    "model": (
        "The model: a catalog slug (GET /v1/models) or an inline architecture (InlineModel), for models not yet in "
        "the catalog."
    ),
    "models": "Models, count.",
    "moe_intermediate_size": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "moe_memory": (
        "Grouped expert GEMMs' bandwidth as a share of `memory` (small per-expert GEMMs stream slower), in (0, 1]."
    ),
    "monthly_cost_usd": (
        "gpus_total × price × hours_per_month, USD per month (rounded to cents); null without a price."
    ),
    "mxfp4_packed_bytes": "MXFP4 weight blocks as stored (U8 `*_blocks`), bytes.",
    "n": "Columns of B and C (the output width), elements.",
    "name": "Display name.",
    "native_precision": (
        "Checkpoint weight format. Case-insensitive; the aliases (bfloat16, float16, half, fp8_e4m3, …) are "
        "accepted and normalised in the answer."
    ),
    "native_precisions": (
        "Formats the tensor cores run natively (e.g. bf16, fp8). Default: unknown, which assumes bf16 only and says "
        "so in `warnings`. On GET: comma-separated."
    ),
    "non_torch_bytes": "Memory outside PyTorch's allocator (CUDA context, NCCL), bytes.",
    "non_torch_gib": (
        "Memory outside the engine's allocator (NCCL buffers, cuBLAS workspaces, CUDA context) per GPU, GiB."
    ),
    "non_torch_gib_per_extra_rank": ("Added non-torch memory per tensor-parallel rank beyond the first, GiB per GPU."),
    "non_torch_gib_per_gpu": "NCCL, cuBLAS and CUDA-context memory per GPU, GiB.",
    "norms": "Norm weights, QK-norms and the final norm included, count.",
    "notes": "Caveats about the figures.",
    "offset": "Matching items skipped before this page, count.",
    "topology": (
        "`aggregated` (default: each replica prefills and decodes) or `disaggregated`: a prefill pool sized on "
        "TTFT and a decode pool sized on TPOT, each its own GPU, TP and weight format (searched like the "
        "aggregated plan: every valid TP of `gpu`, or the whole catalog), each with N+1, the prompt's KV moved "
        "between them, and the aggregated plan's cost beside them. Needs a serving engine (not ideal); not "
        "with per_replica_tokens_per_s, e2e_slo_ms or format=keda."
    ),
    "network_gb_per_s": (
        "Disaggregated: the network between a prefill and a decode replica in different nodes, GB/s per GPU "
        "one way; default the node kind's typical NIC (see FleetKvTransfer.gb_per_s_per_gpu)."
    ),
    "mix": (
        "A mixed fleet: the cost-minimal set of replica kinds (GPU or MIG profile × TP × weight format) over "
        "`gpus`, each serving the length buckets it is cheapest for, solved as an integer program (HiGHS), "
        "each kind used with its own N+1, beside the best single-kind plan (FleetMix). Not with gpu, "
        "tensor_parallel, mig_profile, topology=disaggregated, per_replica_tokens_per_s or format=keda."
    ),
    "length_buckets": (
        "POST only, with mix: the workload as a histogram of `{prompt_tokens, output_tokens, share}`, the shares "
        "summing to 1 (at most 16); absent: buckets drawn from prompt_tokens and output_tokens and their cv "
        "(one bucket at cv 0, else two strata of each length that varies)."
    ),
    "share": "The share of requests, fraction.",
    "options": "Without `gpu`: the eligible options by monthly cost, then those ruled out, at most `limit`.",
    "options_total": "Without `gpu`: options considered, count.",
    "alternatives": (
        "With `gpu` and no `tensor_parallel`: every valid tensor-parallel size on it, the chosen (cheapest per month "
        "among those meeting the SLOs) first, each with its GPUs, cost and why it lost; at most `limit`."
    ),
    "output_tokens": "Generated (output) length of one request, tokens.",
    "output_tokens_per_s": "Measured output throughput of the replica, tokens/s.",
    "params_active": "Parameters one token uses (mixture-of-experts), count.",
    "params_by_dtype": "Counted parameters per dtype (`MXFP4` for unpacked blocks), count.",
    "params_beyond_shape": (
        "Why params_total is more than 5% from what the shape counts (embeddings, attention, MLP or experts): a "
        "vision tower, an audio encoder. A write without it is refused when the two are that far apart; the "
        "Hugging Face import fills it when a safetensors header counts far more than the config describes."
    ),
    "params_total": "Parameters stored, embeddings and all experts included, count.",
    "params_total_from_config": "Parameters computed from the config's fields, count.",
    "peak_input_tokens_per_s": ("Peak prompt (input) demand, tokens/s. Null if the figure is unbounded (not finite)."),
    "peak_tflops": "Peak compute to use, TFLOP/s. Default: the GPU's dense peak at compute_precision.",
    "peak_to_average": "Peak traffic over average traffic, ratio (≥ 1).",
    "peak_tokens_per_s": "Peak output demand, tokens/s. Null if the figure is unbounded (not finite).",
    "per_replica_tokens_per_s": (
        "Measured output tokens per second of one replica (from a load test), tokens/s; overrides the estimate "
        "(`basis` becomes `measured`)."
    ),
    "percent_of_peak": (
        "attainable_tflops as a share of the peak used, percent (0–100). Null if the figure is unbounded (not finite)."
    ),
    "period": "Label of the period, e.g. `2026-01`.",
    "periods": "With `forecast`: one row per period, in its order.",
    "planner_kv_bytes_per_token": "The planner's KV bytes per token, per GPU, bytes.",
    "planner_weights_bytes": "The planner's weights for the whole replica, bytes.",
    "point": "Index of the point in `points`.",
    "point_count": "Benchmark points fitted, count.",
    "points": "Benchmark points, at most 16; each concurrency below max_batched_tokens.",
    "precision_native": (
        "Whether the GPU runs weight_precision natively (if not, the math is converted up and compute gains nothing)."
    ),
    "precisions": "Precisions, count.",
    "predicted": "The value the calibrated model predicts, in the metric's unit; null if unbounded.",
    "prefill_bound": "What bounds the prefill.",
    "prefill_compute_ms": "Compute time of the prefill, ms. Null if the figure is unbounded (not finite).",
    "prefill_memory_ms": "Memory-traffic time of the prefill, ms. Null if the figure is unbounded (not finite).",
    "price_date": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "price_per_gpu_hour_usd": "Price of one whole card for one hour, USD per GPU-hour; null when unknown.",
    "prometheus_url": "Prometheus server the KEDA triggers query (`format=keda`), URL.",
    "prompt_tokens": "Prompt (input) length of one request, tokens.",
    "qk_rope_head_dim": (
        "MLA decoupled RoPE key width cached per token and layer, elements; required when attention is mla."
    ),
    "quantization_scale_bytes": (
        "Quantisation scales (`*_scales`, `*.weight_scale_inv`, ...), stored but not counted as parameters, bytes."
    ),
    "quantized_components": (
        "Components the checkpoint's own format quantizes; null or absent: the format's convention (every linear "
        "layer; MXFP4 only the experts)."
    ),
    "queue_metric": "The engine's metric of requests waiting for prefill, which the waiting trigger watches.",
    "served_model_name": (
        "The name the engine serves the model as (vLLM and SGLang `--served-model-name`, trtllm-serve's model "
        "name), which its metrics carry as `model_name` and every trigger's query filters on. Default: the "
        "checkpoint's Hugging Face repository (what `vllm serve` downloads), else the model's name."
    ),
    "scale_to_zero": (
        "`format=keda`: let the deployment scale to zero replicas when idle (minReplicaCount 0, KEDA's "
        "cooldownPeriod the wait before it; the first request after zero waits a cold start). Default false: the "
        "plan's minimum stays up."
    ),
    "triggers": (
        "The engine's autoscaling triggers (FleetTrigger): each signal, the metrics it sums, the PromQL query, the "
        "per-replica threshold and how the threshold follows from the queueing model."
    ),
    "signal": (
        "What the trigger watches: `in_flight` (requests waiting + running), `waiting` (requests queued for "
        "prefill) or `kv_usage` (share of the KV cache held, 0 to 1)."
    ),
    "metrics": "The engine's Prometheus gauges the trigger sums (names as the engine exports them).",
    "query": "PromQL summing the gauges over the pods, filtered on the served model name.",
    "threshold": (
        "Per replica: the autoscaler wants ceil(query / threshold) replicas (KEDA's AverageValue); requests, or a "
        "share of the KV cache for kv_usage."
    ),
    "derived_from": "How the threshold was found, with the queueing model's figures it came from.",
    "policy": "The autoscaling policy to simulate (DayPolicy; every field optional: the plan's by default).",
    "node_provisioning_s": (
        "Time a new GPU node takes to join before the model loads, s (default 180: an assumption; give your "
        "cloud's). Part of the default scale_up_delay_s."
    ),
    "recommend": (
        "Also search a small grid (warm pools 0, 1, 2; thresholds x1 and x0.7; min_replicas by bisection) for the "
        "cheapest policy in GPU-hours keeping violations at or below max_violation_rate."
    ),
    "max_violation_rate": (
        "With `recommend`: the share of requests that may miss an SLO (TTFT, TPOT or E2E), in [0, 1]; default 0.01."
    ),
    "queueing": "What the TTFT holds of waiting.",
    "rank": "Position among the options that meet the SLOs (1 = cheapest per month); null when ruled out.",
    "replica": "One replica of the fleet (FleetReplica): its GPUs, its capacity under the SLOs and its planned load.",
    "replicas_average": "Replicas carrying the average demand (with headroom), replicas.",
    "replicas_peak": "Replicas carrying the peak demand (with headroom), replicas.",
    "replicas_per_card": (
        "Replicas packed on one card (a MIG profile's max_instances), replicas; null for whole cards."
    ),
    "replicas_per_zone": "Replicas in each zone with zones > 1, replicas; null with one zone.",
    "replicas_total": "Replicas to deploy: the peak plus N+1 spares, or the zone rule, replicas.",
    "request_id": "This request's id, as in the X-Request-ID response header and the service's log lines.",
    "request_latency_ms": (
        "ttft_ms + output_tokens × time_per_token_ms (under speculative decoding, × speculative.time_per_token_ms), "
        "ms. Null if the figure is unbounded (not finite)."
    ),
    "requests_per_day": (
        "Average traffic, requests per day. Give exactly one of requests_per_day and requests_per_second (or, on "
        "POST, a forecast)."
    ),
    "requests_per_s": "Requests completed per second, requests/s. Null if the figure is unbounded (not finite).",
    "requests_per_second": "Average traffic, requests per second.",
    "reserved_gb": (
        "Memory held back on each GPU for activations and runtime, GB (10^9 bytes) per GPU. Default: the engine's "
        "(ideal: the lab's)."
    ),
    "residuals": "One row per measured figure of every point, fitted values in place.",
    "ridge_flops_per_byte": (
        "The GPU's roofline ridge (effective peak FLOP/s ÷ effective bandwidth), FLOP/byte: above it a step is "
        "compute-bound. Null if the figure is unbounded (not finite)."
    ),
    "rough_gpus": "Rule-of-thumb count, ceil(weights_bytes × 1.3 / (0.9 × memory per GPU)), GPUs.",
    "routed_experts": "Routed experts, all layers, count (the catalog's expert_params).",
    "router": "Expert routers (and their biases), count.",
    "rows": "Training rows behind each range, metric -> count (0 or absent: the range is a stated guess).",
    "safetensors": "Exact counts from the safetensors header(s); null when none was given.",
    "safetensors_header": (
        "A safetensors JSON header ({tensor: {dtype, shape, data_offsets}}, __metadata__ allowed), or a "
        "model.safetensors.index.json object with a `headers` map of shard file name to header. At most 16 MiB (413 "
        "above)."
    ),
    "schema": "Alembic revision the database is at (the migrations' head).",
    "shards": "Headers summed, count.",
    "shared_experts": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "sliding_window": "Attention window of the windowed layers, tokens.",
    "sliding_window_layers": (
        "Layers that attend only to the last sliding_window tokens, count. Default: all layers when sliding_window "
        "is given, else 0."
    ),
    "slug": "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning.",
    "source": ("Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."),
    "spare_replicas": ("Spare replicas beyond the peak (1 = N+1), replicas; with zones > 1 the zone rule replaces it."),
    "startup_log": (
        "The engine's start-up log as text, at most 4 MiB of UTF-8 (the body may then reach 9 MiB). Read: \"Model "
        'loading took X GiB" / "Loading model weights took X GB" / "model weights take X GiB" (weights), "Available '
        'KV cache memory: X GiB" (V1) or "the rest of the memory reserved for KV Cache is X GiB" (V0), "GPU KV '
        'cache size: N tokens" (V1) or "# GPU blocks: N" (V0), SGLang\'s "KV Cache is allocated. #tokens: N", '
        '"Maximum concurrency for N tokens per request: Xx", non-torch, activation-peak and CUDA-graph memory '
        "lines, the engine version."
    ),
    "status": "`ok`, or `no option meets the SLO` (the closest option is then described).",
    "step_overhead_ms": (
        "Fixed cost of every forward step beyond the roofline (scheduling, sampling, detokenisation), ms."
    ),
    "stored": "Whether the model was stored (false for dry_run).",
    "sweep": (
        "Further concurrencies to evaluate, one `sweep` row each (at most 256), sequences. On GET: comma-separated "
        "(`sweep=1,8,64`) or repeated (`sweep=1&sweep=8`)."
    ),
    "target_queue_per_replica": (
        "Requests waiting per replica at its capacity rate (the queueing model's mean queue, by Little's law; "
        "else a quarter of the target in flight): the KEDA trigger on vllm:num_requests_waiting, requests."
    ),
    "target_in_flight_per_replica": (
        "Requests in flight per replica to scale at: on average at the capacity rate (steady state: the SLO-bound "
        "concurrency), requests."
    ),
    "tensor_parallel": (
        "Tensor-parallel size, i.e. GPUs per replica. Default: the smallest valid size that holds the requested "
        "concurrency, else the smallest that holds the weights, else the largest valid size (and the answer says it "
        "does not fit). A size that is not valid for the model on this GPU answers 422 naming the valid sizes."
    ),
    "tensors": "Tensors in the header(s), count.",
    "tie_word_embeddings": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "time_per_token": "10th and 90th percentile of measured / predicted time per output token, [low, high] ratios.",
    "time_per_token_ms": (
        "Decode step time at `concurrency`: the time between two output tokens of one sequence, ms. Null if the "
        "figure is unbounded (not finite)."
    ),
    "time_us": "max(flops ÷ peak, bytes_moved ÷ bandwidth), µs. Null if the figure is unbounded (not finite).",
    "title": "Short summary of the kind (the HTTP reason phrase).",
    "tokens_per_s": (
        "Output tokens per second those GPUs produce together, tokens/s. Default: derived from `model` on `gpu` "
        "(effective_tokens_per_s of /v1/throughput); without either, costs per token are null."
    ),
    "tokens_per_s_basis": (
        "`given`: tokens_per_s from the request; `throughput_plan_prefill_included`: derived from a /v1/throughput "
        "plan (effective_tokens_per_s); null when there is none."
    ),
    "tokens_per_s_per_user": (
        "Output tokens per second one sequence sees, tokens/s. Null if the figure is unbounded (not finite)."
    ),
    "total": "Number of models matching the filters (all pages), count.",
    "tpot_ms": "Measured mean time per output token, ms.",
    "tpot_slo_ms": (
        "Time-per-output-token objective at `slo_percentile`, ms: a replica's capacity is the highest arrival rate "
        "that meets it."
    ),
    "ttft": "10th and 90th percentile of measured / predicted time to first token, [low, high] ratios.",
    "ttft_ms": (
        "Time to first token: `concurrency` prompts prefilled together in one pass, ms. Null if the figure is "
        "unbounded (not finite)."
    ),
    "ttft_overhead_ms": (
        "Cost of every request before its first token beyond the roofline (the API server's tokenising and "
        "scheduling), ms."
    ),
    "ttft_slo_ms": (
        "Time-to-first-token objective at `slo_percentile`, ms: a replica's capacity is the highest arrival rate "
        "that meets it."
    ),
    "type": (
        "Stable identifier of the kind of problem, a URI reference relative to the service (e.g. "
        "`/problems/invalid-field`)."
    ),
    "uncertainty": (
        "[low, high] per figure: the 10th-90th percentile of measured / predicted on the engine's training rows (or "
        "a calibration's error), around the figures `uncertainty_applies_to` names; null for ideal."
    ),
    "uncertainty_applies_to": (
        "Which figures the uncertainty ranges bound: `fit` (kv_capacity_tokens of /v1/fit), `continuous_batching` "
        "(the continuous_batching block of /v1/throughput, the figures the training rows were compared with), or "
        "`lab` (the top-level all-at-once figures, when no steady state exists); null without ranges."
    ),
    "uncertainty_basis": "What the uncertainty range rests on.",
    "undetermined": (
        "The values the measurements could not determine (memory_efficiency, compute_efficiency, "
        "memory_overhead_gb), each with the reason; planning keeps the default for them."
    ),
    "unseen_widening": (
        "Factor (on the log scale) by which a range widens where the training set has no row of the request's kind "
        "(MoE, a GPU generation), ratio >= 1."
    ),
    "usable_bytes": (
        "Memory the engine may fill: (memory_gb × gpu_memory_utilization − reserved_gb) × GPUs, bytes; 0 (never "
        "negative) when reserved_gb exceeds the utilised memory."
    ),
    "utilization": (
        "Share of the billed hours spent producing tokens at tokens_per_s, dimensionless, 0 < x ≤ 1. Idle time "
        "raises the cost per token, not the bill."
    ),
    "valid_tensor_parallel": (
        "Tensor-parallel sizes valid for this model on this GPU, GPUs: each divides the attention heads, it and the "
        "KV heads divide one another, and it is at most gpus_per_node."
    ),
    "vendor": ("Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."),
    "version": "Row version, incremented on every change.",
    "vllm_command": (
        "The replica's `vllm serve` command line, every size taken from the plan; under speculative decoding its "
        "--speculative-config (an EAGLE head's checkpoint is the user's to fill in: the catalog holds none)."
    ),
    "vocab_size": (
        "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
    ),
    "warnings": "Assumptions and refusals to be aware of, in plain words.",
    "weight_bytes_per_step": "Weight bytes one decode step reads (MoE: the experts touched), bytes.",
    "weight_precision": (
        "Number format of the weights. Default: the model's native (checkpoint) precision; `auto` picks the "
        "smallest format the GPU runs natively. Case-insensitive; the aliases (bfloat16, float16, half, fp8_e4m3, "
        "…) are accepted and normalised in the answer."
    ),
    "weights_by_component_bytes": (
        "Weights of the replica by component (attention, dense_mlp, experts, embeddings, lm_head), bytes; null for "
        "ideal."
    ),
    "weights_bytes": "The replica's weights in bytes as the checkpoint holds them (overrides the estimate).",
    "weights_bytes_per_gpu": "Weights held by each GPU, bytes.",
    "weights_difference_percent": (
        "The log's weights × tensor_parallel against the planner's, percent (a warning beyond ±5%)."
    ),
    "why": "Why it ranks here, or why it was ruled out.",
    "zones": (
        "Availability zones, count: with Z > 1 each zone holds enough replicas to carry the peak with one zone lost."
    ),
    # Paying for a fleet and what it draws (app/planning/finance.py).
    "pricing": (
        "How the fleet is paid for: `on_demand` (every GPU rented on demand, the answer's monthly_cost_usd) or "
        "`optimize` (committed, on-demand and spot GPUs chosen by an integer program: `procurement`)."
    ),
    "commitments": (
        "pricing=optimize: the commitment terms it may use (`1y`, `3y`; `none`: no commitment); default every term "
        "the GPU has a rate for that fits the horizon. A term longer than the horizon, or without its rate, is a 422."
    ),
    "spot": (
        "pricing=optimize: whether load above the protected N+1 may ride on spot GPUs; default when the GPU has a "
        "spot price and an interruption rate (true without them is a 422)."
    ),
    "period_months": (
        "pricing=optimize: months one forecast period lasts (1, 2, 3, 4, 6 or 12); default 1 with a forecast, 12 for "
        "a flat traffic."
    ),
    "horizon_months": (
        "pricing=optimize without a forecast: months the flat traffic is planned over (default 36), a whole number of "
        "periods; with a forecast its length is the horizon."
    ),
    "pue": (
        "Power usage effectiveness: the facility's power over the GPUs', at least 1 (default 1, the GPUs alone); the "
        "same as ownership.pue."
    ),
    "ownership": "Owning the fleet instead of renting it: answers `ownership` (monthly cost, break-even month).",
    "grid_g_co2_per_kwh": "Carbon intensity of the grid, gCO2e per kWh: answers co2e_kg_per_month.",
    "api_price_per_million_input_tokens_usd": (
        "A hosted per-token API's price of prompt tokens, USD per million (with the output price): answers "
        "hosted_api_monthly_cost_usd and break_even_requests_per_day."
    ),
    "api_price_per_million_output_tokens_usd": (
        "A hosted per-token API's price of output tokens, USD per million (with the input price)."
    ),
    "amortization_months": "Months the purchase is written off over (and the owned-versus-rented line runs at least).",
    "electricity_usd_per_kwh": "Price of electricity, USD per kWh.",
    "hosting_usd_per_kw_month": (
        "Rack space, cooling and operations, USD per kW of board power per month (charged on power_w × GPUs)."
    ),
    "energy_kwh_per_month": (
        "Energy the fleet draws in a month, kWh: GPUs × (idle + (board − idle) × utilization) / 1000 × "
        "hours_per_month × PUE; null without the GPU's power figures (energy_basis says which)."
    ),
    "energy_wh_per_million_tokens": (
        "energy_kwh_per_month over the output tokens the fleet serves in the month, Wh per million tokens; null "
        "without the power figures or without traffic."
    ),
    "co2e_kg_per_month": "energy_kwh_per_month × grid_g_co2_per_kwh / 1000, kg CO2e; null without a grid intensity.",
    "hosted_api_monthly_cost_usd": (
        "The same traffic on the hosted API for a month: requests × (prompt tokens × input price + output tokens × "
        "output price) / 10^6, USD; null without the API's prices."
    ),
    "break_even_requests_per_day": (
        "Average traffic from which self-hosting on this replica (on demand, at the request's peak ratio, spares and "
        "zones) stays cheaper than the hosted API, requests/day; null when the API is cheaper at any traffic."
    ),
    "hosted_api_comparison": (
        "Which costs less at this traffic and by how much, and from what traffic self-hosting wins."
    ),
    "energy": "How the energy figures were made: the fleet's GPUs, their utilization and power, the PUE.",
    "energy_basis": "The power model, or which power figure the GPU lacks (then the energy figures are null).",
    "procurement": (
        "pricing=optimize: the fleet's GPUs committed, on demand and on spot over the horizon, what each part costs "
        "against renting all on demand, and why."
    ),
    "committed_gpus": "GPUs committed (any term) in this period, count.",
    "on_demand_gpus": "GPUs rented on demand in this period, count.",
    "spot_gpus": "GPUs on spot in this period (each counted as 1 − interruption rate of one), count.",
    "procured_cost_usd": "What the period costs under the procurement split, USD.",
    "procured_monthly_cost_usd": "procured_cost_usd per month of the period, USD.",
    "fleet_utilization": (
        "Average busy share of the fleet: its average traffic over what all its replicas (spares included) carry "
        "at saturation (without arrivals, or in a mix's pool: at their capacity at the SLO), 0 to 1; what the "
        "energy figures take."
    ),
    "power_per_gpu_w": "Average power of one GPU: idle + (board − idle) × utilization, W.",
    "power_kw": "The fleet's average facility power, PUE included, kW.",
    "month": "Months since the purchase.",
    "owned_usd": "Spent owning by the end of the month: the purchase up front, then electricity and hosting, USD.",
    "rented_usd": "Spent renting by the end of the month (months × rented_monthly_cost_usd), USD; null: no price.",
    "amortization_usd_per_month": "GPUs × purchase_usd / amortization_months, USD per month.",
    "electricity_usd_per_month": "energy_kwh_per_month × electricity_usd_per_kwh, USD per month (PUE in the kWh).",
    "hosting_usd_per_month": "GPUs × power_w / 1000 × hosting_usd_per_kw_month, USD per month.",
    "owned_monthly_cost_usd": "Amortization + electricity + hosting, USD per month.",
    "rented_monthly_cost_usd": (
        "Renting on demand, USD per month: the answer's monthly_cost_usd, or with a forecast the average of its "
        "periods' (a rented fleet shrinks with the traffic; the owned one is the busiest period's)."
    ),
    "rented_basis": "What owning is compared with: the same fleet rented, or a forecast's fleets rented as it goes.",
    "break_even_months": (
        "Months after which owning has cost less than renting: purchase / (rent − electricity − hosting); null when "
        "renting costs no more than running."
    ),
    "months": "The owned-versus-rented line, month by month from the purchase.",
    "committed_usd_per_hour": "Committed rate per term offered, USD per GPU-hour.",
    "spot_share": "What one spot GPU counts as: 1 − spot_interruptions_per_hour; null without spot.",
    "term": "The commitment's term: `1y` or `3y`.",
    "first_period": "The first forecast period it covers.",
    "last_period": "The last forecast period it covers.",
    "usd_per_hour": "Its rate, USD per GPU-hour, billed every hour of the term.",
    "cost_usd": "What it costs over its whole term, USD.",
    "hours": "Billed hours of the period on demand and spot: period_months × hours_per_month.",
    "committed_hours": (
        "Hours a committed GPU is billed in the period, every hour busy or not: period_months × the larger of "
        "hours_per_month and 730 (8,760 / 12)."
    ),
    "gpus_needed": "GPUs the period's fleet holds (its peak, spares and zones), count.",
    "gpus_protected": (
        "Of those, GPUs that must be committed or on demand (never spot): the N+1 of the average load, count."
    ),
    "committed_gpus_by_term": "GPUs committed in this period, by term.",
    "committed_cost_usd": "The committed GPUs' cost in the period, USD.",
    "on_demand_cost_usd": "The on-demand GPUs' cost in the period, USD.",
    "spot_cost_usd": "The spot GPUs' cost in the period, USD.",
    "on_demand_only_cost_usd": "The period with every GPU it needs rented on demand, USD.",
    "commitment": "The commitments chosen, one per term and window.",
    "on_demand_monthly_cost_usd": "on_demand_cost_usd per month of the horizon, USD.",
    # A GPU's prices and power (`prices`), per whole card.
    "prices": (
        "The GPU's prices and power per whole card: on-demand, committed and spot rates, the spot interruption "
        "rate, the purchase price, board and idle power (a MIG slice takes its share: the card's over the "
        "profile's max_instances)."
    ),
    "on_demand_usd_per_hour": "On-demand (pay as you go) price, USD per GPU-hour.",
    "reserved_1y_usd_per_hour": "Price of a GPU committed for one year, USD per GPU-hour (billed every hour of it).",
    "reserved_3y_usd_per_hour": "Price of a GPU committed for three years, USD per GPU-hour (billed every hour of it).",
    "spot_usd_per_hour": "Spot (interruptible) price, USD per GPU-hour.",
    "spot_interruptions_per_hour": (
        "The chance that an hour of spot capacity is taken back, in [0, 1): a spot GPU counts as 1 minus this of one."
    ),
    "purchase_usd": "Purchase price of one card, USD (with its share of the server it sits in, if that is known).",
    "power_w": "Board power at full load, W.",
    "idle_power_w": "Board power idle (the engine loaded, no requests), W; at most power_w.",
}

# What an answer about one replica says of it (/v1/latency, /v1/batch).
_ONE_REPLICA = {
    "model": "The model: its catalog slug, or an inline model's name.",
    "gpu": "The GPU: its catalog slug, or an inline GPU's name.",
    "mig_profile": "The MIG profile planned on; null for a whole card.",
    "weight_precision": "Weight format used, normalised (e.g. bf16, fp8).",
    "kv_precision": "KV-cache format used, normalised.",
    "tensor_parallel": "Tensor-parallel size of the replica, GPUs.",
    "prompt_tokens_cv": "Coefficient of variation of the prompt lengths, dimensionless.",
    "output_tokens_cv": "Coefficient of variation of the output lengths, dimensionless.",
}

_DAY_FIGURES = {
    "requests": "Requests that arrived, count.",
    "finished": "Requests that finished (all that arrived: the day runs until the last one does), count.",
    "violation_rate": "Share of the finished requests whose TTFT, TPOT or E2E missed its SLO, in [0, 1].",
    "ttft_violation_rate": "Share of the finished requests whose TTFT missed ttft_slo_ms, in [0, 1].",
    "tpot_violation_rate": "Share of the finished requests whose TPOT missed tpot_slo_ms, in [0, 1].",
    "e2e_violation_rate": "Share of the finished requests whose E2E missed e2e_slo_ms, in [0, 1].",
    "replica_hours": (
        "Replica-hours billed: every replica from the decision that starts it to the end of its drain, warm "
        "ones all the while, replica-hours."
    ),
    "gpu_hours": "replica_hours x the replica's GPUs, GPU-hours (the figure to compare policies by).",
    "cost_usd": "replica_hours x the replica's hourly price, USD; null without a price.",
}

# Where a name means something else in one schema (an answer's figure, a write's rule).
OVERRIDES: dict[str, dict[str, str]] = {
    "AutoscalingRequest": {
        "forecast": (
            "POST only: the requests arriving in each hour of the day (1 to 48 rows, DayForecastHour), at that "
            "hour's rate with `burstiness`."
        ),
        "seed": "The random seed of the arrivals and lengths; the same seed gives the same day.",
        "spare_replicas": "Spare replicas of the static plan beyond the busiest hour's (N+1: 1), replicas.",
    },
    "DayForecastHour": {
        "hour": "A label for the hour (e.g. `00:00`), free text; the rows are taken in order.",
        "period": "A /v1/traces period's label (its hour), free text.",
        "requests": "Requests arriving in the hour, count (without requests_per_day).",
        "covered_s": "A /v1/traces period's seconds of the hour the log covers, s (informative).",
        "requests_per_day": (
            "A /v1/traces period's rate over its covered part, requests/day: the hour then brings a 24th of it "
            "(wins over requests), so a log's `periods` paste as they are."
        ),
    },
    "DayPolicy": {
        "trigger": (
            "The one trigger to scale on: a signal (`in_flight`, `waiting`, `kv_usage`) or a metric the engine "
            "exports (vLLM `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`, SGLang's and TensorRT-LLM's "
            "own names); a metric the engine does not export is a 422. Default: every trigger format=keda emits."
        ),
        "threshold": "The trigger's threshold per replica (default: the plan's for that signal), requests or share.",
        "scale_up_delay_s": (
            "Time from the decision to add a replica until it serves, s. Default: node_provisioning_s plus the "
            "model's load (weights over load_gb_per_s) plus engine_startup_s."
        ),
        "scale_down_delay_s": (
            "HPA's scale-down stabilization window: the highest recommendation of this long wins, s. Default: the "
            "KEDA policy's (two cold starts, at least 300 s)."
        ),
        "min_replicas": "Replicas never to scale below, replicas (default: the plan's minimum: average plus spares).",
        "max_replicas": "Replicas never to scale above, replicas (default: the static plan's).",
        "warm_pool": (
            "Replicas kept loaded and idle beyond the serving ones: a scale-up takes them first (serving from the "
            "next poll) and each taken is replaced after scale_up_delay_s; billed all day. Default 0."
        ),
    },
    "AutoscalingResponse": {
        **_ONE_REPLICA,
        "gpus_per_replica": "GPUs of one replica, count.",
        "max_request_rate": (
            "The replica's capacity: the highest request rate meeting the SLOs at slo_percentile, requests/s."
        ),
        "price_per_gpu_hour_usd": "The price per whole card the day is billed at, USD per GPU-hour; null without one.",
        "seed": "The random seed of the arrivals and lengths.",
        "hours": "Hours simulated (the forecast's rows), hours.",
        "requests": "Requests that arrived over the day (drawn at each hour's rate), count.",
        "cold_start_s": "What a new replica waits before it serves by default, s.",
        "cold_start_basis": "The default delay's parts: node provisioning, the weights' load, the engine's start-up.",
        "policy": "The policy the autoscaled day ran (DayPolicyAnswer).",
        "autoscaled": "The day under the policy (Day).",
        "static": "The day with /v1/fleet's peak fleet held throughout (StaticDay).",
        "recommendation": (
            "With `recommend`: the cheapest grid policy in GPU-hours meeting max_violation_rate (DayRecommendation); "
            "else null."
        ),
        "max_violation_rate": "The share of requests the recommendation may let miss an SLO, in [0, 1].",
    },
    "DayPolicyAnswer": {
        "triggers": "The triggers scaled on (FleetTrigger), each with its threshold per replica.",
        "scale_up_delay_s": "Time from the decision to add a replica until it serves, s.",
        "scale_down_delay_s": "HPA's scale-down stabilization window, s.",
        "min_replicas": "Replicas never to scale below, replicas.",
        "max_replicas": "Replicas never to scale above, replicas.",
        "warm_pool": "Replicas kept loaded and idle, replicas.",
        "polling_interval_s": "How often the autoscaler reads the gauges (KEDA's pollingInterval), s.",
        "threshold_scale": "The recommendation's factor on each trigger's threshold, dimensionless.",
    },
    "Day": {
        **_DAY_FIGURES,
        "scale_ups": "Polls at which the autoscaler added replicas, count.",
        "scale_downs": "Polls at which it removed one (a starting replica cancelled or a serving one drained), count.",
        "drain_s": "Time past the day's end until its last request finished, s.",
        "per_hour": "One DayHour per hour of the forecast, requests counted in the hour they arrived.",
        "timeline": "The replicas at every change (DayReplicas), from t = 0.",
    },
    # The rest of a StaticDay is a Day's (the spec composes it with allOf).
    "StaticDay": {
        "replicas": "Replicas held all day: /v1/fleet's peak fleet (the busiest hour's plus the spares), replicas.",
    },
    "DayHour": {
        **_DAY_FIGURES,
        "hour": "The hour of the day, from 0.",
        "replicas_mean": "Replicas serving, averaged over the hour, replicas.",
        "replicas_max": "The most replicas serving in the hour, replicas.",
    },
    "DayReplicas": {
        "t_s": "Time from the start of the day, s.",
        "serving": "Replicas taking requests, replicas.",
        "starting": "Replicas started and not yet serving (provisioning, loading), replicas.",
        "warm": "Replicas of the warm pool, loaded or loading, replicas.",
    },
    "DayRecommendation": {
        "status": "`ok`, or why no grid policy meets max_violation_rate.",
        "policy": "The recommended policy (DayPolicyAnswer); null when none meets the target.",
        "day": "Its day (Day); null when none meets the target.",
        "grid": "Every policy the search simulated (DayGridPoint), in the order it ran.",
    },
    "DayGridPoint": {
        "min_replicas": "The point's min_replicas, replicas.",
        "warm_pool": "The point's warm pool, replicas.",
        "threshold_scale": "The point's factor on each threshold, dimensionless.",
        "violation_rate": "Share of the day's requests that missed an SLO, in [0, 1].",
        "gpu_hours": "The day's GPU-hours, GPU-hours.",
        "meets": "violation_rate is at most max_violation_rate.",
    },
    "FleetProcurement": {
        "rates": "The rates the split was chosen with, per GPU-hour.",
        "periods": "One row per period of the horizon, in its order.",
        "committed_gpus": "The most GPUs committed at once over the horizon, count.",
        "cost_usd": "What the horizon costs under the split, USD (the sum of its periods' cost_usd).",
        "on_demand_cost_usd": "The horizon with every GPU rented on demand, USD.",
        "savings_usd": "on_demand_cost_usd − cost_usd, USD.",
        "monthly_cost_usd": "cost_usd per month of the horizon, USD.",
        "solver_status": "HiGHS's status: `optimal`, or its message.",
        "solve_ms": "Time to build and solve the integer program, ms.",
        "why": "Why the split is what it is: each way's price, what was chosen, the saving.",
    },
    "ProcurementPeriod": {
        "period": "The forecast period (or a flat traffic's months).",
        "committed_gpus": "GPUs committed (any term) in this period, count.",
        "monthly_cost_usd": "cost_usd per month of the period, USD.",
        "cost_usd": "What the period costs under the split: committed + on demand + spot, USD.",
    },
    "FleetEnergy": {
        "gpus": "GPUs the fleet keeps powered (every one it holds: spares idle, MIG cards whole), count.",
        "utilization": (
            "Average busy share of the fleet: the average traffic over what all its replicas carry at saturation (at "
            "their capacity without arrivals), 0 to 1."
        ),
        "pue": "The power usage effectiveness applied.",
        "hours_per_month": "Hours in the month the energy is counted over.",
    },
    "FleetOwnership": {
        "gpus": "GPUs bought: the answer's gpus_total, count.",
        "purchase_usd": "GPUs × the card's purchase_usd, USD, paid at month 0.",
        "amortization_months": "Months the purchase is written off over.",
        "electricity_usd_per_kwh": "The electricity price used, USD per kWh.",
        "hosting_usd_per_kw_month": "The hosting price used, USD per kW of board power per month.",
        "why": "What pays the purchase back, and when (or why it never does).",
    },
    "Ownership": {
        "pue": "Power usage effectiveness, at least 1: the request's pue by its other name (give one, or the same).",
    },
    "Prices": {
        "source": "Where the figures come from (provider, page, date; datasheet), text.",
        "price_date": "Month the prices refer to, YYYY-MM.",
    },
    "CatalogPrices": {
        "source": (
            "Where the figures come from (provider, page, date; datasheet), text; required with any figure beyond "
            "on_demand_usd_per_hour."
        ),
        "price_date": "Month the prices refer to, YYYY-MM; required with any price.",
        "on_demand_usd_per_hour": "On-demand price, USD per GPU-hour: the same as the GPU's hourly_price_usd.",
    },
    "GpuPrices": {
        "source": "Where the figures come from (provider, page, date; datasheet); null when none is given.",
        "price_date": "Month the prices refer to, YYYY-MM (the GPU's price_date).",
        "on_demand_usd_per_hour": "On-demand price, USD per GPU-hour: the same as the GPU's hourly_price_usd.",
    },
    "LatencyResponse": {
        "speculative": (
            "Speculative decoding as planned under arrivals (the request's, defaults filled in): every step of the "
            "queueing model and the simulator is a verification of k + 1 tokens a sequence plus the drafting, "
            "finishing tokens_per_step of them on average; null when not asked."
        ),
        "topology": (
            "`aggregated`: one replica; `disaggregated`: one P/D unit, a prefill and a decode replica of this "
            "shape, TTFT the prefill replica's plus the KV transfer, TPOT and ITL the decode replica's, E2E their "
            "sum quantile by quantile (an upper bound on its tail); the fit figures are the decode replica's."
        ),
        "max_request_rate_pool": "Disaggregated: the replica whose capacity is the unit's (`prefill` or `decode`).",
        "prefill_saturation_rate": "Disaggregated: the prefill replica's saturation rate, requests/s.",
        "decode_saturation_rate": "Disaggregated: the decode replica's saturation rate, requests/s.",
        "kv_transfer": "Disaggregated: moving one request's prompt KV from the prefill to the decode replica.",
        **_ONE_REPLICA,
        "mode": "How the figures were computed: `analytic` or `simulate`.",
        "arrival": "The arrivals: `poisson`, or `gamma` when burstiness is not 1.",
        "burstiness": "Gamma shape of the inter-arrival times (1: Poisson), dimensionless.",
        "slo_percentile": "The percentile the SLOs were checked at.",
        "ttft_slo_ms": "The TTFT objective given, ms; null if none.",
        "tpot_slo_ms": "The TPOT objective given, ms; null if none.",
        "e2e_slo_ms": "The end-to-end objective given, ms; null if none.",
    },
    "BatchRequest": {
        "requests": (
            "Requests in the batch, all queued at once, count (1 to 50,000; default 1,000). A batch whose "
            f"simulation would take more than {BATCH_MAX_WORK:,} units of work (scheduler passes, prefill chunks, "
            "preemptions: a second or so of one core) answers 422 naming requests, prompt_tokens and output_tokens "
            "(and max_num_seqs when the KV cache thrashes)."
        ),
        "seed": "The random seed of the sampled lengths; the same seed gives the same answer. Default 0.",
        "price_per_gpu_hour_usd": (
            "Price of one GPU for one hour, USD per GPU-hour, for job_cost_usd. Default: the GPU's catalog price (a "
            "MIG slice: its share of the card's price)."
        ),
    },
    "TraceProfile": {
        "requests": "Requests in the log (rows), count.",
        "first_arrival": "The earliest timestamp, ISO 8601 UTC.",
        "last_arrival": "The latest timestamp, ISO 8601 UTC.",
        "span_s": "Last arrival minus first, s.",
        "requests_per_day": "Requests over the span, scaled to a day, requests/day.",
        "requests_per_second": "Requests over the span, requests/s.",
        "peak_to_average": (
            "The busiest hourly period's rate over the log's average rate, ratio (at least 1). Hours the log covers "
            "less than half of are left out."
        ),
        "burstiness": (
            "The gamma shape of inter-arrival times within hours (1: Poisson, below 1 burstier; vLLM's convention, "
            "as /v1/latency and /v1/fleet take it): 1 / the pooled squared cv of the gaps, each divided by its "
            "hour's mean gap, clamped to 0.05-100. Null when no hour holds three arrivals, or when whole-second "
            "timestamps cannot resolve gaps of a few seconds."
        ),
        "arrival_cv": (
            "Coefficient of variation of inter-arrival times within hours, 1 / sqrt(burstiness); null with it."
        ),
        "prompt_tokens": "Prompt lengths: mean, cv, p50, p90, p99, tokens.",
        "output_tokens": "Output lengths: mean, cv, p50, p90, p99, tokens.",
        "prefix_cache_hit_rate": (
            "Share of prompt tokens found in the prefix cache, sum of cached_tokens over sum of prompt_tokens, 0-1; "
            "null when the log has no cached_tokens."
        ),
        "models": "Requests per value of the log's `model` column, busiest first (empty without the column).",
        "length_buckets": (
            "Prompt quartiles × output halves: each non-empty cell's mean prompt and output lengths and its share of "
            "the requests (shares sum to 1), as /v1/fleet `length_buckets` for a mixed fleet."
        ),
        "periods": "Every UTC hour from the first arrival's to the last's, empty ones included.",
        "length_samples": (
            "Up to 1,000 (prompt, output) pairs of the log drawn without replacement (a fixed seed: the same log "
            "gives the same pairs), each at least 1 token: /v1/latency's and /v1/fleet's length_samples for "
            "mode=simulate."
        ),
        "fleet_request": (
            "A /v1/fleet body for the log's traffic: requests_per_day, peak_to_average, mean lengths (rounded) and "
            "their cv (at most 4), gamma arrivals of the fitted burstiness (Poisson when none), the log's "
            "prefix_cache_hit_rate when it has cached tokens, the model and the gpu when given. Null when no model is "
            "known (no `model` column and no ?model=)."
        ),
        "warnings": "What the profile could not determine, and how it read the log.",
    },
    "TraceLengths": {
        "mean": "Mean over the log's requests, tokens.",
        "cv": "Coefficient of variation (population standard deviation over the mean).",
        "p50": "Median (nearest rank), tokens.",
        "p90": "90th percentile (nearest rank), tokens.",
        "p99": "99th percentile (nearest rank), tokens.",
    },
    "TracePeriod": {
        "period": "The UTC hour, `YYYY-MM-DDTHH:00Z`.",
        "requests": "Arrivals in the hour, count.",
        "covered_s": "Seconds of the hour between the log's first and last arrival (3,600 inside the log), s.",
        "requests_per_day": "The hour's arrivals over covered_s, scaled to a day, requests/day (0 when uncovered).",
    },
    "BatchResponse": {
        **_ONE_REPLICA,
        "gpus": "GPUs of the replica, count: what the job is billed for.",
        "max_concurrency": (
            "Whole sequences of prompt_tokens + output_tokens the KV cache holds at once, sequences. The simulated "
            "engine admits a request when its first chunk fits, so it may run more and preempt."
        ),
        "max_running_requests": (
            "The most requests the simulated scheduler runs at once: max_num_seqs (under engine=ideal: "
            "max_concurrency) and at most max_batched_tokens, requests."
        ),
        "requests": "Requests in the batch, all queued at t = 0, count.",
        "seed": "The random seed the lengths were drawn with.",
        "prompt_tokens": "Mean prompt length, tokens.",
        "output_tokens": "Mean output length, tokens.",
        "output_tokens_per_s": "Output tokens of the batch over its makespan, tokens/s.",
        "requests_per_s": "Requests of the batch over its makespan, requests/s.",
        "ttft_ms": (
            "Time to first token of the batch's requests, from t = 0 (the wait for a seat and the others' prompts "
            "included), ms."
        ),
        "e2e_ms": "Completion time of the batch's requests from t = 0, ms (the p100 is makespan_s).",
        "preemptions": (
            "Times a running request was preempted (the KV cache full) and later recomputed its prompt and the "
            "tokens it had generated, count."
        ),
        "price_per_gpu_hour_usd": (
            "Price of one GPU for one hour used for the cost, USD per GPU-hour (the request's, else the GPU's); null "
            "when unknown."
        ),
        "cost_per_million_output_tokens_usd": (
            "job_cost_usd per 10^6 output tokens of the batch, USD; null without a price."
        ),
    },
    "LatencyRow": {
        "request_rate": "Requests per second arriving at the replica, requests/s.",
        "utilization": "request_rate / saturation_rate, dimensionless (1 and above: no steady state).",
        "ttft_ms": "Time to first token, arrival to first token (queue wait included), ms.",
        "tpot_ms": "Time per output token after the first, per request, ms.",
        "itl_ms": "Inter-token latency: the gap before each decoded token, over tokens, ms.",
        "output_tokens_per_s": "Output tokens the replica produces per second at this rate, tokens/s.",
        "meets_slo": (
            "Whether the SLOs given hold at `slo_percentile` (and the KV cache holds the load); null without SLOs."
        ),
    },
    "LatencyConfidence": {
        "queue_wait_ms": "95% half-widths of the queue-wait figures, ms.",
        "ttft_ms": "95% half-widths of the TTFT figures, ms.",
        "tpot_ms": "95% half-widths of the TPOT figures, ms.",
        "e2e_ms": "95% half-widths of the end-to-end figures, ms.",
    },
    "Calibration": {
        "points": "The benchmark points as given (absent figures left out).",
        "warnings": "Disagreements between the measurements and the catalog, and assumptions made, in plain words.",
    },
    "CalibrationEngine": {
        "name": "Engine name.",
        "version": "Engine version; null when neither given nor printed in the log.",
    },
    "CalibrationEngineInput": {
        "name": "Engine name, lowercase (`vllm`, `sglang`, `tensorrt-llm`, …).",
        "version": "Engine version. Default: the version the start-up log prints, if any.",
    },
    "CalibrationList": {
        "items": "The page.",
        "total": "Calibrations matching the filters, count.",
        "offset": "Matching calibrations skipped, count.",
    },
    "CalibrationLogSummary": {
        "engine": "The engine the log reads like.",
        "engine_version": "The version the log prints.",
        "gpu_memory_utilization": "The memory utilisation the log prints, fraction.",
        "tensor_parallel": "The tensor-parallel size the log prints, GPUs.",
        "weights_bytes": "Memory the weights took on one GPU, bytes.",
        "kv_capacity_tokens": "Tokens the replica's KV cache holds, tokens.",
        "kv_bytes_per_token": "kv_cache_bytes ÷ kv_capacity_tokens, per GPU, bytes.",
        "max_concurrency": 'The engine\'s "maximum concurrency" for max_concurrency_tokens per request, sequences.',
    },
    "CalibrationPoint": {
        "concurrency": "Requests in flight during the measurement (the benchmark's max concurrency), sequences.",
        "prompt_tokens": "Prompt length of each request, tokens.",
        "output_tokens": "Output length of each request, tokens.",
        "ttft_ms": "Measured mean time to first token, ms (queueing excluded in the model it is fitted to).",
    },
    "CalibrationRequest": {
        "engine": "The inference engine the measurements come from: its name and release (CalibrationEngineInput).",
        "model": "Catalog slug of the model measured (404 when unknown).",
        "gpu": "Catalog slug of the GPU measured on (404 when unknown).",
        "mig_profile": ("The MIG profile measured on (NVIDIA's name, e.g. `3g.40gb`); null or absent for whole cards."),
        "tensor_parallel": (
            "Tensor-parallel size of the measured replica, GPUs. Default: the size the log prints "
            "(`tensor_parallel_size`), else the smallest valid size that holds the weights (and the answer warns "
            "that it was assumed)."
        ),
        "weight_precision": (
            "Number format of the weights served. Default: the model's native precision; `auto` as for planning. "
            "Stored normalised: planning matches calibrations on it."
        ),
        "kv_precision": (
            "Number format of the KV cache served (vLLM's `--kv-cache-dtype`; `auto` there is the weights' 16-bit "
            "format, bf16 here)."
        ),
        "max_batched_tokens": (
            "The engine's per-step token budget during the benchmark (vLLM's `--max-num-batched-tokens`), tokens; "
            "the steady state the points are fitted against depends on it."
        ),
        "gpu_memory_utilization": (
            "The engine's `--gpu-memory-utilization`, fraction. Default: the value the log prints, else 0.9 (vLLM's "
            "default)."
        ),
    },
    "CalibrationSummary": {
        "engine": "The inference engine the measurements come from (CalibrationEngine).",
        "model": "Catalog slug of the model.",
        "gpu": "Catalog slug of the GPU.",
        "mig_profile": "The MIG profile; null for whole cards.",
        "tensor_parallel": "Tensor-parallel size of the measured replica, GPUs.",
        "weight_precision": "Weight format, normalised (the planning match uses it).",
        "kv_precision": "KV-cache format, normalised.",
        "max_batched_tokens": "The engine's per-step token budget the points were fitted under, tokens.",
        "gpu_memory_utilization": "The engine's memory utilisation the log was fitted under, fraction.",
        "memory_efficiency": (
            "Fitted share of the datasheet memory bandwidth, fraction (0.05 to 1); null when not determined."
        ),
        "compute_efficiency": (
            "Fitted share of the datasheet peak FLOP/s, fraction (0.05 to 1); null when not determined."
        ),
        "kv_capacity_tokens": (
            "KV cache capacity of the replica the log reports (or derives from its KV memory), tokens."
        ),
    },
    "CatalogInterconnect": {
        "kind": "Link kind (`nvlink4`, `nvlink5`, `pcie5`, `infinity-fabric`, ...).",
        "bandwidth_gb_per_s": "Bandwidth per direction per GPU, GB/s.",
        "latency_us": "Latency of one hop, us.",
    },
    "CatalogMigProfile": {
        "name": "NVIDIA's profile name, e.g. `1g.10gb`, `1g.10gb+me`, `7g.80gb`; unique within the GPU.",
        "compute_slices": "Compute slices (the `g` of the name), count.",
        "memory_slices": "Memory slices, eighths of the card's memory, count.",
        "memory_gb": "Memory of the slice, GB (10^9 bytes); at most the card's memory_gb.",
        "max_instances": "Slices of this profile one card holds at most, count.",
    },
    "CatalogUncertainty": {
        "time_per_token": (
            "10th and 90th percentile of measured / predicted time per output token, [low, high] ratios. Low at "
            "most high."
        ),
        "ttft": (
            "10th and 90th percentile of measured / predicted time to first token, [low, high] ratios. Low at most "
            "high."
        ),
        "tokens_per_s": (
            "10th and 90th percentile of measured / predicted output tokens per second, [low, high] ratios. Low at "
            "most high."
        ),
        "kv_capacity_tokens": (
            "10th and 90th percentile of measured / predicted KV-cache capacity, [low, high] ratios. Low at most high."
        ),
    },
    "Speculative": {
        "method": (
            "The drafter: eagle, eagle3 or mtp (a head of about one decoder layer on the target's hidden states), "
            "ngram (prompt lookup, free) or draft_model (a smaller catalog model, named in draft_model)."
        ),
        "num_speculative_tokens": (
            "Tokens drafted per step, k, 1 to 16. Default: 1 for mtp (DeepSeek-V3's one extra token), 3 otherwise."
        ),
        "acceptance_rate": (
            "Per-token acceptance rate, a, in [0, 1): each drafted token is accepted with this probability given "
            "the ones before it were. Default per method from published rates: eagle 0.7 (EAGLE, Li et al. 2024), "
            "eagle3 0.8 (EAGLE-3, Li et al. 2025), mtp 0.85 (DeepSeek-V3 technical report: 85-90% for the second "
            "token), draft_model 0.7 (Leviathan et al. 2023), ngram 0.5 (an assumption: prompt lookup accepts only "
            "where the output copies the prompt)."
        ),
        "draft_model": (
            "Catalog slug of the draft model, with method=draft_model only; it must be smaller than the model."
        ),
        "auto": (
            "/v1/fleet only: rank every shape with speculation and without, and keep whichever fleet is cheaper "
            "(speculation pays at a small batch and loses where verifying k + 1 tokens a sequence turns the step "
            "compute-bound). Elsewhere a 422. Default false."
        ),
    },
    "SpeculationSettings": {
        "method": "The drafter planned.",
        "num_speculative_tokens": "Tokens drafted per step, k.",
        "acceptance_rate": "Per-token acceptance rate planned (the request's, or the method's default).",
        "draft_model": "The draft model's slug under method=draft_model, else null.",
        "tokens_per_step": (
            "Tokens a verification step finishes per sequence on average, E = (1 - a^(k+1)) / (1 - a) (Leviathan "
            "et al. 2023), count."
        ),
    },
    "SpeculationPlanned": {
        "auto": "Whether the request let the fleet search choose (speculative.auto).",
        "used": "Whether the plan runs speculation (false where speculative.auto found the fleet cheaper without it).",
    },
    "SpeculativeStep": {
        "draft_ms": (
            "Drafting k tokens for the batch, ms: k decode steps of the draft model, k passes of the head "
            "(one decoder layer and the lm_head's share of the decode step) for eagle/eagle3/mtp, 0 for ngram."
        ),
        "verify_ms": (
            "The target's step verifying k + 1 tokens per sequence, ms: k + 1 times the arithmetic over the "
            "same weight and KV reads."
        ),
        "plain_step_ms": "The decode step without speculation at this batch and context, ms.",
        "time_per_token_ms": "(verify_ms + draft_ms) / tokens_per_step: decode time per token of a sequence, ms.",
        "speedup": (
            "plain_step_ms / time_per_token_ms: what speculation buys at this batch; below 1 it loses (the answer "
            "warns)."
        ),
    },
    "ContinuousBatching": {
        "max_batched_tokens": "The per-step token budget used, tokens.",
        "time_per_token_ms": (
            "Time between two output tokens of one sequence, prefill chunks included, ms. Null if the figure is "
            "unbounded (not finite)."
        ),
        "ttft_ms": (
            "Time to first token: every chunk of one prompt, ms. Null if the figure is unbounded (not finite)."
        ),
        "tokens_per_s": (
            "Output tokens per second of the replica, tokens/s. Null if the figure is unbounded (not finite)."
        ),
    },
    "CostRequest": {
        "model": (
            "Optional: with `gpu` and no `tokens_per_s`, tokens/s are derived from a /v1/throughput plan of this "
            "model (prefill included). A catalog slug or an inline architecture (InlineModel)."
        ),
        "gpu": (
            "Optional: a catalog slug or an inline GPU (InlineGpu) whose hourly price is used when "
            "`price_per_gpu_hour_usd` is not given. Required with `model`."
        ),
        "price_per_gpu_hour_usd": (
            "Price of one GPU for one hour, USD per GPU-hour. Default: the GPU's catalog price (a MIG slice: its "
            "share of the card's price)."
        ),
    },
    "CostResponse": {
        "price_per_gpu_hour_usd": "Price used, USD per GPU-hour. Null if the figure is unbounded (not finite).",
        "gpus": "GPUs billed, count.",
        "tokens_per_s": "Output tokens per second used, tokens/s; null when neither given nor derived.",
        "utilization": "Share of billed hours producing tokens, fraction.",
        "hours_per_month": "Billed hours per month, hours.",
        "monthly_cost_usd": (
            "hourly_cost_usd × hours_per_month, USD per month. Null if the figure is unbounded (not finite)."
        ),
        "cost_per_million_output_tokens_usd": (
            "hourly cost ÷ 3,600 ÷ (tokens_per_s × utilization) × 10^6, USD per 10^6 output tokens; null without "
            "tokens_per_s."
        ),
        "basis": (
            "`measured` when tokens_per_s was given; when it is derived from a throughput plan, as on /v1/fit "
            "(`calibrated` when a calibration supplied its efficiencies or memory overhead); else `datasheet`."
        ),
        "engine": "The engine tokens_per_s was derived under; null when tokens_per_s was given.",
    },
    "Engine": {
        "name": "Engine name, lowercase (`vllm`, `sglang`, `trtllm`): what a planning request's `engine` names.",
    },
    "EngineCreate": {
        "name": (
            "Engine name: lowercase letters, digits, `.` and `-` (e.g. `vllm`); `ideal` is reserved (planning "
            "without an engine). Stable once published."
        ),
    },
    "EngineDocument": {
        "uncertainty": (
            "The p10 and p90 of measured / predicted per metric (CatalogUncertainty); an omitted field keeps the "
            "stated default."
        ),
        "engine_version": "Engine release the defaults and constants describe (e.g. `0.10`).",
        "gpu_memory_utilization": (
            "Default fraction of the kv_rule (vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM "
            "kv_cache_free_gpu_mem_fraction), share in (0, 1]."
        ),
        "max_batched_tokens": (
            "Default token budget of one step (max_num_batched_tokens, chunked_prefill_size, max_num_tokens), tokens."
        ),
        "max_num_seqs": "Default most sequences in flight, count.",
        "block_size": "KV-cache page, tokens; capacity is rounded down to whole blocks.",
        "efficiencies": (
            "Shares of the datasheet peaks the engine's kernels reach, one row per GPU architecture (each once); "
            "`*` is the row for any other GPU."
        ),
        "source": "Where the defaults and constants come from.",
        "notes": "Caveats about the profile.",
    },
    "EngineList": {
        "items": "The engine profiles.",
        "total": "Number of engine profiles (all pages), count.",
        "offset": "Items skipped before this page, count.",
    },
    "EngineUncertainty": {
        "tokens_per_s": (
            "10th and 90th percentile of measured / predicted output tokens per second, [low, high] ratios."
        ),
        "kv_capacity_tokens": (
            "10th and 90th percentile of measured / predicted KV-cache capacity, [low, high] ratios."
        ),
    },
    "FitResponse": {
        "shared_prefix_tokens": (
            "The shared prefix as held: its whole blocks (the engine's block size; 1 token under engine=ideal), tokens."
        ),
        "model": "The model: its catalog slug, or an inline model's name.",
        "gpu": "The GPU: its catalog slug, or an inline GPU's name.",
        "mig_profile": "The MIG profile planned on; null for a whole card.",
        "weight_precision": "Weight format used, normalised (e.g. bf16, fp8).",
        "kv_precision": "KV-cache format used, normalised.",
        "tensor_parallel": "Tensor-parallel size of one replica, GPUs.",
        "gpus": "GPUs in one replica (= tensor_parallel), GPUs.",
        "weights_bytes": "Memory the weights take, whole replica, bytes.",
        "concurrency": "The concurrency asked about, sequences.",
        "host_cpu_cores": (
            "Host CPU cores of the replica (per-GPU allowance × GPUs; a MIG slice gets its compute share), cores; "
            "null when the catalog does not know."
        ),
        "engine": "The engine the answer was planned under.",
        "gpu_memory_utilization": "The utilisation the plan ran with (the engine default unless given).",
        "max_batched_tokens": "The per-step token budget the plan ran with.",
        "max_num_seqs": "Most sequences the engine runs at once (null for ideal).",
        "expert_parallel": "Expert-parallel size, when given.",
    },
    "FleetOption": {
        "speculative": (
            "Whether this option is planned with the request's speculative decoding: under speculative.auto each "
            "shape is ranked twice, with it and without."
        ),
        "replica_cost_per_million_output_tokens_usd": (
            "One fully loaded replica's cost of 10^6 output tokens, USD: its hourly price over its capacity's "
            "tokens/s (a floor the fleet only reaches at full load with no spares); null without a price, and for "
            "a prefill pool."
        ),
        "cost_per_million_prompt_tokens_usd": (
            "A prefill pool's cost of 10^6 prompt tokens, USD: its monthly cost over the prompt tokens the "
            "average traffic brings in hours_per_month; absent for any other plan."
        ),
        "replica_cost_per_million_prompt_tokens_usd": (
            "One fully loaded prefill replica's cost of 10^6 prompt tokens, USD (its hourly price over its "
            "capacity in prompt tokens/s); absent for any other plan."
        ),
        "sized": (
            "Whether the option was sized at the SLO percentile (true: its fleet, cost and meets_slo are "
            "figures to plan on), or left at a bound on its capacity (false: see capacity_bound) because that "
            "bound already costs no less than the best; an unsized row gives only replicas_total_at_least, "
            "gpus_total_at_least and monthly_cost_usd_at_least. The first ranked option is always sized."
        ),
        "meets_slo": (
            "Whether the option meets the SLOs: true or false once sized; false for one ruled out because it "
            "cannot be fitted or misses an SLO even at concurrency 1; null for an unsized row (nobody checked)."
        ),
        "measured_generation": (
            "Whether the engine's training rows hold this GPU's generation (false: its figures are a guess on "
            "borrowed efficiencies, and the answer's warnings say so); null under engine=ideal, a measured "
            "capacity, or for a pool of a disaggregated plan."
        ),
        "replicas_total_at_least": "An unsized option's replicas with spares, at least (its bound's), replicas.",
        "gpus_total_at_least": (
            "An unsized option's GPUs with spares, at least (its bound's): sized at the SLO percentile it needs "
            "this many or more, GPUs."
        ),
        "monthly_cost_usd_at_least": "An unsized option's monthly cost, at least (its bound's), USD.",
        "capacity_exact": "Same as sized (sized or pending options only).",
        "capacity_bound": (
            "What an unsized option's bound was taken from: `minimum fleet` (never evaluated: one replica "
            "carrying the whole peak plus the spares and zones, at one GPU a replica when tensor_parallel is "
            "null; evaluating it could still rule it out), `saturation rate` (no stable rate is above it) or "
            "`mean latencies` (the highest rate whose means meet the SLOs); null when sized at the percentile."
        ),
        "gpu": "Catalog slug of the GPU.",
        "mig_profile": "MIG profile; null for whole cards.",
        "tensor_parallel": "Tensor-parallel size, GPUs; null when no size was tried.",
        "weight_precision": "Weight format, normalised; null when not reached.",
        "concurrency": "Sequences in flight per replica, sequences (sized options only).",
        "tokens_per_s": (
            "Output tokens per second of one replica, tokens/s (sized options only). Null if the figure is "
            "unbounded (not finite)."
        ),
        "time_per_token_ms": "Time per output token, ms (sized options only).",
        "ttft_ms": "Time to first token, ms (sized options only).",
        "bound_by": (
            "What limits the replica's concurrency: an SLO (`tpot_slo`, `ttft_slo`; with meets_slo false, the SLO "
            "even concurrency 1 misses), the KV cache (`kv_capacity`), the step token budget "
            "(`max_batched_tokens`), the engine's cap on running sequences (`max_num_seqs`), or a measured figure "
            "(`measured`). Sized options only."
        ),
    },
    "FleetUncertainty": {
        "max_request_rate": "One replica's capacity at the low and high end of the spread, requests/s.",
        "gpus_total": "GPUs with spares when a replica runs at the high and the low end of the spread ([fewer, more]).",
        "monthly_cost_usd": "The monthly cost at those two ends, USD; null without a price.",
    },
    "FleetMix": {
        "buckets": "The length buckets and their arrival rates at peak with the headroom (MixBucket).",
        "pools": "The kinds the mix uses, each its replicas, cost and the buckets it serves (MixPool).",
        "gpus_total": "The mix's GPUs (whole cards) with every pool's spares.",
        "monthly_cost_usd": "The mix's monthly cost, USD.",
        "single_kind": (
            "The cheapest single kind serving every bucket alone, sized by the same rule (MixSingleKind); null "
            "when no kind serves them all."
        ),
        "savings_usd": "What the mix saves per month against single_kind, USD; null without one.",
        "unserved_buckets": (
            "Buckets no kind serves within the SLOs (indices): planned as a best effort, one request at a time on "
            "the kind that comes closest; meets_slo is then false."
        ),
        "dropped_buckets": "Buckets no kind can hold at all (not one sequence fits), left out of the plan (indices).",
        "kinds_considered": "Replica kinds (GPU or MIG profile × TP × weight format) looked at, count.",
        "kinds_kept": (
            "Kinds the integer program chose among after pruning (per bucket the cheapest per request/s, the "
            "cheapest serving it alone, and the best single kind), count."
        ),
        "solver_status": "`optimal`, `infeasible`, `nothing to serve`, or HiGHS's own message.",
        "build_ms": "Time to build the capacity matrix (each kind's capacity per bucket at the SLOs), ms.",
        "solve_ms": "Time HiGHS took, ms.",
        "periods": "With `forecast`: each period's mix, the pools' kinds and bucket shares kept (MixPeriod).",
    },
    "MixBucket": {
        "peak_requests_per_s": "The bucket's arrival rate at peak, with the headroom, requests/s.",
    },
    "MixSingleKind": {
        "gpu": "The kind's GPU: its catalog slug.",
        "mig_profile": "The kind's MIG profile; null for whole cards.",
        "tensor_parallel": "The kind's tensor-parallel size, GPUs.",
        "weight_precision": "The kind's weight format, normalised.",
        "price_per_replica_hour_usd": "One replica's price per hour (a slice's share of its card on MIG), USD.",
        "replicas_peak": "Replicas carrying the peak (per zone × zones with zones).",
        "replicas_total": "Replicas with the spares.",
        "cards": "MIG: the whole cards holding the slices; null for whole cards.",
        "gpus_total": "Whole cards with the spares.",
        "monthly_cost_usd": "Its monthly cost, USD.",
    },
    "MixSingleKindPlan": {
        "capacity_per_replica": (
            "Requests/s of each bucket alone (FleetMix.buckets' order) one replica takes at the SLO percentile; "
            "null for a bucket it leaves out."
        ),
    },
    "MixPool": {
        "vllm_command": (
            "The pool's `vllm serve` line, from its replica sized for the longest bucket it serves (the context "
            "it must hold, and the sequences that fit at that length); null when none was sized."
        ),
        "utilization_peak": (
            "Busy share of the replicas carrying the peak (spares aside) at their SLO capacity "
            "(capacity_per_replica), fraction."
        ),
        "saturation_utilization_peak": (
            "The pool's arrivals at peak over its replicas' saturation rates (each bucket's peak rate over the "
            "saturation rate of this kind's replica serving it, per replica carrying the peak), as a replica's "
            "utilization_peak counts it, dimensionless; null without a queueing model."
        ),
        "optimistic": (
            "saturation_utilization_peak above 0.8, where queueing models are optimistic about bursts (the rule a "
            "replica's optimistic follows); null without a queueing model."
        ),
        "buckets": "The buckets the pool serves and its share of each (MixPoolBucket).",
    },
    "MixPoolBucket": {
        "bucket": "The bucket's index in FleetMix.buckets.",
        "share": "The share of the bucket's requests this pool serves, fraction.",
        "requests_per_s": "Those requests at peak with the headroom, requests/s.",
        "capacity_per_replica": "Requests/s of this bucket alone one replica takes at the SLO percentile.",
        "meets_slo": "False: a best effort (no kind serves this bucket within the SLOs).",
    },
    "MixPeriod": {
        "cost_per_million_output_tokens_usd": (
            "The mix's cost of 10^6 output tokens in this period, USD: its monthly cost over the output tokens "
            "of the period's average traffic in hours_per_month."
        ),
        "gpus_total": "The mix's GPUs with spares in this period.",
        "monthly_cost_usd": "The mix's monthly cost in this period, USD.",
        "pool_gpus_total": "Each pool's GPUs with spares, in FleetMix.pools' order.",
    },
    "FleetPool": {
        "utilization_peak": "The pool's replica's utilization_peak (every replica of the pool runs alike).",
        "optimistic": "The pool's replica's optimistic: utilization_peak above 0.8.",
        "replica_cost_per_million_output_tokens_usd": (
            "One fully loaded replica's cost of 10^6 output tokens, USD: its hourly price over its capacity's "
            "tokens/s (a floor the fleet only reaches at full load with no spares); null without a price, and for "
            "a prefill pool."
        ),
        "cost_per_million_prompt_tokens_usd": (
            "A prefill pool's cost of 10^6 prompt tokens, USD: its monthly cost over the prompt tokens the "
            "average traffic brings in hours_per_month; absent for any other plan."
        ),
        "replica_cost_per_million_prompt_tokens_usd": (
            "One fully loaded prefill replica's cost of 10^6 prompt tokens, USD (its hourly price over its "
            "capacity in prompt tokens/s); absent for any other plan."
        ),
        "gpu": "The pool's GPU: its catalog slug, or an inline GPU's name.",
        "mig_profile": "The pool's MIG profile; null for whole cards.",
        "replica": "One replica of the pool (FleetReplica).",
        "autoscaling": "What a KEDA/HPA policy of this pool needs (FleetAutoscaling).",
        "vllm_command": (
            "The pool's `vllm serve` line, with the NIXL KV connector that moves the KV between the pools "
            "(under engine=vllm; a router sends each request to a prefill replica, then to a decode replica)."
        ),
        "options": "The pool's options ranked as /v1/fleet ranks them (FleetOption), at most `limit`.",
        "options_total": "The pool's options considered, count.",
    },
    "FleetKvTransfer": {
        "bytes_per_request": "The prompt's KV cache, every layer and KV head, bytes.",
        "link": (
            "`nvlink` when a prefill and a decode replica fit one NVLink domain of the same GPU kind, else `network`."
        ),
        "gb_per_s_per_gpu": (
            "Bandwidth of the link per GPU, GB/s one way: the interconnect's, or the network's "
            "(network_gb_per_s, else the node kind's typical NIC: 25 on NVLink 3 nodes, 50 on NVLink 4/5 and "
            "Infinity Fabric nodes, 12.5 on PCIe servers)."
        ),
        "parallel_gpus": "Ranks sending a shard each at once: the smaller of the two pools' TP sizes, count.",
        "ms": "Time to move it: the link's latency plus the bytes over the parallel links, ms.",
    },
    "FleetAggregated": {
        "gpu": "The aggregated plan's GPU: its catalog slug, or an inline GPU's name.",
        "mig_profile": "Its MIG profile; null for whole cards.",
        "tensor_parallel": "Its tensor-parallel size, GPUs.",
        "weight_precision": "Its weight format, normalised.",
        "max_request_rate": "One aggregated replica's capacity at the SLO percentile, requests/s.",
        "bound_by": "What bounds that capacity (as FleetReplica.bound_by).",
        "meets_slo": "Whether the aggregated plan meets the SLOs.",
        "gpus_total": "Its GPUs with spares.",
        "monthly_cost_usd": "Its monthly cost, USD; null without a price.",
    },
    "FleetPeriod": {
        "cost_per_million_output_tokens_usd": (
            "The fleet's cost of 10^6 output tokens in this period, USD: its monthly_cost_usd over the output "
            "tokens the period's average traffic brings in hours_per_month (disaggregated: both pools'); null "
            "without a price."
        ),
        "replica_cost_per_million_output_tokens_usd": (
            "One fully loaded replica's cost of 10^6 output tokens, USD: its hourly price over its capacity's "
            "tokens/s (a floor the fleet only reaches at full load with no spares); null without a price, and for "
            "a prefill pool."
        ),
        "prefill_gpus_total": "Disaggregated: the prefill pool's GPUs with spares in this period.",
        "decode_gpus_total": "Disaggregated: the decode pool's GPUs with spares in this period.",
        "period": "The period's label, as sent.",
        "requests_per_day": "Average traffic, requests per day.",
        "peak_to_average": "Peak over average traffic used, ratio.",
        "min_replicas": "Autoscaling floor in this period, replicas.",
        "max_replicas": "Autoscaling ceiling in this period, replicas.",
    },
    "FleetReplica": {
        "gpu": "The GPU: its catalog slug, or an inline GPU's name.",
        "mig_profile": "The MIG profile of the replica; null for whole cards.",
        "gpus": "GPUs (or MIG slices) in one replica, GPUs.",
        "tensor_parallel": "Tensor-parallel size of the replica, GPUs.",
        "weight_precision": "Weight format used, normalised.",
        "kv_precision": "KV-cache format used, normalised.",
        "concurrency": (
            "Requests in flight in one replica at its capacity rate, on average (the autoscaling target); under a "
            "steady-state or measured capacity, the sequences it runs, sequences."
        ),
        "max_concurrency": "Sequences the KV cache holds at most, sequences.",
        "tokens_per_s": (
            "Output tokens per second of one replica under continuous batching (or the measured figure), tokens/s; "
            "null if unbounded (not finite), and for a prefill pool's "
            "replica, which hands back one token a request (its throughput is prompt_tokens_per_s, its requests/s "
            "max_request_rate)."
        ),
        "prompt_tokens_per_s": (
            "Prompt tokens one replica takes in per second at its capacity (capacity rate x prompt_tokens), "
            "tokens/s; null when the capacity is unbounded."
        ),
        "max_num_seqs": "The running-batch cap the capacity assumes (vLLM `--max-num-seqs`), sequences.",
        "max_request_rate": (
            "The replica's capacity: the highest arrival rate whose `slo_percentile` TTFT, TPOT and E2E meet the "
            "SLOs (and whose KV use fits), requests/s; null for a measured capacity."
        ),
        "utilization_peak": (
            "The rate arriving at one replica at the planned peak over its saturation rate, dimensionless; null "
            "for a measured capacity."
        ),
        "utilization_average": (
            "The same at average traffic over the average's replicas (as an autoscaler runs it), dimensionless."
        ),
        "optimistic": (
            "utilization_peak above 0.8, where queueing models are optimistic about bursts: check with "
            "`/v1/latency?mode=simulate` or a load test."
        ),
        "predicted": "The replica's predicted latency at the planned peak rate (FleetPredicted); null when measured.",
        "simulated": (
            "With `mode=simulate`: the replica at the planned peak rate, simulated (a LatencyRow, with confidence "
            "half-widths): the precise mode's check of the analytic capacity; else null."
        ),
        "ttft_ms": (
            "Time to first token at the capacity rate, at `slo_percentile` (steady state: at that concurrency), ms."
        ),
        "time_per_token_ms": "Time per output token at the capacity rate, at `slo_percentile`, ms.",
        "meets_slo": "The replica meets ttft_slo_ms and tpot_slo_ms (at `slo_percentile`).",
    },
    "FleetPredicted": {
        "request_rate": "Requests per second arriving at one replica at the planned peak, requests/s.",
        "queue_wait_ms": "Wait from arrival to the start of prefill at that rate, ms.",
        "ttft_ms": "Time to first token at that rate, ms.",
        "tpot_ms": "Time per output token at that rate, ms.",
        "e2e_ms": "End-to-end latency at that rate, ms.",
    },
    "FleetRequest": {
        "prices": (
            "Prices and power of the GPU per whole card, each replacing the catalog's (GET: dotted, "
            "`prices.spot_interruptions_per_hour=0.05`); on_demand_usd_per_hour is price_per_gpu_hour_usd."
        ),
        "gpus": (
            "The GPUs (catalog slugs; their MIG profiles come with them) a ranking, a disaggregated plan's pools "
            "or a mix may choose from; `any` or absent: the whole catalog. Not with `gpu`."
        ),
        "weight_precision": (
            "Number format of the weights, or a list of formats (on GET comma-separated) the search may choose "
            "from, each option planned at each: the answer says which won (`weight_precision`, and in `options` "
            "or `alternatives`). Default: the model's native precision; `auto` picks each card's smallest native "
            "format. Only formats asked for are tried: quality is the caller's call."
        ),
        "gpu": (
            "Optional: a catalog slug or an inline GPU (InlineGpu). Omit it to rank every catalog GPU and MIG "
            "profile (at each valid tensor-parallel size) by monthly cost; the answer then describes the best and "
            "lists `options`."
        ),
        "price_per_gpu_hour_usd": (
            "Price of one whole GPU card for one hour, USD per GPU-hour (a MIG slice costs its card's price over "
            "max_instances). Default: the GPU's catalog price."
        ),
        "limit": (
            "Ranked options returned when `gpu` is omitted, count (`options_total` says how many there were); "
            "with a `gpu` and no `tensor_parallel`, the `alternatives` listed."
        ),
        "mode": (
            "`analytic` (default): capacities from the queueing model. `simulate`: the chosen option's replica is "
            "also simulated at the planned peak rate (`replica.simulated`), to check the analytic figures."
        ),
        "tensor_parallel": (
            "Tensor-parallel size of each replica, GPUs. Default with a `gpu`: the valid size whose fleet is "
            "cheapest per month among those meeting the SLOs (the others are listed in `alternatives`, with why "
            "each lost); without a `gpu`, every valid size of every option is ranked."
        ),
    },
    "FleetResponse": {
        "speculative": (
            "Speculative decoding as planned for the chosen option (the request's, defaults filled in); `used` says "
            "whether the plan runs it (under speculative.auto the search keeps whichever needs the cheaper fleet). "
            "Null when not asked."
        ),
        "prices": (
            "The prices and power the answer is computed with, per whole card: the request's, else the catalog's."
        ),
        "cost_per_million_output_tokens_usd": (
            "The fleet's cost of 10^6 output tokens, USD: monthly_cost_usd over the output tokens its average "
            "traffic brings in hours_per_month (spares, peak capacity and quiet hours included; a disaggregated "
            "plan's: both pools', a mix's: every pool's); null without a price."
        ),
        "replica_cost_per_million_output_tokens_usd": (
            "One fully loaded replica's cost of 10^6 output tokens, USD: its hourly price over its capacity's "
            "tokens/s (a floor the fleet only reaches at full load with no spares); null without a price, and for "
            "a prefill pool."
        ),
        "uncertainty": (
            "The fleet's range (FleetUncertainty): a replica's capacity scaled to the 10th and 90th percentile of "
            "measured over predicted throughput on the engine's training rows (or ± a calibration's error), each "
            "sized as the plan is; null for a measured capacity or engine=ideal."
        ),
        "uncertainty_basis": "Where the range comes from, or why there is none.",
        "mix": "With mix: the mixed fleet (FleetMix); the answer's gpus_total and monthly_cost_usd are its own.",
        "topology": (
            "How the plan serves requests: `aggregated` (each replica prefills and decodes) or `disaggregated` "
            "(a prefill pool and a decode pool, each sized for its own objective: prefill_pool, decode_pool)."
        ),
        "prefill_pool": (
            "Disaggregated: the pool that computes prompts and first tokens (FleetPool), sized so that TTFT at "
            "the SLO percentile, less the KV transfer, holds; its replica's time_per_token_ms is 0 (it decodes "
            "nothing). Null when no option could serve it."
        ),
        "decode_pool": (
            "Disaggregated: the pool that generates the rest (FleetPool), its steps free of prefill, sized so "
            "that TPOT at the SLO percentile holds; its replica's ttft_ms is its own wait for a seat and first "
            "step, not the request's TTFT. Null when no option could serve it."
        ),
        "kv_transfer": "Disaggregated: moving one request's prompt KV from its prefill to its decode replica.",
        "prefill_ttft_budget_ms": (
            "Disaggregated: the TTFT the prefill pool was held to, ms: the SLO less the slowest transfer it "
            "could meet (over the slowest network among its candidate GPUs and the decode pool's, one rank "
            "sending). Null without a TTFT SLO."
        ),
        "ttft_ms": (
            "Disaggregated: TTFT at the SLO percentile at the prefill pool's capacity, plus the KV transfer, "
            "ms. Null if the figure is unbounded (not finite)."
        ),
        "prefill_to_decode_gpus": "Disaggregated: prefill GPUs over decode GPUs (with spares), ratio.",
        "pd_ratio": "Disaggregated: prefill GPUs to decode GPUs (with spares), as `P:D`.",
        "aggregated": (
            "Disaggregated: the aggregated plan for the same traffic on the same GPUs (FleetAggregated), for "
            "comparison. Null when no option could serve it."
        ),
        "cheaper": (
            "Disaggregated: which topology costs less per month for this workload while meeting the SLOs "
            "(`aggregated` on a tie: one pool to run); null when neither meets them."
        ),
        "comparison": "Disaggregated: why `cheaper` is cheaper, with each replica kind's capacity.",
        "model": "The model: its catalog slug, or an inline model's name.",
        "gpu": "The GPU planned on: its catalog slug, or an inline GPU's name.",
        "mig_profile": "The MIG profile planned on; null for whole cards.",
        "requests_per_s": "Average traffic, requests/s. Null if the figure is unbounded (not finite).",
        "spare_replicas": "Spare replicas added (0 with zones > 1), replicas.",
        "zones": "Availability zones, count.",
        "headroom": "Capacity kept above demand, fraction.",
        "hours_per_month": "Billed hours per month, hours.",
        "host_cpu_cores": "Host CPU cores of the whole fleet (replicas_total), cores; null when unknown.",
        "basis": (
            "`measured` when per_replica_tokens_per_s was given; else as on /v1/fit: `calibrated` when a "
            "calibration of the model on `gpu` (and mig_profile) supplied efficiencies or memory overhead, "
            "`calibrated-nearest` for one of the same family, `datasheet` otherwise, and always for a ranking over "
            "the catalog (no `gpu`; `warnings` then names the calibrated GPUs)."
        ),
        "leaves_out": "What the estimate leaves out, in plain words.",
        "engine": "The engine the answer was planned under.",
        "gpu_memory_utilization": "The utilisation the plan ran with (the engine default unless given).",
        "max_batched_tokens": "The per-step token budget the plan ran with.",
        "max_num_seqs": "Most sequences the engine runs at once (null for ideal).",
        "expert_parallel": "Expert-parallel size, when given.",
    },
    "ForecastPeriod": {
        "requests_per_day": "Average traffic in the period, requests per day.",
        "peak_to_average": (
            "Peak over average traffic in the period, ratio (≥ 1). Default: the request's peak_to_average."
        ),
    },
    "Gpu": {
        "slug": "Stable identifier, lowercase and hyphenated (e.g. `h100-sxm`).",
        "memory_gb": "Memory of one GPU, GB (10^9 bytes); null when unknown (planning then refuses).",
        "memory_visible_gib": (
            "What the driver shows an engine on one GPU (torch's total_memory), GiB (2^30 bytes); null when not "
            "measured (engines then derive it from memory_gb)."
        ),
        "native_precisions": "Formats the tensor cores run natively; null when unknown.",
    },
    "GpuCreate": {
        "slug": (
            "Catalog slug: lowercase letters, digits, `.` and `-` (e.g. `llama-3.1-8b`); `import` is reserved. "
            "Stable once published."
        ),
    },
    "GpuDocument": {
        "peak_tflops": (
            "Dense (not 2:4 sparse) peak compute of one GPU per precision, TFLOP/s (int8: TOPS); null where unknown."
        ),
        "vendor": "Vendor.",
        "architecture": (
            "Architecture, one the service knows (`hopper`, `ada`, `blackwell-gddr`, ...); null: planning tells it "
            "from the name where obvious and says so."
        ),
        "form_factor": "Form factor (`SXM5`, `PCIe`, ...).",
        "memory_gb": "Memory, GB (10^9 bytes, the vendor figure); required when the card has mig_profiles.",
        "memory_visible_gib": (
            "What the driver shows an engine (torch's total_memory), GiB (2^30 bytes), e.g. 79.19 for an H100 80 "
            "GB; at most 1.1 x memory_gb; null when not measured."
        ),
        "memory_bandwidth_tb_per_s": "Memory bandwidth, TB/s (10^12 bytes/s).",
        "native_precisions": "Precisions the tensor cores run natively; null when not known.",
        "interconnect": "The GPU-to-GPU link within a node; null when not known.",
        "gpus_per_node": "GPUs in one NVLink / fabric domain of a typical server, count.",
        "host_cpu_cores": "Host CPU cores a typical node gives each GPU, count.",
        "hourly_price_usd": "Indicative on-demand price per GPU-hour, USD (never a quote).",
        "price_date": "Month the indicative price refers to, YYYY-MM; required with hourly_price_usd.",
        "source": "Where each figure came from.",
        "mig_profiles": "MIG slices of the card (empty when it has none).",
    },
    "GpuList": {
        "items": "The GPUs.",
        "total": "Number of GPUs matching the filters (all pages), count.",
    },
    "Health": {
        "status": "Always `ok`.",
    },
    "ImportDerivation": {
        "params": "Where the config-derived parameters sit, count each (ParamBreakdown).",
        "family": "Family the config was read as.",
        "kv_bytes_per_token": "KV cache per token at bf16 over every layer, bytes (MLA: latent + rope key).",
        "warnings": (
            "Where the safetensors header and the config disagree by more than 5%: a header far short of the "
            "config (one shard of several) keeps the config's count; one far above it (weights the config does "
            "not describe) keeps the header's. Empty when they agree."
        ),
    },
    "ImportRequest": {
        "slug": ("Catalog slug; default: from the config's _name_or_path (required when it has none, unless dry_run)."),
        "name": "Display name; default: the repository name.",
        "hf_repo": "Hugging Face repository; default: the config's _name_or_path.",
        "source": "Provenance to store; default: says the import derived it.",
    },
    "ImportResult": {
        "model": "The model as stored (GET answers the same), or with dry_run as it would be stored.",
    },
    "InlineGpu": {
        "name": "Display name, echoed as `gpu` in answers.",
        "memory_visible_gib": (
            "What the driver shows an engine on one GPU (torch's total_memory), GiB (2^30 bytes), e.g. 79.19 for an "
            "H100 80 GB; null or absent: derived from memory_gb by the architecture's memory (HBM 0.99 of it, GDDR "
            "with ECC on 0.92, GeForce/RTX GDDR 0.985: a 24 GB RTX 4090 shows 23.64 GiB)."
        ),
        "memory_bandwidth_tb_per_s": ("Memory bandwidth of one GPU, TB/s (10^12 bytes per second). Needed for timing."),
        "peak_tflops": "Dense (not 2:4 sparse) peak compute of one GPU per precision, TFLOP/s (int8: TOPS).",
        "architecture": (
            "GPU architecture, one the service knows (ampere, ampere-gddr, ada, hopper, blackwell, blackwell-gddr, "
            "cdna3, cdna4); engines read it for their kernel efficiencies and, when memory_visible_gib is absent, "
            "for the share of memory_gb the driver shows (HBM 0.99; GDDR with ECC 0.92; GeForce/RTX GDDR 0.985). "
            "Absent: told from the name where obvious (RTX 4090: ada; RTX 5090: blackwell-gddr), said in warnings; "
            "else the default efficiencies, also said."
        ),
        "confidence": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
        "notes": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
        "version": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
    },
    "InlineModel": {
        "name": "Display name, echoed as `model` in answers.",
        "experts": ("Routed experts per MoE layer, count (experts, experts_per_token and expert_params go together)."),
        "hf_repo": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
        "notes": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
        "version": (
            "Catalog field, accepted so that a catalog answer can be pasted back (edited); not used for planning."
        ),
    },
    "MigProfile": {
        "name": "NVIDIA's profile name, e.g. `1g.10gb`, `3g.40gb`.",
        "memory_gb": "Memory of one instance, GB (10^9 bytes).",
    },
    "Model": {
        "slug": "Stable identifier, lowercase and hyphenated (e.g. `llama-3.1-8b`).",
        "params_active": "Parameters one token uses (mixture-of-experts), count; null for dense models.",
        "native_precision": "Checkpoint weight format; null when the config does not say (planning then assumes bf16).",
    },
    "ModelCreate": {
        "slug": (
            "Catalog slug: lowercase letters, digits, `.` and `-` (e.g. `llama-3.1-8b`); `import` is reserved. "
            "Stable once published."
        ),
    },
    "ModelDocument": {
        "family": "Architecture family, the config's model_type (`llama`, `qwen3_moe`, ...).",
        "params_active": (
            "Parameters one token uses, count; omitted: params_total for dense models, non-expert + expert_params x "
            "experts_per_token / experts for MoE."
        ),
        "kv_heads": "Key/value heads per layer, count (MLA: as in the config).",
        "head_dim": "Width of one head, elements; omitted: hidden_size / attention_heads.",
        "attention": "Attention kind; omitted: mha when kv_heads = attention_heads, else gqa.",
        "kv_lora_rank": "MLA latent width cached per token and layer, elements (mla only).",
        "qk_rope_head_dim": "MLA decoupled rope key width cached per token and layer, elements (mla only).",
        "sliding_window_layers": (
            "Layers using the window, count; omitted: every layer when sliding_window is set, else 0."
        ),
        "experts_per_token": "Routed experts each token uses (top-k), count.",
        "shared_experts": "Always-active experts per MoE layer, count.",
        "expert_params": "Parameters of all routed experts over all layers, count (shared experts not included).",
        "vocab_size": "Vocabulary, tokens.",
        "intermediate_size": "Width of a dense MLP the model has, elements.",
        "moe_intermediate_size": "Width of one expert's MLP, elements.",
        "tie_word_embeddings": "Whether the LM head shares the input embedding.",
        "quantized_components": (
            "Components the checkpoint's own format quantizes, each once (from a quantization_config's ignore "
            "list); null: the format's convention (every linear layer; MXFP4 only the experts)."
        ),
        "native_precision": (
            "The checkpoint's weight format (aliases such as `bfloat16` are stored by catalog name); null when not "
            "known."
        ),
        "max_context": "Longest context the model is configured for (max_position_embeddings), tokens.",
        "license": "Licence of the weights.",
        "source": "Where each figure came from.",
    },
    "ModelPreview": {
        "slug": "Slug it would be stored under.",
        "version": "Null: not stored.",
    },
    "ParamBreakdown": {
        "attention": "Attention projections with their biases (and gpt-oss sinks), all layers, count.",
        "shared_experts": "Shared experts, all layers, count.",
        "total": "Their sum, count.",
    },
    "PlanCalibration": {
        "engine": "The inference engine its measurements come from (CalibrationEngine).",
        "model": "The model it was measured on (another model of the same family when match is nearest).",
        "point_count": "Benchmark points it was fitted to, count.",
        "mape_percent": "Its fit error over those points, percent; null when fitted to a log only.",
        "tensor_parallel": "Tensor-parallel size it was measured at, GPUs.",
        "memory_efficiency": "Its fitted memory efficiency, fraction; null when its points did not determine it.",
        "compute_efficiency": "Its fitted compute efficiency, fraction; null when its points did not determine it.",
        "memory_overhead_gb": "Its fitted memory overhead per GPU, GB (used as reserved_gb); null without a log.",
    },
    "Problem": {
        "status": "The HTTP status code.",
    },
    "Ready": {
        "status": "Always `ready`.",
    },
    "ReadyCatalog": {
        "gpus": "Gpus, count.",
        "mig_profiles": "Mig profiles, count.",
    },
    "RooflineRequest": {
        "gpu": (
            "Optional: a catalog slug or an inline GPU (InlineGpu) supplying the peak and the bandwidth that are "
            "not given. Without it, peak_tflops and memory_bandwidth_tb_per_s are required."
        ),
        "compute_precision": (
            "Format the math runs in, which picks the GPU's peak TFLOP/s. Case-insensitive; the aliases (bfloat16, "
            "float16, half, fp8_e4m3, …) are accepted and normalised in the answer."
        ),
        "weight_precision": (
            "Format of B (the weights), which sets its bytes per element. Case-insensitive; the aliases (bfloat16, "
            "float16, half, fp8_e4m3, …) are accepted and normalised in the answer."
        ),
    },
    "RooflineResponse": {
        "m": "Rows of A and C, elements.",
        "k": "Columns of A, rows of B, elements.",
        "n": "Columns of B and C, elements.",
        "arithmetic_intensity": "flops ÷ bytes_moved, FLOP/byte. Null if the figure is unbounded (not finite).",
        "ridge_flops_per_byte": (
            "Peak FLOP/s ÷ bandwidth, FLOP/byte: above it the GEMM is compute-bound. Null if the figure is "
            "unbounded (not finite)."
        ),
    },
    "SafetensorsSummary": {
        "params_total": (
            "Parameters of the text decoder: sum over tensors of the product of their shapes (MXFP4 blocks: two "
            "values a byte), count."
        ),
    },
    "SweepRow": {
        "concurrency": "Sequences in flight, sequences.",
        "time_per_token_ms": (
            "Decode step time (time per output token per sequence), ms. Null if the figure is unbounded (not finite)."
        ),
        "tokens_per_s": (
            "Decode output tokens per second of the replica, tokens/s. Null if the figure is unbounded (not finite)."
        ),
        "decode_bound": "What bounds the decode step.",
        "communication_ms": (
            "Tensor-parallel communication time of the decode step, ms. Null if the figure is unbounded (not finite)."
        ),
        "ttft_ms": (
            "Time to first token with `concurrency` prompts prefilled together, ms. Null if the figure is unbounded "
            "(not finite)."
        ),
        "effective_tokens_per_s": (
            "Output tokens per second with each batch's prefill included, tokens/s. Null if the figure is unbounded "
            "(not finite)."
        ),
        "cost_per_million_output_tokens_usd": (
            "Cost of 10^6 output tokens at effective_tokens_per_s, USD; null without a price."
        ),
        "fits": "This concurrency fits in the KV budget (≤ max_concurrency).",
    },
    "ThroughputRequest": {
        "price_per_gpu_hour_usd": (
            "Price of one GPU for one hour, USD per GPU-hour. Default: the GPU's catalog price (a MIG slice: its "
            "share of the card's price)."
        ),
    },
    "ThroughputResponse": {
        "tokens_per_s": (
            "Decode output tokens per second of the replica (concurrency / step time), tokens/s. Null if the figure "
            "is unbounded (not finite)."
        ),
        "compute_precision": "Format whose peak was used (normalised, or the weight format for `native`).",
        "peak_tflops": "Datasheet peak used for compute_precision, TFLOP/s per GPU (a MIG slice: its share).",
        "memory_bandwidth_tb_per_s": "Datasheet memory bandwidth used, TB/s per GPU (a MIG slice: its share).",
        "memory_efficiency": "Memory efficiency used, fraction.",
        "compute_efficiency": "Compute efficiency used, fraction.",
        "price_per_gpu_hour_usd": "Price used, USD per GPU-hour; null when neither given nor in the catalog.",
        "cost_per_million_output_tokens_usd": (
            "Cost of 10^6 output tokens at effective_tokens_per_s, USD; null without a price."
        ),
        "sweep": "One row per concurrency of the request's `sweep`, in its order; empty without one.",
        "basis": "As on /v1/fit; memory_efficiency and compute_efficiency show the values used.",
    },
}

SCHEMAS: dict[str, str] = {
    "Calibration": (
        "A stored calibration with its measurements, the residual of every figure and the start-up log summary."
    ),
    "CalibrationEngine": "The inference engine the measurements come from.",
    "CalibrationEngineInput": "The inference engine the measurements come from.",
    "CalibrationList": "One page of calibrations, newest first.",
    "CalibrationLogSummary": (
        "The start-up log's figures (per GPU, as the engine logs rank 0) beside the planner's. Null: not in the log."
    ),
    "CalibrationPoint": (
        "One benchmark point: the workload and any of the figures measured at it (at least one). TPOT and ITL are "
        "the same figure under two names here; tpot_ms is fitted when both are given."
    ),
    "CalibrationRequest": (
        "What was measured, on what, and how the engine was set up: benchmark points, a start-up log, or both. "
        "Catalog slugs only (a calibration is matched to planning requests by slug)."
    ),
    "CalibrationResidual": "A measured figure against what the calibrated model predicts for it.",
    "CalibrationSummary": "A stored calibration, as a list shows it.",
    "CatalogInterconnect": "The GPU-to-GPU link as written to the catalog.",
    "FleetEnergy": "What the fleet draws: its GPUs, their average utilization and power, the PUE.",
    "FleetOwnership": (
        "Owning the fleet: the purchase written off over amortization_months plus electricity and hosting, against "
        "renting it on demand, and the month owning breaks even."
    ),
    "FleetPrices": "The prices and power a fleet answer is computed with, per whole card; null where not known.",
    "FleetProcurement": (
        "pricing=optimize: the cheapest split of the forecast's GPUs into committed (renewed each term from the "
        "horizon's start), on-demand and spot ones, with every period's N+1 of its average load on capacity that "
        "cannot be taken away and spot counted as 1 − its interruption rate; solved by HiGHS."
    ),
    "OwnershipMonth": "One month of the owned-versus-rented line: what each has cost so far.",
    "Ownership": "Owning the fleet: how long its purchase is written off over and what running it costs.",
    "ProcurementCommitment": "GPUs committed for one term, over the periods it covers.",
    "ProcurementPeriod": "One period of the horizon: its GPUs by how they are paid for, and what each part costs.",
    "ProcurementRates": "The rates a procurement split was chosen with.",
    "CatalogPrices": (
        "A GPU's prices and power as written to the catalog, per whole card; each null when not known. "
        "on_demand_usd_per_hour and price_date are the GPU's hourly_price_usd and price_date (give either name, or "
        "both the same)."
    ),
    "GpuPrices": "A GPU's prices and power per whole card, with their source and month; null where not known.",
    "Prices": "A GPU's prices and power per whole card; null where not known.",
    "PriceOverrides": (
        "Prices and power of the request's GPU per whole card, each replacing the catalog's (on_demand_usd_per_hour "
        "as price_per_gpu_hour_usd does)."
    ),
    "CatalogKernelEfficiency": "One GPU generation's share of the datasheet peaks, as written to the catalog.",
    "CatalogMigProfile": "One MIG slice as written to the catalog (NVIDIA's profile names).",
    "CatalogUncertainty": (
        "The uncertainty ranges as written to the catalog; an omitted field keeps the stated default."
    ),
    "Speculative": (
        "Speculative decoding (GET: dotted, `speculative.method=eagle`): a drafter proposes k tokens and the model "
        "verifies them in one step. Every planning endpoint holds the drafter's weights and KV; /v1/throughput's "
        "continuous-batching steady state, and the queueing model and simulator of /v1/latency, /v1/batch, "
        "/v1/fleet and /v1/autoscaling/simulate, run the speculative step. `auto` (/v1/fleet only) ranks every "
        "shape with and without it. Off unless given."
    ),
    "SpeculationSettings": "The speculative decoding planned: the drafter, its tokens and what a step finishes.",
    "SpeculationPlanned": (
        "Speculative decoding as an answer under random arrivals plans it: the settings and the tokens a "
        "verification step finishes. Its time per token varies with the running batch: see the rates' tpot_ms."
    ),
    "SpeculativeStep": (
        "Speculative decoding at `concurrency`, at the steady state's context (prompt + output / 2): what a "
        "verification step finishes and costs against the plain decode step. Null without `speculative`."
    ),
    "ContinuousBatching": (
        "Steady state of a continuously batched replica at this concurrency (chunked prefill mixed into decode "
        "steps under max_batched_tokens). Under engine=ideal queueing is excluded; under an engine TTFT holds the "
        "step in flight and the wait behind the other requests' prefills, and a request's TPOT carries the prefill "
        "chunks of the other B - 1."
    ),
    "CostRequest": (
        "Inputs of /v1/cost: a price (`price_per_gpu_hour_usd`, or a `gpu` with a catalog price) and tokens/s "
        "(`tokens_per_s`, or `model` and `gpu` to derive it with the /v1/throughput fields, which are all "
        "accepted). Without either price answers 422 on price_per_gpu_hour_usd; `model` without `gpu` answers 422 "
        "on gpu."
    ),
    "CostResponse": "What the GPUs cost per hour and month, and per million output tokens.",
    "Engine": (
        "A serving engine's profile: how it sizes its KV cache, what it reserves, its default "
        "settings, its per-step overheads and its kernel efficiencies per GPU generation. Memory in GiB (2^30 "
        "bytes) per GPU."
    ),
    "EngineCreate": "POST /v1/engines: a whole engine profile, name included.",
    "EngineDocument": (
        "The writable fields of a catalog engine profile (the fields of EngineProfile, its `version` as "
        "`engine_version`). Omitted constants are 0, omitted large-GPU defaults null, an omitted uncertainty the "
        "stated default ranges; the `_large_gpu` defaults need large_gpu_gib."
    ),
    "EngineList": "One page of the engine profiles, by name.",
    "EnginePatch": (
        "PATCH /v1/engines/{name}: a JSON merge patch (RFC 7396) of the fields to change; uncertainty merges key by "
        "key, efficiencies (a list) is replaced whole. The merged profile is checked as a whole."
    ),
    "EngineReplace": (
        "PUT /v1/engines/{name}: a whole engine profile (the name is the URL's; `name` and `version` are "
        "read-only). Omitted constants take their defaults."
    ),
    "EngineUncertainty": "The p10 and p90 of measured / predicted on the training rows, per metric.",
    "FitRequest": "Inputs of /v1/fit.",
    "FitResponse": (
        "Whether the weights and the KV cache of `concurrency` sequences fit on one replica, and for how many "
        "sequences they would."
    ),
    "FleetAutoscaling": "What a KEDA/HPA policy needs.",
    "FleetTrigger": "One autoscaling trigger of the engine, its threshold derived from the SLO and the queueing model.",
    "FleetOption": "One configuration of the ranking: sized when it could be, with why it ranks where it does.",
    "FleetPeriod": "The fleet for one forecast period, with the same replica (disaggregated: both pools' sums).",
    "FleetPool": "One pool of a disaggregated plan: its replica, its size and cost, its ranked options.",
    "FleetMix": "A mixed fleet: the replica kinds chosen, the buckets each serves, and the best single kind.",
    "FleetUncertainty": "The fleet at the low and high end of the replica throughput's spread.",
    "MixBucket": "One length bucket of a mixed fleet's workload.",
    "MixPool": "One replica kind of a mixed fleet: its replicas, cost and the buckets it serves.",
    "MixPoolBucket": "The part of one bucket a mixed fleet's pool serves.",
    "MixSingleKind": "One replica kind serving the whole workload alone, for comparison.",
    "MixSingleKindPlan": "The best single replica kind serving the whole workload alone, with its capacities.",
    "MixPeriod": "A mixed fleet in one forecast period.",
    "FleetKvTransfer": "Moving one request's prompt KV cache from a prefill replica to a decode replica.",
    "FleetAggregated": "The aggregated plan beside a disaggregated one, for comparison.",
    "FleetReplica": "One replica of the fleet: its GPUs, its capacity under the SLOs and its planned load.",
    "FleetRequest": (
        "Inputs of /v1/fleet: the replica's knobs (those of /v1/throughput except concurrency, sweep and "
        "kv_read_context: the concurrency is the largest that meets the SLOs) and the traffic (exactly one of "
        "requests_per_day and requests_per_second, or a forecast)."
    ),
    "FleetResponse": (
        "Replicas and GPUs for the traffic, with N+1 or zone redundancy, MIG packing, cost and autoscaling numbers. "
        "When `gpu` is omitted, the best ranked option is described and `options` lists the ranking; when no option "
        "could be sized at all, only model, status, meets_slo, basis, calibration, options and options_total are "
        "present."
    ),
    "ForecastPeriod": "Traffic in one period of a forecast.",
    "LengthBucket": "One bucket of a mixed fleet's length histogram: its prompt and output tokens and its share.",
    "Gpu": "A GPU of the catalog: datasheet figures, null where not known (never guessed).",
    "GpuCreate": "POST /v1/gpus: a whole GPU with its MIG profiles, slug included.",
    "GpuDocument": (
        "The writable fields of a catalog GPU. Unknown figures are null (never guessed); MIG profiles are nested "
        "and replaced as a whole list; an hourly price needs its price_date."
    ),
    "GpuList": "One page of the matching GPUs, by slug.",
    "GpuPatch": (
        "PATCH /v1/gpus/{slug}: a JSON merge patch; peak_tflops and interconnect merge key by key, mig_profiles (a "
        "list) is replaced whole."
    ),
    "GpuReplace": ("PUT /v1/gpus/{slug}: a whole GPU (the slug is the URL's); mig_profiles replaces the stored list."),
    "Health": "The process is up.",
    "ImportDerivation": "How the model was derived.",
    "ImportRequest": (
        "A Hugging Face config.json to derive a model from (families llama, mistral, mixtral, qwen2, qwen2_moe, "
        "qwen3, qwen3_moe, deepseek_v3, gpt_oss, gemma3, phi3), optionally with its safetensors header(s) for the "
        "exact parameter count. No weights are ever read."
    ),
    "ImportResult": "The imported (or, with dry_run, derived) model and how it was derived.",
    "InlineGpu": (
        "A GPU given inline: the catalog's GPU fields. Only memory_gb is required for /v1/fit; /v1/throughput also "
        "needs memory_bandwidth_tb_per_s and a peak, and the interconnect when tensor_parallel > 1."
    ),
    "InlineModel": (
        "A model given inline: the catalog's model fields. Only params_total, layers, hidden_size, attention_heads "
        "and kv_heads are required; MLA needs kv_lora_rank and qk_rope_head_dim, MoE needs experts, "
        "experts_per_token and expert_params together."
    ),
    "Interconnect": "The GPU-to-GPU link within a node; null fields where unknown.",
    "KernelEfficiency": "One GPU generation's share of the datasheet peaks.",
    "MigProfile": "A MIG profile: one kind of slice a card can be split into.",
    "Model": "A model of the catalog: its architecture as published in its config.",
    "ModelCreate": "POST /v1/models: a whole model, slug included.",
    "ModelDocument": (
        "The writable fields of a catalog model, with the ranges and checks writes apply: heads divisible by "
        "kv_heads (unless mla); mha means kv_heads = attention_heads, gqa fewer; kv_lora_rank and qk_rope_head_dim "
        "only and both with mla; experts, experts_per_token and expert_params together (experts_per_token <= "
        "experts), shared_experts and moe_intermediate_size only with experts; params_active <= params_total; "
        "sliding_window_layers <= layers and at least 1 with a window."
    ),
    "ModelList": "One page of the matching models, by slug.",
    "ModelPatch": (
        "PATCH /v1/models/{slug}: a JSON merge patch (RFC 7396) of the fields to change; null sets a field to null. "
        "The merged model is checked as a whole."
    ),
    "ModelPreview": (
        "A derived model not stored (dry_run): the catalog's model fields, slug null when none was given, version null."
    ),
    "ModelReplace": (
        "PUT /v1/models/{slug}: a whole model (the slug is the URL's; `slug` and `version` are read-only). Omitted "
        "optional fields become null."
    ),
    "ParamBreakdown": "Where the config-derived parameters sit, count each.",
    "PeakTflops": (
        "Dense (not 2:4 sparse) peak compute of one GPU per precision, TFLOP/s (int8: TOPS); null where unknown."
    ),
    "PlanCalibration": (
        "The stored calibration a planning answer used (GET /v1/calibrations/{calibration_id} has the rest)."
    ),
    "Problem": "An RFC 9457 problem detail; every 4xx and 5xx answer is one (application/problem+json).",
    "Ready": "Database reachable, schema at the migrations' head, catalog loaded.",
    "RooflineRequest": (
        "Inputs of /v1/roofline: one GEMM C[M,N] = A[M,K] × B[K,N], on a GPU (`gpu`) or on a given `peak_tflops` "
        "and `memory_bandwidth_tb_per_s` (both required without a gpu; given ones override the GPU's)."
    ),
    "RooflineResponse": (
        "One GEMM C[M,N] = A[M,K] × B[K,N] on the roofline: each matrix moved once between memory and the chip, at "
        "the datasheet peak and bandwidth (no efficiencies): an optimistic lower bound on time."
    ),
    "SafetensorsSummary": "Exact counts from the safetensors header(s).",
    "SweepRow": "Timing at one concurrency of `sweep`.",
    "ThroughputRequest": "Inputs of /v1/throughput: those of /v1/fit and the timing knobs.",
    "BatchRequest": (
        "Inputs of /v1/batch: one replica's knobs (those of /v1/throughput except concurrency, sweep and "
        "kv_read_context: every request is queued at once and each decode reads its own context), the mean lengths "
        "and their spread, how many requests, and the seed."
    ),
    "TraceProfile": (
        "The workload of a request log: its rate, peak hour, burstiness, length distributions, hourly periods, "
        "length buckets, prefix-cache hit rate, and a ready /v1/fleet body."
    ),
    "TraceLengths": "One length's distribution over the log's requests.",
    "TracePeriod": "One UTC hour of the log, usable as a /v1/fleet forecast period.",
    "BatchResponse": (
        "An offline batch on one replica, simulated to its last completion: the makespan, the throughput over it, "
        "the requests' TTFT and completion times from the start, preemptions and the job's cost, with the fit "
        "and engine settings it ran with."
    ),
    "ThroughputResponse": (
        "Everything /v1/fit answers, plus decode and prefill timing at `concurrency`, what bounds them, the cost "
        "per token, the continuous-batching steady state and one row per sweep concurrency. Roofline estimates: "
        "optimistic lower bounds on time, upper bounds on tokens/s."
    ),
}

# GET parameters whose text is not their field's: the slug forms of model and gpu, the
# list filters (by parameter component name), and dotted inline names that add a GET rule.
QUERY: dict[str, str] = {
    "model": (
        "Catalog slug of the model. Required on /v1/fit, /v1/throughput and /v1/fleet unless the model is given "
        "inline with `model.*` parameters; optional on /v1/cost (to derive tokens_per_s). Not together with "
        "`model.*` parameters."
    ),
    "gpu": (
        "Catalog slug of the GPU. Required on /v1/fit and /v1/throughput unless the GPU is given inline with `gpu.*` "
        "parameters; on /v1/cost it supplies the price when price_per_gpu_hour_usd is not given; on /v1/roofline "
        "the peak and bandwidth not given; on /v1/fleet omit it to rank every catalog GPU and MIG profile. Not "
        "together with `gpu.*` parameters."
    ),
    "model.quantized_components": (
        "Components the checkpoint's own format quantizes (attention, dense_mlp, experts, embeddings, lm_head). "
        "Default: the format's convention. On GET: comma-separated."
    ),
    "gpu.memory_visible_gib": (
        "What the driver shows an engine on one GPU, GiB (2^30 bytes). Default: derived from memory_gb by the "
        "architecture's memory kind and ECC."
    ),
    "family": "Only models of this family (exact, e.g. `qwen3_moe`).",
    "attention": "Only models with this attention kind.",
    "moe": "`true`: only mixture-of-experts models; `false`: only dense ones.",
    "min_params": "Only models with at least this many parameters (params_total), count.",
    "max_params": "Only models with at most this many parameters (params_total), count; not below min_params.",
    "vendor": "Only GPUs of this vendor.",
    "min_memory_gb": "Only GPUs with at least this much memory, GB.",
    "has_mig": "`true`: only GPUs with MIG profiles; `false`: only those without.",
    "list_limit": "Items per page, count.",
    "list_offset": "Matching items to skip before the page, count.",
    "calibration_model": "Only calibrations of this model (catalog slug).",
    "trace_log_format": "How to read the body: `csv` or `jsonl` (JSON lines). Default: from the Content-Type, "
    "else from the body's first character (`{`: JSON lines).",
    "trace_model": "The model fleet_request plans (a catalog slug or Hugging Face repository id). Default: the "
    "log's `model` column (its busiest model when it names several).",
    "trace_gpu": "The GPU fleet_request plans on (a catalog slug). Default: none, so /v1/fleet ranks the catalog.",
    "calibration_gpu": "Only calibrations on this GPU (catalog slug).",
}


# The document's introduction (info.description), as Swagger UI shows it first.
INFO = """\
How many GPUs to serve a large language model, how fast they answer, and what a token costs.

Every planning request names an `engine`. The default, `vllm` (and `sglang`, `trtllm`), is a profile
of that engine's memory rule, reservations and step overheads fitted on measured serving rows (`GET
/v1/engines`), and its answers carry the measured spread as `uncertainty`; what it still leaves out:
queueing under random arrivals, prefix-cache hits and speculative decoding not given, and
software-version differences. **`engine=ideal` is the seeds' roofline arithmetic from datasheet
numbers: an optimistic lower bound** on time per token, time to first token and GPU count (an upper
bound on tokens/s), which leaves out scheduler and kernel-launch overhead, sampling,
activations beyond reserved_gb, queueing, paged-attention savings, prefix-cache hits not given,
speculative decoding not given. `memory_efficiency` and `compute_efficiency` are where measurements come in:
replace them with measured figures (or give fleet a measured `per_replica_tokens_per_s`), or store
benchmark points and engine start-up logs with `POST /v1/calibrations`: planning answers for that
catalog model on that catalog GPU then use the fitted values, and every planning answer says in
`basis` (`datasheet`, `calibrated`, `calibrated-nearest`, `measured`) and `calibration` what its
figures rest on.

JSON has no Infinity: a computed figure that is unbounded (a cost per token with no tokens, a time
at a vanishing rate) is null, which is why computed numbers are typed `[number, "null"]`.

Conventions:

- Field names are snake_case and carry their unit: `_bytes`, `_gb` (10^9 bytes), `_ms`, `_s`, `_us`,
  `_per_s`, `_usd`.
- Every planning endpoint (`/v1/fit`, `/v1/throughput`, `/v1/fleet`, `/v1/cost`, `/v1/roofline`)
  takes POST with a JSON body and GET with the same fields as query parameters, so that a
  spreadsheet cell (`IMPORTDATA`) or a dashboard URL can call it.
- `?format=csv` or `Accept: text/csv` returns CSV (UTF-8, a header row, a stable column order) for
  every planning answer and every catalog answer.
- `model` and `gpu` are catalog slugs or inline objects with the catalog's fields, for models and
  hardware not yet listed.
- Errors are RFC 9457 `application/problem+json`, with `errors: {field: [messages]}` naming the
  fields at fault: 400 unparsable body, 404 unknown model or GPU, 413 body too large, 415 body not
  JSON, 422 invalid values.
- Catalog writes (POST, PUT, PATCH, DELETE on `/v1/models` and `/v1/gpus`, and
  `POST /v1/models/import`) need `Authorization: Bearer <token>`: 401 without a valid one, 403
  when the service has no API_TOKENS. GET of one model or GPU sends an `ETag` (its version);
  PUT, PATCH and DELETE need it back in `If-Match`: 428 without, 412 when stale (the row is left
  unchanged). A taken slug is 409. `POST` and `DELETE` on `/v1/calibrations` need the token too.
- Every answer carries an `X-Request-ID` header: the caller's own id when it is a safe token (1 to 128 letters,
  digits, `.`, `_`, `-`), else a generated one. The same id is in every log line of the request and, as
  `request_id`, in every problem+json body. `/metrics` serves Prometheus metrics.
"""

TAGS: dict[str, str] = {
    "planning": "Fit, throughput, fleet, cost and roofline estimates.",
    "catalog": "Models and GPUs: read by anyone; written (and imported from Hugging Face configs) with a bearer token.",
    "calibration": (
        "Measured benchmark points and engine start-up logs, fitted to efficiencies and a memory overhead that "
        "planning then uses (`basis: calibrated`): read by anyone, written with a bearer token."
    ),
    "operations": "Probes for load balancers and Kubernetes.",
    "lab": "The interactive inference lab and the fleet planner, pages over the planning endpoints.",
    "documentation": "This document, and Swagger UI over it.",
}
