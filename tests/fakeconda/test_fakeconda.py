"""Behaviour of the offline Miniconda stand-in, against a real build installed into a tmp dir.

Run: .venv/bin/pytest tests/fakeconda (builds tests/output/fakeconda once, then reuses it;
FAKECONDA_BUILD_DIR overrides that location). Every expectation below is what conda
25.11.1 / the Miniconda3-py311_25.11.1-1 installer does; see README.md for the sources.
"""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
INSTALLER = "Miniconda3-py311_25.11.1-1-Linux-x86_64.sh"
CONDA_VERSION = "25.11.1"
LIST_FIELDS = {"base_url", "build_number", "build_string", "channel", "dist_name", "name", "platform", "version"}
ERROR_FIELDS = {"caused_by", "error", "exception_name", "exception_type", "message"}
# Fields of conda 25.11.1's error documents, as recorded on the project's test nodes (2026-12-07).
ERROR_DOCS = {
    "CondaMultiError": {"error": "Multiple Errors Encountered.", "exception_name": "CondaMultiError",
                        "exception_type": "<class 'conda.CondaMultiError'>"},
    "PathNotFoundError": {"caused_by": "None", "exception_name": "PathNotFoundError",
                          "exception_type": "<class 'conda.exceptions.PathNotFoundError'>"},
}


@pytest.fixture(scope="session", name="build")
def fixture_build():
    """Build (or reuse) the stand-in: installer, SHA256SUMS, wheelhouse."""
    outdir = Path(os.environ.get("FAKECONDA_BUILD_DIR", ROOT / "tests" / "output" / "fakeconda"))
    subprocess.run(["bash", str(HERE / "build.sh"), str(outdir)], check=True, capture_output=True)
    return outdir


@pytest.fixture(scope="session", name="home")
def fixture_home(tmp_path_factory):
    """A HOME of its own, so ~/.condarc and ~/.conda/environments.txt stay in the test."""
    return tmp_path_factory.mktemp("home")


