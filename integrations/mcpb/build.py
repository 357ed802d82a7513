"""Build the Claude Desktop bundle: dist/cortex-mcp-<version>.mcpb (and the wheel and sdist).

    python integrations/mcpb/build.py            # from the repository's root, after
                                                 # `npm ci` in integrations/mcpb (the mcpb CLI)

1. `python -m build` writes the sdist and the wheel to dist/.
2. The bundle's folder gets what `uv run` needs to build and start the server from source (the
   sdist's pyproject.toml, README.md, LICENSE, cortex_mcp/ and prompts/: no virtual environment,
   no tests), this folder's manifest.json and icon.png.
3. The npm `@anthropic-ai/mcpb` CLI validates the manifest and packs the folder.

The manifest's version must be the package's: the script refuses to pack another.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# what `uv run --directory <bundle>` builds the package from (hatchling reads README.md)
SOURCE = ("pyproject.toml", "README.md", "LICENSE", "cortex_mcp", "prompts")
BUNDLE_FILES = ("manifest.json", "icon.png")


def package_version() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return str(project["version"])


def build_dists(outdir: Path, *, isolation: bool) -> None:
    command = [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(outdir)]
    if not isolation:
        command.append("--no-isolation")
    subprocess.run([*command, str(ROOT)], check=True, stdout=subprocess.DEVNULL)


def stage(outdir: Path, version: str) -> Path:
    """The bundle's folder, from the sdist (so it holds exactly the files the package ships)."""
    sdist = outdir / f"cortex_mcp-{version}.tar.gz"
    if not sdist.is_file():
        raise SystemExit(f"no {sdist}: build the sdist first (leave out --skip-build)")
    unpacked = outdir / "sdist"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (top,) = unpacked.iterdir()
    folder = outdir / "mcpb"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for name in SOURCE:
        source = top / name
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy2(source, folder / name)
    for name in BUNDLE_FILES:
        shutil.copy2(HERE / name, folder / name)
    shutil.rmtree(unpacked)
    return folder


def mcpb_command(given: str | None) -> list[str]:
    """The mcpb CLI: --mcpb, else the one `npm ci` put in this folder, else `mcpb` on PATH."""
    for candidate in (given, HERE / "node_modules" / ".bin" / "mcpb", shutil.which("mcpb")):
        if candidate and Path(candidate).exists():
            return [str(candidate)]
    raise SystemExit(
        "the mcpb CLI is not installed: run `npm ci` in integrations/mcpb (Node 20 or newer)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist")
    parser.add_argument("--mcpb", help="the mcpb CLI to run (default: integrations/mcpb's)")
    parser.add_argument(
        "--no-isolation", action="store_true", help="build with this environment's hatchling"
    )
    parser.add_argument(
        "--skip-build", action="store_true", help="pack the sdist already in --outdir"
    )
    args = parser.parse_args(argv)
    version = package_version()
    manifest = json.loads((HERE / "manifest.json").read_text("utf-8"))
    if manifest["version"] != version:
        raise SystemExit(
            f"integrations/mcpb/manifest.json: version {manifest['version']} is not the"
            f" package's {version} (pyproject.toml): make them equal"
        )
    outdir = args.outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    mcpb = mcpb_command(args.mcpb)
    if not args.skip_build:
        build_dists(outdir, isolation=not args.no_isolation)
    folder = stage(outdir, version)
    bundle = outdir / f"cortex-mcp-{version}.mcpb"
    subprocess.run([*mcpb, "validate", str(folder / "manifest.json")], check=True)
    subprocess.run([*mcpb, "pack", str(folder), str(bundle)], check=True)
    print(f"{bundle} ({bundle.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
