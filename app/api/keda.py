"""format=keda: a plan's ScaledObject (app/planning/answers.py) as the document KEDA's
ScaledObject CRD (keda.sh/v1alpha1) reads, in the CRD's key names and order."""

from __future__ import annotations

from typing import Any

import yaml

from app.planning.answers import ScaledObject, ScalingTrigger

API_VERSION = "keda.sh/v1alpha1"
MANAGED_BY = "fleet-sizer"


def _trigger(trigger: ScalingTrigger) -> dict[str, Any]:
    return {
        "type": "prometheus",
        "name": trigger.name,
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": trigger.server_address,
            "query": trigger.query,
            "threshold": trigger.threshold,
            # KEDA's trigger metadata is a map of strings.
            "ignoreNullValues": "true" if trigger.ignore_null_values else "false",
        },
    }


def document(scaled: ScaledObject) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": scaled.deployment},
        "pollingInterval": scaled.polling_interval_s,
        "minReplicaCount": scaled.min_replicas,
        "maxReplicaCount": scaled.max_replicas,
    }
    if scaled.cooldown_period_s is not None:
        spec["cooldownPeriod"] = scaled.cooldown_period_s
    spec["fallback"] = {"failureThreshold": scaled.fallback_failures, "replicas": scaled.fallback_replicas}
    spec["advanced"] = {
        "horizontalPodAutoscalerConfig": {
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": scaled.scale_down_window_s,
                    "policies": [
                        {"type": "Pods", "value": scaled.scale_down_pods, "periodSeconds": scaled.scale_down_period_s}
                    ],
                },
                "scaleUp": {"stabilizationWindowSeconds": 0},
            }
        }
    }
    spec["triggers"] = [_trigger(t) for t in scaled.triggers]
    return {
        "apiVersion": API_VERSION,
        "kind": "ScaledObject",
        "metadata": {"name": scaled.name, "labels": {"app.kubernetes.io/managed-by": MANAGED_BY}},
        "spec": spec,
    }


def dump(scaled: ScaledObject) -> str:
    """The ScaledObject as YAML, keys in the CRD's order."""
    return yaml.safe_dump(document(scaled), sort_keys=False)
