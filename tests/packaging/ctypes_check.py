"""ctypes_check.py - loads libdeepgemm.so.1 from Python with ctypes alone, without the deepgemm package or any
build step, the way a runtime that only has a C FFI would: checks the versioned entry points, the
status strings, and that a bad argument gives a status plus a message naming the argument.

Usage: python3 ctypes_check.py [path-or-soname]   (default: libdeepgemm.so.1 via the loader path)
"""
import ctypes
import sys

INVALID_ARGUMENT = 1  # DGEMM_STATUS_INVALID_ARGUMENT, fixed forever by the header
DEVICE_CPU = 2        # DGEMM_DEVICE_CPU


def main(argv):
    name = argv[1] if len(argv) > 1 else "libdeepgemm.so.1"
    lib = ctypes.CDLL(name, mode=ctypes.RTLD_LOCAL)

    lib.dgemm_version.restype = ctypes.c_uint
    lib.dgemm_version_string.restype = ctypes.c_char_p
    lib.dgemm_status_string.restype = ctypes.c_char_p
    lib.dgemm_status_string.argtypes = [ctypes.c_int]
    lib.dgemm_last_error.restype = ctypes.c_char_p
    lib.dgemm_context_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    lib.dgemm_context_destroy.argtypes = [ctypes.c_void_p]

    version = lib.dgemm_version()
    text = lib.dgemm_version_string().decode()
    major, minor, patch = (int(x) for x in text.split("."))
    assert version == major * 10000 + minor * 100 + patch, (version, text)
    assert major == 1, text
    assert lib.dgemm_status_string(INVALID_ARGUMENT) == b"DGEMM_STATUS_INVALID_ARGUMENT"
    assert lib.dgemm_status_string(12345) == b"DGEMM_STATUS_UNKNOWN"

    ctx = ctypes.c_void_p(0)
    status = lib.dgemm_context_create(99, 0, ctypes.byref(ctx))
    assert status == INVALID_ARGUMENT, status
    assert ctx.value is None, "context written on failure"
    message = lib.dgemm_last_error().decode()
    assert "kind" in message, message

    status = lib.dgemm_context_create(DEVICE_CPU, 0, ctypes.byref(ctx))
    assert status == 0, lib.dgemm_last_error()
    assert ctx.value
    assert lib.dgemm_last_error() == b""
    assert lib.dgemm_context_destroy(ctx) == 0
    print(f"[ctypes] OK: loaded {name}, libdeepgemm {text}; bad kind -> '{message}'")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
