"""mlcc: one seed for every rank of this run (python -c <this> NAME COMMAND...).

NAME (SEED) is the run's environment's when given, else drawn as NVIDIA's run.sub draws it
(bash's $RANDOM: 0..32767). A PyTorchJob's Master (PET_NODE_RANK 0 of PET_NNODES) hands it to
its Workers through a torch TCPStore on PET_MASTER_ADDR, port PET_MASTER_PORT + 1 (or
MLCC_SEED_PORT), within MLCC_SEED_TIMEOUT seconds (default 600, torchrun's rendezvous
timeout). COMMAND then runs with NAME set.
"""

import os
import random
import re
import sys
import time
from datetime import timedelta
from typing import List, NoReturn

LIMIT = 2**32  # numpy takes seeds below it; NVIDIA's own draws stay below it
KEY = "mlcc/seed"


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"mlcc: {message}\n")
    raise SystemExit(1)


def whole(name: str, default: str = "") -> int:
    value = os.environ.get(name, default)
    if not re.fullmatch(r"[0-9]{1,10}", value):
        fail(f"{name}={value!r}: a whole number is needed")
    return int(value)


def given(name: str) -> str:
    """The environment's value of ``name`` ('' when unset), checked."""
    value = os.environ.get(name, "")
    if value and not (re.fullmatch(r"0|[1-9][0-9]{0,9}", value) and int(value) < LIMIT):
        fail(f"{name}={value!r}: give a whole number from 0 to {LIMIT - 1}, without leading zeros")
    return value


def own(name: str) -> str:
    return given(name) or str(random.SystemRandom().randrange(32768))


def left(end: float) -> timedelta:
    return timedelta(seconds=max(1.0, end - time.monotonic()))


def shared(name: str, nodes: int) -> str:
    """The Master's seed, served to every Worker pod; each Worker's copy of it."""
    from torch.distributed import TCPStore  # type: ignore[attr-defined]  # re-exported from torch._C

    rank = whole("PET_NODE_RANK")
    host = os.environ.get("PET_MASTER_ADDR", "")
    if rank and not host:
        fail("PET_MASTER_ADDR is not set: the PyTorchJob operator sets it on each pod")
    port = whole("MLCC_SEED_PORT", str(whole("PET_MASTER_PORT") + 1))
    wait = whole("MLCC_SEED_TIMEOUT", "600")
    end = time.monotonic() + wait
    try:
        if rank == 0:
            seed = own(name)
            store = TCPStore("localhost", port, is_master=True, timeout=left(end), wait_for_workers=False)
            store.set(KEY, seed)
            store.wait([f"{KEY}/taken/{node}" for node in range(1, nodes)], left(end))
            sys.stderr.write(f"mlcc: {name}={seed}, handed to {nodes - 1} worker pod(s)\n")
            return seed
        store = TCPStore(host, port, is_master=False, timeout=left(end))
        seed = store.get(KEY).decode()
        store.set(f"{KEY}/taken/{rank}", "1")
    except RuntimeError as error:  # torch's DistError and its timeouts are RuntimeErrors
        what = str(error).splitlines()[0] if str(error) else type(error).__name__
        role = "the Workers did not all take" if rank == 0 else "no seed came from the Master for"
        fail(f"{role} {name} at {host or 'localhost'}:{port} within {wait} s (MLCC_SEED_TIMEOUT): {what}")
    mine = given(name)
    if mine and mine != seed:
        fail(f"{name}={mine} here but {seed} on the Master: give the Master and the Workers one {name}")
    sys.stderr.write(f"mlcc: {name}={seed}, from the Master at {host}:{port}\n")
    return seed


def main(argv: List[str]) -> NoReturn:
    if len(argv) < 2:
        fail("usage: python -c <script> NAME COMMAND...")
    name, command = argv[0], argv[1:]
    nodes = whole("PET_NNODES", "1")
    seed = shared(name, nodes) if nodes > 1 else own(name)
    if nodes == 1:
        sys.stderr.write(f"mlcc: {name}={seed} for this run\n")
    os.execvpe(command[0], command, {**os.environ, name: seed})


if __name__ == "__main__":
    main(sys.argv[1:])
