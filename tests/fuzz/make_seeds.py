#!/usr/bin/env python3
"""Writes the hand-made seeds of tests/fuzz/corpus/ (the input formats are the byte reads of
fuzz_import.cpp, fuzz_export.cpp and fuzz_c_api.cpp, front to back). Run from anywhere;
overwrites seed-*."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def small(v):  # Input::Int64 selector 0: a signed byte
    return [0, v & 0xFF]


def edge(i):  # Input::Int64 selector 5: kEdges[i]
    return [5, i]


def imp(shape_bits=0, option_bits=0, major=None, minor=3, flags=0, ndim=2, dtype=4, device=0,
        device_id=0, offset=0, buffer16=16, pointer=small(0), shift=0, ro=0, export_id=0,
        dims=((2, small(3)), (3, small(1))), metal=((1, 1, 1),) * 4):
    out = [shape_bits, option_bits]
    out += [0] if major is None else [0xFF] + list(major.to_bytes(4, 'little'))
    out += [minor, flags, ndim, dtype, device, device_id & 0xFF, 0, offset, buffer16]
    out += pointer + [shift, ro, export_id & 0xFF]
    for extent, stride in dims:
        out += [extent] + stride
    for storage, contents, length in metal:
        out += [storage, contents, length]
    return bytes(out)


def exp(mode=0, hold=1, alloc_hi=16, alloc_lo=0, trim=(1,), dtype=4, ndim=2,
        dims=((0, 2, small(3)), (0, 3, small(1))), offset=(0, 0), space=0, device=(), flags=0,
        options=0, device_id=0):
    out = [mode, hold, alloc_hi, alloc_lo] + ([] if mode & 0x20 else list(trim)) + [dtype, ndim]
    for sel, extent, stride in dims:
        out += [sel, extent] + ([] if mode & 4 else stride)
    out += list(offset) + [space] + list(device) + [flags, options, device_id & 0xFF]
    return bytes(out)


IMPORT = {
    'seed-versioned-2x3': imp(),
    'seed-versioned-reexport': imp(shape_bits=0x40),
    'seed-legacy-null-strides-reexport-legacy': imp(shape_bits=0x1 | 0x20 | 0x40 | 0x80),
    'seed-versioned-negative-stride-offset': imp(offset=8, dims=((4, small(-1)),), ndim=1),
    'seed-wrong-major': imp(major=2),
    'seed-ndim-65': imp(ndim=200 + 5),
    'seed-null-deleter-cuda': imp(shape_bits=0x2, device=1, device_id=1),
    'seed-metal-shared': imp(option_bits=0x10, device=7, shape_bits=0x8, pointer=small(1),
                             metal=((0, 1, 1),) * 4),
    'seed-oneapi-context': imp(option_bits=0x8 | 0x80, device=6, shape_bits=0x40),
    'seed-fp4-packed': imp(dtype=13, dims=((5, small(1)),), ndim=1),
    'seed-zero-extent-null-data': imp(shape_bits=0x4, dims=((0, small(1)), (3, small(1)))),
}
EXPORT = {
    'seed-versioned-2x3-release': exp(),
    'seed-legacy-owner-contiguous': exp(mode=0x1 | 0x4, hold=2),
    'seed-roundtrip-negative-stride': exp(mode=0x2, ndim=1, dims=((0, 4, small(-1)),), offset=(1, 12)),
    'seed-too-large': exp(alloc_hi=1, ndim=1, dims=((0, 8, small(1)),)),
    'seed-cuda-device': exp(mode=0x10, space=1, device=(1, 1)),
    'seed-level-zero': exp(space=3, options=0x6),
    'seed-read-only-legacy': exp(mode=0x1, options=0x1),
    'seed-fp4-odd': exp(dtype=11, ndim=1, dims=((0, 7, small(1)),)),
    'seed-null-descriptor-empty': exp(mode=0x20, ndim=1, dims=((0, 0, small(1)),)),
    'seed-stride-overflow': exp(ndim=2, dims=((0, 3, edge(3)), (0, 2, small(1)))),
}



# fuzz_c_api: mode (ops in the low 4 bits, 0x10 export, 0x20 more ops, 0x40 import), the
# allocation (two bytes: 16 * high + low), then each op, the export and the import.
def c_set(size_minus=0, space=0, role=0):  # op 0: dlb_descriptor_set(base, allocation - k, ...)
    return [0, 0, 0, size_minus, space, role]


def c_export(bits=0, dtype=3, dims=((4, small(1)),), ndim=None, offset=(0, 0), flags=0,
             option_bits=0, options=(3,), then=(1,)):
    ndim_sel = [len(dims)] if ndim is None else [250, ndim & 0xFF]
    out = [bits, dtype] + ndim_sel
    for extent, stride in dims:
        out += [extent] + stride
    return out + list(offset) + [flags, option_bits, 1] + list(options) + list(then)


def c_import(bits=0, dims=((2, small(2)), (2, small(1))), dtype=0, major=0, minor=3):
    out = [bits, len(dims)]
    for extent, stride in dims:
        out += [extent] + stride
    out += [1, 0, 1, 0, dtype, 0, 0, 3, 1, 1]  # data = buffer, CPU, byte_offset 0, options
    if not bits & 1:
        out += [major, minor, 0]
    return out


def c_api(mode, ops=(), export=(), more=(), imported=(), allocation=(1, 0)):
    out = [mode] + list(allocation)
    for op in ops:
        out += op
    out += list(export)
    for op in more:
        out += op
    return bytes(out + list(imported))


C_API = {
    'seed-set-export-delete': c_api(0x11, [c_set()], c_export()),
    'seed-set-export-import-back': c_api(0x11, [c_set()], c_export(then=(0, 0, 1, 1))),
    'seed-legacy-export-2d': c_api(0x11, [c_set()],
                                   c_export(bits=1, dims=((2, small(2)), (2, small(1))))),
    'seed-release-take-clear': c_api(0x04, [[5, 1], [7, 1], [5, 0], [6, 0]]),
    'seed-null-arguments': c_api(0x01, [[8]]),
    'seed-getters-after-release': c_api(0x02, [[5, 1], [10]]),
    'seed-import-versioned': c_api(0x40, imported=c_import()),
    'seed-import-legacy-null-deleter': c_api(0x40, imported=c_import(bits=0x07)),
    'seed-import-wrong-major': c_api(0x40, imported=c_import(major=0xF0)),
    'seed-export-short-options': c_api(0x11, [c_set()], c_export(options=(1, 4))),
    'seed-export-options-tail': c_api(0x11, [c_set()], c_export(options=(2, 1, 3))),
    'seed-export-int4-odd': c_api(0x11, [c_set()], c_export(dtype=8, dims=((5, small(1)),))),
    'seed-export-ndim-100': c_api(0x11, [c_set()], c_export(ndim=100, dims=())),
    'seed-export-out-of-bounds': c_api(0x11, [c_set(size_minus=4)], c_export()),
    'seed-bad-space-and-role': c_api(0x02, [c_set(space=5), c_set(role=3)]),
}

for target, seeds in (('fuzz_import', IMPORT), ('fuzz_export', EXPORT), ('fuzz_c_api', C_API)):
    folder = os.path.join(HERE, 'corpus', target)
    os.makedirs(folder, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(folder, name), 'wb') as f:
            f.write(data)
