"""The type stubs (polygpu/*.pyi) against the package as it runs: every public name, class
member and protocol method polygpu has at run time is in the stubs, and the other way round,
so the stubs cannot silently drift. The stubs are read with ast; mypy itself checks them in
the CTest test python_types (check_types.py)."""

import ast
import inspect
import os
import sys

import pytest

import polygpu as pg

STUB_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "polygpu")
STUB_MODULES = ("polygpu", "polygpu._polygpu", "polygpu._runtime", "polygpu._default")

# Dunders every class has, or that stubs leave to object's: not part of the typed interface.
IGNORED_DUNDERS = {"__doc__", "__module__", "__dict__", "__weakref__", "__repr__", "__str__",
                   "__new__", "__hash__", "__qualname__", "__init_subclass__"}
# Present at run time but deliberately not in the stubs, with the reason.
NOT_STUBBED = {
    ("DeviceArray", "__delitem__"): "the mapping slot exists only to refuse `del a[i]`",
}
# In the stubs though absent at run time on this Python, with the reason.
STUB_ONLY = {}
if sys.version_info < (3, 12):  # PEP 688: Python 3.12 exposes the buffer slots by these names
    for cls in ("DeviceArray", "HostView"):
        for name in ("__buffer__", "__release_buffer__"):
            STUB_ONLY[(cls, name)] = "the buffer protocol, spelled as PEP 688 types it"


def stub_path(module):
    name = "__init__" if module == "polygpu" else module.rsplit(".", 1)[1]
    return os.path.join(STUB_DIR, name + ".pyi")


