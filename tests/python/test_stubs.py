"""Text signatures and the type stubs that ship with the package (spec/python.md PY-29, PY-30).

The stubs are parsed with `ast` (nothing of them is imported) and compared with the built
extension: the same names, the same parameters (name, kind, default) and the same attributes."""
import ast
import ctypes
import inspect
import os
import types
import unittest

import dlbridge
from dlbridge import _dlbridge

PACKAGE_DIR = os.path.dirname(os.path.abspath(dlbridge.__file__))
METHOD_DESCRIPTOR = type(_dlbridge.MemoryDescriptor.Set)
GETSET_DESCRIPTOR = type(_dlbridge.Tensor.shape)

_KINDS = inspect.Parameter


def runtime_callables():
    """(name, object) for every function, class and method (PyMethodDef) of the extension."""
    found = []
    for name in sorted(dir(_dlbridge)):
        value = getattr(_dlbridge, name)
        if isinstance(value, types.BuiltinFunctionType):
            found.append((name, value))
        elif isinstance(value, type):
            found.append((name, value))
            for attr, member in sorted(vars(value).items()):
                if isinstance(member, METHOD_DESCRIPTOR):
                    found.append(("%s.%s" % (name, attr), member))
    return found


def class_members(cls):
    """The names a stub of `cls` must declare: its methods, properties and class attributes
    (not what every type has: __new__, __repr__'s slot wrapper, __doc__, __module__)."""
    names = set()
    for attr, member in vars(cls).items():
        if isinstance(member, (METHOD_DESCRIPTOR, GETSET_DESCRIPTOR)):
            names.add(attr)
        elif attr not in ("__new__", "__doc__", "__module__") and \
                not isinstance(member, types.WrapperDescriptorType):
            names.add(attr)
    return names


