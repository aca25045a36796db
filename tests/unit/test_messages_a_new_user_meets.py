"""The messages a new user meets say what happened, in words that fit it (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine_plugin import installed_engine_plugin
from tests.oci_layout import layer, oci_layout


def test_verify_of_an_image_mlcc_did_not_build_says_so_not_drift(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = oci_layout(tmp_path / "img", [layer({"etc/hostname": b"x"})], {"vendor": "someone"})
    result = cli("verify", f"oci:{folder}")
    assert result.code == 6, result
    assert "not an mlcc image" in result.out and "DRIFT" not in result.out, result.out
    assert "drift" not in result.out.lower()
    assert "is not an mlcc image: no /etc/mlcc/stack.json" in result.err and "drifted" not in result.err
    document = json.loads(cli("verify", "--json", f"oci:{folder}").out)
    assert document["mlcc_image"] is False


def test_a_file_that_is_no_history_is_never_to_be_moved_aside(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    result = cli("history", "--history", str(passwd))
    assert result.code == 9, result
    assert f"{passwd} is not a build history (not an SQLite database)" in result.err
    assert "aside" not in result.err and f"mlcc never changes {passwd}" in result.err
    assert passwd.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


def test_a_damaged_history_names_the_file_for_a_shell_and_where_a_link_leads(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    damaged = tmp_path / "real history.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    link = tmp_path / "link.sqlite"
    link.symlink_to(damaged)
    result = cli("history", "--history", str(link))
    assert result.code == 9, result
    assert f"the build history {link} is damaged" in result.err
    assert f"move {link} (a link to '{damaged}') aside" in result.err, result.err


def test_the_docs_count_no_cells_the_matrix_does_not_have(cli) -> None:  # type: ignore[no-untyped-def]
    import re

    from tests.conftest import REPO

    published = cli("matrix").out.splitlines()[-1]
    count = int(published.split()[0])  # "29 cells build; ..."
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for found in re.finditer(r"\b(\d+) (?:cells|image\(s\))", page.read_text()):
            assert int(found.group(1)) == count, f"{page.name} says {found.group(0)}; the matrix has {count}"


FAILING = '''
from mlcc.engines.base import Engine
from mlcc.errors import RegistryError


class Unreachable(Engine):
    """Fails every build as an unreachable registry does."""

    name = "unreachable"

    def check(self):
        pass

    def is_built(self, job, policy):
        return None

    def find_built(self, job, policy):
        return None

    def build(self, job, policy, log):
        log("STEP 1/2: FROM base")
        raise RegistryError("cannot reach registry registry.invalid: no such host", hint="is it running?")
'''


def test_a_failed_build_says_its_error_once(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with installed_engine_plugin(tmp_path, "mlcc_unreachable", FAILING, {"unreachable": "Unreachable"}):
        result = cli("build", "ssd", "--backend", "unreachable", "--no-history")
    assert result.code == 5, result
    assert "  | STEP 1/2: FROM base" in result.err  # the build's own output still shows
    assert result.err.count("cannot reach registry registry.invalid") == 1, result.err
    assert result.err.count("is it running?") == 1


def test_the_loopback_hint_is_given_for_loopback_registries_only() -> None:
    from mlcc.image.registry import Registry

    far = str(Registry("registry.invalid.example")._unreachable("Name or service not known"))
    assert "loopback" not in far and "--no-tls-verify" not in far, far
    for host in ("127.0.0.1:5000", "localhost:5000", "[::1]:5000"):
        assert "--no-tls-verify" in str(Registry(host)._unreachable("Connection refused")), host
    assert "--no-tls-verify" not in str(Registry("127.0.0.1:5000", tls_verify=False)._unreachable("refused"))
