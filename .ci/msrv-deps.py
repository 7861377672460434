#!/usr/bin/env python3
"""Every crate a workspace member builds needs no newer Rust than the member's `rust-version`.

Only one toolchain exists where CI runs, so the minimum Rust version cannot be checked by
building with it. Two checks stand in: clippy's `incompatible_msrv` (denied in
`[workspace.lints]`) flags our own uses of std items stabilised after `rust-version`, and this
script reads `cargo metadata` for the dependencies: a crates.io crate that declares a newer
`rust-version` than the member that pulls it in would stop `cargo build` on that older Rust.
Neither sees new language syntax in our own code; both see what the lockfile really resolves.

Each member is checked over the crates it builds (normal and build dependencies, all features,
this platform), stopping at other workspace members, which are checked against their own
`rust-version`. A member may depend on one that needs a newer Rust only optionally (behind a
cargo feature): cargo then names the newer version when that feature is asked for.
"""
import json
import subprocess
import sys


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    host = next(
        line.split(": ", 1)[1]
        for line in subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines()
        if line.startswith("host: ")
    )
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--locked", "--format-version", "1", "--all-features", "--filter-platform", host],
            capture_output=True, text=True, check=True,
        ).stdout
    )
    packages = {p["id"]: p for p in meta["packages"]}
    members = set(meta["workspace_members"])
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

    def built_deps(node_id):
        for dep in nodes[node_id]["deps"]:
            if any(k["kind"] in (None, "build") for k in dep["dep_kinds"]):
                yield dep["pkg"]

    problems = []
    for member in sorted(members, key=lambda m: packages[m]["name"]):
        own = packages[member]
        floor = version(own["rust_version"])
        optional = {d["name"] for d in own["dependencies"] if d.get("optional")}
        seen, stack = set(), [member]
        while stack:
            for dep in built_deps(stack.pop()):
                if dep in seen:
                    continue
                seen.add(dep)
                pkg = packages[dep]
                needs = pkg.get("rust_version")
                if dep in members:
                    if needs and version(needs) > floor and pkg["name"] not in optional:
                        problems.append(f"{own['name']} ({own['rust_version']}) depends on {pkg['name']}, which needs {needs}")
                    continue
                if needs and version(needs) > floor:
                    problems.append(f"{own['name']} ({own['rust_version']}) builds {pkg['name']} {pkg['version']}, which needs Rust {needs}")
                stack.append(dep)
    if problems:
        print("minimum Rust version:", *problems, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print(f"minimum Rust version: {len(members)} workspace members, every dependency within its rust-version")


if __name__ == "__main__":
    main()
