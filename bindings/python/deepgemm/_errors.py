"""One exception family for everything the package raises: ``deepgemm.Error`` carries the
library's status and message, and its subclasses are also the built-in exceptions Python users
catch for the same kind of mistake (a wrong value is a ``ValueError``, a wrong type a
``TypeError``), whether the library or the Python layer found it.
"""
import enum

from . import capi

# Status codes, taken from capi so they can never drift from deepgemm.h (a test compares capi
# with the header).
Status = enum.IntEnum("Status", sorted(((k[len("DGEMM_STATUS_"):], getattr(capi, k))
                                        for k in dir(capi) if k.startswith("DGEMM_STATUS_")), key=lambda kv: kv[1]))


class Error(Exception):
    """A failed DeepGEMM call: ``status`` (a :class:`Status`) and the ``message``, which names the
    offending argument and its value."""

    def __init__(self, status, message: str):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message
        super().__init__(status, message)

    def __str__(self):
        name = self.status.name if isinstance(self.status, Status) else str(self.status)
        return f"{name}: {self.message}"


class ArgumentError(Error, ValueError):
    """A bad value: a shape, stride, size, device, option or file (INVALID_ARGUMENT,
    INSUFFICIENT_WORKSPACE, ARCH_FILE_ERROR)."""


class DTypeError(Error, TypeError):
    """An element type or object the call cannot take (a wrong dtype for a plan, float64, an
    object that is not an array)."""


class NotSupportedError(Error, NotImplementedError):
    """A valid request this build or device does not implement (NOT_SUPPORTED)."""


class DeviceError(Error, RuntimeError):
    """No usable device, a CUDA or compiler failure, a context mismatch, an internal error."""


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed (OUT_OF_MEMORY)."""


_BY_STATUS = {
    capi.DGEMM_STATUS_INVALID_ARGUMENT: ArgumentError,
    capi.DGEMM_STATUS_INSUFFICIENT_WORKSPACE: ArgumentError,
    capi.DGEMM_STATUS_ARCH_FILE_ERROR: ArgumentError,
    capi.DGEMM_STATUS_NOT_SUPPORTED: NotSupportedError,
    capi.DGEMM_STATUS_OUT_OF_MEMORY: OutOfMemoryError,
}


def error_for(status: int, message: str) -> Error:
    """The exception of the family for a library status."""
    return _BY_STATUS.get(status, DeviceError)(status, message)


def check(status: int) -> None:
    """Raises the library's error (with its thread-local message) for a failed call."""
    if status != capi.DGEMM_STATUS_SUCCESS:
        raise error_for(status, capi.dgemm_last_error())


def argument_error(message: str) -> ArgumentError:
    return ArgumentError(Status.INVALID_ARGUMENT, message)


def dtype_error(message: str, supported: bool = True) -> DTypeError:
    """A wrong type: INVALID_ARGUMENT when the library knows the type (it just does not fit the
    call), NOT_SUPPORTED when it knows nothing of it."""
    return DTypeError(Status.INVALID_ARGUMENT if supported else Status.NOT_SUPPORTED, message)
