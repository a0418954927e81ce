"""Factories for `python3 -m dlbridge.check module:factory` on the peers of spec/reports/
(pyarrow-25.0.0.md, nanobind-2.12.0.md), in the form the checker's --help describes: a callable
returning an iterable of (label, array) pairs. Run from a build tree with the peers installed:

    PYTHONPATH=<build>/python:<build>/tests/peers:tests/peers \
        python3 -m dlbridge.check peer_factories:pyarrow_arrays --markdown -
    ... python3 -m dlbridge.check peer_factories:nanobind_arrays --markdown -
"""
import numpy as np


def pyarrow_arrays():
    """pyarrow's numeric arrays: whole, sliced (an offset into the buffer), empty; and the two it
    refuses (nulls, booleans). pyarrow has no from_dlpack: the consumer side is not applicable."""
    import pyarrow as pa
    for dtype in ("int8", "uint16", "int32", "int64", "float16", "float32", "float64"):
        base = np.arange(24).astype(dtype)
        whole = pa.array(base)
        yield "%s 1-d" % dtype, whole
        yield "%s sliced [5:17]" % dtype, whole.slice(5, 12)
        yield "%s empty" % dtype, pa.array(base[:0])
    yield "int32 with a null", pa.array([1, None, 3], type=pa.int32())
    yield "bool", pa.array([True, False, True])


def nanobind_arrays():
    """nb::ndarray results of tests/peers/nanobind_peer (nanobind.nb_ndarray, float32): C order,
    transposed, every other column, read-only, zero-size. The consumer is an nb::ndarray
    parameter (nanobind_peer.from_dlpack returns nanobind's view of what it imported)."""
    import nanobind_peer as nbp
    for layout in ("c", "t", "step2"):
        yield "float32 %s" % layout, nbp.make(4, 6, layout)
        yield "float32 %s read-only" % layout, nbp.make_read_only(4, 6, layout)
    yield "float32 zero-size", nbp.make(0, 3)


def _nanobind_from_dlpack(x):
    import nanobind_peer as nbp
    return nbp.from_dlpack(x)


nanobind_arrays.from_dlpack = _nanobind_from_dlpack
