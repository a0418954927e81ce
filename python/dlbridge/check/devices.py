"""The DLPack device types, from the compiled module's device table (the core's
src/devices/device_map.cpp through ``dlbridge._device_table()``), so the checker names and sorts devices
as dlbridge does and keeps no table of its own."""
import dlbridge

# (device_type, name, address_arithmetic, host_accessible) per row of the core's table.
_TABLE = dlbridge._device_table()
_BY_NAME = {name: device_type for device_type, name, _address, _host in _TABLE}
_DEVICE_NAMES = {device_type: name for device_type, name, _address, _host in _TABLE}

KDLCPU, KDLCUDA, KDLCUDAHOST, KDLROCM, KDLCUDAMANAGED = (
    _BY_NAME[n] for n in ("kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLROCM", "kDLCUDAManaged"))
KDLHEXAGON = _BY_NAME["kDLHexagon"]  # no Python array library imports it (the unsupported-device probe)
# Device types whose data is no address byte arithmetic may move (handles such as cl_mem,
# VkBuffer, MTLBuffer, WGPUBuffer, and types no memory space describes): byte_offset is how they
# locate element zero.
_NO_ADDRESS_DEVICES = {t: name for t, name, address, _host in _TABLE if not address}
# Device types whose memory the CPU reads at its own address (CPU, pinned and managed memory).
HOST_ACCESSIBLE = frozenset(t for t, _name, _address, host in _TABLE if host)


def _device_name(device_type):
    return _DEVICE_NAMES.get(device_type, "device type %d" % device_type)
