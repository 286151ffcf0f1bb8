# Entry points (contract): make demo, make demo-down, make test.
SHELL := /bin/bash
export PATH := $(CURDIR)/.venv/bin:$(PATH)
export CONTAINERS_CONF := $(CURDIR)/tests/harness/containers.conf
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
NODES ?= 3

.PHONY: help deps venv demo demo-down launch-demo test lint sanity units packaging molecule bench
help:
	@echo "make demo       bring up the local podman cluster ($(NODES) nodes) and run site.yml on it"
	@echo "make demo-down  remove the demo cluster"
	@echo "make launch-demo  run the example DDP script on the demo cluster, 2 processes per node"
	@echo "make test       run the whole test suite (what CI runs)"
	@echo "make bench      run the benchmark on the demo cluster"

deps:
	@tests/harness/deps.sh

venv:
	@tests/harness/venv.sh

demo: deps venv
	@NODES=$(NODES) tests/harness/demo.sh

launch-demo: venv
	@ansible-playbook -i inventories/demo playbooks/launch.yml -e launch_script=roles/launch/files/examples/ddp_allreduce.py -e launch_nproc_per_node=2

demo-down: deps
	@tests/harness/cluster.sh down demo
	@rm -f inventories/demo/hosts.yml inventories/demo/group_vars/all.yml

test: deps venv
	@tests/run.sh

lint sanity units packaging molecule: deps venv
	@tests/run.sh $@

bench: deps venv
	@tests/bench/run.sh