def clean_env(home, **extra):
    """Environment for the stand-in: no CONDA_*/PIP_* leaking in from the test runner."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def run_installer(build, home, *args):
    """bash Miniconda3-...sh ARGS, with the wheelhouse of this build."""
    return subprocess.run(
        ["bash", str(build / INSTALLER), *args], capture_output=True, text=True, check=False,
        env=clean_env(home, FAKECONDA_WHEELHOUSE=str(build / "wheelhouse")),
    )


@pytest.fixture(scope="session", name="base")
def fixture_base(build, home, tmp_path_factory):
    """A fresh `-b -p PREFIX` install."""
    prefix = tmp_path_factory.mktemp("install") / "miniconda3"
    proc = run_installer(build, home, "-b", "-p", str(prefix))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return prefix


class Conda:  # pylint: disable=too-few-public-methods
    """Runs the installed bin/conda (or condabin/conda, conda's other entry point)."""

    def __init__(self, prefix, home, entry_dir="bin"):
        self.prefix = prefix
        self.home = home
        self.entry_dir = entry_dir

    def __call__(self, *args, expect=0, stdin=None):
        proc = subprocess.run(
            [str(self.prefix / self.entry_dir / "conda"), *args], capture_output=True, text=True, check=False,
            env=clean_env(self.home), input=stdin or "",
        )
        if expect is not None:
            assert proc.returncode == expect, f"conda {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def json(self, *args, expect=0):
        """Run with --json and parse stdout."""
        return json.loads(self(*args, "--json", expect=expect).stdout)


@pytest.fixture(scope="session", name="conda")
def fixture_conda(base, home):
    return Conda(base, home)


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture(name="system_rc")
def fixture_system_rc(base):
    """The system .condarc, restored after the test."""
    path = base / ".condarc"
    saved = path.read_text() if path.exists() else None
    yield path
    if saved is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(saved)


# --- the installer -------------------------------------------------------------------


def test_installer_is_named_like_miniconda_and_checksummed(build):
    installer = build / INSTALLER
    sums = (build / "SHA256SUMS").read_text().split()
    assert sums == [hashlib.sha256(installer.read_bytes()).hexdigest(), INSTALLER]
    header = installer.read_bytes()[:600].decode(errors="replace")
    assert header.startswith("#!/bin/sh") and "VER:   py311_25.11.1-1" in header
    assert b'FAKECONDA_WHEELHOUSE:-/srv/torchfleet-wheelhouse}' in installer.read_bytes()


def test_build_is_cached_and_reproducible(build):
    before = (build / "SHA256SUMS").read_text()
    proc = subprocess.run(["bash", str(HERE / "build.sh"), str(build)], capture_output=True, text=True, check=True)
    assert "building" not in proc.stderr and "downloading" not in proc.stderr
    assert (build / "SHA256SUMS").read_text() == before


def test_wheelhouse_has_torch_numpy_and_two_versions_of_small_packages(build):
    names = sorted(p.name for p in (build / "wheelhouse").glob("*.whl"))
    assert any(n.startswith("torch-2.13.0") for n in names)
    assert any(n.startswith("numpy-2.4.6-cp311") for n in names)
    for small in ("six-", "packaging-"):
        assert len([n for n in names if n.startswith(small)]) == 2, names


def test_help_exits_2_and_unknown_option_exits_1(build, home):
    helped = run_installer(build, home, "-h")
    assert helped.returncode == 2 and "-b           run install in batch mode" in helped.stdout
    bad = run_installer(build, home, "-z")
    assert bad.returncode == 1 and "did not recognize option" in bad.stdout


def test_fresh_install_lays_down_a_miniconda_prefix(base, conda):
    for rel in ("bin/conda", "condabin/conda", "bin/python", "etc/profile.d/conda.sh", "conda-meta/history", "envs"):
        assert (base / rel).exists(), rel
    names = {json.loads(p.read_text())["name"] for p in (base / "conda-meta").glob("*.json")}
    assert {"python", "pip", "conda"} <= names
    assert conda("--version").stdout == f"conda {CONDA_VERSION}\n"
    assert (base / "condabin" / "conda").read_text().startswith(f"#!{base}/bin/python")
    assert f"export CONDA_EXE='{base}/bin/conda'" in (base / "etc/profile.d/conda.sh").read_text()


def test_existing_prefix_without_u_or_f_exits_1_and_changes_nothing(build, home, base):
    before = sorted(p.name for p in base.iterdir())
    proc = run_installer(build, home, "-b", "-p", str(base))
    assert proc.returncode == 1
    assert proc.stderr == f"ERROR: File or directory already exists: '{base}'\nIf you want to update an existing installation, use the -u option.\n"
    assert sorted(p.name for p in base.iterdir()) == before


def test_reinstall_over_existing_prefix_keeps_envs_and_config(build, home, base, conda, system_rc):
    write(system_rc, "channels:\n  - conda-forge\n")
    (base / "envs" / "keepme").mkdir(exist_ok=True)
    proc = run_installer(build, home, "-b", "-u", "-p", str(base))
    assert proc.returncode == 0, proc.stderr
    assert system_rc.read_text() == "channels:\n  - conda-forge\n"
    assert (base / "envs" / "keepme").is_dir()
    assert conda("--version").stdout == f"conda {CONDA_VERSION}\n"
    assert json.loads((base / "etc/fakeconda/settings.json").read_text())["wheelhouse"] == str(build / "wheelhouse")
    (base / "envs" / "keepme").rmdir()


@pytest.fixture(name="spare")
def fixture_spare(build, home, tmp_path):
    """An installation of its own, for tests that break it."""
    prefix = tmp_path / "miniconda3"
    proc = run_installer(build, home, "-b", "-p", str(prefix))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return prefix


def record_conda_as(prefix, version):
    """Make conda-meta record the conda package with another version (as an older installation would)."""
    meta = prefix / "conda-meta"
    path = next(meta.glob("conda-*.json"))
    record = json.loads(path.read_text())
    path.unlink()
    record["version"] = version
    (meta / f"conda-{version}-{record['build']}.json").write_text(json.dumps(record))


@pytest.mark.parametrize(
    "recorded_version, relinked",
    [
        pytest.param(CONDA_VERSION, False, id="same-version-recorded-is-left-alone"),
        pytest.param("25.5.0", True, id="other-version-recorded-is-relinked"),
    ],
)
def test_update_links_only_packages_conda_meta_does_not_record(build, home, spare, recorded_version, relinked):
    """constructor's -u installs through `conda.exe install --offline --file initial-state.explicit.txt`,
    which skips every package the prefix already records (conda/misc.py, install_explicit_packages)."""
    record_conda_as(spare, recorded_version)
    write(spare / ".condarc", "channels:\n  - conda-forge\n")
    (spare / "envs" / "keepme").mkdir()
    (spare / "bin" / "conda").unlink()
    proc = run_installer(build, home, "-b", "-u", "-p", str(spare))
    assert proc.returncode == 0, proc.stderr
    assert (spare / "bin" / "conda").exists() is relinked
    assert Conda(spare, home, "condabin")("--version").stdout == f"conda {CONDA_VERSION}\n"
    assert (spare / ".condarc").read_text() == "channels:\n  - conda-forge\n" and (spare / "envs" / "keepme").is_dir()
    last_entry = (spare / "conda-meta" / "history").read_text().rsplit("==> ", 1)[1]
    assert ("+file://" in last_entry and f"::conda-{CONDA_VERSION}-" in last_entry) is relinked
    assert ("-file://" in last_entry and f"::conda-{recorded_version}-" in last_entry) is relinked
    versions = {p.name.rsplit("-", 2)[1] for p in (spare / "conda-meta").glob("conda-*.json")}
    assert versions == {recorded_version if not relinked else CONDA_VERSION}


def test_force_reinstall_offline_relinks_conda_from_the_package_cache(build, home, spare):
    for rel in ("bin/conda", "etc/profile.d/conda.sh"):
        (spare / rel).unlink()
    run_installer(build, home, "-b", "-u", "-p", str(spare))
    assert not (spare / "bin" / "conda").exists()
    condabin = Conda(spare, home, "condabin")
    args = ("install", "-y", "--force-reinstall", "--offline", "-p", str(spare), "conda")
    proc = condabin(*args)
    assert proc.stdout.endswith(
        "Solving environment: done\n\n## Package Plan ##\n\n"
        f"  environment location: {spare}\n\n  added / updated specs:\n    - conda\n\n\n\n"
        "Preparing transaction: done\nVerifying transaction: done\nExecuting transaction: done\n"
    ), proc.stdout
    assert Conda(spare, home)("--version").stdout == f"conda {CONDA_VERSION}\n"
    assert (spare / "bin" / "conda").read_text().startswith(f"#!{spare}/bin/python\n")
    assert f"export CONDA_EXE='{spare}/bin/conda'" in (spare / "etc/profile.d/conda.sh").read_text()
    assert f"# cmd: {spare}/condabin/conda {' '.join(args)}\n" in (spare / "conda-meta" / "history").read_text()
    result = condabin.json(*args)
    assert list(result) == ["success", "actions", "prefix"] and result["prefix"] == str(spare)
    assert list(result["actions"]) == ["FETCH", "PREFIX", "UNLINK", "LINK"] and result["actions"]["FETCH"] == []
    assert [r["dist_name"] for r in result["actions"]["UNLINK"]] == [r["dist_name"] for r in result["actions"]["LINK"]]
    assert result["actions"]["LINK"][0]["dist_name"].startswith(f"conda-{CONDA_VERSION}-") and set(result["actions"]["LINK"][0]) == LIST_FIELDS


@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
def test_install_of_an_installed_package_changes_nothing(conda, base, json_mode):
    history = (base / "conda-meta" / "history").read_text()
    args = ("install", "--offline", "-p", str(base), "conda")
    if json_mode:
        assert conda.json(*args) == {"success": True, "message": "All requested packages already installed."}
    else:
        assert conda(*args).stdout.endswith("Solving environment: done\n\n# All requested packages already installed.\n\n")
    assert (base / "conda-meta" / "history").read_text() == history


@pytest.mark.parametrize(
    "specs, channel_args",
    [
        pytest.param(["nosuchpkg"], [], id="in-no-channel"),
        pytest.param(["conda=24.1"], [], id="version-not-in-the-package-cache"),
        pytest.param(["six"], ["-c", "http://mirror.invalid/conda", "--override-channels"], id="offline-http-channel-unread"),
    ],
)
def test_install_offline_of_an_unavailable_package_is_packages_not_found(conda, base, specs, channel_args):
    args = ("install", "-y", "--offline", "-p", str(base), *channel_args, *specs)
    proc = conda(*args, expect=1)
    assert "Solving environment: failed" in proc.stdout
    assert proc.stderr.startswith(f"\nPackagesNotFoundError: The following packages are not available from current channels:\n\n  - {specs[0]}\n")
    err = conda.json(*args, expect=1)
    assert err["exception_name"] == "PackagesNotFoundError" and err["packages"] == specs and ERROR_FIELDS <= set(err)


def test_install_adds_updates_and_force_reinstalls_wheel_packages(conda, tmp_path):
    prefix = tmp_path / "env"
    conda("create", "-y", "-q", "-p", str(prefix), "six=1.16.0")
    result = conda.json("install", "-y", "-p", str(prefix), "six=1.17.0", "packaging=25.0")
    assert [r["dist_name"].rsplit("-", 1)[0] for r in result["actions"]["UNLINK"]] == ["six-1.16.0"]
    assert sorted(r["dist_name"].rsplit("-", 1)[0] for r in result["actions"]["LINK"]) == ["packaging-25.0", "six-1.17.0"]
    six_py = next(prefix.glob("lib/python3*/site-packages/six.py"))
    six_py.unlink()
    result = conda.json("install", "-y", "--force-reinstall", "-p", str(prefix), "six")
    assert [r["dist_name"] for r in result["actions"]["UNLINK"]] == [r["dist_name"] for r in result["actions"]["LINK"]]
    assert six_py.is_file()
    pkgs = by_name(conda.json("list", "-p", str(prefix)))
    assert pkgs["six"]["version"] == "1.17.0" and pkgs["packaging"]["version"] == "25.0" and pkgs["packaging"]["channel"] == "pkgs/main"


@pytest.mark.parametrize(
    "target, packages, exception_name",
    [
        pytest.param("none", ["six"], "EnvironmentLocationNotFound", id="no-environment"),
        pytest.param("", [], "CondaValueError", id="no-packages"),
    ],
)
def test_install_errors(conda, base, tmp_path, target, packages, exception_name):
    prefix = tmp_path / target if target else base
    err = conda.json("install", "-y", "-p", str(prefix), *packages, expect=1)
    assert err["exception_name"] == exception_name


# --- conda info / config --------------------------------------------------------------


def test_info_json_shape(conda, base):
    info = conda.json("info")
    for key in ("conda_version", "platform", "root_prefix", "envs", "envs_dirs", "pkgs_dirs", "channels", "python_version",
                "sys.version", "sys.prefix", "active_prefix", "config_files", "envs_details", "virtual_pkgs"):
        assert key in info, key
    assert info["conda_version"] == CONDA_VERSION and info["platform"] == "linux-64"
    assert info["root_prefix"] == str(base) and str(base) in info["envs"]
    assert info["envs_dirs"][0] == str(base / "envs")
    assert info["python_version"].startswith("3.11.") and info["active_prefix"] is None
    assert all(url.endswith(("/linux-64", "/noarch")) for url in info["channels"])
    assert conda.json("info", "--base") == {"root_prefix": str(base)}


def test_config_set_show_and_aliases(conda, system_rc):
    assert conda.json("config", "--system", "--set", "auto_activate", "false")["success"] is True
    assert system_rc.read_text() == "auto_activate: false\n"
    assert conda.json("config", "--show", "auto_activate") == {"auto_activate": False}
    assert conda.json("config", "--show", "auto_activate_base") == {"auto_activate": False}
    conda("config", "--system", "--add", "channels", "conda-forge")
    conda("config", "--system", "--set", "channel_priority", "strict")
    shown = conda.json("config", "--show", "channels", "channel_priority")
    assert shown == {"channel_priority": "strict", "channels": ["conda-forge"]}
    assert "channels:\n  - conda-forge\n" in system_rc.read_text()
    conda("config", "--system", "--remove", "channels", "conda-forge")
    assert conda.json("config", "--show", "channels") == {"channels": ["defaults"]}
    everything = conda.json("config", "--show")
    assert {"auto_activate", "channels", "always_yes", "notify_outdated_conda", "plugins"} <= set(everything)


def test_config_rejects_unknown_keys_with_real_exit_codes(conda, tmp_path):
    bad_set = conda.json("config", "--file", str(tmp_path / "rc"), "--set", "no_such_key", "1", expect=1)
    assert bad_set["exception_name"] == "CondaKeyError" and ERROR_FIELDS <= set(bad_set)
    bad_show = conda("config", "--show", "no_such_key", expect=2)
    assert "ArgumentError: Invalid configuration parameters: \n  - no_such_key" in bad_show.stderr
    bad_value = conda("config", "--file", str(tmp_path / "rc"), "--set", "channel_priority", "sideways", expect=1)
    assert "channel_priority" in bad_value.stderr
    conda("config", "--file", str(tmp_path / "rc"), "--set", "always_yes", "true")
    assert (tmp_path / "rc").read_text() == "always_yes: true\n"


def test_both_auto_activate_keys_make_conda_refuse_to_start(conda, system_rc):
    write(system_rc, "auto_activate_base: false\nauto_activate: false\n")
    for args in (["info"], ["config", "--show"], ["env", "list"], ["list", "-n", "base"]):
        proc = conda(*args, expect=1)
        assert proc.stderr == (
            f"\nMultipleKeysError: Multiple aliased keys in file {system_rc}:\n  - auto_activate_base\n  - auto_activate\n"
            "Must declare only one. Prefer 'auto_activate'\n\n"
        )
    # Real 25.11.1/26.7.1 cannot serialise the error (its keys are a frozenset): nothing on
    # stdout, a chained traceback on stderr, exit 1.
    crashed = conda("info", "--json", expect=1)
    assert crashed.stdout == ""
    assert f"conda.common.configuration.MultipleKeysError: Multiple aliased keys in file {system_rc}:" in crashed.stderr
    assert crashed.stderr.rstrip().endswith("TypeError: Object of type frozenset is not JSON serializable")
    assert conda("--version").stdout == f"conda {CONDA_VERSION}\n"


def test_setting_the_new_key_over_the_old_one_is_the_real_trap(conda, system_rc):
    write(system_rc, "auto_activate_base: false\n")
    assert conda.json("config", "--show", "auto_activate") == {"auto_activate": False}
    proc = conda("config", "--system", "--set", "auto_activate", "false")
    assert proc.returncode == 0
    conda("info", expect=1)
    write(system_rc, "auto_activate: true\n")
    alias = conda("config", "--system", "--set", "auto_activate_base", "false")
    assert "Key auto_activate_base is an alias of auto_activate; setting value with latter" in alias.stderr
    assert system_rc.read_text() == "auto_activate: false\n"


def test_shell_hook_activates_base_only_when_auto_activate_is_on(conda, system_rc):
    write(system_rc, "auto_activate: true\n")
    assert "conda activate base" in conda("shell.bash", "hook").stdout
    write(system_rc, "auto_activate: false\n")
    hook = conda("shell.bash", "hook").stdout
    assert "conda activate" not in hook.replace("conda activate|deactivate", "") and "conda() {" in hook


def test_tos_lists_default_channels_as_pending_until_accepted(conda, base):
    listing = conda.json("tos")
    assert len(listing) == 2 and all(entry["path"] == "None" and "tos_accepted" not in entry for entry in listing.values())
    main_url = next(url for url in listing if url.endswith("/pkgs/main"))
    conda("tos", "accept", "--override-channels", "--system", f"--channel={main_url}")
    entry = conda.json("tos", "--override-channels", f"--channel={main_url}")[main_url]
    assert entry["tos_accepted"] is True and entry["path"].startswith(str(base / "conda-meta" / "tos"))
    assert conda.json("tos", "--override-channels", "--channel=conda-forge") == {listing_url(listing, "conda-forge"): None}
    forge_url = listing_url(listing, "conda-forge")
    assert conda.json("tos", "accept", "--override-channels", "--channel=conda-forge") == {forge_url: None}
    plain = conda("tos", "accept", "--override-channels", "--channel=conda-forge")
    assert plain.stdout == f"Terms of Service not found for {forge_url}\n"


def listing_url(listing, name):
    """URL of a named channel under the same alias as the listed default channels."""
    return next(iter(listing)).rsplit("/pkgs/", 1)[0] + f"/{name}"


# --- environments ---------------------------------------------------------------------

SMALL_ENV = """name: small
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - six=1.16.0
  - pip:
    - packaging==25.0
"""


@pytest.fixture(scope="module", name="small")
def fixture_small(conda, base, tmp_path_factory):
    """An environment made by `conda env create -f` from small packages."""
    spec = write(tmp_path_factory.mktemp("spec") / "environment.yml", SMALL_ENV)
    result = conda.json("env", "create", "-f", str(spec))
    return {"spec": spec, "result": result, "prefix": base / "envs" / "small"}


def by_name(rows):
    return {row["name"]: row for row in rows}


def test_env_create_json_and_records(small, conda):
    assert small["result"]["success"] is True and small["result"]["prefix"] == str(small["prefix"])
    assert "six" in {row["name"] for row in small["result"]["actions"]["LINK"]}
    fetched = by_name(small["result"]["actions"]["FETCH"])
    assert {"md5", "sha256", "url", "depends", "channel", "subdir", "fn"} <= set(fetched["six"])
    assert fetched["six"]["channel"].endswith("/conda-forge/noarch") and "files" not in fetched["six"]
    assert small["result"]["actions"]["PIP"] == ["packaging-25.0"]
    rows = conda.json("list", "-n", "small")
    assert all(set(row) == LIST_FIELDS for row in rows)
    pkgs = by_name(rows)
    assert pkgs["six"]["version"] == "1.16.0" and pkgs["six"]["channel"] == "conda-forge" and pkgs["six"]["platform"] == "noarch"
    assert pkgs["python"]["version"].startswith("3.11.")
    assert pkgs["packaging"]["channel"] == "pypi" and pkgs["packaging"]["build_string"] == "pypi_0"
    assert pkgs["packaging"]["platform"] == "pypi"
    meta = small["prefix"] / "conda-meta"
    six = json.loads(next(meta.glob("six-1.16.0-*.json")).read_text())
    assert {"name", "version", "build", "build_number", "channel", "subdir", "fn", "url"} <= set(six)
    assert f"six-1.16.0-{six['build']}.json" == next(meta.glob("six-*.json")).name
    assert not list(meta.glob("packaging-*.json")), "pip packages have no conda-meta record in real conda"


def test_env_list_and_info_envs(small, conda):
    listed = conda.json("env", "list")
    assert str(small["prefix"]) in listed["envs"] and listed["envs_details"][str(small["prefix"])]["name"] == "small"
    assert conda.json("info", "--envs") == listed


def test_as_root_env_list_shows_every_users_registered_envs(small, conda, tmp_path):
    """list_all_known_prefixes as an admin reads each passwd home's environments.txt."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    import pwd  # pylint: disable=import-outside-toplevel
    other_env = tmp_path / "someone-elses"
    (other_env / "conda-meta").mkdir(parents=True)
    (other_env / "conda-meta" / "history").write_text("")
    registry = Path(pwd.getpwuid(0).pw_dir) / ".conda" / "environments.txt"
    if str(registry).startswith(str(conda.home)):
        pytest.skip("the test HOME is root's passwd home")
    saved = registry.read_text() if registry.exists() else None
    made_dir = not registry.parent.exists()
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text((saved or "") + f"{other_env}\n")
    try:
        assert str(other_env) in conda.json("env", "list")["envs"]
        assert str(other_env) in conda.json("info")["envs"]
    finally:
        if saved is None:
            registry.unlink()
            if made_dir:
                registry.parent.rmdir()
        else:
            registry.write_text(saved)


def test_list_json_channel_is_the_short_name(small, conda, tmp_path):
    """PackageRecord.dist_fields_dump() gives Channel.name: for a file:// channel outside
    channel_alias, its last path component (conda/models/channel.py)."""
    local = tmp_path / "mirrors" / "localchan"
    spec = write(tmp_path / "env.yml", f"name: loc\nchannels:\n  - file://{local}\n  - nodefaults\ndependencies:\n  - python=3.11\n  - six=1.16.0\n")
    target = tmp_path / "loc"
    result = conda.json("env", "create", "-f", str(spec), "-p", str(target))
    assert by_name(result["actions"]["LINK"])["six"]["channel"] == "localchan"
    row = by_name(conda.json("list", "-p", str(target)))["six"]
    assert row["channel"] == "localchan" and row["base_url"] == f"file://{local}"


def test_run_captures_output_and_propagates_exit_codes(small, conda):
    proc = conda("run", "-n", "small", "python", "-c", "import six, packaging; print(six.__version__, packaging.__version__)")
    assert proc.stdout == "1.16.0 25.0\n\n"
    failed = conda("run", "-p", str(small["prefix"]), "sh", "-c", "echo oops >&2; exit 3", expect=3)
    assert "oops" in failed.stderr and "`conda run sh -c echo oops >&2; exit 3` failed." in failed.stderr
    live = conda("run", "--no-capture-output", "-p", str(small["prefix"]), "sh", "-c", 'echo "$CONDA_PREFIX"')
    assert live.stdout == f"{small['prefix']}\n"


def test_list_explicit_and_create_from_the_lock(small, conda, tmp_path):
    lock = conda("list", "--explicit", "-n", "small").stdout
    lines = lock.splitlines()
    assert lines[:4] == [
        "# This file may be used to create an environment using:",
        "# $ conda create --name <env> --file <this file>",
        "# platform: linux-64",
        f"# created-by: conda {CONDA_VERSION}",
    ]
    assert lines[4] == "@EXPLICIT" and any("/noarch/six-1.16.0-" in line for line in lines)
    assert not any("packaging" in line for line in lines), "pip packages are not in an explicit file"
    # PrefixData.iter_records_sorted: dependency order, python first (it is everyone's parent)
    assert "/python-3.11." in lines[5]
    empty_md5 = "d41d8cd98f00b204e9800998ecf8427e"
    hashed = conda("list", "--explicit", "--md5", "-n", "small").stdout.splitlines()[5:]
    assert hashed and all("#" in line and not line.endswith(empty_md5) for line in hashed)
    lock_file = write(tmp_path / "lock.txt", lock)
    target = tmp_path / "from-lock"
    conda("create", "-y", "-p", str(target), "--file", str(lock_file))
    assert conda("list", "--explicit", "-p", str(target)).stdout == lock
    six_line = next(line for line in lines if "/six-1.16.0-" in line)
    missing = write(tmp_path / "missing.txt", lock.replace(six_line, six_line.replace("six-1.16.0", "six-9.9.9")))
    err = conda.json("create", "-y", "-p", str(tmp_path / "nope"), "--file", str(missing), expect=1)
    path = six_line.replace("six-1.16.0", "six-9.9.9")[len("file://"):]
    assert err["exception_name"] == "CondaMultiError" and not (tmp_path / "nope").exists()
    assert err["errors"] == [dict(ERROR_DOCS["PathNotFoundError"], error=f"PathNotFoundError: {path}", message=path, path=path)] * 2


def http_lock(lock, wrong=None):
    """The explicit file `lock` with its packages served over HTTP (the stand-in never connects),
    the md5 of package `wrong` replaced by zeros."""
    lines = []
    for line in lock.splitlines():
        line = line.replace("file:///", "http://127.0.0.1:9/")
        if wrong and f"/{wrong}-" in line:
            line = line.split("#", 1)[0] + "#" + "0" * 32
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_explicit_lock_fetch_failures_are_one_conda_multi_error(small, conda, tmp_path):
    """A download whose md5 is not the lock's, or that is not there: CondaMultiError, the failure
    listed twice (as ProgressiveFetchExtract collects it), nothing created, exit 1."""
    lock = conda("list", "--explicit", "--md5", "-n", "small").stdout
    six_line = next(line for line in lock.splitlines() if "/six-1.16.0-" in line)
    url, md5 = six_line.replace("file:///", "http://127.0.0.1:9/").split("#")
    err = conda.json("create", "-y", "-p", str(tmp_path / "bad"), "--file", str(write(tmp_path / "bad.txt", http_lock(lock, wrong="six"))), expect=1)
    assert {k: err[k] for k in ERROR_DOCS["CondaMultiError"]} == ERROR_DOCS["CondaMultiError"] and set(err) == {*ERROR_DOCS["CondaMultiError"], "errors"}
    assert len(err["errors"]) == 2 and err["errors"][0] == err["errors"][1]
    mismatch = err["errors"][0]
    assert mismatch["exception_name"] == "ChecksumMismatchError" and ERROR_FIELDS <= set(mismatch)
    assert (mismatch["url"], mismatch["checksum_type"], mismatch["expected_checksum"], mismatch["actual_checksum"]) == (url, "md5", "0" * 32, md5)
    assert mismatch["target_full_path"].endswith("/pkgs/" + url.rsplit("/", 1)[1]) and mismatch["partial_download"] is False
    assert not (tmp_path / "bad").exists()
    text = conda("create", "-y", "-p", str(tmp_path / "bad"), "--file", str(tmp_path / "bad.txt"), expect=1).stderr
    assert text.count(f"ChecksumMismatchError: Conda detected a mismatch between the expected content and downloaded content\nfor url '{url}'.") == 2
    gone = write(tmp_path / "gone.txt", http_lock(lock).replace(url, url.replace("six-1.16.0", "six-9.9.9")))
    err = conda.json("create", "-y", "-p", str(tmp_path / "gone"), "--file", str(gone), expect=1)
    assert err["exception_name"] == "CondaMultiError" and len(err["errors"]) == 2
    assert (err["errors"][0]["exception_name"], err["errors"][0]["status_code"], err["errors"][0]["url"]) == (
        "CondaHTTPError", 404, url.replace("six-1.16.0", "six-9.9.9"))


def test_a_wrong_md5_on_a_file_url_is_not_checked(small, conda, tmp_path):
    """Real conda copies a file:// package unchecked: the lock installs, exit 0."""
    lock = conda("list", "--explicit", "--md5", "-n", "small").stdout
    wrong = "\n".join(line.split("#")[0] + "#" + "0" * 32 if "/six-1.16.0-" in line else line for line in lock.splitlines()) + "\n"
    conda("create", "-y", "-p", str(tmp_path / "local"), "--file", str(write(tmp_path / "wrong.txt", wrong)))
    assert "six" in by_name(conda.json("list", "-p", str(tmp_path / "local")))


def with_condarc(conda, condarc, *args):
    return subprocess.run([str(conda.prefix / "bin" / "conda"), *args], capture_output=True, text=True, check=False,
                          env=clean_env(conda.home, CONDARC=str(condarc)))


def test_an_unparsable_condarc_is_ruamels_parser_error_report(conda, base, tmp_path):
    """conda 25.11.1/26.7.1 do not catch ruamel's ParserError: the unexpected-error report, with
    --json a document without `message` (recorded: `channels: [unclosed` in CONDARC=DIR/.condarc)."""
    condarc = write(tmp_path / ".condarc", "channels: [unclosed\n")
    proc = with_condarc(conda, condarc, "list", "--json", "-p", str(base))
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert list(report) == ["error", "exception_name", "exception_type", "command", "traceback", "conda_info"]
    assert report["exception_name"] == "ParserError" and report["exception_type"] == "<class 'ruamel.yaml.parser.ParserError'>"
    assert report["error"].startswith("ParserError('while parsing a flow sequence', <ruamel.yaml.error.FileMark object at 0x")
    assert report["traceback"].startswith("Traceback (most recent call last):\n")
    assert report["traceback"].endswith(
        f'ruamel.yaml.parser.ParserError: while parsing a flow sequence\n  in "{condarc}", line 1, column 11\n'
        f"expected ',' or ']', but got '<stream end>'\n  in \"{condarc}\", line 2, column 1\n")
    assert report["command"].endswith(f"conda list --json -p {base}") and report["conda_info"]["conda_version"] == CONDA_VERSION
    text = with_condarc(conda, condarc, "list", "-p", str(base))
    assert text.returncode == 1 and text.stdout == ""
    assert "# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<\n\n    Traceback (most recent call last):\n" in text.stderr
    assert f'    ruamel.yaml.parser.ParserError: while parsing a flow sequence\n      in "{condarc}", line 1, column 11\n' in text.stderr


def test_an_unparsable_condarc_stops_even_conda_version_on_25(conda, base, tmp_path):
    """conda 25.11.1 reads its configuration before the command line (recorded: cmp2-real case 22,
    rc 1 and an error report naming ruamel's ParserError); 26.7.1 prints its version (cmp2-real26)."""
    condarc = write(tmp_path / ".condarc", "channels: [unclosed\n")
    proc = with_condarc(conda, condarc, "--version")
    assert CONDA_VERSION.startswith("25.")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<" in proc.stderr
    assert "ruamel.yaml.parser.ParserError: while parsing a flow sequence" in proc.stderr


def test_a_condarc_the_yaml_scanner_rejects_is_configuration_load_error(conda, base, tmp_path):
    condarc = write(tmp_path / ".condarc", "channels: a: b\n")
    proc = with_condarc(conda, condarc, "list", "--json", "-p", str(base))
    assert proc.returncode == 1
    err = json.loads(proc.stdout)
    assert err["exception_type"] == "<class 'conda.common.configuration.ConfigurationLoadError'>" and ERROR_FIELDS <= set(err)
    assert err["message"] == f"Unable to load configuration file.\n  path: {condarc}\n  reason: invalid yaml at line 0, column 11"


def test_env_update_changes_versions_and_prune_removes(small, conda, tmp_path):
    spec = write(tmp_path / "environment.yml", SMALL_ENV.replace("six=1.16.0", "six==1.17.0").replace("  - pip:\n    - packaging==25.0\n", ""))
    result = conda.json("env", "update", "-f", str(spec))
    assert [r["dist_name"].split("-")[1] for r in result["actions"]["LINK"] if r["name"] == "six"] == ["1.17.0"]
    assert by_name(conda.json("list", "-n", "small"))["six"]["version"] == "1.17.0"
    pruned = write(tmp_path / "pruned.yml", "name: small\ndependencies:\n  - python=3.11\n  - pip\n")
    result = conda.json("env", "update", "-f", str(pruned), "--prune")
    assert "six" in {r["name"] for r in result["actions"]["UNLINK"]}
    pkgs = by_name(conda.json("list", "-n", "small"))
    assert "six" not in pkgs and pkgs["packaging"]["channel"] == "pypi", "prune never touches pip packages"


def test_failed_pip_section_fails_after_the_conda_part_like_real_conda(small, conda, tmp_path):
    spec = write(tmp_path / "environment.yml", "name: small\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - no-such-wheel==1.0\n")
    proc = conda("env", "update", "-f", str(spec), expect=1)
    assert "Pip subprocess error:" in proc.stderr and "CondaEnvException: Pip failed" in proc.stderr
    assert (small["prefix"] / "conda-meta" / "history").is_file(), "the environment stays, half-updated"


def test_env_create_yes_deletes_an_existing_env_without_asking(small, conda, tmp_path):
    marker = small["prefix"] / "marker.txt"
    marker.write_text("old build")
    spec = write(tmp_path / "environment.yml", "name: small\ndependencies:\n  - python=3.11\n  - six=1.17.0\n")
    conda("env", "create", "-f", str(spec))
    assert marker.exists(), "without --yes, conda 25.11 installs into the existing environment"
    conda("env", "create", "-y", "-f", str(spec))
    assert not marker.exists(), "with --yes, conda 25.11 removes the existing environment first"
    assert by_name(conda.json("list", "-n", "small"))["six"]["version"] == "1.17.0"


def test_symlinked_env_remove_drops_the_link_only(small, conda, base):
    link = base / "envs" / "linked"
    link.symlink_to(small["prefix"])
    assert str(link) in conda.json("env", "list")["envs"]
    assert conda.json("remove", "--all", "-y", "-n", "linked")["success"] is True
    assert not link.exists() and small["prefix"].is_dir()


def test_remove_all_deletes_the_env_and_unregisters_it(small, conda):
    conda("remove", "--all", "-y", "-p", str(small["prefix"]))
    assert not small["prefix"].exists()
    assert str(small["prefix"]) not in conda.json("env", "list")["envs"]
    err = conda.json("remove", "--all", "-y", "-p", str(small["prefix"]), expect=1)
    assert err["exception_name"] == "EnvironmentLocationNotFound" and err["message"] == f"Not a conda environment: {small['prefix']}"
    conda("env", "remove", "-n", "small", "-y", expect=1)


def test_missing_conda_package_fails_like_libmamba(conda, base, tmp_path):
    spec = write(tmp_path / "environment.yml", "name: broken\ndependencies:\n  - python=3.11\n  - numpy=9.9\n  - cudatoolkit\n")
    proc = conda("env", "create", "-f", str(spec), expect=1)
    assert "Solving environment: failed" in proc.stdout
    assert "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - numpy=9.9\n  - cudatoolkit\n" in proc.stderr
    err = conda.json("env", "create", "-f", str(spec), expect=1)
    assert err["exception_name"] == "PackagesNotFoundError" and err["packages"] == ["numpy=9.9", "cudatoolkit"]
    assert ERROR_FIELDS <= set(err) and err["channel_urls"]
    assert not (base / "envs" / "broken").exists()


def test_a_non_record_json_in_conda_meta_breaks_conda_list(conda, base):
    stray = base / "conda-meta" / "not-a-record.json"
    stray.write_text('{"name": "stamp", "spec_sha256": "0"}\n')
    try:
        proc = conda("list", "-p", str(base), expect=1)
        assert "ValidationError: PrefixRecord requires a version field" in proc.stderr
    finally:
        stray.unlink()
    conda("list", "-p", str(base))


def test_errors_for_missing_files_and_prefixes(conda, tmp_path):
    err = conda.json("env", "create", "-f", str(tmp_path / "nope.yml"), "-p", str(tmp_path / "x"), expect=1)
    assert err["exception_name"] == "EnvironmentFileNotFound"
    err = conda.json("list", "-p", str(tmp_path), expect=1)
    assert err["exception_name"] == "DirectoryNotACondaEnvironmentError"
    err = json.loads(conda("run", "--json", "-p", str(tmp_path / "none"), "true", expect=1).stdout)
    assert err["exception_name"] == "EnvironmentLocationNotFound"
    err = conda.json("remove", "--all", "-y", "-n", "base", expect=1)
    assert err["exception_name"] == "CondaEnvironmentError"


def test_torch_environment_imports_torch(conda, base, tmp_path):
    spec = write(tmp_path / "environment.yml", "name: torchenv\ndependencies:\n  - python=3.11\n  - pip\n  - pytorch=2.13.0\n  - numpy==2.4.6\n")
    conda("env", "create", "-f", str(spec))
    out = conda("run", "-n", "torchenv", "python", "-c", "import torch, numpy; print(torch.__version__, numpy.__version__)").stdout
    assert out.split() == ["2.13.0+cpu", "2.4.6"]
    pkgs = by_name(conda.json("list", "-n", "torchenv"))
    assert pkgs["pytorch"]["version"] == "2.13.0" and pkgs["pytorch"]["build_string"].startswith("cpu_py311h")
    assert pkgs["numpy"]["version"] == "2.4.6" and "sympy" in pkgs
    conda("remove", "--all", "-y", "-n", "torchenv")
