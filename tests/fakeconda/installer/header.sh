#!/bin/sh
#
# Offline stand-in for the Miniconda installer (torchfleet test harness,
# tests/fakeconda/README.md). Same options, messages and exit codes as the
# constructor-made installer it is named after; the payload is a small conda
# stand-in that builds environments from an offline wheelhouse.
#
# NAME:  Miniconda3
# VER:   @@INSTALLER_VER@@
# PLAT:  linux-64
# MD5:   @@PAYLOAD_MD5@@
#
# build.sh appends the end-of-header marker line and the gzipped tar payload.

set -eu
unset LD_LIBRARY_PATH LD_PRELOAD LD_AUDIT

if ! echo "$0" | grep '\.sh$' > /dev/null; then
    printf 'Please run using "bash"/"dash"/"sh"/"zsh", but not "." or "source".\n' >&2
    exit 1
fi

export INSTALLER_NAME='Miniconda3'
export INSTALLER_VER='@@INSTALLER_VER@@'
export INSTALLER_PLAT='linux-64'
export INSTALLER_TYPE="SH"

# Installers should ignore pre-existing configuration files.
unset CONDARC
unset MAMBARC

THIS_DIR=$(DIRNAME=$(dirname "$0"); cd "$DIRNAME"; pwd)
THIS_FILE=$(basename "$0")
THIS_PATH="$THIS_DIR/$THIS_FILE"
PREFIX="${HOME:-/root}/miniconda3"
BATCH=0
FORCE=0
REINSTALL=0
USAGE="
usage: $0 [options]

Installs ${INSTALLER_NAME} ${INSTALLER_VER}

-b           run install in batch mode (without manual intervention),
             it is expected the license terms (if any) are agreed upon
-f           no error if install prefix already exists
-h           print this help message and exit
-p PREFIX    install prefix, defaults to $PREFIX, must not contain spaces.
-s           skip running pre/post-link/install scripts
-u           update an existing installation
-t           run package tests after installation (may install conda-build)
"

while getopts "bifhkp:sut" x; do
    case "$x" in
        h)
            printf "%s\\n" "$USAGE"
            exit 2
        ;;
        b)
            BATCH=1
            ;;
        i)
            BATCH=0
            ;;
        f)
            FORCE=1
            ;;
        k)
            ;;
        p)
            PREFIX="$OPTARG"
            ;;
        s)
            ;;
        u)
            FORCE=1
            ;;
        t)
            ;;
        ?)
            printf "ERROR: did not recognize option '%s', please try -h\\n" "$x"
            exit 1
            ;;
    esac
done

export INSTALLER_UNATTENDED="$BATCH"

if [ "$BATCH" = "0" ]; then
    printf "\\nWelcome to %s %s\\n\\n" "${INSTALLER_NAME}" "${INSTALLER_VER}"
    printf "Do you accept the license terms? [yes|no]\\n>>> "
    read -r ans
    ans=$(echo "${ans}" | tr '[:lower:]' '[:upper:]')
    if [ "$ans" != "YES" ]; then
        printf "The license agreement wasn't approved, aborting installation.\\n"
        exit 2
    fi
    printf "\\n%s will now be installed into this location:\\n%s\\n\\n" "${INSTALLER_NAME}" "$PREFIX"
    printf "  - Press ENTER to confirm the location\\n  - Press CTRL-C to abort the installation\\n  - Or specify a different location below\\n\\n"
    printf "[%s] >>> " "$PREFIX"
    read -r user_prefix
    if [ "$user_prefix" != "" ]; then
        PREFIX="$user_prefix"
    fi
fi

case "$PREFIX" in
    *\ * )
        printf "ERROR: Cannot install into directories with spaces\\n" >&2
        exit 1
        ;;
esac

if [ "$FORCE" = "0" ] && [ -e "$PREFIX" ]; then
    printf "ERROR: File or directory already exists: '%s'\\n" "$PREFIX" >&2
    printf "If you want to update an existing installation, use the -u option.\\n" >&2
    exit 1
elif [ "$FORCE" = "1" ] && [ -e "$PREFIX" ]; then
    REINSTALL=1
fi

if ! mkdir -p "$PREFIX"; then
    printf "ERROR: Could not create directory: '%s'.\\n" "$PREFIX" >&2
    printf "Check permissions and available disk space (%s MB needed).\\n" "@@SIZE_MB@@" >&2
    exit 1
fi

PREFIX=$(cd "$PREFIX"; pwd | sed 's@//@/@')
export PREFIX
printf "PREFIX=%s\\n" "$PREFIX"

# The node's own interpreter becomes the base environment (a venv of it).
BASE_PYTHON="${FAKECONDA_BASE_PYTHON:-/usr/bin/python3}"
if ! "$BASE_PYTHON" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    printf "ERROR: this installer needs Python 3.11 with the venv module at %s\\n" "$BASE_PYTHON" >&2
    exit 1
fi

last_line=$(grep -anm 1 '^@@END_HEADER@@' "$THIS_PATH" | sed 's/:.*//')
MD5=$(tail -n +"$((last_line + 1))" "$THIS_PATH" | md5sum -)
if ! echo "$MD5" | grep @@PAYLOAD_MD5@@ >/dev/null; then
    printf "WARNING: md5sum mismatch of tar archive\\n" >&2
    printf "expected: @@PAYLOAD_MD5@@\\n" >&2
    printf "     got: %s\\n" "$MD5" >&2
fi

printf "Unpacking payload...\\n"
PAYLOAD=$(mktemp -d "${TMPDIR:-/tmp}/fakeconda-payload.XXXXXX")
trap 'rm -rf "$PAYLOAD"' EXIT
tail -n +"$((last_line + 1))" "$THIS_PATH" | tar -xzf - -C "$PAYLOAD"

printf "\\nInstalling base environment...\\n\\n"
if [ "$REINSTALL" = "1" ]; then
    printf "Updating the existing installation in %s\\n" "$PREFIX"
fi
# The stand-in for constructor's standalone conda: the node's python with the payload's conda
# package. It extracts the conda package into PREFIX/pkgs and links the base packages that
# PREFIX/conda-meta does not record yet (with -u, recorded ones are left as they are).
PYTHONPATH="$PAYLOAD" "$BASE_PYTHON" -s -m conda._standin.bootstrap \
    --prefix "$PREFIX" --payload "$PAYLOAD" --base-python "$BASE_PYTHON" \
    --wheelhouse "${FAKECONDA_WHEELHOUSE:-@@WHEELHOUSE@@}" --installer "Miniconda3-@@INSTALLER_VER@@-Linux-x86_64"

printf "installation finished.\\n"
if [ "${PYTHONPATH:-}" != "" ]; then
    printf "WARNING:\\n"
    printf "    You currently have a PYTHONPATH environment variable set. This may cause\\n"
    printf "    unexpected behavior when running the Python interpreter in %s.\\n" "${INSTALLER_NAME}"
fi
if [ "$BATCH" = "0" ]; then
    printf "\\nThank you for installing %s!\\n" "${INSTALLER_NAME}"
fi
exit 0
