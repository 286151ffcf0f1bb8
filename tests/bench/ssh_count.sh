#!/usr/bin/env bash
# Stands in for ssh, sftp and scp (linked under those names): appends one line per call
# (tool, time, arguments) to $TORCHFLEET_BENCH_SSH_LOG, then runs the real tool. Each call is one round trip to a node
# (a new connection, or a session over the ControlPersist master), so counting the lines per
# node address counts the remote work Ansible really does.
set -u
tool=${0##*/}
real="${TORCHFLEET_BENCH_REAL_BIN:-/usr/bin}/$tool"
if [ -n "${TORCHFLEET_BENCH_SSH_LOG:-}" ]; then
  args=$*
  printf '%s %s %s\n' "$tool" "${EPOCHREALTIME:-0}" "${args//$'\n'/ }" >> "$TORCHFLEET_BENCH_SSH_LOG"
fi
exec "$real" "$@"
