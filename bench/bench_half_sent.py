"""Half-sent requests (D12): N clients send headers and part of a body, then stall. Prints how
long until the gateway has answered every one 408 and closed it, and that a normal request is
still served meanwhile. Runs the real gateway app in-process with `gateway.bodyTimeoutSeconds`.

    .venv/bin/python -m bench.bench_half_sent [--clients 1000] [--timeout 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

import aiohttp

from core.config import validate_config
from core.edge.http.server import start_gateway

HEAD = (
    b"POST /tools/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b'Authorization: Bearer bench\r\nContent-Length: 1000\r\n\r\n{"tool": "sess'
)


async def half_sent(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HEAD)
    await writer.drain()
    try:
        return await reader.read()  # until the gateway closes the connection
    finally:
        writer.close()


async def main(clients: int, timeout: float) -> None:
    config = validate_config(
        {
            "gateway": {
                "stateDir": tempfile.mkdtemp(prefix="crosstalk-half-"),
                "auth": {"token": "bench"},
                "bodyTimeoutSeconds": timeout,
            }
        }
    )
    gw = await start_gateway(config, port=0)
    port = int(gw.url.rsplit(":", 1)[1].strip("/"))
    try:
        t0 = time.perf_counter()
        pending = [asyncio.ensure_future(half_sent(port)) for _ in range(clients)]
        await asyncio.sleep(timeout / 2)
        async with aiohttp.ClientSession() as http:
            t1 = time.perf_counter()
            async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                healthy = resp.status
            served = time.perf_counter() - t1
        answers = await asyncio.gather(*pending)
        total = time.perf_counter() - t0
        timed_out = sum(a.startswith(b"HTTP/1.1 408") for a in answers)
        print(
            f"{clients} half-sent requests, bodyTimeoutSeconds={timeout:g}: {timed_out} answered "
            f"408 and closed after {total:.2f} s; /healthz meanwhile {healthy} in "
            f"{served * 1000:.1f} ms"
        )
    finally:
        await gw.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args()
    asyncio.run(main(args.clients, args.timeout))
