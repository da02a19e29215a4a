"""deploy/kubernetes against Kubernetes' own OpenAPI-derived JSON schemas (bundled in the
kubernetes-validate wheel and read from disk: no cluster, no network), strict mode so an
unknown or misspelt field fails; the ServiceMonitor (a CRD those schemas do not hold) against
the part of prometheus-operator's CRD schema it uses. Then the wiring no schema can see:
probes on the app's real routes and gunicorn's real port, selectors that select, writable
directories that exist under a read-only root, and the migration Job on the app's image."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from .helpers import KUBERNETES_DIR, final_stage, get_routes, gunicorn_settings, image_env, instructions

# The oldest Kubernetes release the manifests promise to work on, and the newest schemas bundled.
KUBERNETES_VERSIONS = ["1.30.0", kubernetes_validate.latest_version()]


def load_kustomization() -> dict[str, Any]:
    with (KUBERNETES_DIR / "kustomization.yaml").open(encoding="utf-8") as handle:
        document: dict[str, Any] = yaml.safe_load(handle)
    return document


def load_resources() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name in load_kustomization()["resources"]:
        with (KUBERNETES_DIR / name).open(encoding="utf-8") as handle:
            found.extend((name, doc) for doc in yaml.safe_load_all(handle) if doc)
    return found


RESOURCES = load_resources()


def one(kind: str, component: str | None = None) -> dict[str, Any]:
    matches = [
        doc
        for _, doc in RESOURCES
        if doc["kind"] == kind
        and (component is None or doc["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component)
    ]
    assert len(matches) == 1, f"expected one {kind} {component or ''}, found {len(matches)}"
    return matches[0]


DEPLOYMENT = one("Deployment")
JOB = one("Job")
SERVICE = one("Service")
POD = DEPLOYMENT["spec"]["template"]["spec"]
(CONTAINER,) = POD["containers"]


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


# --- schemas -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize(
    ("filename", "resource"),
    [(name, doc) for name, doc in RESOURCES if doc["apiVersion"] != "monitoring.coreos.com/v1"],
    ids=lambda value: value if isinstance(value, str) else value["kind"],
)
def test_manifest_matches_the_kubernetes_schema(filename: str, resource: dict[str, Any], version: str) -> None:
    try:
        kubernetes_validate.validate(resource, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        pytest.fail(f"{filename}: {'/'.join(map(str, error.path))}: {error.message} (Kubernetes {version})")


def test_the_schemas_are_strict() -> None:
    """A misspelt field is refused, so passing above means something."""
    broken = yaml.safe_load(yaml.safe_dump(DEPLOYMENT))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["livenesProbes"] = container.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[-1], strict=True)


# The fields of prometheus-operator's ServiceMonitor CRD (monitoring.coreos.com/v1) that a
# manifest here may use, with the CRD's own types and Duration pattern; anything else is refused.
DURATION = {
    "type": "string",
    "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
SERVICE_MONITOR_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63},
                "labels": STRING_MAP,
                "annotations": STRING_MAP,
            },
        },
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "jobLabel": {"type": "string"},
                "selector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"matchLabels": STRING_MAP, "matchExpressions": {"type": "array"}},
                },
                "namespaceSelector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"any": {"type": "boolean"}, "matchNames": {"type": "array"}},
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
                            "interval": DURATION,
                            "scrapeTimeout": DURATION,
                            "honorLabels": {"type": "boolean"},
                            "relabelings": {"type": "array"},
                            "metricRelabelings": {"type": "array"},
                        },
                    },
                },
            },
        },
    },
}


def test_service_monitor_matches_the_crd_fields_it_uses() -> None:
    monitor = one("ServiceMonitor")
    errors = [e.message for e in Draft202012Validator(SERVICE_MONITOR_SCHEMA).iter_errors(monitor)]
    assert errors == []
    for endpoint in monitor["spec"]["endpoints"]:
        assert seconds(endpoint["scrapeTimeout"]) <= seconds(endpoint["interval"]), "Prometheus refuses it otherwise"


# The fields of KEDA's ScaledObject CRD (keda.sh/v1alpha1, config/crd/bases/keda.sh_scaledobjects.yaml
# of KEDA 2.x) that a generated policy may use, with the CRD's types (int32 counts, string trigger
# metadata, HPA behavior's bounds); anything else is refused.
INT32 = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
HPA_POLICY = {
    "type": "object",
    "required": ["type", "value", "periodSeconds"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["Pods", "Percent"]},
        "value": {"type": "integer", "minimum": 1},
        "periodSeconds": {"type": "integer", "minimum": 1, "maximum": 1800},
    },
}
HPA_RULES = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "stabilizationWindowSeconds": {"type": "integer", "minimum": 0, "maximum": 3600},
        "selectPolicy": {"enum": ["Max", "Min", "Disabled"]},
        "policies": {"type": "array", "minItems": 1, "items": HPA_POLICY},
    },
}
SCALED_OBJECT_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": SERVICE_MONITOR_SCHEMA["properties"]["metadata"],  # type: ignore[index]
        "spec": {
            "type": "object",
            "required": ["scaleTargetRef", "triggers"],
            "additionalProperties": False,
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": False,
                    "properties": {
                        n: {"type": "string"} for n in ("name", "kind", "apiVersion", "envSourceContainerName")
                    },
                },
                "pollingInterval": INT32,
                "cooldownPeriod": INT32,
                "initialCooldownPeriod": INT32,
                "idleReplicaCount": INT32,
                "minReplicaCount": INT32,
                "maxReplicaCount": INT32,
                "fallback": {
                    "type": "object",
                    "required": ["failureThreshold", "replicas"],
                    "additionalProperties": False,
                    "properties": {"failureThreshold": INT32, "replicas": INT32},
                },
                "advanced": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "horizontalPodAutoscalerConfig": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "name": {"type": "string"},
                                "behavior": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "properties": {"scaleUp": HPA_RULES, "scaleDown": HPA_RULES},
                                },
                            },
                        },
                    },
                },
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["type", "metadata"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"type": "string"},
                            "name": {"type": "string"},
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "useCachedMetrics": {"type": "boolean"},
                            "metadata": STRING_MAP,
                        },
                    },
                },
            },
        },
    },
}
# What KEDA's Prometheus scaler reads from a trigger's metadata.
PROMETHEUS_METADATA = {
    "type": "object",
    "required": ["serverAddress", "query", "threshold"],
    "additionalProperties": False,
    "properties": {
        "serverAddress": {"type": "string", "pattern": "^https?://"},
        "query": {"type": "string"},
        "threshold": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)?$"},
        "activationThreshold": {"type": "string"},
        "ignoreNullValues": {"enum": ["true", "false"]},
    },
}
ENGINE_GAUGES = json.loads((Path(__file__).parents[1] / "fixtures" / "engine_metrics.json").read_text(encoding="utf-8"))
KEDA_PLAN = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "requests_per_day": 2_000_000,
    "peak_to_average": 3,
    "prompt_tokens": 1000,
    "output_tokens": 300,
    "ttft_slo_ms": 500,
    "tpot_slo_ms": 50,
}


def keda_policy(client: FlaskClient, **extra: Any) -> dict[str, Any]:
    response = client.get("/v1/fleet", query_string={**KEDA_PLAN, **extra, "format": "keda"})
    assert response.status_code == 200, response.get_data(as_text=True)
    document: dict[str, Any] = yaml.safe_load(response.get_data(as_text=True))
    return document


def test_the_scaled_object_schema_is_strict() -> None:
    """A misspelt field is refused, so passing below means something."""
    assert list(Draft202012Validator(SCALED_OBJECT_SCHEMA).iter_errors({"apiVersion": "keda.sh/v1alpha1"}))
    broken = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "x"}}
    broken["spec"] = {"scaleTargetRef": {"name": "x"}, "triggers": [{"type": "prometheus", "metadata": {}}]}
    assert not list(Draft202012Validator(SCALED_OBJECT_SCHEMA).iter_errors(broken))
    broken["spec"]["cooldownPeriods"] = 300
    assert list(Draft202012Validator(SCALED_OBJECT_SCHEMA).iter_errors(broken))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_a_keda_policy_matches_the_crd_and_names_only_its_engines_metrics(client: FlaskClient, engine: str) -> None:
    policy = keda_policy(client, engine=engine, served_model_name="llama-8b-instruct")
    assert [e.message for e in Draft202012Validator(SCALED_OBJECT_SCHEMA).iter_errors(policy)] == []
    spec = policy["spec"]
    exported = set(ENGINE_GAUGES[engine]["gauges"])
    named = set()
    for trigger in spec["triggers"]:
        metadata = trigger["metadata"]
        assert [e.message for e in Draft202012Validator(PROMETHEUS_METADATA).iter_errors(metadata)] == []
        gauges = re.findall(r"([a-z_:]+)\{model_name=\"llama-8b-instruct\"\}", metadata["query"])
        assert gauges and metadata["query"].count("{") == len(gauges)  # every gauge filtered on the served name
        named.update(gauges)
    assert named and named <= exported
    # A missing metric is an error, which holds the peak fleet, not a zero that shrinks it.
    assert {t["metadata"]["ignoreNullValues"] for t in spec["triggers"]} == {"false"}
    assert spec["fallback"]["replicas"] == spec["maxReplicaCount"]
    # The scale-in delay that acts above zero is HPA's window; KEDA's cooldownPeriod is left out.
    assert "cooldownPeriod" not in spec and spec["minReplicaCount"] >= 1
    assert (
        spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= 300
    )


def test_scale_to_zero_sets_min_replicas_0_with_a_cooldown(client: FlaskClient) -> None:
    held = keda_policy(client)["spec"]
    spec = keda_policy(client, scale_to_zero="true")["spec"]
    assert [e.message for e in Draft202012Validator(SCALED_OBJECT_SCHEMA["properties"]["spec"]).iter_errors(spec)] == []  # type: ignore[index]
    assert spec["minReplicaCount"] == 0 and held["minReplicaCount"] > 0
    window = held["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"]
    assert spec["cooldownPeriod"] == window
    # At zero no pod exports anything: an empty result is zero load there.
    assert {t["metadata"]["ignoreNullValues"] for t in spec["triggers"]} == {"true"}


def seconds(duration: str) -> int:
    units = {"h": 3600, "m": 60, "s": 1}
    assert duration[-1] in units and duration[:-1].isdigit(), duration
    return int(duration[:-1]) * units[duration[-1]]


def test_kustomization_lists_every_manifest_once_and_names_the_image() -> None:
    kustomization = load_kustomization()
    listed = kustomization["resources"]
    on_disk = sorted(p.name for p in KUBERNETES_DIR.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)
    namespace = one("Namespace")["metadata"]["name"]
    assert kustomization["namespace"] == namespace
    for _, doc in RESOURCES:
        assert "namespace" not in doc["metadata"], "kustomize sets the namespace"
    kinds = {doc["kind"] for _, doc in RESOURCES}
    assert {"Deployment", "Service", "Job", "HorizontalPodAutoscaler", "ServiceMonitor"} <= kinds
    (image,) = kustomization["images"]
    for container in POD["containers"] + JOB["spec"]["template"]["spec"]["containers"]:
        assert container["image"] == image["name"]


# --- wiring ------------------------------------------------------------------------------------


def named_port(name_or_number: str | int) -> int:
    if isinstance(name_or_number, int):
        return name_or_number
    (port,) = [p["containerPort"] for p in CONTAINER["ports"] if p["name"] == name_or_number]
    return int(port)


def test_probes_hit_the_apps_routes_on_gunicorns_port(app: Flask) -> None:
    routes = get_routes(app)
    probes = {kind: CONTAINER[kind]["httpGet"] for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes["livenessProbe"]["path"] == "/livez"
    assert probes["readinessProbe"]["path"] == "/readyz"
    assert probes["startupProbe"]["path"] in {"/livez", "/healthz"}, "starting up is being alive, not ready"
    env = env_of(CONTAINER)
    bind = gunicorn_settings({"BIND_HOST": env["BIND_HOST"]["value"], "PORT": env["PORT"]["value"]})["bind"]
    for kind, probe in probes.items():
        assert probe["path"] in routes, f"{kind}: {probe['path']} is not a route"
        assert bind == f"0.0.0.0:{named_port(probe['port'])}", f"{kind} port"


def test_liveness_gives_startup_room_and_readiness_reacts_first() -> None:
    startup, liveness = CONTAINER["startupProbe"], CONTAINER["livenessProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30
    readiness = CONTAINER["readinessProbe"]
    assert (
        readiness["periodSeconds"] * readiness["failureThreshold"]
        < liveness["periodSeconds"] * liveness["failureThreshold"]
    )


def test_service_and_monitor_select_the_pods_on_the_http_port(app: Flask) -> None:
    pod_labels = DEPLOYMENT["spec"]["template"]["metadata"]["labels"]
    assert DEPLOYMENT["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert SERVICE["spec"]["selector"].items() <= pod_labels.items()
    (service_port,) = SERVICE["spec"]["ports"]
    assert named_port(service_port["targetPort"]) == int(env_of(CONTAINER)["PORT"]["value"])
    monitor = one("ServiceMonitor")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= SERVICE["metadata"]["labels"].items()
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] == service_port["name"]
        assert endpoint["path"] == "/metrics" and "/metrics" in get_routes(app)
    assert one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()


def test_hpa_scales_the_deployment_on_cpu_against_its_request() -> None:
    hpa = one("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", DEPLOYMENT["metadata"]["name"])
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["type"] == "Utilization"
    assert "cpu" in CONTAINER["resources"]["requests"], "utilisation is measured against the request"
    assert hpa["spec"]["minReplicas"] >= 2, "one pod down is not an outage"


def test_resources_are_bounded() -> None:
    for container in POD["containers"] + JOB["spec"]["template"]["spec"]["containers"]:
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and {"cpu", "memory"} <= set(resources["limits"])


def test_workers_fit_the_cpu_request() -> None:
    workers = int(env_of(CONTAINER)["WEB_CONCURRENCY"]["value"])
    assert workers == gunicorn_settings({"WEB_CONCURRENCY": str(workers)})["workers"]
    cpu = CONTAINER["resources"]["requests"]["cpu"]
    cores = float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    assert workers <= max(1, 2 * cores), "workers (one app thread each) beyond the CPU only queue"


def mounts(pod: dict[str, Any], container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Mount path -> the volume mounted there."""
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    return {mount["mountPath"]: volumes[mount["name"]] for mount in container.get("volumeMounts", [])}


