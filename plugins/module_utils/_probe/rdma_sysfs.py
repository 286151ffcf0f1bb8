# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's RDMA ports as the kernel lists them under ``/sys/class/infiniband``, and the NCCL
settings they imply for the node's training interface and address.

Only files are read: no verbs device is opened and no tool (``ibv_devinfo``, ``show_gids``) runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import os
import re

# What NCCL_IB_HCA may name: the kernel's device names (mlx5_0, mlx5_bond_0, irdma-eth1, hfi1_0).
DEVICE_NAME = re.compile(r'^[A-Za-z0-9_.-]{1,64}$')
INTERFACE_NAME = re.compile(r'^[A-Za-z0-9_.@-]{1,15}$')
ROCE_V2 = 'RoCE v2'


def read_text(path):
    """A sysfs attribute's value, or None: the kernel answers EINVAL for an unused GID's attributes."""
    try:
        with open(path, 'rb') as attribute:
            return attribute.read(4096).decode('ascii').strip()
    except (OSError, UnicodeDecodeError):
        return None


def numbered_entries(directory):
    """The entries of a directory whose names are numbers, as numbers, in order."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def gid_address(gid):
    """The IP address a GID stands for (an IPv4-mapped GID is the IPv4 address), or None when it is unused."""
    try:
        address = ipaddress.IPv6Address(gid)
    except ValueError:
        return None
    if address.packed == bytes(16):
        return None
    return str(address.ipv4_mapped or address)


def port_gids(port_dir):
    """The port's used GIDs: index, address, type (C(IB/RoCE v1) or C(RoCE v2)) and the netdev it belongs to."""
    gids = []
    for index in numbered_entries(os.path.join(port_dir, 'gids')):
        address = gid_address(read_text(os.path.join(port_dir, 'gids', str(index))) or '')
        if address is None:
            continue
        gids.append(dict(
            index=index,
            address=address,
            type=read_text(os.path.join(port_dir, 'gid_attrs', 'types', str(index))),
            ndev=read_text(os.path.join(port_dir, 'gid_attrs', 'ndevs', str(index))),
        ))
    return gids


def port_state(port_dir):
    """C(ACTIVE), C(DOWN), ... from the kernel's C(4: ACTIVE)."""
    state = read_text(os.path.join(port_dir, 'state')) or ''
    return state.split(':', 1)[-1].strip()


def device_netdevs(device_dir):
    """The network interfaces of the device's own PCI function (C(ib0) for IPoIB, the Ethernet NIC for RoCE)."""
    try:
        return sorted(name for name in os.listdir(os.path.join(device_dir, 'device', 'net')) if INTERFACE_NAME.match(name))
    except OSError:
        return []


def read_ports(sysfs_root):
    """Every port of every RDMA device under ``sysfs_root``, and the device names that were not usable."""
    class_dir = os.path.join(sysfs_root, 'class', 'infiniband')
    try:
        devices = sorted(os.listdir(class_dir))
    except OSError:
        return [], []
    ports, refused = [], []
    for device in devices:
        if not DEVICE_NAME.match(device):
            refused.append(device)
            continue
        device_dir = os.path.join(class_dir, device)
        netdevs = device_netdevs(device_dir)
        for port in numbered_entries(os.path.join(device_dir, 'ports')):
            port_dir = os.path.join(device_dir, 'ports', str(port))
            ports.append(dict(
                device=device,
                port=port,
                state=port_state(port_dir),
                link_layer=read_text(os.path.join(port_dir, 'link_layer')) or '',
                netdevs=netdevs,
                gids=port_gids(port_dir),
            ))
    return ports, refused


def training_gid(port, interface, address):
    """The RoCE v2 GID of the port that carries the training address on the training interface, or None."""
    for gid in port['gids']:
        if gid['type'] != ROCE_V2:
            continue
        on_interface = gid['ndev'] == interface if gid['ndev'] else interface in port['netdevs']
        if on_interface and (not address or gid['address'] == address):
            return gid
    return None


