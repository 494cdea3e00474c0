"""b41_budget_monotonic.py with the budget measured on libc's `clock_gettime(CLOCK_MONOTONIC)`
called through `ctypes`, as code ported from C (or avoiding Python's clock) reads it.
"""

import ctypes
import time
import uuid

import httpx

import retrylab

BUDGET_S = 2.5
ATTEMPT_TIMEOUT_S = 2.0
PAUSE_S = 0.4
RETRY_STATUSES = {409, 429, 500, 502, 503, 504}

http = retrylab.httpx_client()

CLOCK_MONOTONIC = 1
libc = ctypes.CDLL("libc.so.6", use_errno=True)


class timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


libc.clock_gettime.argtypes = [ctypes.c_int, ctypes.POINTER(timespec)]


def monotonic() -> float:
    ts = timespec()
    if libc.clock_gettime(CLOCK_MONOTONIC, ctypes.byref(ts)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "clock_gettime")
    return ts.tv_sec + ts.tv_nsec / 1e9


class BudgetSpent(Exception):
    pass


def post_ticket(ref: str, tenant: str, key: str) -> dict:
    deadline = monotonic() + BUDGET_S
    while True:
        remaining = deadline - monotonic()
        try:
            response = http.post(
                "/v1/resources",
                json={"ref": ref, "tenant": tenant},
                headers={"Idempotency-Key": key},
                timeout=min(ATTEMPT_TIMEOUT_S, remaining),
            )
        except httpx.TimeoutException:
            pass
        else:
            if response.status_code not in RETRY_STATUSES:
                response.raise_for_status()
                return response.json()
        if deadline - monotonic() < PAUSE_S:
            raise BudgetSpent(f"no answer within {BUDGET_S} s")
        time.sleep(PAUSE_S)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