def test_read_only_root_with_every_writable_directory_in_memory() -> None:
    env = env_of(CONTAINER)
    writable = {
        env["PROMETHEUS_MULTIPROC_DIR"]["value"],
        gunicorn_settings({})["worker_tmp_dir"],
        "/tmp",
    }
    mounted = mounts(POD, CONTAINER)
    for path in writable:
        assert path in mounted, f"{path} must be writable: mount an emptyDir"
        assert mounted[path]["emptyDir"].get("medium") == "Memory", path
    assert env["PROMETHEUS_MULTIPROC_DIR"]["value"] == image_env()["PROMETHEUS_MULTIPROC_DIR"]


def test_pods_meet_the_restricted_pod_security_standard() -> None:
    """What the Namespace's `pod-security.kubernetes.io/enforce: restricted` label demands."""
    assert one("Namespace")["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    image_uid = int(instructions(final_stage(), "USER")[-1].value[0].split(":")[0])
    for pod in (POD, JOB["spec"]["template"]["spec"]):
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True
        assert context["runAsUser"] == image_uid, "the image's USER"
        assert context["seccompProfile"]["type"] == "RuntimeDefault"
        assert pod["automountServiceAccountToken"] is False
        for volume in pod.get("volumes", []):
            assert set(volume) - {"name"} <= {"emptyDir", "configMap", "secret", "projected"}, volume
        for container in pod["containers"]:
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["readOnlyRootFilesystem"] is True
            assert security["capabilities"]["drop"] == ["ALL"]
            assert "add" not in security["capabilities"]


def test_database_url_and_tokens_come_from_secrets() -> None:
    for container in (CONTAINER, JOB["spec"]["template"]["spec"]["containers"][0]):
        database = env_of(container)["DATABASE_URL"]
        assert "value" not in database and database["valueFrom"]["secretKeyRef"]["name"]
    tokens = env_of(CONTAINER)["API_TOKENS"]
    assert "value" not in tokens and tokens["valueFrom"]["secretKeyRef"]["name"]


def test_shutdown_outlasts_gunicorns_graceful_timeout() -> None:
    graceful_s = gunicorn_settings({})["graceful_timeout"]
    pre_stop = CONTAINER["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    assert POD["terminationGracePeriodSeconds"] > graceful_s + int(pre_stop[1])
    rollout = DEPLOYMENT["spec"]["strategy"]["rollingUpdate"]
    assert rollout["maxUnavailable"] == 0, "a rollout never drops below the replica count"


def test_deployment_runs_the_images_gunicorn() -> None:
    assert "command" not in CONTAINER and "args" not in CONTAINER, "the image's CMD, as `make serve`"


def test_migration_job_migrates_then_seeds_with_the_app_image() -> None:
    pod = JOB["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == CONTAINER["image"]
    assert pod["restartPolicy"] in {"Never", "OnFailure"}
    command = container["command"]
    assert command[:2] == ["sh", "-c"]
    steps = [shlex.split(step) for step in command[2].split("&&")]
    assert steps == [["flask", "--app", "app", "migrate"], ["flask", "--app", "app", "seed"]]
    assert JOB["spec"]["backoffLimit"] >= 1 and JOB["spec"]["activeDeadlineSeconds"] > 0
    env = env_of(container)
    assert env["DATABASE_URL"] == env_of(CONTAINER)["DATABASE_URL"], "the same database as the app"
    mounted = mounts(pod, container)
    assert image_env()["PROMETHEUS_MULTIPROC_DIR"] in mounted, "the image's metrics directory is writable here too"
