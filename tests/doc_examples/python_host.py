# Prelude of docs/python.md's tour: a malloc'd buffer with free as its release, a PyTorch
# tensor and a host ("pinned") array. tests/check_doc_examples.py explains preludes.
import ctypes
import numpy as np
import torch

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
rows, cols = 2, 3
size_in_bytes = rows * cols * 4
pointer = libc.malloc(size_in_bytes)
release_fn_address = ctypes.cast(libc.free, ctypes.c_void_p).value
context = pointer
torch_tensor = torch.arange(6, dtype=torch.float32)
pinned = np.zeros(4, dtype=np.float32)
