# shellcheck shell=dash
# conda shell integration of the torchfleet conda stand-in (POSIX shells).
# Sourcing this file defines the `conda` function; it never activates an environment
# by itself (auto-activation happens only in `conda shell.posix hook` output).
# The installer prepends the CONDA_EXE / CONDA_PYTHON_EXE exports, as real conda does.

__conda_exe() (
    "$CONDA_EXE" "$@"
)

__conda_hashr() {
    if [ -n "${ZSH_VERSION:+x}" ]; then
        \rehash
    else
        \hash -r
    fi
}

__conda_activate() {
    \local ask_conda
    ask_conda="$(PS1="${PS1:-}" __conda_exe shell.posix "$@")" || \return
    \eval "$ask_conda"
    __conda_hashr
}

conda() {
    \local cmd="${1-__missing__}"
    case "$cmd" in
        activate|deactivate)
            __conda_activate "$@"
            ;;
        install|update|upgrade|remove|uninstall)
            __conda_exe "$@" || \return
            __conda_activate reactivate
            ;;
        *)
            __conda_exe "$@"
            ;;
    esac
}

if [ -z "${CONDA_SHLVL+x}" ]; then
    \export CONDA_SHLVL=0
    __conda_condabin="$(\dirname "$(\dirname "$CONDA_EXE")")/condabin"
    \export PATH="${__conda_condabin}${PATH:+:}${PATH:-}"
    \unset __conda_condabin
    if [ -z "${PS1+x}" ]; then
        PS1=
    fi
fi