class Stubs:
    """The stub files as ast: module-level names and classes, with imports followed."""

    def __init__(self):
        self.trees = {}
        for m in STUB_MODULES:
            with open(stub_path(m), encoding="utf-8") as f:
                self.trees[m] = ast.parse(f.read(), stub_path(m))
        self.names = {m: self._module_names(m, t.body) for m, t in self.trees.items()}

    def _module_names(self, module, body):
        names = {}
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names[node.name] = ("def", node)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names[node.target.id] = ("def", node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        names[t.id] = ("def", node)
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(module, node)
                for a in node.names:
                    names[a.asname or a.name] = ("import", base, a.name)
            elif isinstance(node, ast.If):  # sys.version_info branches: either one counts
                names.update(self._module_names(module, node.body + node.orelse))
        return names

    @staticmethod
    def _absolute(module, node):
        if not node.level:
            return node.module
        package = module if module == "polygpu" else module.rsplit(".", 1)[0]
        return package + ("." + node.module if node.module else "")

    def resolve(self, module, name):
        """(module, node) of what `name` is in stub `module`; a module for a submodule import;
        None when it is not there (or comes from outside polygpu)."""
        entry = self.names.get(module, {}).get(name)
        if entry is None:
            return None
        if entry[0] == "def":
            return module, entry[1]
        _, base, orig = entry
        if base + "." + orig in self.trees:
            return base + "." + orig, None  # `from . import _polygpu`
        if base in self.trees:
            return self.resolve(base, orig)
        return None

    def class_def(self, module, name):
        found = self.resolve(module, name)
        assert found is not None, "%s is not in the stubs of %s" % (name, module)
        assert isinstance(found[1], ast.ClassDef), "%s.%s is not a class in the stubs" % (
            module, name)
        return found

    def base_names(self, cls_node):
        return [b.attr if isinstance(b, ast.Attribute) else b.id for b in cls_node.bases]

    def _base_defs(self, module, cls_node):
        for b in cls_node.bases:
            if isinstance(b, ast.Name):
                found = self.resolve(module, b.id)
            elif isinstance(b, ast.Attribute) and isinstance(b.value, ast.Name):
                mod = self.resolve(module, b.value.id)
                found = self.resolve(mod[0], b.attr) if mod and mod[1] is None else None
            else:
                found = None
            if found and isinstance(found[1], ast.ClassDef):
                yield found

    def members(self, module, cls_node):
        """{name: node} of a stub class, with what it inherits from polygpu's stub classes."""
        out = {}
        for m, base in self._base_defs(module, cls_node):
            out.update(self.members(m, base))
        for node in cls_node.body:
            if isinstance(node, ast.FunctionDef):
                out[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out[node.target.id] = node
        return out


@pytest.fixture(scope="module")
def stubs():
    return Stubs()


def public_names(module):
    return sorted(n for n in dir(module) if not n.startswith("_") or n == "__version__")


def runtime_classes():
    return sorted(n for n in public_names(pg) if inspect.isclass(getattr(pg, n)))


def runtime_members(cls):
    """Public and protocol members of a polygpu class, its polygpu bases' included."""
    out = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("polygpu"):
            continue  # object, Exception, TypeError...: typeshed's
        for name, value in vars(klass).items():
            dunder = name.startswith("__") and name.endswith("__")
            if (dunder and name not in IGNORED_DUNDERS) or not name.startswith("_"):
                out[name] = value
    return out


def is_property(stub_node):
    if isinstance(stub_node, ast.AnnAssign):
        return True
    return any(isinstance(d, ast.Name) and d.id == "property" for d in stub_node.decorator_list)


def test_stubs_are_installed_with_the_package():
    """py.typed and the stubs sit next to the modules that are imported (the build tree, or
    the installed package), so type checkers find them."""
    here = os.path.dirname(pg.__file__)
    assert os.path.isfile(os.path.join(here, "py.typed"))
    for m in STUB_MODULES:
        assert os.path.isfile(os.path.join(here, os.path.basename(stub_path(m)))), m


def missing_module_names(stubs):
    return [n for n in public_names(pg) if stubs.resolve("polygpu", n) is None]


def missing_members(stubs, name):
    module, node = stubs.class_def("polygpu", name)
    members = stubs.members(module, node)
    return sorted(n for n in runtime_members(getattr(pg, name))
                  if n not in members and (name, n) not in NOT_STUBBED)


def test_every_module_name_is_stubbed(stubs):
    missing = missing_module_names(stubs)
    assert not missing, "polygpu names missing from polygpu/__init__.pyi: %s" % missing
    declared = ast.literal_eval(stubs.names["polygpu"]["__all__"][1].value)
    assert sorted(declared) == sorted(pg.__all__), "__all__ of the stubs and of polygpu"


def test_every_stubbed_name_exists(stubs):
    for m in STUB_MODULES:
        module = sys.modules[m]
        own = [n for n, e in stubs.names[m].items()
               if e[0] == "def" or e[1].startswith("polygpu")]  # not typing's, numpy's...
        extra = [n for n in own if not n.startswith("_") and not hasattr(module, n)]
        assert not extra, "%s.pyi declares names %s that %s does not have" % (m, extra, m)


@pytest.mark.parametrize("name", runtime_classes())
def test_class_matches_stub(stubs, name):
    cls = getattr(pg, name)
    module, node = stubs.class_def("polygpu", name)
    runtime_bases = [b.__name__ for b in cls.__bases__ if b is not object]
    assert stubs.base_names(node) == runtime_bases, "bases of %s" % name
    members = stubs.members(module, node)
    runtime = runtime_members(cls)
    missing = missing_members(stubs, name)
    assert not missing, "%s members missing from %s.pyi: %s" % (name, module, missing)
    extra = sorted(n for n in members if not n.startswith("_") or n.endswith("__"))
    extra = [n for n in extra if not hasattr(cls, n) and (name, n) not in STUB_ONLY]
    assert not extra, "%s.pyi gives %s members it does not have: %s" % (module, name, extra)
    for n, value in runtime.items():
        if n not in members or n.startswith("__"):
            continue
        runtime_property = inspect.isdatadescriptor(value) or not callable(value)
        assert is_property(members[n]) == runtime_property, (
            "%s.%s: a %s at run time" % (name, n, "property" if runtime_property else "method"))


def stub_parameters(fn):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    if a.vararg:
        names.append(a.vararg.arg)
    names += [p.arg for p in a.kwonlyargs]
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def runtime_parameters(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None  # no text signature to compare
    return [p for p in sig.parameters if p not in ("self", "$self")]


def callables():
    """(label, runtime object, class name or None, name) for every public function and
    method whose parameters can be read at run time: Python functions, and C methods whose
    docstring starts with a text signature ("name(a, b=None)\n--\n\n"). C slots
    (k(...), g()) show only (*args, **kwargs), and are left out."""
    found = []
    for n in public_names(pg):
        obj = getattr(pg, n)
        if inspect.isclass(obj):
            for m, value in runtime_members(obj).items():
                if callable(value) and not inspect.isdatadescriptor(value) and (
                        (n, m) not in NOT_STUBBED):
                    found.append(("%s.%s" % (n, m), getattr(obj, m), n, m))
        elif callable(obj):
            found.append((n, obj, None, n))
    out = []
    for label, obj, cls, name in found:
        params = runtime_parameters(obj)
        if params is None or (params == ["args", "kwargs"] and not inspect.isfunction(obj)):
            continue
        out.append((label, obj, cls, name))
    return out


CALLABLES = callables()


@pytest.mark.parametrize("label,obj,cls,name", CALLABLES, ids=[c[0] for c in CALLABLES])
def test_parameters_match_stub(stubs, label, obj, cls, name):
    """Parameter names as the run time shows them (Python signatures, C text signatures):
    a parameter added or renamed in the C code's docstring must be added to the stubs."""
    if cls is None:
        module, node = stubs.resolve("polygpu", name)
    else:
        module, cls_node = stubs.class_def("polygpu", cls)
        node = stubs.members(module, cls_node).get(name)
        if node is None:
            pytest.fail("%s is missing from the stubs" % label)
    params = runtime_parameters(obj)
    assert stub_parameters(node) == params, "%s parameters" % label
    if inspect.isfunction(obj):  # Python code: the kinds and defaults are exact too
        sig = inspect.signature(obj)
        a = node.args
        stub_defaults = {p.arg for p in (a.posonlyargs + a.args)[len(a.posonlyargs + a.args)
                                                                 - len(a.defaults):]}
        stub_defaults |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        run_defaults = {p.name for p in sig.parameters.values()
                        if p.default is not inspect.Parameter.empty}
        assert stub_defaults == run_defaults, "%s: parameters with defaults" % label


def test_buffer_protocol_is_stubbed(stubs):
    """DeviceArray and HostView export buffers (memoryview, np.asarray): their stubs say so
    with PEP 688's __buffer__, which is how type checkers accept them in memoryview()."""
    rt = pg.Runtime(devices="host:1")
    try:
        a = rt.array("float32", 4)
        for obj in (a, a.host_view(True)):
            with memoryview(obj):
                pass
            module, node = stubs.class_def("polygpu", type(obj).__name__)
            members = stubs.members(module, node)
            assert "__buffer__" in members and "__release_buffer__" in members, type(obj)
        a.free()
    finally:
        rt.close()


def literal_values(annotation):
    return [n.value for n in ast.walk(annotation)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# A valid value for each Runtime option the stubs type without a Literal.
OPTION_SAMPLES = {"devices": "host:1", "policy": "round-robin", "prefetch": True,
                  "interconnect": "default", "exploration_threshold": 0.25,
                  "device_memory_limit": "64M", "elide_copies": True}


def test_runtime_options(stubs, tmp_path):
    """Every keyword of Runtime.__init__ in the stubs is an option the runtime takes (each
    of a Literal's values too) and is explained in help(polygpu.Runtime)."""
    module, node = stubs.class_def("polygpu", "Runtime")
    init = stubs.members(module, node)["__init__"]
    assert not init.args.args[1:] and init.args.kwonlyargs, "options are keyword-only"
    for arg in init.args.kwonlyargs:
        assert "``%s``" % arg.arg in pg.Runtime.__doc__, "help(Runtime) omits %s" % arg.arg
        values = literal_values(arg.annotation)
        if arg.arg in ("trace", "cache_dir"):
            values = [str(tmp_path / arg.arg)]
        elif not values:
            assert arg.arg in OPTION_SAMPLES, "a sample value for option %s" % arg.arg
            values = [OPTION_SAMPLES[arg.arg]]
        for v in values:
            options = {"devices": "host:1", arg.arg: v}
            pg.Runtime(**options).close()
    with pytest.raises(pg.ArgumentError):
        pg.Runtime(devices="host:1", no_such_option="1")


def test_missing_name_is_caught(stubs, monkeypatch):
    """The checks fail when the run time grows a name or a method the stubs lack."""
    assert missing_module_names(stubs) == []
    monkeypatch.setattr(pg, "brand_new_function", lambda: None, raising=False)
    assert missing_module_names(stubs) == ["brand_new_function"]
    assert missing_members(stubs, "Runtime") == []
    monkeypatch.setattr(pg.Runtime, "brand_new_method", lambda self: None, raising=False)
    assert missing_members(stubs, "Runtime") == ["brand_new_method"]
