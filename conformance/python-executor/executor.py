"""A real XXL-JOB executor on the Python SDK pyxxl (PyPI), for the conformance suite.

Configured like the Node and Java ones, by environment:
  ADMIN    admin base URL with context path, e.g. http://127.0.0.1:8080/xxl-job-admin
  APPNAME  executor app name (registry key)
  PORT     port to listen on (127.0.0.1)
  TOKEN    access token ("" for none)
Handlers: demoJobHandler (succeeds, logs its parameter), failJobHandler (fails),
slowJobHandler (sleeps param seconds), shardingJobHandler ("shard <index>/<total>"),
echoJobHandler (succeeds with its parameter as the handle message).
Prints "READY <port>" once listening; SIGTERM unregisters it (registryRemove) and exits.

pyxxl's own settings are given here, not read from the environment (dotenv_try off),
so that variables of the machine cannot change them.
"""

import asyncio
import os
import signal
import sys

from aiohttp import web
from pyxxl import ExecutorConfig, PyxxlRunner
from pyxxl.ctx import g

admin = os.environ.get("ADMIN", "http://127.0.0.1:8080/xxl-job-admin")
app_name = os.environ.get("APPNAME", "xxl-job-executor-sample")
port = int(os.environ.get("PORT", "9999"))
token = os.environ.get("TOKEN", "default_token")

config = ExecutorConfig(
    # pyxxl takes the admin's API base, which must end with a slash.
    xxl_admin_baseurl=admin.rstrip("/") + "/api/",
    executor_app_name=app_name,
    access_token=token or None,
    executor_listen_host="127.0.0.1",
    executor_listen_port=port,
    executor_url=f"http://127.0.0.1:{port}",
    # Logs under the working directory: executors started side by side must not share
    # job log files (they are named by log id only).
    executor_log_path="pyxxl.log",
    log_local_dir="logs",
    # One attempt per call and a short wait: the suite's scenarios stop admins and
    # executors, and a stopped executor should not hang on its registryRemove.
    http_retry_times=1,
    http_retry_duration=1,
    http_timeout=10,
    dotenv_try=False,
)
runner = PyxxlRunner(config)


@runner.register(name="demoJobHandler")
async def demo() -> str:
    param = g.xxl_run_data.executorParams or ""
    g.logger.info("demo params=%s", param)
    return f"demo ok {param}".strip()


@runner.register(name="failJobHandler")
async def fail() -> str:
    g.logger.info("failing on purpose")
    raise RuntimeError("failJobHandler failed on purpose")


@runner.register(name="slowJobHandler")
async def slow() -> str:
    param = (g.xxl_run_data.executorParams or "").strip()
    secs = int(param) if param else 5
    g.logger.info("sleeping %ss", secs)
    # An async handler: pyxxl ends it by cancelling the task (kill, timeout, COVER_EARLY).
    await asyncio.sleep(secs)
    return f"slept {secs}s"


@runner.register(name="shardingJobHandler")
async def sharding() -> str:
    d = g.xxl_run_data
    msg = f"shard {d.broadcastIndex}/{d.broadcastTotal}"
    g.logger.info(msg)
    return msg


@runner.register(name="echoJobHandler")
async def echo() -> str:
    param = g.xxl_run_data.executorParams or ""
    g.logger.info("echo params=%s", param)
    return param


async def main() -> None:
    web_runner = web.AppRunner(runner.create_server_app())
    await web_runner.setup()
    await web.TCPSite(web_runner, "127.0.0.1", port).start()
    print(f"READY {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    # The app's cleanup unregisters the executor (registryRemove) and stops its tasks.
    try:
        await web_runner.cleanup()
    except Exception as e:  # the admin is gone: nothing more to tell it
        print(f"cleanup: {e}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
