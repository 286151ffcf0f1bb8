#!/usr/bin/env bash
# Exit 0 when the official Miniconda download can be reached from this machine.
# The name lookup comes first, so a closed network is detected without sending traffic anywhere.
host=repo.anaconda.com
getent hosts "$host" >/dev/null 2>&1 || exit 1
curl -fsI --max-time 10 "https://$host/miniconda/" >/dev/null 2>&1
