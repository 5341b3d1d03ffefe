"""Every file in deploy/ loads, and agrees with the code: the variables against `sapsam serve
--help`, the ports, the health service names the probes ask for, the commands, the metric names
the dashboards and alerts use, the secrets they reference; docs/operations.md's tables against
the same. No container runtime is needed (none reaches a registry here: docs/operations.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from sapsam.api.metrics_endpoint import METRIC_NAMES
from sapsam.api.server import (
    AUDIT_SERVICE_NAME,
    OPERATOR_SERVICE_NAME,
    SERVICE_NAMES,
    TOURNAMENT_SERVICE_NAME,
    TRANSPARENCY_SERVICE_NAME,
)
from sapsam.api.stuck_tables_health import STUCK_HEALTH_NAME
from sapsam.cli import build_parser
from sapsam.cli.serve_environment import variable_name

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OPERATIONS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
GRPC_PORT, METRICS_PORT, HTTP_PORT = 50051, 9464, 8080
SERVING_NAMES = {
    "",
    *SERVICE_NAMES,
    AUDIT_SERVICE_NAME,
    TOURNAMENT_SERVICE_NAME,
    OPERATOR_SERVICE_NAME,
    TRANSPARENCY_SERVICE_NAME,
}
"""The health service names a serving server reports SERVING (sapsam.api.server.serve)."""
VARIABLES_WITHOUT_FLAGS = {
    "SAPSAM_SERVER_KEY",  # sapsam.keys
    "SAPSAM_SERVER_KEY_FILE",
    "SAPSAM_SERVER_NAME",
    "SAPSAM_GROUP_COMMIT",  # sapsam.store.commit_group
    "SAPSAM_BATCH_STATEMENT",
    "SAPSAM_EMBEDDED_BACKEND",  # sapsam.store.embedded
    "SAPSAM_POSTGRES_OS_USER",
}
PROMETHEUS_OWN = {"up"}


@cache
def serve_variables() -> frozenset[str]:
    """The variables `sapsam serve --help` names, as a user sees them."""
    done = subprocess.run(
        [sys.executable, "-m", "sapsam.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    return frozenset(re.findall(r"\[env\s+([A-Z_]+)\]", done.stdout))


def known_variables() -> set[str]:
    return set(serve_variables()) | VARIABLES_WITHOUT_FLAGS


def load(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return [document for document in yaml.safe_load_all(text) if document is not None]
    if path.suffix == ".json":
        return [json.loads(text)]
    return [text]


def every_deploy_file() -> list[Path]:
    return sorted(path for path in DEPLOY.rglob("*") if path.is_file())


def documents(kind: str) -> list[dict[str, Any]]:
    found = []
    for path in (DEPLOY / "kubernetes").glob("*.yaml"):
        found += [doc for doc in load(path) if isinstance(doc, dict) and doc.get("kind") == kind]
    return found


def compose() -> dict[str, Any]:
    document = load(DEPLOY / "compose.yaml")[0]
    assert isinstance(document, dict)
    return document


def port_of(listen: str) -> int:
    return int(listen.rsplit(":", 1)[1])


def container(kind: str = "Deployment") -> dict[str, Any]:
    (deployment,) = documents(kind)
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]  # type: ignore[no-any-return]


def configmap() -> dict[str, str]:
    (config,) = documents("ConfigMap")
    return config["data"]  # type: ignore[no-any-return]


def dockerfile_env() -> dict[str, str]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            found |= dict(re.findall(r"([A-Z_]+)=(\S+)", line))
    return found


# -- every file loads --------------------------------------------------------------------------


@pytest.mark.parametrize("path", every_deploy_file(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_file_loads(path: Path) -> None:
    loaded = load(path)
    assert loaded, f"{path} is empty"
    if path.suffix in (".yaml", ".yml", ".json"):
        assert all(isinstance(document, dict) for document in loaded)


def test_kubernetes_documents_are_what_kustomize_applies() -> None:
    kustomization = load(DEPLOY / "kubernetes" / "kustomization.yaml")[0]
    listed = set(kustomization["resources"])
    present = {path.name for path in (DEPLOY / "kubernetes").glob("*.yaml")}
    assert listed <= present
    # Everything but the kustomization itself and the example Secret is applied.
    assert present - listed == {"kustomization.yaml", "secret.example.yaml"}
    kinds = {doc["kind"] for name in listed for doc in load(DEPLOY / "kubernetes" / name)}
    assert kinds == {
        "ConfigMap",
        "Deployment",
        "Service",
        "Job",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }


# -- environment variables ---------------------------------------------------------------------


def test_every_serve_flag_has_a_variable_and_help_names_it() -> None:
    parser = build_parser(("sapsam.cli.serve_command",))
    serve = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    flags = {
        action.option_strings[-1]
        for action in serve._actions
        if action.option_strings and action.option_strings[-1] != "--help"
    }
    assert {variable_name(flag) for flag in flags} == serve_variables()
    assert "SAPSAM_METRICS_LISTEN" in serve_variables()


def test_the_documented_table_lists_every_variable_and_its_flag() -> None:
    section = OPERATIONS.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([A-Z_]+)` \| (`--[a-z-]+`|\(none\)) \|", section, re.MULTILINE)
    assert {name for name, _ in rows} == known_variables()
    for name, flag in rows:
        if flag == "(none)":
            assert name in VARIABLES_WITHOUT_FLAGS
        else:
            assert variable_name(flag.strip("`")) == name


def test_deploy_files_set_only_variables_sapsam_reads() -> None:
    services = compose()["services"]
    used: dict[str, set[str]] = {
        f"compose {name}": set((service.get("environment") or {}).keys())
        for name, service in services.items()
        if service.get("image", "").startswith("sapsam")
    }
    used["configmap"] = set(configmap())
    used["deployment"] = {variable["name"] for variable in container().get("env", [])}
    used["job"] = {variable["name"] for variable in container("Job").get("env", [])}
    used["Dockerfile"] = set(dockerfile_env()) - {"PYTHONUNBUFFERED"}
    for where, names in used.items():
        assert names <= known_variables(), f"{where}: {sorted(names - known_variables())}"
    assert "DATABASE_URL" in used["compose sapsam"] and "DATABASE_URL" in used["deployment"]


def test_secrets_come_from_secrets() -> None:
    """The signing key and the operator token: files of compose secrets, a Kubernetes Secret."""
    sapsam = compose()["services"]["sapsam"]
    mounted = {f"/run/secrets/{name}" for name in sapsam["secrets"]}
    environment = sapsam["environment"]
    assert environment["SAPSAM_SERVER_KEY_FILE"] in mounted
    assert environment["SAPSAM_OPERATOR_TOKEN_FILE"] in mounted
    assert set(compose()["secrets"]) >= set(sapsam["secrets"])
    (example,) = load(DEPLOY / "kubernetes" / "secret.example.yaml")
    keys = set(example["stringData"])
    for where in (container(), container("Job")):
        for variable in where.get("env", []):
            reference = variable["valueFrom"]["secretKeyRef"]
            assert reference["name"] == example["metadata"]["name"]
            assert reference["key"] in keys
    deployment_secrets = {variable["name"] for variable in container()["env"]}
    assert {"SAPSAM_SERVER_KEY", "SAPSAM_OPERATOR_TOKEN", "DATABASE_URL"} <= deployment_secrets
    assert not {"SAPSAM_SERVER_KEY", "SAPSAM_OPERATOR_TOKEN"} & set(configmap())
    (reference,) = container()["envFrom"]
    assert reference["configMapRef"]["name"] == documents("ConfigMap")[0]["metadata"]["name"]


# -- ports ---------------------------------------------------------------------------------------


def test_ports_agree() -> None:
    sapsam = compose()["services"]["sapsam"]["environment"]
    for environment in (sapsam, configmap(), dockerfile_env()):
        assert port_of(environment["SAPSAM_LISTEN"]) == GRPC_PORT
        assert port_of(environment["SAPSAM_METRICS_LISTEN"]) == METRICS_PORT
        assert port_of(environment["SAPSAM_HTTP"]) == HTTP_PORT
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(rf"^EXPOSE {GRPC_PORT} {METRICS_PORT} {HTTP_PORT}$", dockerfile, re.MULTILINE)
    assert set(compose()["services"]["sapsam"]["expose"]) == {
        str(GRPC_PORT),
        str(METRICS_PORT),
        str(HTTP_PORT),
    }
    ports = {port["name"]: port["containerPort"] for port in container()["ports"]}
    assert ports == {"grpc": GRPC_PORT, "metrics": METRICS_PORT, "http": HTTP_PORT}
    for service in documents("Service"):
        for port in service["spec"]["ports"]:
            assert ports[port["targetPort"]] == port["port"]
    rules = [rule for policy in documents("NetworkPolicy") for rule in policy["spec"]["ingress"]]
    opened = {port["port"] for rule in rules for port in rule.get("ports", [])}
    assert opened == {GRPC_PORT, METRICS_PORT, HTTP_PORT}
    envoy = load(DEPLOY / "envoy.yaml")[0]["static_resources"]
    listened = {
        listener["name"]: listener["address"]["socket_address"]["port_value"]
        for listener in envoy["listeners"]
    }
    assert listened == {"grpc": GRPC_PORT, "http": HTTP_PORT}
    assert {f"{port}:{port}" for port in listened.values()} <= set(
        compose()["services"]["envoy"]["ports"]
    )
    for cluster, port in (("sapsam", GRPC_PORT), ("sapsam_http", HTTP_PORT)):
        (found,) = [c for c in envoy["clusters"] if c["name"] == cluster]
        endpoints = found["load_assignment"]["endpoints"][0]["lb_endpoints"]
        assert {e["endpoint"]["address"]["socket_address"]["port_value"] for e in endpoints} == {
            port
        }
        assert (
            endpoints[0]["endpoint"]["address"]["socket_address"]["address"]
            in compose()["services"]
        )
    # The browsers' cluster asks each replica's /ready on the metrics port.
    (http_cluster,) = [c for c in envoy["clusters"] if c["name"] == "sapsam_http"]
    (endpoint,) = http_cluster["load_assignment"]["endpoints"][0]["lb_endpoints"]
    assert endpoint["endpoint"]["health_check_config"]["port_value"] == METRICS_PORT
    assert http_cluster["health_checks"][0]["http_health_check"]["path"] == "/ready"
    prometheus = load(DEPLOY / "monitoring" / "prometheus.yml")[0]
    (job,) = prometheus["scrape_configs"]
    assert job["dns_sd_configs"][0]["port"] == METRICS_PORT
    assert job["dns_sd_configs"][0]["names"] == ["sapsam"]


# -- health probes --------------------------------------------------------------------------------


def test_probes_ask_the_health_service_for_names_the_server_reports() -> None:
    probes = {kind: container()[kind] for kind in ("readinessProbe", "livenessProbe")}
    probes["startupProbe"] = container()["startupProbe"]
    for kind, probe in probes.items():
        assert probe["grpc"]["port"] == GRPC_PORT, kind
        assert probe["grpc"]["service"] in SERVING_NAMES, kind
        assert probe["grpc"]["service"] != STUCK_HEALTH_NAME  # an alert, never a restart
    assert probes["readinessProbe"]["grpc"]["service"] in SERVICE_NAMES
    assert probes["livenessProbe"]["grpc"]["service"] == ""
    envoy = load(DEPLOY / "envoy.yaml")[0]["static_resources"]["clusters"][0]
    (check,) = envoy["health_checks"]
    assert check["grpc_health_check"]["service_name"] in SERVING_NAMES
    healthcheck = " ".join(compose()["services"]["sapsam"]["healthcheck"]["test"])
    assert f"127.0.0.1:{GRPC_PORT}" in healthcheck and "service=''" in healthcheck
    # The pod outlives the graceful stop: preStop pause + --grace-seconds + 1 s of answers.
    (deployment,) = documents("Deployment")
    grace = float(configmap()["SAPSAM_GRACE_SECONDS"])
    pause = float(container()["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > (
        pause + grace + 1
    )


# -- commands ------------------------------------------------------------------------------------


def parses(argv: list[str]) -> bool:
    parser = build_parser()
    return bool(parser.parse_args(argv).handler)


def test_commands_are_sapsam_commands() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["sapsam"]' in dockerfile and 'CMD ["serve"]' in dockerfile
    services = compose()["services"]
    assert services["migrate"]["command"] == ["migrate"]
    assert services["sapsam"]["command"] == ["serve"]
    assert container("Job")["args"] == ["migrate"]
    assert container()["args"] == ["serve"]
    for command in (
        ["migrate"],
        ["migrate", "--sql"],
        ["serve"],
        [str(word) for word in services["monitor"]["command"]],
    ):
        assert parses(command), command
    assert "/run/secrets/server_vkeys" in services["monitor"]["command"]
    assert services["migrate"]["restart"] == "no"
    assert services["sapsam"]["depends_on"]["migrate"]["condition"] == (
        "service_completed_successfully"
    )
    assert services["sapsam"]["deploy"]["replicas"] == 3


def test_the_image_is_multi_stage_non_root_and_copies_what_the_build_needs() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert len(re.findall(r"^FROM ", dockerfile, re.MULTILINE)) == 2
    (user,) = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert user.split(":")[0] not in ("root", "0")
    copied = copied_sources(dockerfile)
    for source in copied:
        assert (ROOT / source).exists(), source
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    assert set(copied) <= allowed
    for security in (container(), container("Job")):
        assert security["securityContext"]["allowPrivilegeEscalation"] is False
    for kind in ("Deployment", "Job"):
        (document,) = documents(kind)
        assert document["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def copied_sources(dockerfile: str) -> list[str]:
    """The build context's paths the Dockerfile copies (every COPY's sources, not --from)."""
    found = []
    for line in re.findall(r"^COPY (?!--from)(.+)$", dockerfile, re.MULTILINE):
        found += [word.rstrip("/") for word in line.split()[:-1]]
    return found


def test_the_build_stage_builds_from_what_it_copies(tmp_path: Path) -> None:
    """The build stage's `pip wheel`, offline: the copied files alone make both wheels."""
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    context = tmp_path / "src"
    for source in copied_sources(dockerfile):
        target = context / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / source).is_dir():
            shutil.copytree(
                ROOT / source, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / source, target)
    (run,) = re.findall(r"^RUN python -m pip wheel .*--wheel-dir /wheels (.+)$", dockerfile, re.M)
    wheels = tmp_path / "wheels"
    offline = ["--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", *offline, "--wheel-dir", str(wheels), *run.split()],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    built = sorted(path.name.split("-")[0] for path in wheels.glob("*.whl"))
    assert built == ["sapsam", "sapsam_proto"]
    (server_wheel,) = wheels.glob("sapsam-*.whl")
    with zipfile.ZipFile(server_wheel) as wheel:
        assert any(name.startswith("sapsam/migrations/versions/v0001") for name in wheel.namelist())