def stub_signature(node, drop_first=False):
    """An inspect.Signature from a stub's `def` (annotations left out: only the shape counts)."""
    args = node.args
    params = []
    positional = [(a, _KINDS.POSITIONAL_ONLY) for a in args.posonlyargs] + \
                 [(a, _KINDS.POSITIONAL_OR_KEYWORD) for a in args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (arg, kind), default in zip(positional, defaults):
        params.append(inspect.Parameter(arg.arg, kind, default=_default(default)))
    if args.vararg is not None:
        params.append(inspect.Parameter(args.vararg.arg, _KINDS.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(inspect.Parameter(arg.arg, _KINDS.KEYWORD_ONLY, default=_default(default)))
    if args.kwarg is not None:
        params.append(inspect.Parameter(args.kwarg.arg, _KINDS.VAR_KEYWORD))
    if drop_first:
        params = params[1:]
    return inspect.Signature(params)


def _default(node):
    return _KINDS.empty if node is None else ast.literal_eval(node)


def shape_of(signature):
    """What the stubs and the text signatures must agree on (annotations aside)."""
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


class Stubs:
    """_dlbridge.pyi and __init__.pyi, parsed."""

    def __init__(self):
        with open(os.path.join(PACKAGE_DIR, "_dlbridge.pyi"), encoding="utf-8") as f:
            self.module = ast.parse(f.read(), "_dlbridge.pyi")
        with open(os.path.join(PACKAGE_DIR, "__init__.pyi"), encoding="utf-8") as f:
            self.package = ast.parse(f.read(), "__init__.pyi")
        self.functions = {}  # "name" or "Class.name" -> FunctionDef
        self.final = set()  # classes marked @final
        self.properties = {}  # "Class.name" -> has a setter
        self.classes = {}
        self.variables = {}  # module-level "name: annotation" -> annotation source
        self.class_variables = {}
        for node in self.module.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.variables[node.target.id] = ast.unparse(node.annotation)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
                if any(ast.unparse(d) in ("final", "typing.final") for d in node.decorator_list):
                    self.final.add(node.name)
                for item in node.body:
                    self._class_item(node.name, item)

    def _class_item(self, cls, item):
        if isinstance(item, ast.AnnAssign):
            self.class_variables["%s.%s" % (cls, item.target.id)] = ast.unparse(item.annotation)
            return
        if not isinstance(item, ast.FunctionDef):
            return
        decorators = [ast.unparse(d) for d in item.decorator_list]
        key = "%s.%s" % (cls, item.name)
        if "property" in decorators:
            self.properties[key] = False
        elif any(d.endswith(".setter") for d in decorators):
            self.properties[key] = True
        else:
            self.functions[key] = item

    def members(self, cls):
        prefix = cls + "."
        names = {k[len(prefix):] for k in list(self.functions) + list(self.properties) +
                 list(self.class_variables) if k.startswith(prefix)}
        names.discard("__init__")  # the class's own signature, checked as the class
        return names


def sample(cls):
    """An instance to bind methods to and to read attributes from."""
    if cls is _dlbridge.MemoryDescriptor:
        return cls()
    buffer = (ctypes.c_float * 4)()
    md = _dlbridge.MemoryDescriptor(ctypes.addressof(buffer), ctypes.sizeof(buffer), "host")
    md.SetOwner(buffer)
    return _dlbridge.Tensor(md, "float32", (4,))


class TextSignatures(unittest.TestCase):
    def test_py29_every_callable_has_a_text_signature(self):
        callables = runtime_callables()
        self.assertGreater(len(callables), 20)
        for name, obj in callables:
            with self.subTest(name):
                try:
                    signature = inspect.signature(obj)
                except ValueError as e:
                    self.fail("inspect.signature(%s) fails: %s" % (name, e))
                if isinstance(obj, METHOD_DESCRIPTOR):
                    first = next(iter(signature.parameters.values()))
                    self.assertEqual((first.name, first.kind), ("self", _KINDS.POSITIONAL_ONLY))
                # The docstring keeps its text once CPython has taken the signature off.
                self.assertTrue(obj.__doc__ and not obj.__doc__.startswith("--"), name)
                self.assertNotIn("\n--\n", obj.__doc__, name)

    def test_py29_named_examples(self):
        self.assertEqual(str(inspect.signature(dlbridge.from_dlpack)),
                         "(x, /, *, device=None, copy=None, stream=None)")
        self.assertEqual(str(inspect.signature(dlbridge.Tensor.__dlpack__)),
                         "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)")
        self.assertEqual(str(inspect.signature(dlbridge.MemoryDescriptor.SetOwner)),
                         "(self, obj, /)")
        self.assertEqual(str(inspect.signature(dlbridge.MemoryDescriptor().Set)),
                         "(pointer, size_in_bytes, memory_space, role='data')")
        self.assertEqual(str(inspect.signature(dlbridge.Tensor)),
                         "(descriptor, dtype, shape, strides=None, byte_offset=0, device=None, "
                         "flags=0, *, allow_unowned=False, stream=None)")

    def test_py29_signatures_say_what_the_functions_accept(self):
        # Positional-only parameters refuse keywords; keyword-only ones refuse positions;
        # methods with no parameters take none and work on a fresh object.
        for name, obj in runtime_callables():
            if isinstance(obj, type):
                continue
            if isinstance(obj, METHOD_DESCRIPTOR):
                owner = getattr(_dlbridge, name.split(".")[0])
                bound = getattr(sample(owner), obj.__name__)
            else:
                bound = obj
            params = list(inspect.signature(bound).parameters.values())
            # A keyword-only parameter given by position comes after the positional ones.
            positional = [None] * sum(p.kind is _KINDS.POSITIONAL_ONLY for p in params)
            with self.subTest(name):
                for p in params:
                    if p.kind is _KINDS.POSITIONAL_ONLY:
                        with self.assertRaisesRegex(TypeError, "keyword"):
                            bound(**{p.name: 0})
                    elif p.kind is _KINDS.KEYWORD_ONLY:
                        with self.assertRaisesRegex(TypeError, "keyword"):
                            bound(*positional, p.default)
                if not params:
                    bound()
                    with self.assertRaises(TypeError):
                        bound(0)

    def test_py29_keywords_and_defaults_are_the_real_ones(self):
        md_sig = inspect.signature(dlbridge.MemoryDescriptor)
        md = dlbridge.MemoryDescriptor()
        defaults = {n: p.default for n, p in md_sig.parameters.items()}
        self.assertEqual(defaults, {"pointer": 0, "size_in_bytes": 0, "memory_space": "host",
                                    "role": "data"})
        self.assertEqual((md.GetPointer(), md.GetSizeInBytes(), md.GetMemorySpace(), md.GetRole()),
                         (defaults["pointer"], defaults["size_in_bytes"], defaults["memory_space"],
                          defaults["role"]))
        buffer = (ctypes.c_float * 6)()
        md = dlbridge.MemoryDescriptor(pointer=ctypes.addressof(buffer),
                                       size_in_bytes=ctypes.sizeof(buffer), memory_space="host",
                                       role="weights")
        md.Set(pointer=ctypes.addressof(buffer), size_in_bytes=ctypes.sizeof(buffer),
               memory_space="host")
        self.assertEqual(md.GetRole(), inspect.signature(md.Set).parameters["role"].default)
        md.SetOwner(buffer)
        t_sig = inspect.signature(dlbridge.Tensor)
        t = dlbridge.Tensor(descriptor=md, dtype="float32", shape=(2, 3))
        explicit = dlbridge.Tensor(descriptor=dlbridge.MemoryDescriptor(
            ctypes.addressof(buffer), ctypes.sizeof(buffer), "host"), dtype="float32",
            shape=(2, 3), **{n: p.default for n, p in t_sig.parameters.items()
                             if p.default is not _KINDS.empty})
        for attr in ("strides", "byte_offset", "device", "flags"):
            self.assertEqual(getattr(t, attr), getattr(explicit, attr), attr)
        self.assertEqual(t.strides, (3, 1))
        d_sig = inspect.signature(t.__dlpack__)
        capsule = t.__dlpack__(**{n: p.default for n, p in d_sig.parameters.items()})
        self.assertIn('"dltensor"', repr(capsule))  # max_version=None: the legacy capsule


class TypeStubs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stubs = Stubs()

    def test_py30_every_callable_matches_its_stub(self):
        for name, obj in runtime_callables():
            with self.subTest(name):
                if isinstance(obj, type):
                    node = self.stubs.functions.get(name + ".__init__")
                    self.assertIsNotNone(node, "_dlbridge.pyi: class %s has no __init__" % name)
                    expected = stub_signature(node, drop_first=True)
                else:
                    node = self.stubs.functions.get(name)
                    self.assertIsNotNone(node, "_dlbridge.pyi has no %s" % name)
                    expected = stub_signature(node)
                self.assertEqual(shape_of(inspect.signature(obj)), shape_of(expected),
                                 "%s: text signature %s, stub %s"
                                 % (name, inspect.signature(obj), expected))

    def test_py30_stubs_name_nothing_the_module_lacks(self):
        runtime = {name for name, _ in runtime_callables()}
        stubbed = {k for k in self.stubs.functions if not k.endswith(".__init__")}
        self.assertEqual(stubbed - runtime, set())
        self.assertEqual(set(self.stubs.classes),
                         {n for n in dir(_dlbridge) if isinstance(getattr(_dlbridge, n), type)})

    def test_py30_attributes_and_properties_match(self):
        for cls_name in self.stubs.classes:
            cls = getattr(_dlbridge, cls_name)
            with self.subTest(cls_name):
                self.assertEqual(self.stubs.members(cls_name), class_members(cls))
                subclassable = bool(cls.__flags__ & (1 << 10))  # Py_TPFLAGS_BASETYPE
                self.assertEqual(cls_name in self.stubs.final, not subclassable,
                                 "@final in the stub exactly when the type is not subclassable")
                obj = sample(cls)
                for key, settable in self.stubs.properties.items():
                    if not key.startswith(cls_name + "."):
                        continue
                    attr = key.split(".", 1)[1]
                    self.assertIsInstance(vars(cls)[attr], GETSET_DESCRIPTOR, key)
                    value = getattr(obj, attr)
                    if settable:
                        setattr(obj, attr, value)
                    else:
                        with self.assertRaises(AttributeError, msg=key + " is read-only"):
                            setattr(obj, attr, value)

    def test_py30_module_constants_match(self):
        runtime = {n for n in dir(_dlbridge)
                   if not callable(getattr(_dlbridge, n)) and
                   (not n.startswith("__") or n == "__version__")}
        self.assertEqual(set(self.stubs.variables), runtime)
        for name, annotation in self.stubs.variables.items():
            value = getattr(_dlbridge, name)
            with self.subTest(name):
                if annotation == "int":
                    self.assertIs(type(value), int)
                elif annotation == "str":
                    self.assertIs(type(value), str)
                elif annotation == "Tuple[int, int]":
                    self.assertTrue(isinstance(value, tuple) and len(value) == 2 and
                                    all(type(v) is int for v in value), value)
                else:
                    self.fail("test_stubs.py does not know the annotation %r" % annotation)

    def test_py30_package_stub_reexports_what_the_package_does(self):
        reexported = set()
        stub_all = None
        for node in self.stubs.package.body:
            if isinstance(node, ast.ImportFrom) and node.module == "_dlbridge" and node.level == 1:
                for alias in node.names:
                    # "X as X": the explicit re-export form type checkers honour.
                    self.assertEqual(alias.asname, alias.name)
                    reexported.add(alias.name)
            elif isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
                stub_all = ast.literal_eval(node.value)
        package_names = {n for n in dir(_dlbridge) if not n.startswith("__")} | {"__version__"}
        self.assertEqual(reexported, package_names)
        self.assertEqual(sorted(stub_all), sorted(dlbridge.__all__))

    def test_py30_py_typed_and_stubs_ship_in_the_package(self):
        for name in ("py.typed", "__init__.pyi", "_dlbridge.pyi"):
            self.assertTrue(os.path.isfile(os.path.join(PACKAGE_DIR, name)),
                            "%s is missing from %s" % (name, PACKAGE_DIR))
        with open(os.path.join(PACKAGE_DIR, "py.typed"), encoding="utf-8") as f:
            self.assertNotIn("partial", f.read())  # the stubs are complete (PEP 561)


if __name__ == "__main__":
    unittest.main()
