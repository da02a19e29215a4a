"""Cost: a GPU costs the same idle or saturated, so cost per token is a throughput story."""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730  # 8,760 h / 12


def cost_per_million_tokens_usd(price_per_gpu_hour_usd: float, gpus: float, tokens_per_s: float) -> float | None:
    """Dollars per 10^6 tokens: price x gpus / 3600 / tokens_per_s x 10^6 (seed 004).
    None when nothing is produced (the cost per token is unbounded)."""
    if tokens_per_s <= 0:
        return None
    return price_per_gpu_hour_usd * gpus / 3600 / tokens_per_s * 1e6


@dataclass(frozen=True)
class CostResult:
    hourly_cost_usd: float
    monthly_cost_usd: float
    cost_per_million_output_tokens_usd: float | None


def cost(
    price_per_gpu_hour_usd: float,
    gpus: float,
    tokens_per_s: float,
    hours_per_month: float = HOURS_PER_MONTH,
    utilization: float = 1.0,
) -> CostResult:
    """Rented GPUs bill every hour; `utilization` is the share of those hours spent producing
    tokens at `tokens_per_s`, so idle time raises the cost per token, not the bill."""
    hourly = price_per_gpu_hour_usd * gpus
    return CostResult(
        hourly_cost_usd=hourly,
        monthly_cost_usd=hourly * hours_per_month,
        cost_per_million_output_tokens_usd=cost_per_million_tokens_usd(
            price_per_gpu_hour_usd, gpus, tokens_per_s * utilization
        ),
    )