def hca_list(ports):
    return '=' + ','.join('%s:%d' % (port['device'], port['port']) for port in ports)


def nccl_settings(ports, interface, address):
    """NCCL_IB_HCA and NCCL_IB_GID_INDEX for these ports, and why.

    InfiniBand ports that are ACTIVE all carry NCCL's traffic (each is a rail of the same fabric). A RoCE
    port carries it only where its RoCE v2 GID is the node's training address on the training interface:
    NCCL pairs the HCAs of the ranks by position, and a RoCE port on another network cannot reach the peers.
    The GID index is written only when every chosen port is RoCE and they all use the same index.
    """
    active = [port for port in ports if port['state'] == 'ACTIVE']
    infiniband = [port for port in active if port['link_layer'] == 'InfiniBand']
    roce = []
    for port in active:
        if port['link_layer'] == 'Ethernet':
            gid = training_gid(port, interface, address)
            if gid is not None:
                roce.append((port, gid))
    chosen = infiniband + [port for port, gid in roce]
    if not chosen:
        return dict(hca='', gid_index=None, reason=no_port_reason(ports, active, interface, address))
    gid_indexes = sorted(set(gid['index'] for port, gid in roce))
    gid_index = gid_indexes[0] if roce and not infiniband and len(gid_indexes) == 1 else None
    return dict(hca=hca_list(chosen), gid_index=gid_index,
                reason=chosen_reason(infiniband, roce, gid_indexes, interface, address))


def no_port_reason(ports, active, interface, address):
    if not ports:
        return 'no RDMA device: NCCL uses TCP sockets'
    if not active:
        return 'no RDMA port is ACTIVE (%s): NCCL uses TCP sockets' % ', '.join(
            '%s:%d %s' % (port['device'], port['port'], port['state'] or 'unknown') for port in ports)
    return ('no ACTIVE InfiniBand port, and no ACTIVE RoCE port has a RoCE v2 GID for %s on %s: NCCL uses TCP sockets'
            % (address or 'any address', interface or 'the training interface'))


def chosen_reason(infiniband, roce, gid_indexes, interface, address):
    parts = []
    if infiniband:
        parts.append('ACTIVE InfiniBand ports %s' % hca_list(infiniband)[1:])
    if roce:
        parts.append('RoCE ports %s with a RoCE v2 GID for %s on %s (GID index %s)' % (
            hca_list([port for port, gid in roce])[1:], address or 'an address', interface,
            ', '.join(str(index) for index in gid_indexes)))
    if roce and infiniband:
        parts.append('the GID index is left to NCCL (InfiniBand and RoCE ports together)')
    elif len(gid_indexes) > 1:
        parts.append('the GID index is left to NCCL (the RoCE ports use different indexes)')
    return '; '.join(parts)


ARGUMENT_SPEC = dict(
    interface=dict(type='str', default=''),
    address=dict(type='str', default=''),
    sysfs=dict(type='path', default='/sys'),
)
MODULE_OPTIONS = dict()


def check_inputs(params):
    """A message for the first unusable input, or None."""
    if params['interface'] and not INTERFACE_NAME.match(params['interface']):
        return 'interface %r is not a Linux interface name' % params['interface']
    if params['address']:
        try:
            ipaddress.ip_address(params['address'])
        except ValueError:
            return 'address %r is not an IP address' % params['address']
    if not os.path.isabs(params['sysfs']):
        return 'sysfs must be an absolute path, got %r' % params['sysfs']
    return None


def run(module):
    """Exit with the node's RDMA ports and the NCCL settings they imply (changes nothing)."""
    problem = check_inputs(module.params)
    if problem:
        module.fail_json(msg=problem)
    ports, refused = read_ports(module.params['sysfs'])
    for device in refused:
        module.warn('ignored the RDMA device %r: not a device name NCCL can be given' % device)
    settings = nccl_settings(ports, module.params['interface'], module.params['address'])
    module.exit_json(changed=False, ports=ports,
                     nccl_ib_hca=settings['hca'], nccl_ib_gid_index=settings['gid_index'],
                     reason=settings['reason'])
