"""Check a collection tarball's file list against an allow-list of path patterns.

usage: python tests/harness/check-tarball.py ARTIFACT ALLOW_LIST
Fails (exit 1) naming every file that no pattern allows and every pattern that matches no file."""

import fnmatch
import sys
import tarfile


def read_patterns(path):
    with open(path, encoding="utf-8") as handle:
        lines = (line.strip() for line in handle)
        return [line for line in lines if line and not line.startswith("#")]


def matches(pattern, name):
    """fnmatch per path component, so `roles/*/tasks/*.yml` never matches `roles/x/tests/a/b.yml`."""
    parts, pattern_parts = name.split("/"), pattern.split("/")
    return len(parts) == len(pattern_parts) and all(map(fnmatch.fnmatchcase, parts, pattern_parts))


def tarball_files(artifact):
    with tarfile.open(artifact) as archive:
        return sorted(member.name for member in archive.getmembers() if not member.isdir())


def check(files, patterns):
    """(files no pattern allows, patterns that allow no file)."""
    unexpected = [name for name in files if not any(matches(p, name) for p in patterns)]
    unused = [p for p in patterns if not any(matches(p, name) for name in files)]
    return unexpected, unused


def main(artifact, allow_list):
    files = tarball_files(artifact)
    unexpected, unused = check(files, read_patterns(allow_list))
    for name in unexpected:
        print("%s: %s is not in the allow-list %s" % (artifact, name, allow_list))
    for pattern in unused:
        print("%s: allow-list pattern %r matches no file of the tarball" % (allow_list, pattern))
    if unexpected or unused:
        return 1
    print("tarball: %d files, all allowed by %s" % (len(files), allow_list))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
