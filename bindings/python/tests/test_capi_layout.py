"""deepgemm.capi restates deepgemm.h for ctypes; these tests hold it to the header: every constant
(enum values and #defines) with its value, every public function, and every struct's size and
field offsets as a C compiler lays them out (a small program compiled against the header)."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

import deepgemm
from deepgemm import capi

INCLUDE = os.environ.get("DEEPGEMM_TEST_INCLUDE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                                       "include")
HEADER = os.path.join(INCLUDE, "deepgemm", "deepgemm.h")
STRUCTS = [capi.dgemm_problem_t, capi.dgemm_epilogue_t, capi.dgemm_plan_options_t, capi.dgemm_args_t,
           # DGEMM_1.1 (the nested header and scale descriptors are checked as structs of their own)
           capi.dgemm_ext_header_t, capi.dgemm_scale_desc_t, capi.dgemm_scaling_t, capi.dgemm_scale_args_t,
           capi.dgemm_grouped_t, capi.dgemm_group_args_t]


def header_text():
    with open(HEADER) as f:
        return f.read()


def header_constants():
    text = re.sub(r"/\*.*?\*/", "", header_text(), flags=re.S)
    found = {}
    for name, value in re.findall(r"#define\s+(DGEMM_\w+)\s+(0x[0-9a-fA-F]+|\d+)u?\b", text):
        found[name] = int(value, 0)
    for body in re.findall(r"typedef\s+enum\s+\w+\s*\{(.*?)\}", text, flags=re.S):
        for name, value in re.findall(r"(DGEMM_\w+)\s*=\s*(\d+)", body):
            found[name] = int(value)
    return found


def test_constants_match_the_header():
    constants = header_constants()
    assert len(constants) > 40, "the header parser found too little"
    for name, value in constants.items():
        assert getattr(capi, name, None) == value, f"capi.{name} = {getattr(capi, name, None)}, deepgemm.h says {value}"
    ours = {k for k in dir(capi) if k.startswith("DGEMM_") and k != "DGEMM_VERSION_NUMBER"}
    assert ours <= set(constants), f"capi has constants the header does not: {sorted(ours - set(constants))}"
    assert capi.DGEMM_VERSION_NUMBER == capi.dgemm_version()


def test_every_function_is_declared():
    functions = re.findall(r"DGEMM_API\s+[\w\s\*]*?\b(dgemm_\w+)\s*\(", header_text())
    assert len(functions) >= 16
    missing = [f for f in functions if not callable(getattr(capi, f, None))]
    assert not missing, f"deepgemm.capi lacks {missing}"


def test_struct_layouts_match_the_compiler():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not shutil.which(cc.split()[0]) and not os.path.exists(cc):
        pytest.skip("no C compiler to lay out the header's structs")
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "deepgemm/deepgemm.h"', "int main(void) {"]
    for struct in STRUCTS:
        name = struct.__name__
        lines.append(f'  printf("{name} sizeof %zu\\n", sizeof({name}));')
        for field, _ in struct._fields_:
            lines.append(f'  printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    lines.append("  return 0;\n}\n")
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"deepgemm-layout-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    src, exe = os.path.join(work, "layout.c"), os.path.join(work, "layout")
    with open(src, "w") as f:
        f.write("\n".join(lines))
    subprocess.run([cc, "-std=c99", "-I", INCLUDE, src, "-o", exe], check=True)  # a missing field fails here
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")
    shutil.rmtree(work, ignore_errors=True)
    compiled = {tuple(line.split()[:2]): int(line.split()[2]) for line in out if line}
    for struct in STRUCTS:
        name = struct.__name__
        assert ctypes.sizeof(struct) == compiled[(name, "sizeof")], f"sizeof({name})"
        for field, _ in struct._fields_:
            assert getattr(struct, field).offset == compiled[(name, field)], f"offsetof({name}, {field})"


def test_init_functions_fill_what_ctypes_reads():
    """struct_size written by the library equals ctypes' size, and the defaults land in the right fields."""
    p = capi.dgemm_problem_t()
    assert capi.dgemm_problem_init(p) == 0
    assert p.struct_size == ctypes.sizeof(p)
    assert (p.m, p.n, p.k, p.a_type, p.compute_type, p.batch_count) == (1, 1, 1, capi.DGEMM_DTYPE_BF16,
                                                                         capi.DGEMM_DTYPE_F32, 1)
    e = capi.dgemm_epilogue_t()
    assert capi.dgemm_epilogue_init(e) == 0
    assert (e.struct_size, e.alpha, e.beta, e.flags) == (ctypes.sizeof(e), 1.0, 0.0, capi.DGEMM_EPILOGUE_SATURATE)
    a = capi.dgemm_args_t()
    assert capi.dgemm_args_init(a) == 0
    assert (a.struct_size, a.alpha, a.bias) == (ctypes.sizeof(a), 1.0, None)
    o = capi.dgemm_plan_options_t()
    assert capi.dgemm_plan_options_init(o) == 0 and o.struct_size == ctypes.sizeof(o)
    s = capi.dgemm_scaling_t()
    s.a_scale.mode = s.flags = s.reserved[7] = 0x5A  # init must clear what it does not set
    assert capi.dgemm_scaling_init(s) == 0
    assert (s.header.type, s.header.struct_size, s.header.next) == (capi.DGEMM_EXT_SCALING, ctypes.sizeof(s), None)
    assert (s.a_scale.mode, s.a_scale.type, s.flags, s.reserved[7]) == (capi.DGEMM_SCALE_NONE,
                                                                         capi.DGEMM_SCALE_TYPE_F32, 0, 0)
    sa = capi.dgemm_scale_args_t()
    assert capi.dgemm_scale_args_init(sa) == 0
    assert (sa.header.type, sa.header.struct_size, sa.a_scale, sa.amax_d) == (capi.DGEMM_EXT_SCALE_ARGS,
                                                                             ctypes.sizeof(sa), None, None)
    g = capi.dgemm_grouped_t()
    assert capi.dgemm_grouped_init(g) == 0
    assert (g.header.type, g.header.struct_size, g.layout, g.m_alignment) == (
        capi.DGEMM_EXT_GROUPED, ctypes.sizeof(g), capi.DGEMM_GROUP_CONTIGUOUS, 1)
    ga = capi.dgemm_group_args_t()
    assert capi.dgemm_group_args_init(ga) == 0
    assert (ga.header.type, ga.header.struct_size, ga.offsets) == (capi.DGEMM_EXT_GROUP_ARGS, ctypes.sizeof(ga), None)


def test_the_package_is_typed_and_loads_its_own_library():
    folder = os.path.dirname(deepgemm.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    assert os.path.realpath(capi.LIBRARY_PATH) != "", capi.LIBRARY_PATH
    assert deepgemm.__version__ == capi.dgemm_version_string()