# -- metrics ------------------------------------------------------------------------------------


def expressions() -> list[str]:
    found = [
        str(rule["expr"])
        for group in load(DEPLOY / "monitoring" / "alerts.yaml")[0]["groups"]
        for rule in group["rules"]
    ]
    dashboard = load(DEPLOY / "monitoring" / "grafana-dashboard.json")[0]
    found += [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    return found


def metric_names(expression: str) -> set[str]:
    names = set(re.findall(r"\b(sapsam_[a-z_]+)\b", expression))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in names}


def test_dashboards_and_alerts_name_only_metrics_the_server_exports() -> None:
    used: set[str] = set()
    for expression in expressions():
        names = metric_names(expression)
        assert names or set(re.findall(r"\b([a-z_]+)\{", expression)) <= PROMETHEUS_OWN
        assert names <= set(METRIC_NAMES), expression
        used |= names
    # The dashboard shows, or an alert watches, every metric.
    assert used == set(METRIC_NAMES)
    alerts = {
        rule["alert"]
        for group in load(DEPLOY / "monitoring" / "alerts.yaml")[0]["groups"]
        for rule in group["rules"]
    }
    assert {"SapsamStuckTables", "SapsamErrorRate", "SapsamDatabaseUnavailable"} <= alerts
    prometheus = load(DEPLOY / "monitoring" / "prometheus.yml")[0]
    assert prometheus["rule_files"] == ["/etc/prometheus/alerts.yaml"]


def test_the_documented_metrics_are_the_exported_ones() -> None:
    section = OPERATIONS.split("## Metrics", 1)[1]
    documented = set(re.findall(r"^\| `(sapsam_[a-z_]+)` \|", section, re.MULTILINE))
    assert documented == set(METRIC_NAMES)
    alert_rows = set(re.findall(r"^\| `(Sapsam[A-Za-z]+)` \|", section, re.MULTILINE))
    alerts = {
        rule["alert"]
        for group in load(DEPLOY / "monitoring" / "alerts.yaml")[0]["groups"]
        for rule in group["rules"]
    }
    assert alert_rows == alerts
