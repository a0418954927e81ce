# Prelude of docs/conformance.md's my_arrays.py: `mylib` stands for the library under test
# (here NumPy's functions), and the factory is called as dlbridge.check would.
import sys
import types
import numpy as np

sys.modules["mylib"] = types.SimpleNamespace(asarray=np.asarray, from_dlpack=np.from_dlpack)
import atexit
atexit.register(lambda: [print(label, a.shape) for label, a in arrays()])
