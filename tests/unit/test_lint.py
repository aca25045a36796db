"""`mlcc lint`: each rule fires on what it forbids and stays quiet on what it allows."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from mlcc.lint.dockerfile import DOCKERFILE_RULES, lint_dockerfile

LABELS = (
    'LABEL org.opencontainers.image.title="t" org.opencontainers.image.version="v" '
    'org.opencontainers.image.base.name="b" io.mlcc.version="0" io.mlcc.benchmark="x" '
    'io.mlcc.variant="v" io.mlcc.arch="x86_64" io.mlcc.digest="sha256:0"\n'
)
CLEAN = (
    "ARG BASE_IMAGE=registry.access.redhat.com/ubi8/ubi:8.10\n"
    "FROM ${BASE_IMAGE}\n"
    "RUN dnf install -y cuda-cudart-10-1-10.1.243-1 gcc && dnf clean all\n"
    "RUN python -m pip install --no-cache-dir numpy==1.16.3 "
    "'git+https://github.com/NVIDIA/cocoapi.git@cdbf99a5a75c090aac82dabd2b62396a8906d4a3#subdirectory=PythonAPI'\n"
    "RUN git clone https://github.com/NVIDIA/apex.git /opt/apex "
    "&& git -C /opt/apex checkout --detach 9f64bf27802eb2d3325cf709f500e0e3275d7996\n"
    "RUN apt-get update && apt-get install -y libnccl2=2.4.8-1+cuda10.1 && rm -rf /var/lib/apt/lists/*\n"
    + LABELS
    + "USER 1001\n"
)


def _rules(text: str) -> List[str]:
    return [f.rule for f in lint_dockerfile(Path("Dockerfile"), content=text)]


def test_clean_dockerfile_has_no_findings() -> None:
    assert _rules(CLEAN) == []


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("FROM registry.access.redhat.com/ubi8/ubi\n", "DF001"),
        ("FROM registry.access.redhat.com/ubi8/ubi:latest\n", "DF001"),
        ("ARG BASE\nFROM ${BASE}\n", "DF001"),
        ("RUN yum -y update && yum clean all\n", "DF002"),
        ("RUN apt-get update && apt-get -y upgrade && rm -rf /var/lib/apt/lists/*\n", "DF002"),
        ("RUN dnf install -y gcc\n", "DF003"),
        ("RUN apt-get update && apt-get install -y gcc\n", "DF003"),
        ("RUN python -m pip install numpy==1.16.3\n", "DF003"),
        ("RUN yum install -y cuda-cudart-10-1 && yum clean all\n", "DF004"),
        ("RUN apt-get install -y libnccl2 && rm -rf /var/lib/apt/lists/*\n", "DF004"),
        ("RUN pip install --no-cache-dir numpy\n", "DF005"),
        ("RUN pip install --no-cache-dir 'numpy>=1.16'\n", "DF005"),
        ("RUN pip install --no-cache-dir git+https://github.com/NVIDIA/apex.git@master\n", "DF005"),
        ("RUN git clone https://github.com/NVIDIA/nccl.git /opt/nccl\n", "DF006"),
        (
            "RUN git clone -b master https://github.com/NVIDIA/nccl.git /opt/nccl"
            " && git -C /opt/nccl checkout master\n",
            "DF006",
        ),
        ("RUN curl -fsSL -o /tmp/x http://example.com/x.tgz\n", "DF007"),
    ],
)
def test_rule_fires(line: str, rule: str) -> None:
    text = (
        CLEAN.replace("FROM ${BASE_IMAGE}\n", "FROM ${BASE_IMAGE}\n" + line)
        if not line.startswith(("FROM", "ARG"))
        else CLEAN.replace(
            "ARG BASE_IMAGE=registry.access.redhat.com/ubi8/ubi:8.10\nFROM ${BASE_IMAGE}\n", line
        )
    )
    assert rule in _rules(text)
    assert DOCKERFILE_RULES[rule]


def test_missing_labels_and_root_user_are_reported() -> None:
    text = CLEAN.replace(LABELS, "").replace("USER 1001\n", "USER root\n")
    findings = lint_dockerfile(Path("Dockerfile"), content=text)
    assert sum(f.rule == "DF008" for f in findings) == 8
    root = [f for f in findings if f.rule == "DF009"]
    assert root and root[0].severity == "warning"
    assert root[0].line == text.splitlines().index("USER root") + 1


def test_findings_point_at_the_line(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text(CLEAN.replace("FROM ${BASE_IMAGE}\n", "FROM ${BASE_IMAGE}\nRUN \\\n  yum -y update\n"))
    [finding] = [f for f in lint_dockerfile(path) if f.rule == "DF002"]
    assert finding.line == 3
    assert str(finding).startswith(f"{path}:3: DF002 error:")


def test_lint_cli_exit_codes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good" / "Dockerfile"
    good.parent.mkdir()
    good.write_text(CLEAN)
    assert cli("lint", str(good.parent)).code == 0
    bad = tmp_path / "bad" / "Dockerfile"
    bad.parent.mkdir()
    bad.write_text(CLEAN.replace(":8.10", ":latest"))
    result = cli("lint", str(bad))
    assert result.code == 8
    assert "DF001" in result.out and "1 lint error(s)" in result.err
    missing = cli("lint", str(tmp_path / "nope"))
    assert missing.code == 2 and "no such file" in missing.err
    listing = cli("lint", "--rules")
    assert listing.code == 0 and all(rule in listing.out for rule in DOCKERFILE_RULES)


def test_committed_dockerfiles_pass_lint(cli) -> None:  # type: ignore[no-untyped-def]
    repo = Path(__file__).resolve().parents[2]
    result = cli("lint", str(repo / "dockerfiles"), str(repo / "tests" / "golden"))
    assert result.code == 0, result.out + result.err
    assert "no errors" in result.out
